package iggytest_test

import (
	"context"
	"errors"
	"net"
	"runtime"
	"testing"
	"time"

	iggcon "github.com/apache/iggy/foreign/go/contracts"
	ierror "github.com/apache/iggy/foreign/go/errors"

	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
)

// isTransportErr tells a dead connection (plain Go error) from a server error.
func isTransportErr(err error) bool {
	var ie ierror.IggyError
	return err != nil && !errors.As(err, &ie)
}

func send(t *testing.T, cli iggcon.Client, payload string) error {
	t.Helper()
	return cli.SendMessages(id(t, "s"), id(t, "t"), iggcon.PartitionId(0), []iggcon.IggyMessage{msg(t, payload)})
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestDropConnectionsNow(t *testing.T) {
	srv := startServer(t, iggytest.Options{})
	a := login(t, srv.Addr())
	b := login(t, srv.Addr())
	if n := srv.Connections(); n != 2 {
		t.Fatalf("connections = %d", n)
	}
	if n := srv.DropConnections(); n != 2 {
		t.Fatalf("dropped %d", n)
	}
	for _, cli := range []iggcon.Client{a, b} {
		if err := cli.Ping(); !isTransportErr(err) {
			t.Fatalf("ping after drop = %v, want a transport error", err)
		}
	}
	// The listener is still there.
	c := login(t, srv.Addr())
	if err := c.Ping(); err != nil {
		t.Fatalf("ping on new connection: %v", err)
	}
}

func TestDropAfterN(t *testing.T) {
	srv := startServer(t, iggytest.Options{})
	cli := login(t, srv.Addr())
	setupTopic(t, cli, "s", "t", 1)
	h := srv.DropAfter(iggytest.CmdSendMessages, 2)
	for i := 0; i < 2; i++ {
		if err := send(t, cli, "ok"); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	if err := send(t, cli, "dropped"); !isTransportErr(err) {
		t.Fatalf("3rd send = %v, want a transport error", err)
	}
	if h.Fired() != 1 {
		t.Fatalf("fired = %d", h.Fired())
	}
	if n := srv.MessageCount("s", "t"); n != 2 {
		t.Fatalf("stored %d messages, the dropped request must not be applied", n)
	}
	cli2 := login(t, srv.Addr())
	if err := send(t, cli2, "after"); err != nil { // fires once only
		t.Fatalf("send after: %v", err)
	}
	if got := srv.RequestCount(iggytest.CmdSendMessages); got != 4 {
		t.Fatalf("send requests = %d", got)
	}
}

func TestDropAfterHandling(t *testing.T) {
	srv := startServer(t, iggytest.Options{})
	cli := login(t, srv.Addr())
	setupTopic(t, cli, "s", "t", 1)
	srv.Inject(iggytest.Fault{Command: iggytest.CmdSendMessages, Action: iggytest.FaultDropAfterHandling, Times: 1})
	if err := send(t, cli, "applied"); !isTransportErr(err) {
		t.Fatalf("send = %v, want a transport error", err)
	}
	if msgs := srv.Messages("s", "t"); len(msgs) != 1 || string(msgs[0].Payload) != "applied" {
		t.Fatalf("stored = %+v", msgs)
	}
}

func TestFailWithCode(t *testing.T) {
	srv := startServer(t, iggytest.Options{})
	cli := login(t, srv.Addr())
	setupTopic(t, cli, "s", "t", 1)
	h := srv.FailWith(iggytest.CmdSendMessages, iggytest.CodeUnauthorized)
	err := send(t, cli, "x")
	mustIs(t, err, ierror.ErrUnauthorized)
	h.Remove()
	if err := send(t, cli, "y"); err != nil {
		t.Fatalf("send after remove: %v", err)
	}
	// After / Times: the 2nd and 3rd create-stream fail, the others pass.
	srv.Inject(iggytest.Fault{Command: iggytest.CmdCreateStream, Action: iggytest.FaultFail,
		Code: iggytest.CodeFeatureUnavailable, After: 1, Times: 2})
	for i, name := range []string{"a", "b", "c", "d"} {
		_, err := cli.CreateStream(name)
		fail := i == 1 || i == 2
		if fail != (err != nil) {
			t.Fatalf("create %s: %v", name, err)
		}
		if fail {
			mustIs(t, err, ierror.ErrFeatureUnavailable)
		}
	}
	if n := srv.MessageCount("s", "t"); n != 1 {
		t.Fatalf("stored %d", n)
	}
}

func TestStallUntilReleased(t *testing.T) {
	srv := startServer(t, iggytest.Options{})
	cli := login(t, srv.Addr())
	setupTopic(t, cli, "s", "t", 1)
	h := srv.Stall(iggytest.CmdSendMessages)
	done := make(chan error, 1)
	go func() { done <- send(t, cli, "late") }()
	if err := h.WaitFired(ctxTimeout(t, 5*time.Second), 1); err != nil {
		t.Fatalf("stall did not fire: %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("send returned while stalled: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	if n := srv.MessageCount("s", "t"); n != 0 {
		t.Fatalf("stalled request applied early")
	}
	h.Release()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("send after release: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("send still blocked after release")
	}
	if n := srv.MessageCount("s", "t"); n != 1 {
		t.Fatalf("stored %d", n)
	}
}

func TestStallForDuration(t *testing.T) {
	srv := startServer(t, iggytest.Options{})
	cli := login(t, srv.Addr())
	h := srv.StallFor(iggytest.CmdPing, 150*time.Millisecond)
	start := time.Now()
	if err := cli.Ping(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Fatalf("ping answered after %v", d)
	}
	h.Remove()
	start = time.Now()
	if err := cli.Ping(); err != nil || time.Since(start) > 100*time.Millisecond {
		t.Fatalf("ping after remove: %v after %v", err, time.Since(start))
	}
}

func TestCloseDuringStalledRequest(t *testing.T) {
	srv, err := iggytest.Start(iggytest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cli := login(t, srv.Addr())
	setupTopic(t, cli, "s", "t", 1)
	h := srv.Stall(iggytest.CmdSendMessages)
	done := make(chan error, 1)
	go func() { done <- send(t, cli, "never") }()
	if err := h.WaitFired(ctxTimeout(t, 5*time.Second), 1); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := srv.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("close took %v", d)
	}
	select {
	case err := <-done:
		if !isTransportErr(err) {
			t.Fatalf("stalled send = %v, want a transport error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("client still blocked after close")
	}
	if n := srv.MessageCount("s", "t"); n != 0 {
		t.Fatalf("abandoned request was applied")
	}
}

func TestRestartKeepsDataAndPort(t *testing.T) {
	srv := startServer(t, iggytest.Options{})
	addr := srv.Addr()
	cli := login(t, addr)
	setupTopic(t, cli, "s", "t", 1)
	if err := send(t, cli, "before"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatalf("restart: %v", err)
	}
	if srv.Addr() != addr {
		t.Fatalf("address changed: %s -> %s", addr, srv.Addr())
	}
	if err := cli.Ping(); !isTransportErr(err) {
		t.Fatalf("old connection after restart: %v", err)
	}
	cli2 := login(t, addr)
	if err := send(t, cli2, "after"); err != nil {
		t.Fatalf("send after restart: %v", err)
	}
	pm, err := cli2.PollMessages(id(t, "s"), id(t, "t"), iggcon.DefaultConsumer(), iggcon.FirstPollingStrategy(), 10, false, nil)
	if err != nil || len(pm.Messages) != 2 || string(pm.Messages[0].Payload) != "before" || pm.Messages[1].Header.Offset != 1 {
		t.Fatalf("poll after restart = %+v, %v", pm, err)
	}

	// Stop: nothing listens; Resume: back on the same port.
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		_ = c.Close()
		t.Fatal("dial succeeded while stopped")
	}
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	if err := login(t, addr).Ping(); err != nil {
		t.Fatal(err)
	}
}

func TestCloseStopsGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	srv, err := iggytest.Start(iggytest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := srv.Stall(iggytest.CmdPing)
	var conns []net.Conn
	for i := 0; i < 3; i++ {
		c, err := net.Dial("tcp", srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	// One connection has a stalled ping.
	if _, err := conns[0].Write([]byte{4, 0, 0, 0, 1, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	if err := h.WaitFired(ctxTimeout(t, 5*time.Second), 1); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range conns {
		_ = c.Close()
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("goroutines: %d before, %d after close\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
	if err := srv.Resume(); err == nil {
		t.Fatal("resume after close succeeded")
	}
}

func TestGracefulStopSaysDisconnected(t *testing.T) {
	srv := startServer(t, iggytest.Options{GracefulStop: true})
	cli := login(t, srv.Addr())
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	// The server sent error 8 before closing; the SDK reads it as the answer
	// to its next request, and the connection is dead after that.
	mustIs(t, cli.Ping(), ierror.ErrDisconnected)
	if err := cli.Ping(); !isTransportErr(err) {
		t.Fatalf("second ping = %v, want a transport error", err)
	}
	if err := login(t, srv.Addr()).Ping(); err != nil {
		t.Fatalf("new connection after graceful restart: %v", err)
	}
}

// A server that answers cluster metadata with FeatureUnavailable (as some
// 0.8 builds with clustering off are described to) does not stop the SDK's login.
func TestLoginWhenClusterMetadataUnavailable(t *testing.T) {
	srv := startServer(t, iggytest.Options{})
	h := srv.FailWith(iggytest.CmdGetClusterMetadata, iggytest.CodeFeatureUnavailable)
	cli := login(t, srv.Addr())
	if h.Fired() != 1 {
		t.Fatalf("cluster metadata requested %d times during login", h.Fired())
	}
	if _, err := cli.CreateStream("ok"); err != nil {
		t.Fatal(err)
	}
}
