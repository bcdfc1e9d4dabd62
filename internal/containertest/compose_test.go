package containertest

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
)

// composeService is the part of a compose service the test follows.
type composeService struct {
	Image       string            `yaml:"image"`
	NetworkMode string            `yaml:"network_mode"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
	Ports       []string          `yaml:"ports"`
}

// composeVarRe matches ${VAR}, ${VAR:-default} and ${VAR:?message}.
var composeVarRe = regexp.MustCompile(`\$\{(\w+)(?::[-?]([^}]*))?\}`)

// TestComposePipelineService runs the fluss-iggy service of
// deploy/compose.yaml as compose would (no container engine here runs
// compose itself, and no registry serves its Iggy, Prometheus and Grafana
// images): the image's default command, the service's environment with the
// variables its header tells the user to export, its state volume, the
// host network. It starts before its table exists, as on a fresh cluster:
// it must wait (before, it stopped with exit 1, and compose restarted it in
// a loop), then deliver every row once the table is created and filled.
// Iggy is the in-process test server, at the address the service is given
// in place of the iggy service's published port.
func TestComposePipelineService(t *testing.T) {
	bootstrap := flusstest.Require(t)
	im := Build(t)
	svcs := readCompose(t)
	svc, iggySvc := svcs["fluss-iggy"], svcs["iggy"]
	if svc.NetworkMode != "host" || len(svc.Command) != 0 {
		t.Fatalf("fluss-iggy service: network_mode %q, command %q; the test follows a host-network service running the image's default command", svc.NetworkMode, svc.Command)
	}
	if addr := svc.Environment["IGGY_TCP_ADDRESS"]; len(iggySvc.Ports) == 0 || !strings.HasPrefix(iggySvc.Ports[0], addr+":") {
		t.Fatalf("the pipeline's IGGY_TCP_ADDRESS %q is not the iggy service's published port %q", addr, iggySvc.Ports)
	}
	srv, err := iggytest.Start(iggytest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	db := flusstest.UniqueName("compose")
	exported := map[string]string{"FLUSS_BOOTSTRAP": bootstrap, "FLUSS_DATABASE": db}
	env := map[string]string{}
	for k, v := range svc.Environment {
		env[k] = composeVarRe.ReplaceAllStringFunc(v, func(m string) string {
			sub := composeVarRe.FindStringSubmatch(m)
			if x, ok := exported[sub[1]]; ok {
				return x
			}
			if strings.Contains(m, ":?") {
				t.Fatalf("the service needs %s exported", sub[1])
			}
			return sub[2]
		})
	}
	env["IGGY_TCP_ADDRESS"], env["FLUSS_IGGY_HTTP_ADDRESS"] = srv.Addr(), freeAddr(t)
	state := t.TempDir()
	if err := os.Chmod(state, 0o777); err != nil {
		t.Fatal(err)
	}
	flags := []string{"--name", "compose-" + db}
	for k, v := range env {
		flags = append(flags, "-e", k+"="+v)
	}
	for _, v := range svc.Volumes {
		if name, target, ok := strings.Cut(v, ":"); ok && !strings.HasPrefix(name, ".") {
			flags = append(flags, "-v", state+":"+target) // a named volume: a directory here
		}
	}
	runComposeService(t, im, flags, srv, db, env["FLUSS_TABLE"])
}

// runComposeService starts the container, checks it waits for the missing
// table, creates and fills it, and waits for every row in Iggy.
func runComposeService(t *testing.T, im *Image, flags []string, srv *iggytest.Server, db, table string) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	var res Result
	done := make(chan struct{}) // closed when the container exited (res set)
	go func() {
		var err error
		if res, err = im.Run(ctx, flags); err != nil {
			res.Stderr += "\n" + err.Error()
		}
		close(done)
	}()
	defer func() {
		_, _ = im.Podman(context.Background(), "stop", "-t", "10", flags[1])
		<-done
	}()
	t.Cleanup(func() { flusstest.RunJava(t, "drop-database", db, "--if-exists", "--cascade") })
	select {
	case <-done:
		t.Fatalf("the service exited (%d) before its table existed; it should wait for it\nstderr:\n%s", res.ExitCode, tail(res.Stderr, 20))
	case <-time.After(15 * time.Second):
	}
	const rows = 500
	flusstest.RunJava(t, "create-database", db, "--if-not-exists")
	flusstest.RunJava(t, "create-table", db+"."+table, "--buckets", "2", "--columns", "id BIGINT, name STRING")
	flusstest.RunJava(t, "append", db+"."+table, "--rows", "500", "--seed", "3")
	for deadline := time.Now().Add(3 * time.Minute); srv.MessageCount("fluss", table) < rows; time.Sleep(200 * time.Millisecond) {
		select {
		case <-done:
			t.Fatalf("the service exited (%d)\nstderr:\n%s", res.ExitCode, tail(res.Stderr, 20))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d rows in Iggy stream fluss topic %s after 3 minutes", srv.MessageCount("fluss", table), rows, table)
		}
	}
	if n := srv.MessageCount("fluss", table); n != rows {
		t.Fatalf("%d messages for %d rows", n, rows)
	}
}

// readCompose reads the services of deploy/compose.yaml.
func readCompose(t *testing.T) map[string]composeService {
	repo, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(repo, "deploy", "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Services map[string]composeService `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("deploy/compose.yaml: %v", err)
	}
	return doc.Services
}
