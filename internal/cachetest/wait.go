package cachetest

import (
	"testing"
	"time"
)

// WaitFor polls cond until it holds, failing t if it does not within 30s.
// It is for effects the test cannot observe by an event (a TTL lapsing on a
// real redis-server): the test proceeds as soon as cond holds, so it never
// waits longer than needed and never asserts before the effect.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after 30s waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
