package flussinput

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// The monitor's stall: no committed offset moving while the lag is above 0
// for stall_timeout; it ends with the first rows committed, and a read
// waiting during it is interrupted after a tick; at lag 0 nothing stalls.
func TestMonitorStall(t *testing.T) {
	in, _ := newTestInput(t, "stall_timeout: 1s\n")
	in.cp.setTableID(7)
	in.cp.start(kb0, "", 0)
	in.setHighWatermark(kb0, "", 0)
	t0 := time.Now().Add(-time.Minute) // before the read below starts
	m := &monitor{in: in, prev: in.cp.positions(), progress: t0}
	m.step(t0.Add(5 * time.Second))
	if in.stall.isStalled() {
		t.Fatal("stalled at lag 0")
	}
	in.setHighWatermark(kb0, "", 100)
	m.step(t0.Add(5500 * time.Millisecond))
	m.step(t0.Add(5900 * time.Millisecond))
	if in.stall.isStalled() {
		t.Fatal("stalled before stall_timeout")
	}
	ctx, done := in.stall.watchRead(context.Background())
	m.step(t0.Add(6100 * time.Millisecond))
	if !in.stall.isStalled() {
		t.Fatal("not stalled after stall_timeout with lag 100")
	}
	if ctx.Err() != nil {
		t.Fatal("a read that started less than a tick ago was interrupted")
	}
	m.step(time.Now().Add(time.Second))
	if ctx.Err() == nil {
		t.Fatal("a read waiting a tick while stalled was not interrupted")
	}
	in.stall.readDone(done)
	if err := in.stall.errLocked(in.tablePath()); !strings.Contains(err.Error(), "is stalled: no rows acknowledged since") || !strings.Contains(err.Error(), "with 100 rows of lag (stall_timeout: 1s)") {
		t.Errorf("stall error: %v", err)
	}
	e, err := in.cp.track(kb0, 0, 10, &flight{})
	if err != nil {
		t.Fatal(err)
	}
	in.cp.ack([]*entry{e})
	m.step(time.Now().Add(2 * time.Second))
	if in.stall.isStalled() {
		t.Fatal("still stalled after rows were committed")
	}
}

// Connect during a stall first returns the stall (the reason /ready
// shows), then waits, and returns nil as soon as ReadBatch has work or
// the stall ends: it never keeps back what only ReadBatch can do.
func TestStallHold(t *testing.T) {
	s := newStallWatch(100 * time.Millisecond)
	s.begin(time.Now(), 42)
	var work atomic.Bool
	hasWork := func() bool { return work.Load() }
	err := s.hold(context.Background(), "db.t", hasWork)
	var bo *service.ErrBackOff
	if !errors.As(err, &bo) || !strings.Contains(err.Error(), "table db.t is stalled") || !strings.Contains(err.Error(), "42 rows of lag") {
		t.Fatalf("first Connect of a stall: %v", err)
	}
	for name, release := range map[string]func(){"work": func() { work.Store(true) }, "progress": s.end} {
		done := make(chan error, 1)
		go func() { done <- s.hold(context.Background(), "db.t", hasWork) }()
		select {
		case err := <-done:
			t.Fatalf("%s: Connect returned %v before anything changed", name, err)
		case <-time.After(50 * time.Millisecond):
		}
		release()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		case <-time.After(time.Second):
			t.Fatalf("%s: Connect still waits", name)
		}
		work.Store(false)
		s.begin(time.Now(), 42)
		s.reported = true // the stall was reported: the next Connect waits
	}
	// A stall that has work to do is not reported: ReadBatch runs.
	s.reported = false
	work.Store(true)
	if err := s.hold(context.Background(), "db.t", hasWork); err != nil {
		t.Errorf("with work to do: %v", err)
	}
}
