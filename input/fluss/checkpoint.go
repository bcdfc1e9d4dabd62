package flussinput

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/redpanda-data/benthos/v4/public/service"
)

// ---------------------------------------------------------------------------
// In-flight tracking

// flight is one batch handed to the pipeline. It holds a checkpoint_limit
// slot until the positions of all its entries have been written.
type flight struct {
	remaining int
}

// entry is a run of offsets [start, end) of one bucket handed out in one
// batch (or skipped, for gap entries, which have no flight and are acked
// from the start).
type entry struct {
	st         *bucketState
	gen        uint64
	start, end int64
	acked      bool
	fl         *flight
}

// bucketState is the position of one bucket.
type bucketState struct {
	key       bucketKey
	partition string // partition name ("" for tables without partitions)
	gen       uint64 // bumped by reset; entries of older generations are ignored

	// entries are handed out and not yet written to the cache, in read
	// order. entries[:ncommitted] are acknowledged and contiguous.
	entries    []*entry
	ncommitted int

	committed int64 // next offset after the acknowledged prefix
	persisted int64 // offset last written to the cache (-1: never)
	readPos   int64 // next offset to hand out
	removed   bool  // partition dropped: forget once nothing is in flight

	// snap is set in the snapshot phase: offsets below snap.LogOffset count
	// the snapshot's rows (start_offset: snapshot).
	snap *checkpointSnapshot
}

// checkpointer tracks in-flight batches per bucket, works out the
// contiguously acknowledged position of each and knows what must be written
// to the cache. It is safe for concurrent use.
type checkpointer struct {
	mu      sync.Mutex
	tableID int64
	states  map[bucketKey]*bucketState
	// extra holds loaded positions of buckets this instance does not read;
	// they are written back unchanged.
	extra []checkpointBucket
	dirty bool
	// loadApplied: the loaded value was installed.
	loadApplied bool
	// loadedSnaps are the snapshot phases of the loaded positions.
	loadedSnaps map[bucketKey]checkpointSnapshot

	slots  chan struct{} // checkpoint_limit semaphore
	notify chan struct{} // capacity 1: something to write
}

func newCheckpointer(limit int) *checkpointer {
	return &checkpointer{
		states:      map[bucketKey]*bucketState{},
		loadedSnaps: map[bucketKey]checkpointSnapshot{},
		slots:       make(chan struct{}, limit),
		notify:      make(chan struct{}, 1),
	}
}

func (c *checkpointer) markDirtyLocked() {
	c.dirty = true
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

// acquire takes a checkpoint_limit slot, blocking until one is free.
func (c *checkpointer) acquire(ctx context.Context, stop <-chan struct{}) error {
	select {
	case c.slots <- struct{}{}:
		return nil
	default:
	}
	select {
	case c.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-stop:
		return service.ErrNotConnected
	}
}

// releaseSlot gives a slot back.
func (c *checkpointer) releaseSlot() { <-c.slots }

// inFlight returns the number of slots taken.
func (c *checkpointer) inFlight() int { return len(c.slots) }

// state returns the state of a bucket, or nil.
func (c *checkpointer) state(k bucketKey) *bucketState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.states[k]
}

// resumePosition returns the offset to continue reading a bucket from
// (where the previous connection stopped handing out rows) and its
// generation, or ok=false when the bucket has no state yet.
func (c *checkpointer) resumePosition(k bucketKey) (pos int64, gen uint64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.states[k]
	if st == nil {
		return 0, 0, false
	}
	return st.readPos, st.gen, true
}

// start creates the state of a bucket that starts reading at offset. The
// position is written with the next flush, so that a restart does not fall
// back to start_offset for it. An existing state is left alone.
func (c *checkpointer) start(k bucketKey, partition string, offset int64) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.states[k]; st != nil {
		st.removed = false
		return st.gen
	}
	c.states[k] = &bucketState{key: k, partition: partition, committed: offset, persisted: -1, readPos: offset}
	c.extra = slices.DeleteFunc(c.extra, func(b checkpointBucket) bool { return b.key() == k })
	c.markDirtyLocked()
	return 0
}

// reset moves a bucket to offset, forgetting what is in flight (their acks
// are ignored and their slots given back). Used when a position cannot be
// resumed.
func (c *checkpointer) reset(k bucketKey, partition string, offset int64) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.states[k]
	if st == nil {
		st = &bucketState{key: k, partition: partition, persisted: -1}
		c.states[k] = st
	}
	c.dropEntriesLocked(st)
	st.gen++
	st.committed, st.readPos, st.removed, st.snap = offset, offset, false, nil
	c.markDirtyLocked()
	return st.gen
}

// startSnapshot creates the state of a bucket in its snapshot phase, rows
// rows into snapshot snap, like start. An existing state moves to snap
// from its first row, forgetting what is in flight (reset).
func (c *checkpointer) startSnapshot(k bucketKey, partition string, snap checkpointSnapshot, rows int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.states[k]
	if st == nil {
		st = &bucketState{key: k, partition: partition, persisted: -1}
		c.states[k] = st
		c.extra = slices.DeleteFunc(c.extra, func(b checkpointBucket) bool { return b.key() == k })
	} else {
		c.dropEntriesLocked(st)
		st.gen++
	}
	st.committed, st.readPos, st.removed, st.snap = rows, rows, false, &snap
	c.markDirtyLocked()
}

// snapshotPhase returns the snapshot a bucket is being read from, when its
// read position is still in it: from the bucket's state, else from the
// loaded checkpoint.
func (c *checkpointer) snapshotPhase(k bucketKey) (checkpointSnapshot, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.states[k]; st != nil {
		if st.snap != nil && st.readPos < st.snap.LogOffset {
			return *st.snap, true
		}
		return checkpointSnapshot{}, false
	}
	s, ok := c.loadedSnaps[k]
	return s, ok
}

// skipTo moves the read position of a bucket forward to offset without
// forgetting what is in flight: the rows in between are treated as
// acknowledged (they are gone from the log).
func (c *checkpointer) skipTo(k bucketKey, offset int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.states[k]
	if st == nil || offset <= st.readPos {
		return
	}
	c.appendLocked(st, &entry{st: st, gen: st.gen, start: st.readPos, end: offset, acked: true})
}

// resetAll forgets every bucket (the table was dropped and created again).
func (c *checkpointer) resetAll(tableID int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.states {
		c.dropEntriesLocked(st)
		st.gen++
	}
	c.states = map[bucketKey]*bucketState{}
	c.extra = nil
	clear(c.loadedSnaps)
	c.tableID = tableID
	c.markDirtyLocked()
}

// remove marks a bucket of a dropped partition: it is forgotten once its
// in-flight batches are done.
func (c *checkpointer) remove(k bucketKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.states[k]; st != nil {
		st.removed = true
		c.markDirtyLocked()
	}
}

func (c *checkpointer) dropEntriesLocked(st *bucketState) {
	for _, e := range st.entries {
		c.finishLocked(e)
	}
	st.entries, st.ncommitted = nil, 0
}

// finishLocked gives back the slot of an entry's flight once all its
// entries are finished.
func (c *checkpointer) finishLocked(e *entry) {
	if e.fl == nil {
		return
	}
	e.fl.remaining--
	if e.fl.remaining == 0 {
		c.releaseSlot()
	}
	e.fl = nil
}

// errUntracked reports rows of a bucket that is no longer read (its
// partition was dropped while they were on their way).
var errUntracked = errors.New("bucket no longer read")

// errTrackMismatch reports rows handed out out of order, which would make
// the committed position skip rows; the connection is restarted instead.
var errTrackMismatch = errors.New("read position mismatch")

// track records that rows [start, end) of a bucket are handed out as part
// of flight fl (nil: offsets without rows, acknowledged at once). Units
// must come in read order: start must be where the previous one ended.
func (c *checkpointer) track(k bucketKey, start, end int64, fl *flight) (*entry, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.states[k]
	if st == nil {
		return nil, fmt.Errorf("%w: %s", errUntracked, k)
	}
	if start != st.readPos || end < start {
		return nil, fmt.Errorf("%w: %s rows [%d, %d) handed out at read position %d", errTrackMismatch, k, start, end, st.readPos)
	}
	e := &entry{st: st, gen: st.gen, start: start, end: end, fl: fl}
	if fl == nil {
		e.acked = true
	} else {
		fl.remaining++
	}
	c.appendLocked(st, e)
	return e, nil
}

func (c *checkpointer) appendLocked(st *bucketState, e *entry) {
	st.entries = append(st.entries, e)
	st.readPos = e.end
	if e.acked {
		c.advanceLocked(st)
	}
}

// ack marks entries as acknowledged and moves the committed positions over
// the contiguous acknowledged prefix of each bucket.
func (c *checkpointer) ack(entries []*entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range entries {
		if e.acked || e.gen != e.st.gen {
			continue
		}
		e.acked = true
		c.advanceLocked(e.st)
	}
}

func (c *checkpointer) advanceLocked(st *bucketState) {
	moved := false
	for st.ncommitted < len(st.entries) && st.entries[st.ncommitted].acked {
		st.committed = st.entries[st.ncommitted].end
		st.ncommitted++
		moved = true
	}
	if moved {
		c.markDirtyLocked()
	}
}

// snapshot is what one cache write stores.
type snapshot struct {
	v         checkpointValue
	value     []byte
	positions map[*bucketState]snapPos
}

type snapPos struct {
	gen    uint64
	offset int64
}

// takeSnapshot returns the value to write, or nil when nothing changed since
// the last write.
func (c *checkpointer) takeSnapshot(database, table string) (*snapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty {
		return nil, nil
	}
	v := checkpointValue{Version: checkpointVersion, Database: database, Table: table, TableID: c.tableID}
	s := &snapshot{positions: make(map[*bucketState]snapPos, len(c.states))}
	for k, st := range c.states {
		if st.removed {
			if st.ncommitted == len(st.entries) {
				// Nothing in flight any more: forget the bucket.
				c.dropEntriesLocked(st)
				delete(c.states, k)
			}
			continue
		}
		b := checkpointBucket{Bucket: k.bucket, Offset: st.committed, Partition: st.partition}
		if st.snap != nil && st.committed < st.snap.LogOffset {
			snap := *st.snap
			b.Snapshot = &snap
		}
		if k.partitionID != fluss.NoPartition {
			pid := k.partitionID
			b.PartitionID = &pid
		}
		v.Buckets = append(v.Buckets, b)
		s.positions[st] = snapPos{gen: st.gen, offset: st.committed}
	}
	v.Buckets = append(v.Buckets, c.extra...)
	slices.SortFunc(v.Buckets, func(a, b checkpointBucket) int {
		ka, kb := a.key(), b.key()
		if ka.partitionID != kb.partitionID {
			if ka.partitionID < kb.partitionID {
				return -1
			}
			return 1
		}
		return int(ka.bucket) - int(kb.bucket)
	})
	val, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	s.v, s.value = v, val
	c.dirty = false
	return s, nil
}

// persisted records that a snapshot was written: entries up to the written
// offsets are done and their slots are given back. It returns the written
// positions for metrics.
func (c *checkpointer) persisted(s *snapshot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for st, p := range s.positions {
		if st.gen != p.gen {
			continue
		}
		st.persisted = p.offset
		n := 0
		for n < st.ncommitted && st.entries[n].end <= p.offset {
			c.finishLocked(st.entries[n])
			n++
		}
		if n > 0 {
			st.entries = slices.Delete(st.entries, 0, n)
			st.ncommitted -= n
		}
	}
}

// writeFailed re-arms the flush after a failed write.
func (c *checkpointer) writeFailed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.markDirtyLocked()
}

// positions returns the committed and persisted offsets of every bucket
// (for metrics and tests).
func (c *checkpointer) positions() map[bucketKey][2]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[bucketKey][2]int64, len(c.states))
	for k, st := range c.states {
		out[k] = [2]int64{st.committed, st.persisted}
	}
	return out
}

// loadOnce installs the value read from the cache (the first time) and
// returns its positions. Until a bucket starts, its loaded position is
// written back unchanged, as are those of buckets this instance does not
// read.
func (c *checkpointer) loadOnce(v *checkpointValue) map[bucketKey]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[bucketKey]int64, len(v.Buckets))
	for _, b := range v.Buckets {
		out[b.key()] = b.Offset
		if b.Snapshot != nil {
			c.loadedSnaps[b.key()] = *b.Snapshot
		}
	}
	if !c.loadApplied {
		c.loadApplied = true
		c.tableID = v.TableID
		c.extra = slices.Clone(v.Buckets)
	}
	return out
}

// clear forgets everything (before the first start, when nothing is in
// flight).
func (c *checkpointer) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.states {
		c.dropEntriesLocked(st)
		st.gen++
	}
	c.states = map[bucketKey]*bucketState{}
	c.extra = nil
	clear(c.loadedSnaps)
	c.tableID = 0
	c.loadApplied = false
	c.dirty = false
}

// pruneExtra forgets loaded positions of buckets that no longer exist.
func (c *checkpointer) pruneExtra(exists func(bucketKey) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.extra)
	c.extra = slices.DeleteFunc(c.extra, func(b checkpointBucket) bool { return !exists(b.key()) })
	if len(c.extra) != n {
		c.markDirtyLocked()
	}
}

// currentTableID returns the table id the positions belong to (0: none).
func (c *checkpointer) currentTableID() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tableID
}

// persistedOffset returns the offset last written for a bucket (-1: none).
func (c *checkpointer) persistedOffset(k bucketKey) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.states[k]; st != nil {
		return st.persisted
	}
	return -1
}

// setTableID sets the table id written with the positions.
func (c *checkpointer) setTableID(id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tableID != id {
		c.tableID = id
		c.markDirtyLocked()
	}
}
