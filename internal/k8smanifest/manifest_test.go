package k8smanifest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/fluss-iggy/fluss-iggy/internal/e2e"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

// manifestDir is deploy/kubernetes of this checkout.
func manifestDir(t *testing.T) string {
	t.Helper()
	root, err := flusstest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "deploy", "kubernetes")
}

// load loads and checks dir; it returns the set and the error of both steps.
func load(dir string) (*Set, error) {
	s, err := LoadDir(dir)
	if err != nil {
		return s, err
	}
	return s, s.Check()
}

// TestManifests: every document of deploy/kubernetes decodes strictly and
// the folder passes Check, with the kinds the guide describes.
func TestManifests(t *testing.T) {
	s, err := load(manifestDir(t))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"StatefulSet": 1, "Deployment": 1, "Service": 2, "ConfigMap": 2, "Secret": 1, "PodMonitor": 1, "Kustomization": 2}
	got := map[string]int{}
	for _, o := range s.Objects {
		got[o.Kind]++
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%d documents of kind %s, want %d (all: %v)", got[k], k, n, got)
		}
	}
	o, ok := s.find("StatefulSet", "fluss-iggy")
	if !ok {
		t.Fatal("no StatefulSet fluss-iggy")
	}
	ss := o.Value.(*appsv1.StatefulSet)
	if *ss.Spec.Replicas != 3 || ss.Spec.PodManagementPolicy != appsv1.ParallelPodManagement {
		t.Errorf("replicas %d, podManagementPolicy %q: want 3 and Parallel", *ss.Spec.Replicas, ss.Spec.PodManagementPolicy)
	}
	pod := ss.Spec.Template.Spec
	c := pod.Containers[0]
	sc := c.SecurityContext
	if pod.SecurityContext == nil || pod.SecurityContext.RunAsUser == nil || *pod.SecurityContext.RunAsUser != 65532 ||
		sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("security context %+v / %+v: want uid 65532, a read-only root and no privilege escalation", pod.SecurityContext, sc)
	}
	if c.LivenessProbe.HTTPGet.Path != "/ping" || c.ReadinessProbe.HTTPGet.Path != "/ready" {
		t.Errorf("liveness %s, readiness %s: want /ping and /ready", c.LivenessProbe.HTTPGet.Path, c.ReadinessProbe.HTTPGet.Path)
	}
}

// mutation changes one manifest file of a copy of the folder; Check (or
// LoadDir) must then fail with an error that contains every want.
type mutation struct {
	name      string
	file      string
	old, new  string
	wantInErr []string
}

var mutations = []mutation{
	{"misspelt field", "statefulset.yaml", "podManagementPolicy:", "podManagmentPolicy:",
		[]string{"statefulset.yaml", `unknown field "spec.podManagmentPolicy"`}},
	{"misspelt nested field", "statefulset.yaml", "readOnlyRootFilesystem:", "readOnlyRootFileSystem:",
		[]string{"statefulset.yaml", "readOnlyRootFileSystem"}},
	{"wrong probe port", "statefulset.yaml", "path: /ready\n              port: http", "path: /ready\n              port: metrics",
		[]string{"statefulset.yaml: StatefulSet fluss-iggy: spec.template.spec.containers[0].readinessProbe.httpGet.port: metrics is not a port of the container"}},
	{"wrong probe port number", "statefulset.yaml", "path: /ping\n              port: http", "path: /ping\n              port: 4196",
		[]string{"statefulset.yaml: StatefulSet fluss-iggy: spec.template.spec.containers[0].livenessProbe.httpGet.port: 4196 is not a port"}},
	{"missing env var", "statefulset.yaml", "            - name: FLUSS_TABLE\n              value: orders\n", "",
		[]string{"statefulset.yaml: StatefulSet fluss-iggy: spec.template.spec.containers[0].env: FLUSS_TABLE is not set, and /etc/fluss-iggy/k8s/pipeline.yaml uses ${FLUSS_TABLE} without a default"}},
	{"missing secret key", "secret.example.yaml", "  password: change-me", "  passwd: change-me",
		[]string{"statefulset.yaml: StatefulSet fluss-iggy: spec.template.spec.containers[0].env[7] IGGY_PASSWORD.valueFrom.secretKeyRef: Secret fluss-iggy-iggy (secret.example.yaml) has no key \"password\""}},
	{"missing configmap key", "configmap.yaml", "  redis.yaml: |", "  redis.yml: |",
		[]string{"statefulset.yaml: StatefulSet fluss-iggy: spec.template.spec.volumes[0] (config).configMap: ConfigMap fluss-iggy-config (configmap.yaml) has no key \"redis.yaml\"",
			`containers[0].args: "/etc/fluss-iggy/k8s/redis.yaml" (argument 2) is not a file of the ConfigMap volume config`}},
	{"missing configmap", "statefulset.yaml", "name: fluss-iggy-config", "name: fluss-iggy-conf",
		[]string{"statefulset.yaml: StatefulSet fluss-iggy: spec.template.spec.volumes[0] (config).configMap: no ConfigMap \"fluss-iggy-conf\""}},
	{"shard count not replicas", "statefulset.yaml", "replicas: 3", "replicas: 4",
		[]string{"statefulset.yaml: StatefulSet fluss-iggy: spec.template.spec.containers[0].env[1] SHARD_COUNT: \"3\" is not spec.replicas (4)"}},
	{"selector not the template's labels", "redis.yaml", "      labels:\n        app.kubernetes.io/name: fluss-iggy-redis\n    spec:", "      labels:\n        app.kubernetes.io/name: redis\n    spec:",
		[]string{"redis.yaml: Deployment fluss-iggy-redis: spec.selector: \"app.kubernetes.io/name=fluss-iggy-redis\" does not match the pod template's labels",
			"redis.yaml: Service fluss-iggy-redis: spec.selector: map[app.kubernetes.io/name:fluss-iggy-redis] selects the pods of no StatefulSet or Deployment"}},
	{"serviceName names no Service", "statefulset.yaml", "serviceName: fluss-iggy", "serviceName: fluss-iggy-headless",
		[]string{"statefulset.yaml: StatefulSet fluss-iggy: spec.serviceName: no Service \"fluss-iggy-headless\""}},
	{"service not headless", "service.yaml", "  clusterIP: None\n", "",
		[]string{"statefulset.yaml: StatefulSet fluss-iggy: spec.serviceName: Service fluss-iggy (service.yaml) is not headless"}},
	{"service target port", "service.yaml", "targetPort: http", "targetPort: web",
		[]string{"service.yaml: Service fluss-iggy: spec.ports[0].targetPort: web is not a port"}},
	{"GOMEMLIMIT without a memory limit", "statefulset.yaml", "            limits:\n              memory: 1Gi\n", "",
		[]string{"statefulset.yaml: StatefulSet fluss-iggy: spec.template.spec.containers[0].env[9] GOMEMLIMIT.valueFrom.resourceFieldRef: resource: limits.memory is not set in container fluss-iggy's resources"}},
	{"kustomization misses a file", "kustomization.yaml", "  - redis.yaml\n", "",
		[]string{"kustomization.yaml: resources: does not list redis.yaml"}},
	{"kustomization lists a missing file", "kustomization.yaml", "  - redis.yaml\n", "  - redis.yaml\n  - iggy.yaml\n",
		[]string{"kustomization.yaml: resources[5]:", "iggy.yaml: no such file"}},
	{"podmonitor misspelt field", "podmonitor/podmonitor.yaml", "podMetricsEndpoints:", "podMetricEndpoints:",
		[]string{"podmonitor/podmonitor.yaml: document 1 (PodMonitor):", `unknown field "spec.podMetricEndpoints"`}},
	{"podmonitor port", "podmonitor/podmonitor.yaml", "port: http", "port: metrics",
		[]string{"podmonitor/podmonitor.yaml: PodMonitor fluss-iggy: spec.podMetricsEndpoints[0].port: \"metrics\" is not a named port"}},
	{"unknown kind", "service.yaml", "kind: Service", "kind: Servic",
		[]string{"service.yaml: document 1: apiVersion \"v1\" kind \"Servic\" is not a kind these manifests may use"}},
}

// TestMutationsRejected: each mutation of a copy of deploy/kubernetes is
// rejected with an error naming the file and the field; the unchanged copy
// passes.
func TestMutationsRejected(t *testing.T) {
	src := manifestDir(t)
	if _, err := load(copyDir(t, src)); err != nil {
		t.Fatalf("the unchanged copy: %v", err)
	}
	for _, m := range mutations {
		t.Run(m.name, func(t *testing.T) {
			dir := copyDir(t, src)
			p := filepath.Join(dir, m.file)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(b), m.old); n != 1 {
				t.Fatalf("%s: %q occurs %d times, want once (the test's mutation is stale)", m.file, m.old, n)
			}
			if err := os.WriteFile(p, []byte(strings.Replace(string(b), m.old, m.new, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = load(dir)
			if err == nil {
				t.Fatalf("accepted")
			}
			t.Logf("rejected: %v", err)
			for _, w := range m.wantInErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q:\n%v", w, err)
				}
			}
		})
	}
}

// copyDir copies the manifest folder into a temporary directory.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestRequiredVars(t *testing.T) {
	got := RequiredVars("a: ${A}\nb: ${B:x}\nc: ${! @meta }\nd: ${A} ${C_2:}\ne: ${{E}}\nf: ${F|base64decode}\ng: ${G:${H}}")
	if want := "A F"; strings.Join(got, " ") != want {
		t.Errorf("RequiredVars: %v, want %s", got, want)
	}
}

// binary returns $FLUSS_IGGY_BIN, or fluss-iggy built from the checkout
// once for the package.
var binary = sync.OnceValues(func() (string, error) {
	if b := os.Getenv("FLUSS_IGGY_BIN"); b != "" {
		return b, nil
	}
	root, err := flusstest.RepoRoot()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "k8smanifest-")
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	return e2e.BuildBinary(ctx, root, dir)
})

// TestPipelineLints runs the StatefulSet's command with `lint` for `run`,
// as each pod would: the ConfigMap's files written out, the environment the
// kubelet would set for the first and the last pod (POD_NAME
// fluss-iggy-0 and fluss-iggy-2). A pod beyond replicas (fluss-iggy-3)
// must fail the lint: its shard index is not below SHARD_COUNT.
func TestPipelineLints(t *testing.T) {
	s, err := load(manifestDir(t))
	if err != nil {
		t.Fatal(err)
	}
	bin, err := binary()
	if err != nil {
		t.Fatal(err)
	}
	o, _ := s.find("StatefulSet", "fluss-iggy")
	ss := o.Value.(*appsv1.StatefulSet)
	tpl := &ss.Spec.Template
	c := &tpl.Spec.Containers[0]
	files, err := s.MountedFiles(tpl, c)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for p, content := range files {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := append([]string(nil), c.Args...)
	if len(args) == 0 || args[0] != "run" {
		t.Fatalf("args %v: want run ...", args)
	}
	args[0] = "lint"
	for i, a := range args {
		if _, ok := files[a]; ok {
			args[i] = filepath.Join(root, a)
		}
	}
	replicas := int(*ss.Spec.Replicas)
	for _, ordinal := range []int{0, replicas - 1, replicas} {
		pod := ss.Name + "-" + strconv.Itoa(ordinal)
		env, err := s.PodEnv(tpl, c, pod)
		if err != nil {
			t.Fatal(err)
		}
		code, out := runWithEnv(t, bin, env, args...)
		switch {
		case ordinal < replicas && (code != 0 || out != ""):
			t.Errorf("pod %s: fluss-iggy %v: exit %d:\n%s", pod, args, code, out)
		case ordinal == replicas && (code == 0 || !strings.Contains(out, "field shard.index: must be between 0 and 2 (shard.count - 1), got 3")):
			t.Errorf("pod %s (beyond replicas): fluss-iggy %v: exit %d, want the shard index refused:\n%s", pod, args, code, out)
		}
	}
}

// runWithEnv runs bin with args in an environment of only env (and PATH)
// and returns its exit code and output.
func runWithEnv(t *testing.T, bin string, env map[string]string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	return cmd.ProcessState.ExitCode(), string(out)
}
