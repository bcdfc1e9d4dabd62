package fluss

import (
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	var b Backoff
	for i, want := range []time.Duration{100, 200, 400, 800, 1600, 3200, 5000, 5000} {
		want *= time.Millisecond
		d := b.Delay(i)
		if d < want*8/10 || d > want*12/10 {
			t.Errorf("attempt %d: %s not within 20%% of %s", i, d, want)
		}
	}
	fixed := Backoff{Initial: time.Millisecond, Max: 4 * time.Millisecond}
	if d := fixed.Delay(10); d != 4*time.Millisecond {
		t.Errorf("capped delay = %s", d)
	}
}
