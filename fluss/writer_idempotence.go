package fluss

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/wire"
	"github.com/fluss-iggy/fluss-iggy/fluss/records"
)

// An idempotent writer numbers its batches as the Java client's does: a
// writer id from the servers (InitWriter) and, per bucket, a batch
// sequence from 0 that grows by one per batch the bucket acknowledged. The
// bucket's leader keeps the last sequences of each writer id, so a batch
// sent again after a lost answer (a timeout, a dropped connection) is
// recognised and answered with its first write's offsets instead of being
// appended twice; and since the leader's followers keep the same state, a
// new leader recognises it too.
//
// Unlike the Java client, a bucket has one batch in flight at a time (the
// next write to the bucket waits), which keeps the sequences in order
// without the Java client's reordering. When a batch's fate stays unknown
// (it failed after it was sent, or the server lost the writer's state:
// OUT_OF_ORDER_SEQUENCE, UNKNOWN_WRITER_ID) the writer takes a new writer
// id, and every bucket starts again from sequence 0.
type idempotence struct {
	mu       sync.Mutex
	writerID int64 // records.NoWriterID until InitWriter answered
	buckets  map[TableBucket]*bucketSequence
}

// bucketSequence is the numbering of one bucket's batches.
type bucketSequence struct {
	turn     chan struct{} // one token: the right to send the bucket's next batch
	writerID int64         // the writer id next counts for
	next     int32
	base     int64 // base offset of the last acknowledged batch (log tables), -1 unknown
}

func newIdempotence() *idempotence {
	return &idempotence{writerID: records.NoWriterID, buckets: map[TableBucket]*bucketSequence{}}
}

// acquire waits for the turn of every bucket in buckets (ascending, so two
// writes never wait for each other) and returns the function that gives
// them back.
func (id *idempotence) acquire(ctx context.Context, buckets []TableBucket) (func(), error) {
	held := make([]*bucketSequence, 0, len(buckets))
	release := func() {
		for _, s := range held {
			<-s.turn
		}
	}
	for _, b := range buckets {
		s := id.bucket(b)
		select {
		case s.turn <- struct{}{}:
			held = append(held, s)
		case <-ctx.Done():
			release()
			return nil, ctx.Err()
		}
	}
	return release, nil
}

func (id *idempotence) bucket(b TableBucket) *bucketSequence {
	id.mu.Lock()
	defer id.mu.Unlock()
	s := id.buckets[b]
	if s == nil {
		s = &bucketSequence{turn: make(chan struct{}, 1), writerID: records.NoWriterID, base: -1}
		id.buckets[b] = s
	}
	return s
}

// current returns the writer id, NoWriterID when there is none yet.
func (id *idempotence) current() int64 {
	id.mu.Lock()
	defer id.mu.Unlock()
	return id.writerID
}

// set installs a writer id the servers gave.
func (id *idempotence) set(writerID int64) {
	id.mu.Lock()
	defer id.mu.Unlock()
	id.writerID = writerID
}

// reset drops writerID (if it is still the current one): the next batch
// asks for a new writer id.
func (id *idempotence) reset(writerID int64) {
	id.mu.Lock()
	defer id.mu.Unlock()
	if id.writerID == writerID {
		id.writerID = records.NoWriterID
	}
}

// state returns the writer state the next batch of bucket b carries
// under writerID. The caller holds b's turn.
func (id *idempotence) state(b TableBucket, writerID int64) records.WriterState {
	s := id.bucket(b)
	if s.writerID != writerID {
		s.writerID, s.next = writerID, 0
	}
	return records.WriterState{WriterID: writerID, BatchSequence: s.next}
}

// base returns the base offset of bucket b's last acknowledged batch, -1
// when unknown. The caller holds b's turn.
func (id *idempotence) base(b TableBucket) int64 { return id.bucket(b).base }

// acknowledged records that bucket b's batch numbered ws was written at
// offset (-1: not known). The caller holds b's turn.
func (id *idempotence) acknowledged(b TableBucket, ws records.WriterState, offset int64) {
	s := id.bucket(b)
	if offset >= 0 {
		s.base = offset
	}
	if s.writerID != ws.WriterID || s.next != ws.BatchSequence {
		return
	}
	if s.next == math.MaxInt32 {
		s.next = 0 // the servers accept 0 after the largest sequence
	} else {
		s.next++
	}
}

// lostWriterState tells whether err says the bucket's leader no longer
// knows the writer's sequence, which a new writer id cures.
func lostWriterState(err error) bool {
	return errors.Is(err, errcode.OutOfOrderSequence) || errors.Is(err, errcode.UnknownWriterID)
}

// initWriter asks the leader of bucket b for a new writer id.
func (w *Writer) initWriter(ctx context.Context, b TableBucket) (int64, error) {
	conn, _, err := w.c.LeaderConn(ctx, b)
	if err != nil {
		return records.NoWriterID, err
	}
	req := &pb.InitWriterRequest{TablePath: []*pb.PbTablePath{{
		DatabaseName: proto.String(w.info.Path.Database), TableName: proto.String(w.info.Path.Table),
	}}}
	var resp pb.InitWriterResponse
	if err := conn.Call(ctx, wire.InitWriter, req, &resp); err != nil {
		return records.NoWriterID, fmt.Errorf("init writer: %w", err)
	}
	return resp.GetWriterId(), nil
}

// stamp numbers the batches of the pending buckets for this attempt,
// asking for a writer id first when there is none, and tells whether a
// number changed. Batches keep their numbers across attempts while the
// writer id stays, so that a batch sent again is recognised.
func (w *Writer) stamp(ctx context.Context, partitionID int64, pending []int32, batches map[int32][]byte, kv bool, used map[int32]records.WriterState) (changed bool, err error) {
	writerID := w.idem.current()
	if writerID == records.NoWriterID {
		id, err := w.initWriter(ctx, w.info.Bucket(partitionID, pending[0]))
		if err != nil {
			return false, err
		}
		w.idem.set(id)
		writerID = id
	}
	for _, b := range pending {
		ws := w.idem.state(w.info.Bucket(partitionID, b), writerID)
		if prev, ok := used[b]; ok && prev == ws {
			continue
		}
		stampBatch := records.StampLogBatch
		if kv {
			stampBatch = records.StampKVBatch
		}
		if err := stampBatch(batches[b], ws); err != nil {
			return false, err
		}
		used[b] = ws
		changed = true
	}
	return changed, nil
}

// settle updates the numbering after a write: acknowledged buckets move
// to their next sequence; a bucket that failed after one of its attempts
// was sent leaves the writer's state on the server unknown, so the writer
// id is dropped.
func (w *Writer) settle(partitionID int64, used map[int32]records.WriterState, out map[int32]int64, failed map[int32]error) {
	for b, ws := range used {
		if off, ok := out[b]; ok {
			w.idem.acknowledged(w.info.Bucket(partitionID, b), ws, off)
		} else if _, ok := failed[b]; ok {
			w.idem.reset(ws.WriterID)
		}
	}
}
