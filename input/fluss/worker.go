package flussinput

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluss-iggy/fluss-iggy/fluss"
)

// worker polls the scanner of one connection, turns batches into units and
// hands them to ReadBatch in read order. It alone subscribes and moves
// buckets on the scanner.
type worker struct {
	in      *input
	c       *connection
	info    *fluss.TableInfo
	client  *fluss.Client
	scanner *fluss.Scanner
	builder *messageBuilder
	// replay builds messages again after a nack (auto_replay_nacks; nil
	// without): a builder of its own, used by ReadBatch.
	replay *messageBuilder

	// produced is the next offset to hand out per subscribed bucket.
	produced map[bucketKey]int64
	// parts names the partitions seen (subscribed or not read by this
	// instance), by id.
	parts map[int64]string
	// snapshots are the buckets in their snapshot phase, read one after
	// the other before their changelogs (start_offset: snapshot).
	snapshots []*snapshotRead
}

// run is the worker goroutine.
func (w *worker) run() {
	err := w.loop()
	w.closeSnapshots()
	if err != nil && w.c.ctx.Err() != nil {
		err = nil // stopping
	}
	w.c.err = err
	close(w.c.done)
}

// lagInterval is how often the lag of idle buckets is refreshed.
const lagInterval = time.Second

// endPollWait bounds a Poll while a bucket may have reached its end offset
// with only empty batches left.
const endPollWait = 20 * time.Millisecond

func (w *worker) loop() error {
	ctx := w.c.ctx
	ends := w.in.endOffsets
	discovery := w.info.IsPartitioned() && w.in.conf.discoveryInterval > 0 && ends == nil
	var nextDiscovery time.Time
	if discovery {
		nextDiscovery = time.Now().Add(w.in.conf.discoveryInterval)
	}
	nextLag := time.Now()
	for {
		if now := time.Now(); !now.Before(nextLag) {
			w.refreshLag()
			nextLag = now.Add(lagInterval)
		}
		if ends != nil && len(w.produced) == 0 && len(w.snapshots) == 0 {
			w.c.finished = true
			return nil
		}
		if len(w.snapshots) > 0 {
			if err := w.snapshotStep(ctx); err != nil {
				return err
			}
			if len(w.produced) == 0 {
				continue // no changelog to poll yet
			}
		}
		atEnd := w.bucketsAtEnd()
		deadline := nextLag
		if discovery && nextDiscovery.Before(deadline) {
			deadline = nextDiscovery
		}
		if len(atEnd) > 0 || len(w.snapshots) > 0 {
			deadline = time.Now().Add(endPollWait)
		}
		pctx, cancel := context.WithDeadline(ctx, deadline)
		batches, err := w.scanner.Poll(pctx)
		cancel()
		if ctx.Err() != nil {
			releaseBatches(batches)
			return nil
		}
		if herr := w.handleBatches(ctx, batches); herr != nil {
			return herr
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			if err := w.handlePollError(ctx, err); err != nil {
				return err
			}
		}
		for _, k := range atEnd {
			pos, ok := w.produced[k]
			if !ok {
				continue
			}
			if end := ends[k]; pos < end {
				if err := w.send(ctx, &unit{kind: unitGap, key: k, start: pos, end: end}); err != nil {
					return err
				}
			}
			w.finishBucket(k)
		}
		if discovery && !time.Now().Before(nextDiscovery) {
			if err := w.discover(ctx); err != nil {
				return err
			}
			nextDiscovery = time.Now().Add(w.in.conf.discoveryInterval)
		}
	}
}

// refreshLag sets the lag of buckets without new rows from the high
// watermarks the scanner saw in its fetches.
func (w *worker) refreshLag() {
	for _, p := range w.scanner.Positions() {
		w.in.setHighWatermark(bucketKey{partitionID: p.Bucket.PartitionID, bucket: p.Bucket.Bucket}, p.Partition, p.HighWatermark)
	}
}

// bucketsAtEnd returns, with end_at: latest, the buckets whose fetch
// position is at their end before the next Poll: every row below the end is
// in that Poll's result or earlier ones (Poll drains everything queued).
func (w *worker) bucketsAtEnd() []bucketKey {
	ends := w.in.endOffsets
	if ends == nil {
		return nil
	}
	var atEnd []bucketKey
	for _, p := range w.scanner.Positions() {
		k := bucketKey{partitionID: p.Bucket.PartitionID, bucket: p.Bucket.Bucket}
		if end, ok := ends[k]; ok && p.Offset >= end {
			atEnd = append(atEnd, k)
		}
	}
	return atEnd
}

func releaseBatches(bs []*fluss.ScanBatch) {
	for _, b := range bs {
		b.Release()
	}
}

func (w *worker) send(ctx context.Context, u *unit) error {
	select {
	case w.c.units <- u:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// handleBatches turns the batches of one poll into units. The batches of a
// bucket go in order; the buckets take turns, a unit each, so that with
// ordering: bucket the few units the gate holds (those of buckets with a
// batch out) do not keep the other buckets' first units from passing. It
// releases every batch, also on error.
func (w *worker) handleBatches(ctx context.Context, batches []*fluss.ScanBatch) error {
	var order []bucketKey
	queues := map[bucketKey][]*fluss.ScanBatch{}
	for _, b := range batches {
		k := batchKey(b)
		if _, ok := queues[k]; !ok {
			order = append(order, k)
		}
		queues[k] = append(queues[k], b)
	}
	cur := map[bucketKey]*rowCursor{}
	defer func() {
		for _, q := range queues {
			releaseBatches(q)
		}
		for _, c := range cur {
			c.b.Release()
		}
	}()
	for len(order) > 0 {
		live := order[:0]
		for _, k := range order {
			for cur[k] == nil && len(queues[k]) > 0 {
				b := queues[k][0]
				queues[k] = queues[k][1:]
				c, err := w.startBatch(ctx, b)
				if err != nil {
					return err
				}
				if c != nil {
					cur[k] = c
				}
			}
			c := cur[k]
			if c == nil {
				continue // the bucket is done
			}
			done, err := w.step(ctx, c)
			if err != nil {
				return err
			}
			if done {
				c.b.Release()
				delete(cur, k)
			}
			live = append(live, k)
		}
		order = live
	}
	return nil
}

func batchKey(b *fluss.ScanBatch) bucketKey {
	return bucketKey{partitionID: b.Bucket.PartitionID, bucket: b.Bucket.Bucket}
}

// rowCursor hands out the rows of one scanned batch, a unit per step.
type rowCursor struct {
	b          *fluss.ScanBatch
	k          bucketKey
	bc         batchContext
	pos        int64 // the next offset to hand out
	first      int64 // the offset of row 0
	row, limit int   // the next row; rows below limit are handed out
	chunk      int
	next       int64 // where the bucket continues after the batch
	end        int64 // the bucket's end offset, when bounded
	bounded    bool
}

// startBatch begins handing out a scanned batch: it sends the gap before
// it, if any, and returns its cursor, or nil when the batch has no rows to
// hand out (it then sends the gap over it and releases it).
func (w *worker) startBatch(ctx context.Context, b *fluss.ScanBatch) (*rowCursor, error) {
	k := batchKey(b)
	pos, ok := w.produced[k]
	if !ok {
		b.Release()
		return nil, nil // unsubscribed meanwhile
	}
	w.in.setHighWatermark(k, b.Partition, b.HighWatermark)
	n := b.NumRows()
	m := w.in.metrics
	m.rows.Incr(int64(n))
	m.batches.Incr(1)
	m.bytes.Incr(b.Size())
	c := &rowCursor{b: b, k: k, first: b.FirstOffset, limit: n, next: max(b.FirstOffset+int64(n), b.NextOffset())}
	if c.first > pos {
		// The offsets in between belong to empty batches.
		if err := w.send(ctx, &unit{kind: unitGap, key: k, start: pos, end: c.first}); err != nil {
			b.Release()
			return nil, err
		}
		pos = c.first
	}
	if c.first < pos {
		c.row = int(min(pos-c.first, int64(n)))
	}
	if c.end, c.bounded = w.in.endOffsets[k]; c.bounded {
		if c.first+int64(c.limit) > c.end {
			c.limit = int(max(c.end-c.first, 0))
		}
		c.next = min(c.next, c.end)
	}
	c.pos = pos
	if c.row < c.limit {
		c.bc = batchContext{key: k, partition: b.Partition, schemaID: b.SchemaID, timestamp: b.CommitTimestamp}
		if c.bc.partition == "" && k.partitionID != fluss.NoPartition {
			c.bc.partition = w.parts[k.partitionID]
		}
		if c.chunk = w.in.conf.maxBatchRows; c.chunk <= 0 {
			c.chunk = c.limit - c.row
		}
		return c, nil
	}
	b.Release()
	if c.next > c.pos {
		if err := w.send(ctx, &unit{kind: unitGap, key: k, start: c.pos, end: c.next}); err != nil {
			return nil, err
		}
		c.pos = c.next
	}
	w.batchDone(c)
	return nil, nil
}

// step sends the next unit of c's rows and reports whether they are all out.
func (w *worker) step(ctx context.Context, c *rowCursor) (bool, error) {
	t := min(c.row+c.chunk, c.limit)
	uEnd := c.first + int64(t)
	if t == c.limit {
		uEnd = max(uEnd, c.next)
	}
	u, err := w.rowsUnit(&c.bc, c.b.Record, c.b.ChangeTypes, c.first, c.row, t, c.pos, uEnd)
	if err != nil {
		return false, err
	}
	if err := w.send(ctx, u); err != nil {
		u.release()
		return false, err
	}
	c.pos, c.row = uEnd, t
	if c.row < c.limit {
		return false, nil
	}
	w.batchDone(c)
	return true, nil
}

// rowsUnit builds the messages of rows [from, to) of rec (row i at offset
// first+i) into the unit of offsets [start, end). With auto_replay_nacks
// the unit keeps rec to build them again after a nack.
func (w *worker) rowsUnit(bc *batchContext, rec arrow.RecordBatch, cts []fluss.ChangeType, first int64, from, to int, start, end int64) (*unit, error) {
	msgs, err := w.builder.build(bc, rec, cts, first, from, to)
	if err != nil {
		return nil, err
	}
	u := &unit{kind: unitRows, key: bc.key, partition: bc.partition, start: start, end: end, msgs: msgs}
	if w.replay != nil {
		rec.Retain()
		u.src = &rowSource{builder: w.replay, bc: *bc, rec: rec, cts: cts, first: first, from: from, to: to}
		if bc.snap != nil {
			// A bucket that moves to another snapshot overwrites its
			// snapshotRead's: keep the one these rows came from.
			snap := *bc.snap
			u.src.bc.snap = &snap
		}
	}
	return u, nil
}

// batchDone records where c's bucket continues and stops a bucket that
// reached its end offset.
func (w *worker) batchDone(c *rowCursor) {
	w.produced[c.k] = c.pos
	if c.bounded && c.pos >= c.end {
		w.finishBucket(c.k)
	}
}

// finishBucket stops reading a bucket that reached its end offset.
func (w *worker) finishBucket(k bucketKey) {
	w.scanner.Unsubscribe(k.partitionID, k.bucket)
	delete(w.produced, k)
}

// handlePollError deals with the per-bucket errors a Poll reported.
func (w *worker) handlePollError(ctx context.Context, err error) error {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var oor *fluss.OffsetOutOfRangeError
		var be *fluss.BucketError
		switch {
		case errors.As(e, &oor):
			if err := w.handleOutOfRange(ctx, oor); err != nil {
				return err
			}
		case errors.As(e, &be):
			if err := w.handleBucketError(ctx, be); err != nil {
				return err
			}
		default:
			return fmt.Errorf("reading table %s: %w", w.in.tablePath(), e)
		}
	}
	return nil
}

// handleOutOfRange applies on_unresumable_offset to a bucket whose read
// position left the log (rows expired while the input was behind).
func (w *worker) handleOutOfRange(ctx context.Context, e *fluss.OffsetOutOfRangeError) error {
	k := bucketKey{partitionID: e.Bucket.PartitionID, bucket: e.Bucket.Bucket}
	pos, ok := w.produced[k]
	if !ok {
		return nil
	}
	msg := fmt.Sprintf("table %s%s bucket %d: offset %d is outside the log, which holds offsets %d to %d",
		w.in.tablePath(), partitionSuffix(e.Partition), k.bucket, pos, e.Earliest, e.Latest)
	if w.in.conf.onUnresumable == unresumableFail {
		return fmt.Errorf("%s (rows expired, or the log was truncated); set %s to earliest or latest to continue", msg, fiFieldOnUnresumable)
	}
	if e.Earliest < 0 || e.Latest < 0 {
		return fmt.Errorf("%s: %w", msg, e)
	}
	target := e.Earliest
	if w.in.conf.onUnresumable == unresumableLatest {
		target = e.Latest
	}
	w.in.log.Warnf("%s; continuing from %s offset %d (%s)", msg, w.in.conf.onUnresumable, target, fiFieldOnUnresumable)
	u := &unit{kind: unitGap, key: k, partition: e.Partition, start: pos, end: target}
	if target < pos {
		u.kind = unitReset
	}
	if err := w.send(ctx, u); err != nil {
		return err
	}
	w.produced[k] = target
	if end, ok := w.in.endOffsets[k]; ok && target >= end {
		w.finishBucket(k)
		return nil
	}
	if err := w.scanner.SeekBucket(k.partitionID, k.bucket, target); err != nil {
		return fmt.Errorf("%s: %w", msg, err)
	}
	return nil
}

// handleBucketError handles a bucket the scanner gave up on: a dropped
// partition is forgotten; anything else restarts the connection.
func (w *worker) handleBucketError(ctx context.Context, e *fluss.BucketError) error {
	if w.info.IsPartitioned() && e.Bucket.PartitionID != fluss.NoPartition {
		ps, err := w.client.Partitions(ctx, w.info)
		if err == nil {
			for _, p := range ps {
				if p.ID == e.Bucket.PartitionID {
					return e
				}
			}
			w.dropPartition(e.Bucket.PartitionID, e.Partition)
			return nil
		}
	}
	return e
}

// dropPartition stops reading a partition that no longer exists.
func (w *worker) dropPartition(pid int64, name string) {
	if name == "" {
		name = w.parts[pid]
	}
	n := 0
	for k := range w.produced {
		if k.partitionID == pid {
			w.scanner.Unsubscribe(k.partitionID, k.bucket)
			delete(w.produced, k)
			w.in.cp.remove(k)
			n++
		}
	}
	delete(w.parts, pid)
	if n > 0 {
		w.in.log.Infof("Partition %s of table %s was dropped; stopped reading its %d bucket(s)", name, w.in.tablePath(), n)
	}
}

// partitionStarts returns the buckets of a new partition this instance
// reads and their earliest offsets.
func (w *worker) partitionStarts(ctx context.Context, p fluss.PartitionInfo) ([]bucketKey, map[int32]int64, error) {
	keys, err := w.in.bucketsToRead(ctx, w.client, w.info, part{id: p.ID, name: p.Name})
	if err != nil || len(keys) == 0 {
		return nil, nil, err
	}
	buckets := make([]int32, len(keys))
	for i, k := range keys {
		buckets[i] = k.bucket
	}
	offs, err := w.client.ListOffsets(ctx, w.info, p.ID, buckets, fluss.EarliestOffset())
	if err != nil {
		return nil, nil, fmt.Errorf("listing the offsets of table %s partition %s: %w", w.in.tablePath(), p.Name, err)
	}
	return keys, offs, nil
}

// discover looks for partitions created or dropped since the last look.
// New partitions are read from their first row.
func (w *worker) discover(ctx context.Context) error {
	ps, err := w.client.Partitions(ctx, w.info)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		w.in.log.Warnf("Looking for new partitions of table %s: %v", w.in.tablePath(), err)
		return nil
	}
	existing := make(map[int64]bool, len(ps))
	for _, p := range ps {
		existing[p.ID] = true
	}
	for pid, name := range w.parts {
		if !existing[pid] {
			w.dropPartition(pid, name)
		}
	}
	for _, p := range ps {
		if _, seen := w.parts[p.ID]; seen {
			continue
		}
		w.parts[p.ID] = p.Name
		if !w.in.assign.wantsPartition(p.Name) {
			continue
		}
		keys, offs, err := w.partitionStarts(ctx, p)
		if err != nil {
			delete(w.parts, p.ID) // try again next time
			if ctx.Err() != nil {
				return nil
			}
			w.in.log.Warnf("Not reading a new partition yet: %v", err)
			continue
		}
		if len(keys) == 0 {
			continue
		}
		for _, k := range keys {
			off := offs[k.bucket]
			if pos, _, ok := w.in.cp.resumePosition(k); ok {
				off = pos
			} else {
				w.in.cp.start(k, p.Name, off)
			}
			if err := w.scanner.Subscribe(ctx, p.ID, k.bucket, fluss.ExactOffset(off)); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("subscribing to new partition %s of table %s: %w", p.Name, w.in.tablePath(), err)
			}
			w.produced[k] = off
		}
		w.in.log.Infof("Found new partition %s of table %s; reading %d bucket(s) from the start", p.Name, w.in.tablePath(), len(keys))
	}
	return nil
}
