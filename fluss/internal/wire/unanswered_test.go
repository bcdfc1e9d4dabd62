package wire

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
)

// silentPeer accepts connections, reads what comes and never answers.
func silentPeer(sc *serverConn) {
	for {
		if _, ok := sc.read(); !ok {
			return
		}
	}
}

// A peer that closes the connection on the first request, or stays silent
// past the handshake time (its own timer, or the rest of the dial timeout
// when that is shorter), fails the dial with ErrNoAnswer saying how. On its
// own that is retriable (a server the metadata names may be going down);
// NotFlussIfUnanswered makes it the verdict ErrNotFluss, not retriable.
func TestDialUnanswered(t *testing.T) {
	closing := newFakeServer(t, func(sc *serverConn) { sc.read() })
	silent := newFakeServer(t, silentPeer)
	cases := []struct {
		name, addr string
		cfg        Config
		how        string
	}{
		{"closes", closing.addr(), Config{}, "it closed the connection instead of answering API_VERSIONS"},
		{"silent", silent.addr(), Config{HandshakeTimeout: 200 * time.Millisecond}, "it sent nothing within 200ms instead of answering API_VERSIONS"},
		{"silent past the dial timeout", silent.addr(), Config{DialTimeout: 300 * time.Millisecond}, "it sent nothing within 300ms instead of answering API_VERSIONS"},
	}
	for _, c := range cases {
		start := time.Now()
		_, err := Dial(context.Background(), c.addr, c.cfg)
		took := time.Since(start)
		var ce *ConnError
		if !errors.As(err, &ce) || ce.Op != "handshake" || !errors.Is(err, ErrNoAnswer) || errors.Is(err, ErrNotFluss) || !errcode.IsRetriable(err) {
			t.Errorf("%s: err = %v, want a retriable handshake ConnError with ErrNoAnswer", c.name, err)
			continue
		}
		if want := "fluss: connection to " + c.addr + ": handshake: " + c.how; err.Error() != want {
			t.Errorf("%s: error\n got  %q\n want %q", c.name, err, want)
		}
		if took > 2*time.Second {
			t.Errorf("%s: took %v", c.name, took)
		}
		verdict := NotFlussIfUnanswered(err)
		want := "fluss: " + c.addr + " did not answer as a Fluss server: " + c.how + "; is it ZooKeeper's or Iggy's port?"
		if !errors.Is(verdict, ErrNotFluss) || !errors.Is(verdict, ErrNoAnswer) || errcode.IsRetriable(verdict) || verdict.Error() != want {
			t.Errorf("%s: verdict %q (retriable %v), want %q, not retriable", c.name, verdict, errcode.IsRetriable(verdict), want)
		}
	}
}

// The caller's context ending during the handshake is the caller's doing:
// its error, not ErrNoAnswer.
func TestDialUnansweredCallerGaveUp(t *testing.T) {
	silent := newFakeServer(t, silentPeer)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := Dial(ctx, silent.addr(), Config{})
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrNoAnswer) {
		t.Fatalf("err = %v, want the context's deadline, not ErrNoAnswer", err)
	}
	if got := NotFlussIfUnanswered(err); got != err {
		t.Errorf("NotFlussIfUnanswered changed %v into %v", err, got)
	}
}

// A refused dial is not judged: it keeps its error, with a hint that a
// starting Fluss server looks like that too.
func TestRefusedDialSaysNothingListens(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	_, err = Dial(context.Background(), addr, Config{})
	want := "fluss: dial tcp " + addr + ": connect: connection refused; nothing listens there (is Fluss still starting?)"
	if err == nil || err.Error() != want || !errcode.IsRetriable(err) || errors.Is(err, ErrNoAnswer) {
		t.Fatalf("error\n got  %v\n want %q, retriable", err, want)
	}
	if NotFlussIfUnanswered(err) != err {
		t.Errorf("a refused dial was judged")
	}
	if strings.Count(err.Error(), addr) != 1 {
		t.Errorf("%q names the address more than once", err)
	}
}
