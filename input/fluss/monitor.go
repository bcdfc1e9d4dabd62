package flussinput

import (
	"time"
)

// streamProgressInterval is how often a streaming run (without end_at)
// logs its progress; tests shorten it.
var streamProgressInterval = 30 * time.Second

// monitor watches the committed offsets and the lag of a running input
// (one goroutine, from the first start until Close): a streaming run logs
// its progress every streamProgressInterval, and that it caught up with
// the table; every run reports stalls (stallWatch).
type monitor struct {
	in       *input
	streamed bool // a streaming run: progress and caught-up lines

	prev     map[bucketKey][2]int64 // committed (and persisted) offsets at the last tick
	progress time.Time              // the last progress, or when the lag was last 0
	lineAt   time.Time              // the last progress line
	lineRows int64                  // rows committed since that line
	started  time.Time
	total    int64               // rows committed since the start
	targets  map[bucketKey]int64 // high watermarks to reach to be caught up (nil: caught up)
}

// startMonitorLocked starts the monitor, once, with the flusher's stop
// channel.
func (in *input) startMonitorLocked() {
	if in.monitoring || in.flushStop == nil {
		return
	}
	in.monitoring = true
	now := time.Now()
	m := &monitor{in: in, streamed: in.endOffsets == nil, prev: in.cp.positions(), progress: now, lineAt: now, started: now,
		targets: map[bucketKey]int64{}}
	in.metrics.stalled.Set(0)
	go m.run(in.flushStop)
}

func (m *monitor) run(stop <-chan struct{}) {
	tick := m.in.stall.tick
	if m.streamed {
		tick = min(tick, streamProgressInterval)
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			m.step(now)
		}
	}
}

// step is one tick: rows committed since the last one, the lag, and what
// they mean.
func (m *monitor) step(now time.Time) {
	cur := m.in.cp.positions()
	moved := committedSince(m.prev, cur)
	m.prev = cur
	lag, hws := m.in.lagOf(cur)
	m.total += moved
	m.lineRows += moved
	if m.streamed {
		m.logProgress(now, lag)
		m.checkCaughtUp(cur, hws)
	}
	m.checkStall(now, moved, lag)
}

// committedSince sums how far each bucket's committed offset moved forward.
func committedSince(prev, cur map[bucketKey][2]int64) int64 {
	var n int64
	for k, p := range cur {
		if old, ok := prev[k]; ok && p[0] > old[0] {
			n += p[0] - old[0]
		}
	}
	return n
}

// lagOf returns the total lag of the buckets at positions pos (high
// watermark minus committed offset) and the high watermarks it knows.
func (in *input) lagOf(pos map[bucketKey][2]int64) (int64, map[bucketKey]int64) {
	in.hwMu.Lock()
	defer in.hwMu.Unlock()
	var lag int64
	hws := make(map[bucketKey]int64, len(pos))
	for k, p := range pos {
		if hw, ok := in.hw[k]; ok {
			hws[k] = hw
			lag += max(hw-p[0], 0)
		}
	}
	return lag, hws
}

// logProgress logs, every streamProgressInterval, the rows committed since
// the last line, their rate and the lag, when any of them is not zero.
func (m *monitor) logProgress(now time.Time, lag int64) {
	d := now.Sub(m.lineAt)
	if d < streamProgressInterval {
		return
	}
	if m.lineRows > 0 || lag > 0 {
		m.in.log.Infof("Table %s: %s rows delivered in the last %v (%s rows/s), lag %s rows",
			m.in.tablePath(), thousands(m.lineRows), roundDuration(d), thousands(perSecond(m.lineRows, d)), thousands(lag))
	}
	m.lineAt, m.lineRows = now, 0
}

// checkCaughtUp logs, once per run and again after each stall, when every
// bucket's committed offset has reached the high watermark first seen for
// it (since the start, or since the stall ended).
func (m *monitor) checkCaughtUp(cur map[bucketKey][2]int64, hws map[bucketKey]int64) {
	if m.targets == nil || len(cur) == 0 {
		return
	}
	behind := false
	for k, p := range cur {
		hw, ok := hws[k]
		if !ok {
			behind = true
			continue
		}
		target, ok := m.targets[k]
		if !ok {
			target = hw
			m.targets[k] = hw
		}
		if p[0] < target {
			behind = true
		}
	}
	if behind {
		return
	}
	m.targets = nil
	m.in.log.Infof("Caught up with table %s: every bucket's committed offset reached its high watermark (%d bucket(s), %s rows delivered in %v)",
		m.in.tablePath(), len(cur), thousands(m.total), roundDuration(time.Since(m.started)))
}

// checkStall starts and ends stalls: no rows committed while the lag stays
// above 0 for stall_timeout.
func (m *monitor) checkStall(now time.Time, moved, lag int64) {
	s := m.in.stall
	if s.timeout == 0 {
		return
	}
	if moved > 0 || lag == 0 {
		m.progress = now
	}
	stalled := s.isStalled()
	switch {
	case !stalled && now.Sub(m.progress) >= s.timeout:
		s.begin(m.progress, lag)
		m.in.metrics.stalled.Set(1)
		m.in.log.Warnf("Table %s is stalled: no rows acknowledged for %v (since %s) with %s rows of lag; /ready answers 503 until rows move again (%s: %v)",
			m.in.tablePath(), roundDuration(now.Sub(m.progress)), m.progress.UTC().Format(time.RFC3339), thousands(lag), fiFieldStallTimeout, s.timeout)
	case stalled && (moved > 0 || lag == 0):
		s.end()
		m.in.metrics.stalled.Set(0)
		m.in.log.Infof("Table %s is moving again after %v without progress (lag %s rows)",
			m.in.tablePath(), roundDuration(now.Sub(s.sinceTime())), thousands(lag))
		if m.streamed && m.targets == nil {
			m.targets = map[bucketKey]int64{} // log the next catch-up
		}
	case stalled:
		s.setLag(lag)
	}
	s.interruptIdleRead(now)
}
