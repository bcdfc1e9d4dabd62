package k8smanifest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/fluss-iggy/fluss-iggy/internal/dashtest"
)

// scrapeConfig is the part of prometheus-scrape.yaml's prometheus.yml the
// test reads.
type scrapeConfig struct {
	RuleFiles     []string `json:"rule_files"`
	ScrapeConfigs []struct {
		JobName   string         `json:"job_name"`
		SDConfigs []kubernetesSD `json:"kubernetes_sd_configs"`
		Relabel   []struct {
			SourceLabels []string `json:"source_labels"`
			Regex        string   `json:"regex"`
			Action       string   `json:"action"`
		} `json:"relabel_configs"`
	} `json:"scrape_configs"`
}

// kubernetesSD is a kubernetes_sd_configs entry with the fields the
// manifests use (Prometheus's names; strict decoding refuses others).
type kubernetesSD struct {
	Role       string `json:"role"`
	Namespaces *struct {
		OwnNamespace bool     `json:"own_namespace,omitempty"`
		Names        []string `json:"names,omitempty"`
	} `json:"namespaces,omitempty"`
}

// TestPrometheusScrapeConfig: the prometheus.yml of prometheus-scrape.yaml
// passes `promtool check config` with deploy/prometheus/alerts.yml beside
// it, and its job keeps the StatefulSet's pods: the label it keeps on is
// the pods' label, and the pods' annotations name their http port.
func TestPrometheusScrapeConfig(t *testing.T) {
	tool := dashtest.RequireTool(t, "promtool")
	s, err := load(manifestDir(t))
	if err != nil {
		t.Fatal(err)
	}
	data, file, ok := s.data("ConfigMap", "fluss-iggy-prometheus")
	if !ok || data["prometheus.yml"] == "" {
		t.Fatalf("no ConfigMap fluss-iggy-prometheus with a prometheus.yml (%s)", file)
	}
	checkWithPromtool(t, tool, file, data["prometheus.yml"])

	var pc scrapeConfig
	if err := yaml.Unmarshal([]byte(data["prometheus.yml"]), &pc); err != nil {
		t.Fatalf("%s: prometheus.yml: %v", file, err)
	}
	if len(pc.ScrapeConfigs) != 1 || pc.ScrapeConfigs[0].JobName != "fluss-iggy" ||
		len(pc.ScrapeConfigs[0].SDConfigs) != 1 || pc.ScrapeConfigs[0].SDConfigs[0].Role != "pod" {
		t.Fatalf("%s: want one job fluss-iggy with kubernetes_sd_configs role pod, have %+v", file, pc.ScrapeConfigs)
	}
	tpl, err := s.PodTemplate("fluss-iggy")
	if err != nil {
		t.Fatal(err)
	}
	keeps := 0
	for _, r := range pc.ScrapeConfigs[0].Relabel {
		if r.Action != "keep" || len(r.SourceLabels) != 1 {
			continue
		}
		keeps++
		want := map[string]string{
			"__meta_kubernetes_pod_label_app_kubernetes_io_name":    tpl.Labels["app.kubernetes.io/name"],
			"__meta_kubernetes_pod_annotation_prometheus_io_scrape": tpl.Annotations["prometheus.io/scrape"],
		}[r.SourceLabels[0]]
		if want == "" || r.Regex != want {
			t.Errorf("%s: keep on %s regex %q does not keep the StatefulSet's pods (labels %v, annotations %v)", file, r.SourceLabels[0], r.Regex, tpl.Labels, tpl.Annotations)
		}
	}
	if keeps != 2 {
		t.Errorf("%s: %d keep rules, want 2 (the app label and the scrape annotation)", file, keeps)
	}
	port := tpl.Annotations["prometheus.io/port"]
	if !slices.ContainsFunc(tpl.Spec.Containers[0].Ports, func(p corev1.ContainerPort) bool {
		return strconv.Itoa(int(p.ContainerPort)) == port && p.Name == "http"
	}) {
		t.Errorf("statefulset.yaml: annotation prometheus.io/port %q is not the container's http port", port)
	}
	if !slices.Contains(pc.RuleFiles, "alerts.yml") {
		t.Errorf("%s: rule_files %v does not load alerts.yml", file, pc.RuleFiles)
	}
}

// checkWithPromtool runs `promtool check config` on conf, with
// deploy/prometheus/alerts.yml beside it. Debian's Prometheus 2.42 is built
// without Kubernetes discovery (it refuses kubernetes_sd_configs as an
// unknown field), so each job's kubernetes_sd_configs are decoded strictly
// into kubernetesSD here and replaced by a static target for promtool,
// which then checks everything else (the relabelling, the rule files).
func checkWithPromtool(t *testing.T, tool, file, conf string) {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(conf), &doc); err != nil {
		t.Fatalf("%s: prometheus.yml: %v", file, err)
	}
	jobs, _ := doc["scrape_configs"].([]any)
	for i, j := range jobs {
		job, _ := j.(map[string]any)
		sd, ok := job["kubernetes_sd_configs"]
		if !ok {
			continue
		}
		raw, _ := yaml.Marshal(sd)
		var sds []kubernetesSD
		if err := yaml.UnmarshalStrict(raw, &sds); err != nil {
			t.Errorf("%s: prometheus.yml: scrape_configs[%d].kubernetes_sd_configs: %v", file, i, err)
		}
		delete(job, "kubernetes_sd_configs")
		job["static_configs"] = []any{map[string]any{"targets": []any{"127.0.0.1:4195"}}}
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	alerts, err := os.ReadFile(filepath.Join(manifestDir(t), "..", "prometheus", "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"prometheus.yml": out, "alerts.yml": alerts} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(tool, "check", "config", "prometheus.yml")
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s: promtool check config (kubernetes_sd_configs replaced by a static target): %v\n%s", file, err, b)
	}
}
