// Package testnet holds network fixtures shared by tests of several
// packages: servers that misbehave in ways a client must survive.
package testnet

import (
	"net"
	"sync"
	"testing"
)

// Silent starts a TCP server on 127.0.0.1 that accepts connections and never
// answers, and returns its address. The listener and every accepted
// connection are closed when the test ends.
func Silent(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		done  = make(chan struct{})
	)
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return ln.Addr().String()
}

// Closed returns an address on 127.0.0.1 that nothing listens on: a port
// that was free a moment ago, so a dial is refused.
func Closed(t testing.TB) string {
	t.Helper()
	return closed(t, 1)[0]
}

// ClosedPair returns two different addresses nobody listens on.
func ClosedPair(t testing.TB) (string, string) {
	t.Helper()
	a := closed(t, 2)
	return a[0], a[1]
}

// closed returns n different refused addresses: all are bound before any is
// closed, so the kernel cannot hand out one port twice.
func closed(t testing.TB, n int) []string {
	t.Helper()
	addrs := make([]string, n)
	for i := range addrs {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		addrs[i] = ln.Addr().String()
	}
	return addrs
}
