package iggy

import "time"

// Backoff spaces out reconnection attempts: Min after the first failure,
// doubling up to Max. Its zero value waits 1s doubling to 30s.
type Backoff struct {
	Min, Max time.Duration

	failures int
}

// Failed records a failed attempt and returns how many in a row have
// failed and how long until the next may start.
func (b *Backoff) Failed() (failures int, wait time.Duration) {
	lo, hi := b.Min, b.Max
	if lo <= 0 {
		lo = time.Second
	}
	if hi < lo {
		hi = 30 * time.Second
	}
	wait = lo
	for i := 1; i < b.failures+1 && wait < hi; i++ {
		wait *= 2
	}
	wait = min(wait, hi)
	b.failures++
	return b.failures, wait
}

// Succeeded resets the backoff.
func (b *Backoff) Succeeded() { b.failures = 0 }
