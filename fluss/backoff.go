package fluss

import (
	"math/rand/v2"
	"time"
)

// Backoff is the client's retry policy (see RetryBackoff): the delays
// between retries of requests and redials, Initial * Multiplier^attempt,
// capped at Max, with +/- Jitter (a fraction) of randomness. The zero value
// uses the Fluss Java client's defaults: 100 ms, x2, 5 s, 0.2.
type Backoff struct {
	Initial    time.Duration
	Max        time.Duration
	Multiplier float64
	Jitter     float64
}

// Delay returns the wait before retry number attempt (0-based).
func (b Backoff) Delay(attempt int) time.Duration {
	initial, max, mult, jitter := b.Initial, b.Max, b.Multiplier, b.Jitter
	if initial <= 0 {
		initial = 100 * time.Millisecond
	}
	if max <= 0 {
		max = 5 * time.Second
	}
	if mult < 1 {
		mult = 2
	}
	if jitter < 0 || jitter >= 1 {
		jitter = 0
	} else if b == (Backoff{}) {
		jitter = 0.2
	}
	d := float64(initial)
	for i := 0; i < attempt && d < float64(max); i++ {
		d *= mult
	}
	if d > float64(max) {
		d = float64(max)
	}
	if jitter > 0 {
		d *= 1 + jitter*(2*rand.Float64()-1)
	}
	return time.Duration(d)
}
