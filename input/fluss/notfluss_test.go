package flussinput

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
	"github.com/fluss-iggy/fluss-iggy/internal/stop"
	"github.com/fluss-iggy/fluss-iggy/internal/testnet"
)

// bootstrapYAML is a fluss input reading from addr.
func bootstrapYAML(addr string) string {
	return fmt.Sprintf("bootstrap_servers: [ %q ]\ndatabase: d\ntable: t\ncheckpoint_cache: offs\n", addr)
}

// notFlussReason is what the input stops with when addr failed to answer
// the first request as how says.
func notFlussReason(addr, how string) string {
	return "no bootstrap server answered: " + addr + " did not answer as a Fluss server: it " + how +
		" instead of answering API_VERSIONS; is it ZooKeeper's or Iggy's port?"
}

// startIggy starts an Iggy test server speaking version v.
func startIggy(t *testing.T, v iggytest.Version) string {
	t.Helper()
	srv, err := iggytest.Start(iggytest.Options{Version: v})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv.Addr()
}

// A bootstrap address that is ZooKeeper's port, an Iggy server's or a
// server that accepts and says nothing stops the pipeline with the reason
// (after the handshake time, 5s, for the silent ones) instead of being
// retried forever.
func TestIntegrationOtherServersStopThePipeline(t *testing.T) {
	cases := []struct{ name, addr, how string }{
		{"ZooKeeper", flusstest.ZooKeeper(t), "closed the connection"},
		{"Iggy 0.8", startIggy(t, iggytest.Version08), "reset the connection"},
		{"Iggy 0.9", startIggy(t, iggytest.Version09), "sent nothing within 5s"},
		{"silent server", testnet.Silent(t), "sent nothing within 5s"},
	}
	for _, c := range cases {
		took, cancelled, err := connectOnce(t, bootstrapYAML(c.addr))
		checkStopped(t, c.name, err, took, cancelled, notFlussReason(c.addr, c.how))
	}
}

// A closed port is what a Fluss server that is still starting looks like:
// retried with the back-off, saying so, never stopping the pipeline.
func TestClosedPortIsRetriedSayingSo(t *testing.T) {
	addr := testnet.Closed(t)
	took, cancelled, err := connectOnce(t, bootstrapYAML(addr))
	want := "no bootstrap server answered: dial tcp " + addr +
		": connect: connection refused; nothing listens there (is Fluss still starting?) (attempt 1; next in 1s)"
	var bo *service.ErrBackOff
	if !errors.As(err, &bo) || bo.Wait != retryFirst || err.Error() != want {
		t.Errorf("error\n got  %v\n want %s, a back-off of %v", err, want, retryFirst)
	}
	if cancelled || stop.Err() != nil {
		t.Errorf("a closed port stopped the pipeline: %v", stop.Err())
	}
	if took > 5*time.Second {
		t.Errorf("took %v", took)
	}
}

// The binary given an Iggy server's port as the Fluss bootstrap exits 1
// within seconds, the reason on its last line (before: no output for as
// long as it ran).
func TestBinaryStopsOnIggyPort(t *testing.T) {
	addr := startIggy(t, iggytest.Version09)
	checkBinaryStops(t, addr, "d", "t", "fluss-iggy: stopped: "+notFlussReason(addr, "sent nothing within 5s"))
}

// checkBinaryStops runs `fluss-iggy run` reading table database.table from
// boot and checks that it exits 1 within seconds, want on its last line.
func checkBinaryStops(t *testing.T, boot, database, table, want string) {
	t.Helper()
	bin := binary(t)
	conf := filepath.Join(t.TempDir(), "stops.yaml")
	yaml := fmt.Sprintf(`http: { enabled: false }
input:
  fluss:
    bootstrap_servers: [ %q ]
    database: %s
    table: %s
    checkpoint_cache: offs
output:
  drop: {}
cache_resources:
  - label: offs
    memory: {}
`, boot, database, table)
	if err := os.WriteFile(conf, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	out, err := exec.CommandContext(ctx, bin, "run", conf).CombinedOutput()
	took := time.Since(start)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("fluss-iggy run: %v after %v, want exit 1\n%s", err, took, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if last := lines[len(lines)-1]; last != want {
		t.Errorf("last line\n%s\nwant\n%s\noutput:\n%s", last, want, out)
	}
	if took > permanentWithin+5*time.Second {
		t.Errorf("took %v", took)
	}
	t.Logf("exit %d after %v: %s", ee.ExitCode(), took.Round(time.Millisecond), lines[len(lines)-1])
}
