package iggy

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/apache/iggy/foreign/go/client"
	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
)

// TestSocketOfFindsConn guards the one place that reaches into the SDK: if
// an SDK upgrade moves the socket, this fails instead of the output silently
// losing the ability to close hung connections.
func TestSocketOfFindsConn(t *testing.T) {
	srv, err := iggytest.Start(iggytest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cl, err := client.NewIggyClient(client.WithTcp(tcp.WithServerAddress(srv.Addr())))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	sock := socketOf(cl)
	if sock == nil {
		t.Fatal("socketOf found no connection in the SDK client")
	}
	if got := sock.RemoteAddr().String(); got != srv.Addr() {
		t.Fatalf("socket goes to %s, want %s", got, srv.Addr())
	}
	// Closing it makes the SDK's next call fail at once.
	_ = sock.Close()
	done := make(chan error, 1)
	go func() { done <- cl.Ping() }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Ping on a closed socket succeeded")
		}
		if !isTransportError(err) {
			t.Fatalf("a closed socket is not classified as a transport error: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Ping on a closed socket hung")
	}
	var nilConn net.Conn
	if socketOf(nil) != nilConn {
		t.Fatal("socketOf(nil) is not nil")
	}
}

// stuckClient is an SDK client whose every call hangs, and whose socket
// socketOf cannot find.
type stuckClient struct {
	iggcon.Client
	release chan struct{}
}

func (s *stuckClient) Ping() error  { <-s.release; return nil }
func (s *stuckClient) Close() error { return nil }

// TestDoAbandonsWithoutSocket: when the socket is unknown, a hung call is
// abandoned at the timeout or when ctx ends, and the connection is broken.
func TestDoAbandonsWithoutSocket(t *testing.T) {
	sc := &stuckClient{release: make(chan struct{})}
	defer close(sc.release)
	c := newConn(sc, 100*time.Millisecond)
	start := time.Now()
	err := c.do(context.Background(), "pinging", func(cl iggcon.Client) error { return cl.Ping() })
	var te *timeoutError
	if !errors.As(err, &te) || time.Since(start) > time.Second {
		t.Fatalf("want a timeout after 100ms, got %v after %v", err, time.Since(start))
	}
	if !c.broken.Load() {
		t.Fatal("the connection is not marked broken")
	}
	if err := c.do(context.Background(), "pinging", func(cl iggcon.Client) error { return nil }); !errors.Is(err, errConnBroken) {
		t.Fatalf("a broken connection ran a call: %v", err)
	}

	c = newConn(sc, time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := c.do(ctx, "pinging", func(cl iggcon.Client) error { return cl.Ping() }); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the context's error, got %v", err)
	}
}
