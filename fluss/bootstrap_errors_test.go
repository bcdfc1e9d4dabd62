package fluss

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/wire"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
	"github.com/fluss-iggy/fluss-iggy/internal/testnet"
)

// A refused connection is said once, on one line, with the address once,
// and with what it may mean; it stays retriable (Fluss may be starting).
func TestBootstrapRefusedSaysTheCauseOnce(t *testing.T) {
	addr := testnet.Closed(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := NewClient(ctx, Bootstrap(addr), RetryBackoff(Backoff{Initial: time.Millisecond, Max: time.Millisecond}))
	if err == nil {
		t.Fatal("connected to a closed port")
	}
	want := "fluss: no bootstrap server answered: dial tcp " + addr + ": connect: connection refused; nothing listens there (is Fluss still starting?)"
	if err.Error() != want {
		t.Errorf("error\n got  %q\n want %q", err, want)
	}
	if !errcode.IsRetriable(err) {
		t.Errorf("a refused connection is not retriable: %v", err)
	}
	var ce *wire.ConnError
	if !errors.As(err, &ce) || ce.Op != "dial" {
		t.Errorf("the cause is not a dial ConnError: %#v", err)
	}
}

// Two addresses: each cause once, in bootstrap order, on one line.
func TestBootstrapErrorsOfSeveralServers(t *testing.T) {
	a, b := testnet.ClosedPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := NewClient(ctx, Bootstrap(a, b), RetryBackoff(Backoff{Initial: time.Millisecond, Max: time.Millisecond}))
	if err == nil {
		t.Fatal("connected to closed ports")
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || strings.Count(msg, a) != 1 || strings.Count(msg, b) != 1 || strings.Index(msg, a) > strings.Index(msg, b) {
		t.Errorf("error %q: want each address once, in order, on one line", msg)
	}
}

// An HTTP server is not taken for a broken Fluss server: the error says so
// (not "frame of 1213486160 bytes"), quotes its answer, and is given up at
// once instead of retried.
func TestBootstrapHTTPServerIsNotFluss(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	_, err := NewClient(ctx, Bootstrap(addr))
	if err == nil {
		t.Fatal("an HTTP server passed for a Fluss server")
	}
	want := "fluss: no bootstrap server answered: " + addr + ` did not answer as a Fluss server (its answer starts with "HTTP/1.1 400 Bad Request")`
	if err.Error() != want {
		t.Errorf("error\n got  %q\n want %q", err, want)
	}
	if strings.Contains(err.Error(), "frame") {
		t.Errorf("error %q talks about frames", err)
	}
	if !errors.Is(err, wire.ErrNotFluss) || errcode.IsRetriable(err) {
		t.Errorf("error %v: want ErrNotFluss, not retriable", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v: the address was retried", d)
	}
}

// bootstrapNotFluss checks that NewClient gives addr up at once as not a
// Fluss server that failed to answer as how says, within within.
func bootstrapNotFluss(t *testing.T, name, addr, how string, within time.Duration, opts ...Option) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	_, err := NewClient(ctx, append([]Option{Bootstrap(addr)}, opts...)...)
	took := time.Since(start)
	if err == nil {
		t.Fatalf("%s: %s passed for a Fluss server", name, addr)
	}
	want := "fluss: no bootstrap server answered: " + addr + " did not answer as a Fluss server: it " + how +
		" instead of answering API_VERSIONS; is it ZooKeeper's or Iggy's port?"
	if err.Error() != want {
		t.Errorf("%s: error\n got  %q\n want %q", name, err, want)
	}
	if !errors.Is(err, wire.ErrNotFluss) || errcode.IsRetriable(err) {
		t.Errorf("%s: error %v: want ErrNotFluss, not retriable", name, err)
	}
	if took > within {
		t.Errorf("%s: took %v, want at most %v: the address was retried", name, took, within)
	}
	t.Logf("%s: given up after %v", name, took.Round(time.Millisecond))
}

// ZooKeeper's port (the test cluster's own ZooKeeper) closes the connection
// on the ApiVersions request: given up at once, not retried.
func TestIntegrationBootstrapZooKeeperIsNotFluss(t *testing.T) {
	zk := flusstest.ZooKeeper(t)
	bootstrapNotFluss(t, "ZooKeeper", zk, "closed the connection", 2*time.Second)
}

// An Iggy server's port: a 0.8 server resets the connection (it reads the
// frame's length as little-endian, far beyond its limit), a 0.9 server
// waits for the rest of that frame and says nothing, given up after the
// handshake time.
func TestBootstrapIggyIsNotFluss(t *testing.T) {
	for _, c := range []struct {
		version iggytest.Version
		how     string
	}{
		{iggytest.Version08, "reset the connection"},
		{iggytest.Version09, "sent nothing within 1s"},
	} {
		srv, err := iggytest.Start(iggytest.Options{Version: c.version})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		bootstrapNotFluss(t, "Iggy "+c.version.String(), srv.Addr(), c.how, 3*time.Second, HandshakeTimeout(time.Second))
	}
}

// A server that accepts and says nothing is given up after the default
// handshake time (5s), not retried until the caller gives up.
func TestBootstrapSilentServerIsNotFluss(t *testing.T) {
	bootstrapNotFluss(t, "silent server", testnet.Silent(t), "sent nothing within 5s", 7*time.Second)
}
