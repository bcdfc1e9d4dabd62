package flussinput

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
)

// start_offset: snapshot reads a bucket of a primary-key table in two
// phases: the rows of its latest KV snapshot (its state up to the log
// offset the snapshot covers), then its changelog from that offset. In the
// snapshot phase a bucket's positions count the snapshot's rows, in key
// order, from 0: row i has position i, and the rows end at position N (the
// live keys), which is never above the covered log offset L (every live key
// has a change below L). A gap [N, L) follows, so that the positions of the
// two phases are contiguous and the checkpointer needs nothing new: a
// committed position below L, stored with the snapshot's id and L, says how
// many rows of that snapshot were acknowledged (a restart skips them); L
// or more is a changelog offset. The worker reads one bucket's snapshot at
// a time (one snapshot's files on disk), before subscribing its changelog,
// so a key's snapshot row always comes before its later changes; a bucket
// whose snapshot waits to be opened again lets the others' go first.

// snapshotRead is a bucket in its snapshot phase.
type snapshotRead struct {
	key       bucketKey
	partition string
	snap      checkpointSnapshot
	pos       int64 // rows handed out
	reader    *fluss.SnapshotReader
	// retries counts the times in a row the bucket's latest snapshot was
	// the one that could not be read; it is opened again at retryAt.
	retries int
	retryAt time.Time
}

// snapshotRetryPause is the wait before opening again a snapshot that could
// not be read because it was still the bucket's latest: from a second,
// doubling, up to 30 s (the server replaces it when it takes its next one).
func snapshotRetryPause(retries int) time.Duration {
	return min(time.Second<<min(retries-1, 5), 30*time.Second)
}

// snapshotIDMark is added to a snapshot row's position in its message id:
// ids of snapshot rows never equal those of changelog records (offsets stay
// far below 2^47).
const snapshotIDMark = int64(1) << 47

// snapshotStep opens the current snapshot or hands out its next rows; at
// its end it starts the bucket's changelog.
func (w *worker) snapshotStep(ctx context.Context) error {
	s := w.nextSnapshot()
	if s.reader == nil {
		if wait, err := w.snapshotWait(ctx, s); wait || err != nil {
			return err
		}
		if err := w.openSnapshot(ctx, s); err != nil {
			return err
		}
		if s.reader == nil {
			return nil // moved on to another snapshot or to the changelog
		}
	}
	rec, err := s.reader.Next(ctx)
	if errors.Is(err, io.EOF) {
		return w.finishSnapshot(ctx, s)
	}
	if err != nil {
		return fmt.Errorf("reading snapshot %d of table %s%s %s at row %d: %w",
			s.snap.ID, w.in.tablePath(), partitionSuffix(s.partition), s.key, s.pos, err)
	}
	defer rec.Release()
	return w.sendSnapshotRows(ctx, s, rec)
}

// nextSnapshot moves to the head of the queue the snapshot to read now:
// the head while it is open, else the first not waiting to be opened again,
// else the one due first. A snapshot that cannot be read so holds back no
// other bucket (each bucket's changelog still follows its own snapshot).
func (w *worker) nextSnapshot() *snapshotRead {
	q := w.snapshots
	if q[0].reader != nil {
		return q[0]
	}
	now, next := time.Now(), 0
	for i, s := range q {
		if !s.retryAt.After(now) {
			next = i
			break
		}
		if s.retryAt.Before(q[next].retryAt) {
			next = i
		}
	}
	s := q[next]
	copy(q[1:next+1], q[:next])
	q[0] = s
	return s
}

// snapshotWait holds a snapshot back until its retryAt: wait is true while
// there is time left and changelogs to poll meanwhile (the worker's loop
// comes back after a short poll); with nothing else to do it sleeps.
func (w *worker) snapshotWait(ctx context.Context, s *snapshotRead) (wait bool, err error) {
	left := time.Until(s.retryAt)
	if left <= 0 {
		return false, nil
	}
	if len(w.produced) > 0 {
		return true, nil
	}
	t := time.NewTimer(left)
	defer t.Stop()
	select {
	case <-t.C:
		return false, nil
	case <-ctx.Done():
		return true, ctx.Err()
	}
}

// sendSnapshotRows hands out the rows of one record of a snapshot as +I.
func (w *worker) sendSnapshotRows(ctx context.Context, s *snapshotRead, rec arrow.RecordBatch) error {
	n := int(rec.NumRows())
	bc := batchContext{key: s.key, partition: s.partition, schemaID: int16(w.info.SchemaID), snap: &s.snap}
	cts := insertChangeTypes(n)
	chunk := w.in.conf.maxBatchRows
	if chunk <= 0 {
		chunk = n
	}
	w.in.metrics.rows.Incr(int64(n))
	for from := 0; from < n; from += chunk {
		to := min(from+chunk, n)
		u, err := w.rowsUnit(&bc, rec, cts, s.pos, from, to, s.pos+int64(from), s.pos+int64(to))
		if err != nil {
			return err
		}
		if err := w.send(ctx, u); err != nil {
			u.release()
			return err
		}
	}
	s.pos += int64(n)
	return nil
}

// insertChangeTypes returns n +I change types.
func insertChangeTypes(n int) []fluss.ChangeType {
	cts := make([]fluss.ChangeType, n)
	for i := range cts {
		cts[i] = fluss.Insert
	}
	return cts
}

// openSnapshot opens the current snapshot, skipping the rows already handed
// out. A snapshot that no longer exists is handled by onSnapshotGone.
func (w *worker) openSnapshot(ctx context.Context, s *snapshotRead) error {
	opts := []fluss.SnapshotOption{fluss.SnapshotSkipRows(s.pos)}
	if dir := w.in.conf.snapshotDir; dir != "" {
		opts = append(opts, fluss.SnapshotDir(dir))
	}
	if len(w.in.conf.columns) > 0 {
		opts = append(opts, fluss.SnapshotColumns(w.in.conf.columns...))
	}
	snap := fluss.KVSnapshot{
		Bucket:     fluss.TableBucket{TableID: w.info.TableID, PartitionID: s.key.partitionID, Bucket: s.key.bucket},
		SnapshotID: s.snap.ID,
		LogOffset:  s.snap.LogOffset,
	}
	r, err := w.client.OpenKVSnapshot(ctx, w.info, snap, opts...)
	if err == nil {
		s.reader, s.retries, s.retryAt = r, 0, time.Time{}
		return nil
	}
	if !snapshotGone(err) {
		return fmt.Errorf("opening snapshot %d of table %s%s %s: %w", s.snap.ID, w.in.tablePath(), partitionSuffix(s.partition), s.key, err)
	}
	return w.onSnapshotGone(ctx, s, err)
}

// snapshotGone reports whether err says a snapshot was deleted.
func snapshotGone(err error) bool {
	return errors.Is(err, errcode.KvSnapshotNotExist) || errors.Is(err, fluss.ErrSnapshotGone)
}

// onSnapshotGone applies on_unresumable_offset to a bucket whose snapshot was
// deleted before it was read to its end: fail, start again from the
// bucket's latest snapshot (earliest), or read its changelog from its end
// (latest). Before its first row a snapshot is one choice among equals (the
// server keeps only its newest ones, and a bucket waiting its turn behind a
// slow pipeline sees its choice replaced): the latest snapshot is taken
// then when it is newer, whatever the setting, as that loses and repeats
// nothing.
func (w *worker) onSnapshotGone(ctx context.Context, s *snapshotRead, cause error) error {
	in := w.in
	msg := fmt.Sprintf("table %s%s %s: snapshot %d, read to row %d, no longer exists (%v)",
		in.tablePath(), partitionSuffix(s.partition), s.key, s.snap.ID, s.pos, cause)
	if s.pos == 0 {
		if ok, err := w.restartSnapshot(ctx, s, msg+"; none of its rows was read", true); ok || err != nil {
			return err
		}
	}
	switch in.conf.onUnresumable {
	case unresumableFail:
		return &permanentError{err: fmt.Errorf("%s; set %s to earliest (its latest snapshot again) or latest", msg, fiFieldOnUnresumable)}
	case unresumableLatest:
		in.log.Warnf("%s; continuing from its latest offset (%s)", msg, fiFieldOnUnresumable)
		return w.startChangelog(ctx, s, fluss.LatestOffset())
	}
	if ok, err := w.restartSnapshot(ctx, s, msg+" ("+fiFieldOnUnresumable+")", false); ok || err != nil {
		return err
	}
	in.log.Warnf("%s and the bucket has no snapshot now; reading its changelog from the earliest offset (%s)", msg, fiFieldOnUnresumable)
	return w.startChangelog(ctx, s, fluss.EarliestOffset())
}

// restartSnapshot moves a bucket to its latest snapshot, from its first
// row; ok is false when the bucket has none, or with newer when the latest
// is the one that could not be read.
func (w *worker) restartSnapshot(ctx context.Context, s *snapshotRead, why string, newer bool) (ok bool, err error) {
	in := w.in
	snaps, err := w.client.LatestKVSnapshots(ctx, w.info, fluss.PartitionInfo{ID: s.key.partitionID, Name: s.partition})
	if err != nil {
		return false, fmt.Errorf("listing the snapshots of table %s%s: %w", in.tablePath(), partitionSuffix(s.partition), err)
	}
	for _, ls := range snaps {
		if ls.Bucket.Bucket == s.key.bucket && ls.SnapshotID != fluss.NoSnapshot {
			same := ls.SnapshotID == s.snap.ID
			if newer && same {
				return false, nil
			}
			if same {
				// Still the latest: opening it again at once would fail
				// again, as fast as the server answers.
				s.retries++
				pause := snapshotRetryPause(s.retries)
				s.retryAt = time.Now().Add(pause)
				in.log.Warnf("%s: it is still the bucket's latest snapshot; reading it from the start in %s (attempt %d)", why, pause, s.retries+1)
			} else {
				s.retries, s.retryAt = 0, time.Time{}
				in.log.Warnf("%s: reading its latest snapshot %d from the start", why, ls.SnapshotID)
			}
			s.snap, s.pos = checkpointSnapshot{ID: ls.SnapshotID, LogOffset: ls.LogOffset}, 0
			in.cp.startSnapshot(s.key, s.partition, s.snap, 0)
			return true, in.flushOnce(ctx) // before its rows, as at connect
		}
	}
	return false, nil
}

// startChangelog abandons a snapshot and reads the bucket's changelog from
// spec instead.
func (w *worker) startChangelog(ctx context.Context, s *snapshotRead, spec fluss.OffsetSpec) error {
	offs, err := w.client.ListOffsets(ctx, w.info, s.key.partitionID, []int32{s.key.bucket}, spec)
	if err != nil {
		return fmt.Errorf("listing the %s offset of table %s%s %s: %w", spec, w.in.tablePath(), partitionSuffix(s.partition), s.key, err)
	}
	w.in.cp.reset(s.key, s.partition, offs[s.key.bucket])
	w.snapshots = w.snapshots[1:]
	return w.subscribeLog(ctx, s.key, s.partition, offs[s.key.bucket])
}

// finishSnapshot ends a bucket's snapshot phase: the positions up to the
// covered log offset are a gap, and its changelog is read from there.
func (w *worker) finishSnapshot(ctx context.Context, s *snapshotRead) error {
	if err := s.reader.Close(); err != nil {
		w.in.log.Warnf("Removing the files of snapshot %d of table %s %s: %v", s.snap.ID, w.in.tablePath(), s.key, err)
	}
	s.reader = nil
	w.snapshots = w.snapshots[1:]
	if s.pos > s.snap.LogOffset {
		return fmt.Errorf("table %s%s %s: snapshot %d has %d rows, more than the %d changes below the offset it covers",
			w.in.tablePath(), partitionSuffix(s.partition), s.key, s.snap.ID, s.pos, s.snap.LogOffset)
	}
	if s.pos < s.snap.LogOffset {
		if err := w.send(ctx, &unit{kind: unitGap, key: s.key, start: s.pos, end: s.snap.LogOffset}); err != nil {
			return err
		}
	}
	return w.subscribeLog(ctx, s.key, s.partition, s.snap.LogOffset)
}

// subscribeLog starts reading a bucket's changelog at offset, unless
// end_at: latest is already reached there.
func (w *worker) subscribeLog(ctx context.Context, k bucketKey, partition string, offset int64) error {
	if end, ok := w.in.endOffsets[k]; w.in.endOffsets != nil && (!ok || offset >= end) {
		return nil
	}
	if err := w.scanner.Subscribe(ctx, k.partitionID, k.bucket, fluss.ExactOffset(offset)); err != nil {
		return fmt.Errorf("subscribing to table %s%s %s: %w", w.in.tablePath(), partitionSuffix(partition), k, err)
	}
	w.produced[k] = offset
	return nil
}

// closeSnapshots removes the files of an open snapshot (connection end).
func (w *worker) closeSnapshots() {
	for _, s := range w.snapshots {
		if s.reader != nil {
			_ = s.reader.Close()
			s.reader = nil
		}
	}
}
