package iggytest

import (
	"context"
	"sync"
	"time"
)

// FaultAction is what a fault does to a request it fires on.
type FaultAction int

const (
	// FaultDrop closes the connection instead of handling the request: the
	// request has no effect and gets no answer.
	FaultDrop FaultAction = iota + 1
	// FaultDropAfterHandling handles the request (for SendMessages: the
	// messages are stored) and then closes the connection without answering,
	// as a server that crashes after committing but before replying.
	FaultDropAfterHandling
	// FaultStall holds the request, unhandled and unanswered, until the fault
	// is released (FaultHandle.Release) or Fault.StallFor has passed; then it
	// is handled and answered normally.
	FaultStall
	// FaultFail answers the request with the error Fault.Code (no payload)
	// without handling it. On a 0.9 send, Code 0 is the answer a released
	// Iggy 0.9.0 gives a send it took for a duplicate: status 0, an empty
	// body, nothing stored.
	FaultFail
)

// Fault describes an injected failure.
type Fault struct {
	// Command is the command the fault applies to; CmdAny matches all.
	Command Command
	// Action is what happens to a request the fault fires on.
	Action FaultAction
	// After is the number of matching requests that pass untouched before the
	// fault starts firing (counted from Inject).
	After int
	// Times is how many matching requests the fault fires on; 0 means every
	// one until the fault is removed.
	Times int
	// Code is the error code a FaultFail answers with.
	Code uint32
	// StallFor is how long a FaultStall holds each request; 0 means until
	// FaultHandle.Release.
	StallFor time.Duration
}

// FaultHandle controls an injected fault.
type FaultHandle struct {
	s       *Server
	f       Fault
	seen    int // guarded by s.mu
	fired   int // guarded by s.mu
	removed bool
	changed chan struct{} // closed and replaced whenever fired changes; guarded by s.mu

	releaseOnce sync.Once
	released    chan struct{}
}

// Inject registers a fault and returns its handle. Faults are checked in
// the order they were injected; the first one that fires on a request acts.
func (s *Server) Inject(f Fault) *FaultHandle {
	h := &FaultHandle{s: s, f: f, changed: make(chan struct{}), released: make(chan struct{})}
	s.mu.Lock()
	s.faults = append(s.faults, h)
	s.mu.Unlock()
	return h
}

// DropAfter lets n requests of cmd through, then closes the connection that
// sends the next one, without handling it (once).
func (s *Server) DropAfter(cmd Command, n int) *FaultHandle {
	return s.Inject(Fault{Command: cmd, Action: FaultDrop, After: n, Times: 1})
}

// AnswerSendsAsDuplicates lets after sends through, then answers the
// next times sends (0.9) as a released 0.9.0 server answers a send it took
// for a duplicate: status 0 and an empty body, without storing it.
func (s *Server) AnswerSendsAsDuplicates(after, times int) *FaultHandle {
	return s.Inject(Fault{Command: CmdSendMessages, Action: FaultFail, After: after, Times: times})
}

// Stall holds every request of cmd, unanswered, until the returned handle is
// released (or the server stopped, or the connection dropped).
func (s *Server) Stall(cmd Command) *FaultHandle {
	return s.Inject(Fault{Command: cmd, Action: FaultStall})
}

// StallFor delays the handling and answer of every request of cmd by d,
// until the returned handle is removed.
func (s *Server) StallFor(cmd Command, d time.Duration) *FaultHandle {
	return s.Inject(Fault{Command: cmd, Action: FaultStall, StallFor: d})
}

// FailWith answers every request of cmd with the error code, until the
// returned handle is removed.
func (s *Server) FailWith(cmd Command, code uint32) *FaultHandle {
	return s.Inject(Fault{Command: cmd, Action: FaultFail, Code: code})
}

// FailTimes answers the next n requests of cmd with the error code (for
// example a StoreConsumerOffset refused n times), then lets them through;
// n 0 fails every one, as FailWith.
func (s *Server) FailTimes(cmd Command, code uint32, n int) *FaultHandle {
	return s.Inject(Fault{Command: cmd, Action: FaultFail, Code: code, Times: n})
}

// ClearFaults removes every fault and releases every stalled request.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	faults := s.faults
	s.faults = nil
	for _, h := range faults {
		h.removed = true
	}
	s.mu.Unlock()
	for _, h := range faults {
		h.releaseOnce.Do(func() { close(h.released) })
	}
}

// Release stops the fault from firing again and lets every request it is
// stalling go on (they are then handled and answered).
func (h *FaultHandle) Release() {
	h.s.mu.Lock()
	h.removed = true
	for i, o := range h.s.faults {
		if o == h {
			h.s.faults = append(h.s.faults[:i:i], h.s.faults[i+1:]...)
			break
		}
	}
	h.s.mu.Unlock()
	h.releaseOnce.Do(func() { close(h.released) })
}

// Remove is Release: the fault stops firing and stalled requests go on.
func (h *FaultHandle) Remove() { h.Release() }

// Fired returns how many requests the fault has fired on.
func (h *FaultHandle) Fired() int {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	return h.fired
}

// WaitFired waits until the fault has fired on at least n requests (for a
// stall: n requests are being held), or ctx ends.
func (h *FaultHandle) WaitFired(ctx context.Context, n int) error {
	for {
		h.s.mu.Lock()
		fired, ch := h.fired, h.changed
		h.s.mu.Unlock()
		if fired >= n {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// matchFaultLocked counts the request against every matching fault and
// returns the first that fires on it, or nil.
func (s *Server) matchFaultLocked(code Command) *FaultHandle {
	var hit *FaultHandle
	for _, h := range s.faults {
		if h.removed || (h.f.Command != CmdAny && h.f.Command != code) {
			continue
		}
		h.seen++
		if hit != nil || h.seen <= h.f.After || (h.f.Times > 0 && h.fired >= h.f.Times) {
			continue
		}
		hit = h
		h.fired++
		close(h.changed)
		h.changed = make(chan struct{})
	}
	return hit
}

// wait holds a stalled request. It returns false when the request must be
// abandoned (server stopped or connection dropped).
func (h *FaultHandle) wait(c *conn) bool {
	var timeout <-chan time.Time
	if h.f.StallFor > 0 {
		t := time.NewTimer(h.f.StallFor)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-h.released:
		return true
	case <-timeout:
		return true
	case <-c.done:
		return false
	case <-c.stopCh:
		return false
	}
}

// verdict is what the faults decided about one request.
type verdict struct {
	drop      bool   // close the connection; the request is not handled
	fail      bool   // answer with failCode instead of handling it
	failCode  uint32 // the error a failing fault answers with
	dropAfter bool   // handle it, then close without answering
}

// admit counts a request of cmd and applies the first fault that fires on
// it, waiting out a stall. A stalled request that is abandoned (server
// stopped, connection dropped) comes back as a drop.
func (s *Server) admit(c *conn, cmd Command) verdict {
	s.mu.Lock()
	s.counts[cmd]++
	h := s.matchFaultLocked(cmd)
	s.mu.Unlock()
	if h == nil {
		return verdict{}
	}
	switch h.f.Action {
	case FaultDrop:
		return verdict{drop: true}
	case FaultFail:
		return verdict{fail: true, failCode: h.f.Code}
	case FaultDropAfterHandling:
		return verdict{dropAfter: true}
	case FaultStall:
		if !h.wait(c) {
			return verdict{drop: true}
		}
	}
	return verdict{}
}
