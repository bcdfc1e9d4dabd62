package fluss

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/wire"
)

// closedAddr returns an address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// A refused connection is said once, on one line, with the address once.
func TestBootstrapRefusedSaysTheCauseOnce(t *testing.T) {
	addr := closedAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := NewClient(ctx, Bootstrap(addr), RetryBackoff(Backoff{Initial: time.Millisecond, Max: time.Millisecond}))
	if err == nil {
		t.Fatal("connected to a closed port")
	}
	want := "fluss: no bootstrap server answered: dial tcp " + addr + ": connect: connection refused"
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
	a, b := closedAddr(t), closedAddr(t)
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
