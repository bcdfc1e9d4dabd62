package main_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/internal/e2e"
	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
)

// The binary's behaviour towards Iggy as a user meets it: an unsupported
// server stops the pipeline, Ctrl-C while Iggy is down exits soon and
// non-zero saying what was not delivered, and nothing but Benthos's log
// reaches the terminal.

var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fluss-iggy-bin")
	if err != nil {
		panic(err)
	}
	root, _ := filepath.Abs("../..")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	bin, err = e2e.BuildBinary(ctx, root, dir)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// pipelineConfig writes a generate -> iggy config and returns its path.
func pipelineConfig(t *testing.T, addr string, count int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.yaml")
	conf := fmt.Sprintf(`
http: { enabled: false }
logger: { level: info, format: json }
input:
  generate: { count: %d, interval: "", mapping: 'root = "m%%d".format(counter())' }
output:
  iggy:
    address: %s
    username: iggy
    password: iggy
    stream: s
    topic: t
    create_stream: true
    create_topic: true
    timeout: 2s
`, count, addr)
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestUnsupportedServerStopsPipeline: against a server of a protocol we do
// not speak, the binary exits non-zero within seconds with the reason.
func TestUnsupportedServerStopsPipeline(t *testing.T) {
	srv, err := iggytest.Start(iggytest.Options{Version: iggytest.Version010})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	p, err := e2e.Start(bin, nil, "run", pipelineConfig(t, srv.Addr(), 10))
	if err != nil {
		t.Fatal(err)
	}
	err = p.Wait(30 * time.Second)
	out := p.Output()
	if exitCode(err) <= 0 {
		t.Fatalf("exit %v, want non-zero; output:\n%s", err, out)
	}
	for _, want := range []string{"protocol 0.12", "fluss-iggy: stopped:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	t.Logf("exited after %v with %v; last lines:\n%s", p.Elapsed().Round(time.Millisecond), err, p.Tail(3))
}

// TestInterruptWhileIggyDown: Ctrl-C while Iggy is unreachable ends the
// process within seconds, non-zero, saying how many messages were not
// delivered; the connection attempts before it are logged at growing
// intervals.
func TestInterruptWhileIggyDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	_ = ln.Close()
	p, err := e2e.Start(bin, nil, "run", pipelineConfig(t, dead, 5))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(8 * time.Second)
	_ = syscall.Kill(p.Pid(), syscall.SIGINT)
	sent := time.Now()
	err = p.Wait(20 * time.Second)
	took := time.Since(sent)
	out := p.Output()
	if exitCode(err) <= 0 {
		t.Errorf("exit %v after Ctrl-C, want non-zero; output:\n%s", err, out)
	}
	if took > 6*time.Second {
		t.Errorf("exited %v after Ctrl-C, want a few seconds", took)
	}
	if !strings.Contains(out, "has been unreachable for") || !strings.Contains(out, "not delivered") {
		t.Errorf("output does not say what was not delivered:\n%s", out)
	}
	// 8s of attempts with a backoff of 1, 2, 4s: at most 5 lines, not 8+.
	if n := strings.Count(out, "connecting to Iggy at "+dead); n == 0 || n > 5 {
		t.Errorf("%d connection-failure lines in 8s:\n%s", n, out)
	}
	t.Logf("exited %v after Ctrl-C with %v; last lines:\n%s", took.Round(time.Millisecond), err, p.Tail(4))
}

// TestNoStrayOutput: a pipeline into Iggy prints nothing that does not come
// from Benthos's logger (the Go SDK printed "Checking cluster metadata …"
// with the standard logger on every login).
func TestNoStrayOutput(t *testing.T) {
	srv, err := iggytest.Start(iggytest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	p, err := e2e.Start(bin, nil, "run", pipelineConfig(t, srv.Addr(), 20))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(60 * time.Second); err != nil {
		t.Fatalf("run: %v\n%s", err, p.Output())
	}
	for _, line := range strings.Split(strings.TrimSpace(p.Output()), "\n") {
		if !strings.HasPrefix(line, "{") {
			t.Errorf("a line not from the Benthos logger: %q", line)
		}
	}
	if n := srv.MessageCount("s", "t"); n != 20 {
		t.Errorf("stored %d messages, want 20", n)
	}
}

// TestTakenHTTPPortStops: a pipeline whose http.address another process
// holds (a second instance on the host) stops with exit 1, naming
// the address, the field and the variable to change, instead of running
// without metrics and probes; with the port free, the same config runs to
// its end with exit 0.
func TestTakenHTTPPortStops(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	path := filepath.Join(t.TempDir(), "p.yaml")
	conf := `
http: { address: "${FLUSS_IGGY_HTTP_ADDRESS:0.0.0.0:4195}" }
input:
  generate: { count: 3, interval: 300ms, mapping: 'root = "m"' }
output:
  drop: {}
`
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"FLUSS_IGGY_HTTP_ADDRESS=" + addr}
	p, err := e2e.Start(bin, env, "run", path)
	if err != nil {
		t.Fatal(err)
	}
	err = p.Wait(30 * time.Second)
	out := p.Output()
	if exitCode(err) != 1 {
		t.Errorf("port taken: exit %v, want 1; output:\n%s", err, out)
	}
	for _, want := range []string{"http.address " + addr, "address already in use", "FLUSS_IGGY_HTTP_ADDRESS"} {
		if !strings.Contains(out, want) {
			t.Errorf("port taken: output lacks %q:\n%s", want, out)
		}
	}
	_ = ln.Close()
	p, err = e2e.Start(bin, env, "run", path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(30 * time.Second); err != nil {
		t.Errorf("port free: %v, want exit 0; output:\n%s", err, p.Output())
	}
}
