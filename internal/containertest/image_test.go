package containertest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	resourcesRe = regexp.MustCompile(`-r config/resources/(\S+\.yaml)`)
	testsRe     = regexp.MustCompile(`(?m)^tests:`)
)

func TestImage(t *testing.T) {
	start := time.Now()
	im := Build(t)
	repo, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()

	t.Run("version", func(t *testing.T) {
		res, err := im.Run(ctx, nil, "--version")
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != 0 || !strings.Contains(res.Stdout, "Version: container-test") {
			t.Fatalf("--version: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
		}
	})

	t.Run("image config", func(t *testing.T) {
		out, err := im.Podman(ctx, "image", "inspect", "--format", "{{json .Config}}", im.Name)
		if err != nil {
			t.Fatal(err)
		}
		var conf struct {
			User         string
			Entrypoint   []string
			Cmd          []string
			WorkingDir   string
			ExposedPorts map[string]any
		}
		if err := json.Unmarshal([]byte(out), &conf); err != nil {
			t.Fatalf("decoding %q: %v", out, err)
		}
		if conf.User != "65532:65532" {
			t.Errorf("User = %q, want the non-root 65532:65532", conf.User)
		}
		if !slices.Equal(conf.Entrypoint, []string{"fluss-iggy"}) {
			t.Errorf("Entrypoint = %q", conf.Entrypoint)
		}
		if len(conf.Cmd) < 2 || conf.Cmd[0] != "run" || !strings.HasPrefix(conf.Cmd[len(conf.Cmd)-1], "/etc/fluss-iggy/") {
			t.Errorf("Cmd = %q, want run ... /etc/fluss-iggy/...", conf.Cmd)
		}
		for _, arg := range conf.Cmd {
			if rel, ok := strings.CutPrefix(arg, "/etc/fluss-iggy/"); ok {
				if _, err := os.Stat(filepath.Join(repo, "config", rel)); err != nil {
					t.Errorf("the default command (%q) uses %s, but config/%s: %v", conf.Cmd, arg, rel, err)
				}
			}
		}
		if _, ok := conf.ExposedPorts["4195/tcp"]; !ok {
			t.Errorf("ExposedPorts = %v, want 4195/tcp", conf.ExposedPorts)
		}
		if conf.WorkingDir != "/var/lib/fluss-iggy" {
			t.Errorf("WorkingDir = %q", conf.WorkingDir)
		}
	})

	t.Run("lint and test shipped configs", func(t *testing.T) {
		files, err := filepath.Glob(filepath.Join(repo, "config", "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatal("config/ holds no pipeline configs to lint")
		}
		run := func(args ...string) {
			t.Helper()
			res, err := im.Run(ctx, nil, args...)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != 0 {
				t.Errorf("fluss-iggy %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), res.ExitCode, res.Stdout, res.Stderr)
			}
		}
		if st, err := os.Stat(filepath.Join(repo, "config", "resources")); err == nil && st.IsDir() {
			run("lint", "/etc/fluss-iggy/resources/*.yaml")
		}
		tested := 0
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			// A shipped config names the resources it runs with in its usage
			// comment: "fluss-iggy run -r config/resources/X.yaml config/...".
			var args []string
			if m := resourcesRe.FindSubmatch(b); m != nil {
				args = append(args, "-r", "/etc/fluss-iggy/resources/"+string(m[1]))
			}
			args = append(args, "/etc/fluss-iggy/"+filepath.Base(f))
			run(append([]string{"lint"}, args...)...)
			if testsRe.Match(b) {
				run(append([]string{"test"}, args...)...)
				tested++
			}
		}
		t.Logf("lint ran on %d shipped configs, config unit tests on %d", len(files), tested)
	})

	t.Run("pipeline as non-root with /metrics", func(t *testing.T) {
		pipelineServesMetrics(ctx, t, im)
	})
	t.Logf("container test took %s in all (build %s)", time.Since(start).Round(time.Second), im.BuildTime.Round(time.Second))
}

// pipelineServesMetrics runs a short pipeline in the container that writes
// every message to a bbolt cache under the image's working directory (so the
// non-root user must be able to write there) and serves the Prometheus
// exporter on the host network, scraped from here while it runs.
func pipelineServesMetrics(ctx context.Context, t *testing.T, im *Image) {
	const rows = 40
	addr := freeAddr(t)
	dir := t.TempDir()
	conf := fmt.Sprintf(`
http:
  address: %s
input:
  label: gen
  generate:
    count: %d
    interval: 50ms
    mapping: 'root = {"n": counter()}'
output:
  label: store
  cache:
    target: state
    key: ${! this.n }
cache_resources:
  - label: state
    bbolt:
      path: ./data/state.db
metrics:
  prometheus:
    namespace: fi
logger:
  level: warn
`, addr, rows)
	if err := os.WriteFile(filepath.Join(dir, "pipeline.yaml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	// The container's user (65532) must be able to read the mounted config.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}

	type runResult struct {
		res Result
		err error
	}
	done := make(chan runResult, 1)
	go func() {
		res, err := im.Run(ctx, []string{"-v", dir + ":/pipeline:ro"}, "run", "/pipeline/pipeline.yaml")
		done <- runResult{res, err}
	}()

	sentRe := regexp.MustCompile(`(?m)^fi_output_sent\{[^}]*label="store"[^}]*\} (\S+)$`)
	url := "http://" + addr + "/metrics"
	var seen float64
	client := &http.Client{Timeout: 5 * time.Second}
	for deadline := time.Now().Add(2 * time.Minute); seen < 5; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no rows seen at %s within 2 minutes", url)
		}
		select {
		case r := <-done:
			t.Fatalf("the pipeline ended before a scrape saw it: %v, exit %d\nstdout: %s\nstderr: %s", r.err, r.res.ExitCode, r.res.Stdout, r.res.Stderr)
		default:
		}
		resp, err := client.Get(url)
		if err != nil {
			continue // not listening yet
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
			t.Fatalf("/metrics Content-Type = %q, want the Prometheus text format\n%s", ct, body)
		}
		if m := sentRe.FindStringSubmatch(string(body)); m != nil {
			seen, _ = strconv.ParseFloat(m[1], 64)
		}
	}

	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.res.ExitCode != 0 {
		t.Fatalf("run: exit %d\nstdout: %s\nstderr: %s", r.res.ExitCode, r.res.Stdout, r.res.Stderr)
	}
	if strings.Contains(r.res.Stderr, "level=error") || strings.Contains(r.res.Stdout, "level=error") {
		t.Errorf("the pipeline logged errors (could the non-root user not write ./data?):\n%s%s", r.res.Stdout, r.res.Stderr)
	}
	t.Logf("scraped fi_output_sent=%v of %d while the pipeline ran in the container", seen, rows)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
