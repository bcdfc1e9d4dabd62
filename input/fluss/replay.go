package flussinput

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/fluss"
)

// rowSource builds a unit's messages again after a nack (auto_replay_nacks):
// the unit's rows of a record, kept (retained) until its batch is settled.
// Benthos's own replay keeps a shallow copy of every message instead, which
// marks each message's structured value and metadata read-only, so every
// processor that changes them (a `mutation`, a `meta` assignment) first
// clones them.
type rowSource struct {
	builder  *messageBuilder // the connection's replay builder, used only by ReadBatch
	bc       batchContext
	rec      arrow.RecordBatch
	cts      []fluss.ChangeType
	first    int64
	from, to int
}

func (s *rowSource) rebuild() (service.MessageBatch, error) {
	if s.rec == nil {
		return nil, errors.New("the rows were released")
	}
	return s.builder.build(&s.bc, s.rec, s.cts, s.first, s.from, s.to)
}

// release lets the record go; it is safe to call more than once.
func (s *rowSource) release() {
	if s != nil && s.rec != nil {
		s.rec.Release()
		s.rec = nil
	}
}

// release lets a unit's rows go (for a unit dropped, or settled).
func (u *unit) release() { u.src.release() }

// sent is a batch handed out: its checkpoint entries and the units that
// rebuild it.
type sent struct {
	entries  []*entry
	units    []*unit
	attempts int // deliveries after a nack
}

func (s *sent) release() {
	for _, u := range s.units {
		u.release()
	}
}

// rebuild builds a nacked batch's messages again from the rows its units
// kept, through the batching policy's processors when there is one.
func (in *input) rebuild(ctx context.Context, s *sent) (service.MessageBatch, error) {
	var batch service.MessageBatch
	for _, u := range s.units {
		if u.src == nil {
			return nil, fmt.Errorf("rows %d to %d of table %s %s kept nothing to deliver again", u.start, u.end-1, in.tablePath(), u.key)
		}
		msgs, err := u.src.rebuild()
		if err != nil {
			return nil, fmt.Errorf("building rows %d to %d of table %s %s again after a nack: %w", u.start, u.end-1, in.tablePath(), u.key, err)
		}
		batch = append(batch, msgs...)
	}
	if in.replayBatcher == nil {
		return batch, nil
	}
	for _, m := range batch {
		in.replayBatcher.Add(m)
	}
	return in.replayBatcher.Flush(ctx)
}

// replayer is the input with auto_replay_nacks: true. A nacked batch goes
// out again, rebuilt from its rows, before any new batch, as often as it
// takes (with a growing pause after the second attempt, up to a second);
// its buckets stay busy for ordering: bucket and its checkpoint entries
// open until it is acknowledged. A read waiting for rows, a free bucket or
// a checkpoint_limit slot is interrupted by a nack. At end_at: latest it
// reports the end once every batch handed out is acknowledged.
type replayer struct {
	in *input

	mu        sync.Mutex
	retries   []*sent            // nacked, waiting to go out again
	out       int                // batches handed out and not yet settled
	interrupt context.CancelFunc // ends the read in progress, if any
	ended     bool               // the input reported ErrEndOfInput
	wake      chan struct{}      // a signal after a nack or a settle
}

func newReplayer(in *input) *replayer {
	r := &replayer{in: in, wake: make(chan struct{}, 1)}
	if in != nil {
		in.retryPending = r.hasRetries // a stalled Connect lets ReadBatch deliver it
	}
	return r
}

// hasRetries reports whether a nacked batch waits to go out again.
func (r *replayer) hasRetries() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.retries) > 0
}

// Connect connects the input.
func (r *replayer) Connect(ctx context.Context) error { return r.in.Connect(ctx) }

// ReadBatch hands out the next nacked batch again, or the input's next one.
func (r *replayer) ReadBatch(ctx context.Context) (service.MessageBatch, service.AckFunc, error) {
	for {
		if s := r.nextRetry(); s != nil {
			batch, ack, err := r.redeliver(ctx, s)
			if batch == nil && err == nil {
				continue // the batch processors dropped every row
			}
			return batch, ack, err
		}
		if r.hasEnded() {
			if err := r.waitEnd(ctx); err != nil {
				return nil, nil, err
			}
			continue
		}
		batch, s, err := r.read(ctx)
		switch {
		case errors.Is(err, errInterrupted):
			continue
		case errors.Is(err, service.ErrEndOfInput):
			r.mu.Lock()
			r.ended = true
			r.mu.Unlock()
			continue
		case err != nil:
			return nil, nil, err
		}
		return batch, r.ackFor(s), nil
	}
}

var errInterrupted = errors.New("read interrupted by a nack")

// read reads the input's next batch, interrupted by a nack.
func (r *replayer) read(ctx context.Context) (service.MessageBatch, *sent, error) {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.mu.Lock()
	if len(r.retries) > 0 {
		r.mu.Unlock()
		return nil, nil, errInterrupted
	}
	r.interrupt = cancel
	r.mu.Unlock()
	batch, s, err := r.in.read(rctx)
	r.mu.Lock()
	r.interrupt = nil
	if err == nil {
		r.out++
	}
	r.mu.Unlock()
	if err != nil && ctx.Err() == nil && rctx.Err() != nil {
		return nil, nil, errInterrupted
	}
	return batch, s, err
}

func (r *replayer) nextRetry() *sent {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.retries) == 0 {
		return nil
	}
	s := r.retries[0]
	r.retries = r.retries[1:]
	return s
}

func (r *replayer) hasEnded() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ended
}

// waitEnd waits, after the input's end, until a nack (nil: deliver it) or
// until every batch is settled (ErrEndOfInput).
func (r *replayer) waitEnd(ctx context.Context) error {
	for {
		r.mu.Lock()
		retry, out := len(r.retries) > 0, r.out
		r.mu.Unlock()
		switch {
		case retry:
			return nil
		case out == 0:
			return service.ErrEndOfInput
		}
		select {
		case <-r.wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// retryPause is the pause before a batch's attempt-th delivery after a
// nack: none for the first two, then from 1 ms, doubling, up to a second.
func retryPause(attempt int) time.Duration {
	if attempt <= 2 {
		return 0
	}
	return min(time.Millisecond<<min(attempt-3, 10), time.Second)
}

// redeliver rebuilds a nacked batch and hands it out again. It returns a
// nil batch and error when the batch processors dropped every row (the
// batch is then settled).
func (r *replayer) redeliver(ctx context.Context, s *sent) (service.MessageBatch, service.AckFunc, error) {
	s.attempts++
	if d := retryPause(s.attempts); d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			s.attempts--
			r.requeue(s)
			return nil, nil, ctx.Err()
		}
	}
	batch, err := r.in.rebuild(ctx, s)
	if err != nil {
		r.requeue(s)
		return nil, nil, err
	}
	if len(batch) == 0 {
		r.settle(s)
		return nil, nil, nil
	}
	return batch, r.ackFor(s), nil
}

// requeue puts a nacked batch back at the head of the queue.
func (r *replayer) requeue(s *sent) {
	r.mu.Lock()
	r.retries = append([]*sent{s}, r.retries...)
	r.mu.Unlock()
}

// ackFor returns the acknowledgement function of one delivery of s.
func (r *replayer) ackFor(s *sent) service.AckFunc {
	var once sync.Once
	return func(_ context.Context, err error) error {
		once.Do(func() {
			if err == nil {
				r.settle(s)
				return
			}
			r.mu.Lock()
			r.retries = append(r.retries, s)
			if r.interrupt != nil {
				r.interrupt()
			}
			r.mu.Unlock()
			r.signal()
		})
		return nil
	}
}

// settle records that s is delivered for good.
func (r *replayer) settle(s *sent) {
	r.in.settle(s, nil)
	r.mu.Lock()
	r.out--
	r.mu.Unlock()
	r.signal()
}

func (r *replayer) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Close closes the input and lets the rows of nacked batches go (they were
// not acknowledged, so they are read again from the checkpoint).
func (r *replayer) Close(ctx context.Context) error {
	err := r.in.Close(ctx)
	r.mu.Lock()
	for _, s := range r.retries {
		s.release()
	}
	r.retries = nil
	r.mu.Unlock()
	return err
}
