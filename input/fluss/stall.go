package flussinput

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// fiFieldStallTimeout is the field that sets how long the input may make no
// progress while rows wait before it reports itself stalled.
const fiFieldStallTimeout = "stall_timeout"

// stallTimeoutField is the spec of stall_timeout.
func stallTimeoutField() *service.ConfigField {
	return service.NewDurationField(fiFieldStallTimeout).
		Description("How long the input may go without progress (no committed offset moves) while its buckets have lag (rows between the committed offsets and the high watermarks) before it reports a stall: the gauge `fluss_input_stalled` goes to 1, a warning names the table, the lag and since when, and Benthos's `/ready` answers 503 with the reason, until rows are acknowledged again (reading and acknowledging go on meanwhile). A table at lag 0 is never stalled. `0s` disables it.").
		Default("5m").
		Advanced().
		LintRule(lintRule(fiFieldStallTimeout))
}

// parseStallTimeout reads stall_timeout.
func parseStallTimeout(pc *service.ParsedConfig) (time.Duration, error) {
	return durationField(pc, fiFieldStallTimeout, true)
}

// stallWatch is the input's stall state. The monitor (monitor.go) decides
// when the input is stalled; this reports it through Benthos's connection
// status, which is what /ready reads: the status fails when ReadBatch
// returns ErrNotConnected and carries the error of the next Connect.
//
// Benthos does not call ReadBatch while the status is failing, so the
// report must never keep back what only ReadBatch can do:
//
//   - only a read that has waited a whole monitor tick while stalled (it had
//     nothing to hand out) is interrupted; one that gathers a batch for the
//     batching policy is not;
//   - Connect, with the connection still up, first returns the stall as its
//     error (the reason /ready shows), then waits without an error until
//     progress ends the stall or ReadBatch has something to do again (rows
//     queued and a checkpoint_limit slot free, a nacked batch to deliver
//     again, the worker stopped), and returns nil;
//   - acknowledgements do not go through ReadBatch, so they keep moving the
//     committed offsets (progress) all along.
//
// A pipeline that is full (the output blocks, with more batches allowed by
// checkpoint_limit than the pipeline holds) keeps Benthos waiting to hand
// over a batch, not in ReadBatch: the status cannot change then, but the
// gauge and the warning still report the stall.
type stallWatch struct {
	timeout time.Duration // stall_timeout; 0: off
	tick    time.Duration // the monitor's period

	mu         sync.Mutex
	stalled    bool
	since      time.Time // the last progress before the stall
	lag        int64     // the lag when the stall was last seen
	readCancel context.CancelFunc
	readSince  time.Time
	reported   bool // Connect returned the stall as its error since the interruption
}

// monitorTickMax is the longest period of the monitor.
const monitorTickMax = time.Second

func newStallWatch(timeout time.Duration) *stallWatch {
	tick := monitorTickMax
	if timeout > 0 {
		tick = min(tick, max(timeout/10, 10*time.Millisecond))
	}
	return &stallWatch{timeout: timeout, tick: tick}
}

// watchRead returns the context of a read the stall may interrupt and its
// cancel function, to pass to readDone.
func (s *stallWatch) watchRead(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.timeout == 0 {
		return ctx, nil
	}
	rctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	s.readCancel, s.readSince = cancel, time.Now()
	s.mu.Unlock()
	return rctx, cancel
}

// readDone ends a read started with watchRead.
func (s *stallWatch) readDone(cancel context.CancelFunc) {
	if cancel == nil {
		return
	}
	s.mu.Lock()
	s.readCancel = nil
	s.mu.Unlock()
	cancel()
}

// interruptIdleRead interrupts, while stalled, a read that has waited at
// least a tick.
func (s *stallWatch) interruptIdleRead(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stalled && s.readCancel != nil && now.Sub(s.readSince) >= s.tick {
		s.readCancel()
		s.readCancel = nil
	}
}

// begin records the start of a stall.
func (s *stallWatch) begin(since time.Time, lag int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stalled, s.since, s.lag = true, since, lag
}

// setLag records the lag seen during a stall.
func (s *stallWatch) setLag(lag int64) {
	s.mu.Lock()
	s.lag = lag
	s.mu.Unlock()
}

// end records the end of a stall.
func (s *stallWatch) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stalled = false
}

// sinceTime returns the last progress before the stall.
func (s *stallWatch) sinceTime() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.since
}

func (s *stallWatch) isStalled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stalled
}

// errLocked is the stall as Connect reports it (and /ready shows it).
func (s *stallWatch) errLocked(table string) error {
	return fmt.Errorf("table %s is stalled: no rows acknowledged since %s (%v) with %s rows of lag (%s: %v); still reading",
		table, s.since.UTC().Format(time.RFC3339), roundDuration(time.Since(s.since)), thousands(s.lag), fiFieldStallTimeout, s.timeout)
}

// hold is Connect while the connection is up (a read was interrupted by a
// stall): see stallWatch. hasWork reports whether ReadBatch has something
// to do.
func (s *stallWatch) hold(ctx context.Context, table string, hasWork func() bool) error {
	work := hasWork()
	s.mu.Lock()
	if s.stalled && !s.reported && !work {
		s.reported = true
		err := s.errLocked(table)
		s.mu.Unlock()
		return service.NewErrBackOff(err, 0)
	}
	s.mu.Unlock()
	t := time.NewTicker(s.tick)
	defer t.Stop()
	for !work && s.isStalled() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		work = hasWork()
	}
	s.mu.Lock()
	s.reported = false
	s.mu.Unlock()
	return nil
}

// readHasWork reports whether ReadBatch could hand something out now, or
// must run to reconnect.
func (in *input) readHasWork() bool {
	in.mu.Lock()
	c := in.conn
	in.mu.Unlock()
	if c == nil {
		return true
	}
	select {
	case <-c.done:
		return true
	default:
	}
	if in.retryPending != nil && in.retryPending() {
		return true
	}
	return in.cp.inFlight() < in.conf.checkpointLimit && len(c.units) > 0 && !in.gate.full()
}
