package flussinput

import (
	"context"
	"time"
)

// startFlusherLocked starts the goroutine that writes the checkpoint (once;
// it runs until Close).
func (in *input) startFlusherLocked() {
	if in.flushStop != nil {
		return
	}
	in.flushStop = make(chan struct{})
	in.flushDone = make(chan struct{})
	go in.flushLoop(in.flushStop, in.flushDone)
}

// flushLoop writes the checkpoint whenever it changed, one write at a time:
// acknowledgements arriving during a write are coalesced into the next.
func (in *input) flushLoop(stop, done chan struct{}) {
	defer close(done)
	failures := 0
	for {
		select {
		case <-in.cp.notify:
		case <-stop:
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := in.flushOnce(ctx)
		cancel()
		if err == nil {
			failures = 0
			continue
		}
		failures++
		in.log.Errorf("Writing the checkpoint of table %s: %v", in.tablePath(), err)
		wait := 100 * time.Millisecond << min(failures-1, 6)
		select {
		case <-time.After(wait):
		case <-stop:
			return
		}
	}
}

// flushOnce writes the current positions when they changed. Writes are
// serialised, so that an older value never overwrites a newer one.
func (in *input) flushOnce(ctx context.Context) error {
	in.flushMu.Lock()
	defer in.flushMu.Unlock()
	s, err := in.cp.takeSnapshot(in.conf.database, in.conf.table)
	if err != nil || s == nil {
		return err
	}
	if err := in.store.write(ctx, s); err != nil {
		in.cp.writeFailed()
		return err
	}
	in.cp.persisted(s)
	in.updatePositionMetrics(s)
	return nil
}

// updatePositionMetrics sets the committed offset and lag gauges of the
// buckets just written.
func (in *input) updatePositionMetrics(s *snapshot) {
	in.hwMu.Lock()
	defer in.hwMu.Unlock()
	for st, p := range s.positions {
		part, b := bucketLabels(st.partition, st.key)
		in.metrics.committed.Set(p.offset, part, b)
		if hw, ok := in.hw[st.key]; ok && hw >= p.offset {
			in.metrics.lag.Set(hw-p.offset, part, b)
		}
	}
}

// setHighWatermark records a bucket's high watermark and updates its lag.
func (in *input) setHighWatermark(k bucketKey, partition string, hw int64) {
	if hw < 0 {
		return
	}
	in.hwMu.Lock()
	old, ok := in.hw[k]
	in.hw[k] = hw
	in.hwMu.Unlock()
	if ok && old == hw {
		return
	}
	if pos := in.cp.persistedOffset(k); pos >= 0 && hw >= pos {
		part, b := bucketLabels(partition, k)
		in.metrics.lag.Set(hw-pos, part, b)
	}
}
