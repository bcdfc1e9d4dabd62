package flussinput

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

func TestRetryPause(t *testing.T) {
	for _, c := range []struct {
		attempt int
		want    time.Duration
	}{{1, 0}, {2, 0}, {3, time.Millisecond}, {4, 2 * time.Millisecond}, {12, 512 * time.Millisecond}, {13, time.Second}, {500, time.Second}} {
		if got := retryPause(c.attempt); got != c.want {
			t.Errorf("attempt %d: pause %v, want %v", c.attempt, got, c.want)
		}
	}
}

// After the input's end the replayer waits for the batches still out: a
// nack of one of them is delivered again rather than ending the input.
func TestReplayerWaitsForBatchesOutAtTheEnd(t *testing.T) {
	r := newReplayer(nil)
	r.out = 1
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := r.waitEnd(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("with a batch out: %v, want to wait", err)
	}
	s := &sent{}
	go func() {
		time.Sleep(10 * time.Millisecond)
		_ = r.ackFor(s)(context.Background(), errors.New("rejected"))
	}()
	if err := r.waitEnd(context.Background()); err != nil {
		t.Fatalf("after a nack: %v, want nil (deliver it)", err)
	}
	if got := r.nextRetry(); got != s {
		t.Fatalf("retry %p, want the nacked batch %p", got, s)
	}
	r.out = 0
	if err := r.waitEnd(context.Background()); !errors.Is(err, service.ErrEndOfInput) {
		t.Fatalf("nothing out: %v, want the end", err)
	}
}
