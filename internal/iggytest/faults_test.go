package iggytest

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"runtime"
	"testing"
	"time"
)

// The fault injection and lifecycle tests, in both dialects.

// setupT creates stream "s" with topic "t" through the client.
func setupT(t *testing.T, c *tclient, partitions uint32) {
	t.Helper()
	if err := c.createStream("s"); err != nil {
		t.Fatalf("create stream: %v", err)
	}
	if err := c.createTopic("s", "t", partitions); err != nil {
		t.Fatalf("create topic: %v", err)
	}
}

// sendT sends one message to partition 0 of s/t.
func sendT(c *tclient, payload string) error { return c.send("s", "t", 0, payload) }

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestDropConnectionsNow(t *testing.T) {
	forVersions(t, func(t *testing.T, v Version) {
		srv := startT(t, Options{Version: v})
		a, b := loginT(t, srv), loginT(t, srv)
		if n := srv.Connections(); n != 2 {
			t.Fatalf("connections = %d", n)
		}
		if n := srv.DropConnections(); n != 2 {
			t.Fatalf("dropped %d", n)
		}
		for _, c := range []*tclient{a, b} {
			if err := c.ping(); !isTransport(err) {
				t.Fatalf("ping after drop = %v, want a transport error", err)
			}
		}
		if err := loginT(t, srv).ping(); err != nil { // the listener is still there
			t.Fatalf("ping on new connection: %v", err)
		}
	})
}

func TestDropAfterN(t *testing.T) {
	forVersions(t, func(t *testing.T, v Version) {
		srv := startT(t, Options{Version: v})
		cli := loginT(t, srv)
		setupT(t, cli, 1)
		h := srv.DropAfter(CmdSendMessages, 2)
		for i := 0; i < 2; i++ {
			if err := sendT(cli, "ok"); err != nil {
				t.Fatalf("send %d: %v", i, err)
			}
		}
		if err := sendT(cli, "dropped"); !isTransport(err) {
			t.Fatalf("3rd send = %v, want a transport error", err)
		}
		if h.Fired() != 1 {
			t.Fatalf("fired = %d", h.Fired())
		}
		if n := srv.MessageCount("s", "t"); n != 2 {
			t.Fatalf("stored %d messages, the dropped request must not be applied", n)
		}
		if err := sendT(loginT(t, srv), "after"); err != nil { // fires once only
			t.Fatalf("send after: %v", err)
		}
		if got := srv.RequestCount(CmdSendMessages); got != 4 {
			t.Fatalf("send requests = %d", got)
		}
	})
}

func TestDropAfterHandling(t *testing.T) {
	forVersions(t, func(t *testing.T, v Version) {
		srv := startT(t, Options{Version: v})
		cli := loginT(t, srv)
		setupT(t, cli, 1)
		srv.Inject(Fault{Command: CmdSendMessages, Action: FaultDropAfterHandling, Times: 1})
		if err := sendT(cli, "applied"); !isTransport(err) {
			t.Fatalf("send = %v, want a transport error", err)
		}
		if msgs := srv.Messages("s", "t"); len(msgs) != 1 || string(msgs[0].Payload) != "applied" {
			t.Fatalf("stored = %+v", msgs)
		}
	})
}

func TestFailWithCode(t *testing.T) {
	forVersions(t, func(t *testing.T, v Version) {
		srv := startT(t, Options{Version: v})
		cli := loginT(t, srv)
		setupT(t, cli, 1)
		h := srv.FailWith(CmdSendMessages, CodeUnauthorized)
		if err := sendT(cli, "x"); !isStatus(err, CodeUnauthorized) {
			t.Fatalf("send = %v, want error %d", err, CodeUnauthorized)
		}
		h.Remove()
		if err := sendT(cli, "y"); err != nil {
			t.Fatalf("send after remove: %v", err)
		}
		// After / Times: the 2nd and 3rd create-stream fail, the others pass.
		srv.Inject(Fault{Command: CmdCreateStream, Action: FaultFail, Code: CodeFeatureUnavailable, After: 1, Times: 2})
		for i, name := range []string{"a", "b", "c", "d"} {
			err := cli.createStream(name)
			if fail := i == 1 || i == 2; fail != isStatus(err, CodeFeatureUnavailable) || !fail && err != nil {
				t.Fatalf("create %s: %v", name, err)
			}
		}
		if n := srv.MessageCount("s", "t"); n != 1 {
			t.Fatalf("stored %d", n)
		}
	})
}

func TestStallUntilReleased(t *testing.T) {
	forVersions(t, func(t *testing.T, v Version) {
		srv := startT(t, Options{Version: v})
		cli := loginT(t, srv)
		setupT(t, cli, 1)
		h := srv.Stall(CmdSendMessages)
		done := make(chan error, 1)
		go func() { done <- sendT(cli, "late") }()
		if err := h.WaitFired(ctxT(t, 5*time.Second), 1); err != nil {
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
	})
}

func TestStallForDuration(t *testing.T) {
	forVersions(t, func(t *testing.T, v Version) {
		srv := startT(t, Options{Version: v})
		cli := loginT(t, srv)
		h := srv.StallFor(CmdPing, time.Second)
		start := time.Now()
		if err := cli.ping(); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d < time.Second {
			t.Fatalf("ping answered after %v", d)
		}
		h.Remove()
		start = time.Now()
		// Well under the stall, with room for a loaded machine.
		if err := cli.ping(); err != nil || time.Since(start) > 500*time.Millisecond {
			t.Fatalf("ping after remove: %v after %v", err, time.Since(start))
		}
	})
}

func TestCloseDuringStalledRequest(t *testing.T) {
	forVersions(t, func(t *testing.T, v Version) {
		srv, err := Start(Options{Version: v})
		if err != nil {
			t.Fatal(err)
		}
		cli := loginT(t, srv)
		setupT(t, cli, 1)
		h := srv.Stall(CmdSendMessages)
		done := make(chan error, 1)
		go func() { done <- sendT(cli, "never") }()
		if err := h.WaitFired(ctxT(t, 5*time.Second), 1); err != nil {
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
			if !isTransport(err) {
				t.Fatalf("stalled send = %v, want a transport error", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("client still blocked after close")
		}
		if n := srv.MessageCount("s", "t"); n != 0 {
			t.Fatalf("abandoned request was applied")
		}
	})
}

func TestRestartKeepsDataAndPort(t *testing.T) {
	forVersions(t, func(t *testing.T, v Version) {
		srv := startT(t, Options{Version: v})
		addr := srv.Addr()
		cli := loginT(t, srv)
		setupT(t, cli, 1)
		if err := sendT(cli, "before"); err != nil {
			t.Fatal(err)
		}
		if err := srv.Restart(); err != nil {
			t.Fatalf("restart: %v", err)
		}
		if srv.Addr() != addr {
			t.Fatalf("address changed: %s -> %s", addr, srv.Addr())
		}
		if err := cli.ping(); !isTransport(err) {
			t.Fatalf("old connection after restart: %v", err)
		}
		cli2 := loginT(t, srv)
		if err := sendT(cli2, "after"); err != nil {
			t.Fatalf("send after restart: %v", err)
		}
		got, err := cli2.poll("s", "t", 0, 0, 10)
		if err != nil || len(got) != 2 || got[0] != "before" || got[1] != "after" {
			t.Fatalf("poll after restart = %q, %v", got, err)
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
		if err := loginT(t, srv).ping(); err != nil {
			t.Fatal(err)
		}
	})
}

// pingFrame is a ping request in the dialect.
func pingFrame(v Version) []byte {
	if v == Version08 {
		return requestFrame(CmdPing, nil)
	}
	return request09Frame(u128{1}, opNonReplicated, uint32(CmdPing), 1, 0, nil, false)
}

func TestCloseStopsGoroutines(t *testing.T) {
	forVersions(t, func(t *testing.T, v Version) {
		before := runtime.NumGoroutine()
		srv, err := Start(Options{Version: v})
		if err != nil {
			t.Fatal(err)
		}
		h := srv.Stall(CmdPing)
		var conns []net.Conn
		for i := 0; i < 3; i++ {
			c, err := net.Dial("tcp", srv.Addr())
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
		}
		if _, err := conns[0].Write(pingFrame(v)); err != nil { // a stalled ping
			t.Fatal(err)
		}
		if err := h.WaitFired(ctxT(t, 5*time.Second), 1); err != nil {
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
	})
}

// A graceful stop closes every connection; a 0.8 server first says
// Disconnected (error response 8), a 0.9 server nothing.
func TestGracefulStop(t *testing.T) {
	forVersions(t, func(t *testing.T, v Version) {
		srv := startT(t, Options{Version: v, GracefulStop: true})
		cli := loginT(t, srv)
		if err := srv.Restart(); err != nil {
			t.Fatal(err)
		}
		_ = cli.c.SetReadDeadline(time.Now().Add(5 * time.Second))
		rest, err := io.ReadAll(cli.c)
		if err != nil {
			t.Fatalf("reading after the stop: %v", err)
		}
		if v == Version08 && (len(rest) != 8 || binary.LittleEndian.Uint32(rest) != CodeDisconnected) ||
			v != Version08 && len(rest) != 0 {
			t.Fatalf("the server sent %x, then closed", rest)
		}
		if err := loginT(t, srv).ping(); err != nil {
			t.Fatalf("new connection after graceful restart: %v", err)
		}
	})
}
