package fluss

import (
	"context"
	"fmt"

	"github.com/fluss-iggy/fluss-iggy/fluss/records"
)

// BatchStamp is one numbered batch an idempotent writer is about to send:
// the bucket it goes to, its writer id and sequence, and an offset of the
// bucket at or below the one it will be appended at. A reader of the bucket
// from From finds the batch, once appended, by its header's writer id and
// batch sequence (records.Header): this is how a process that died after
// sending learns, after a restart, which of its batches Fluss kept.
type BatchStamp struct {
	Bucket    TableBucket
	Partition string // the partition's name, "" when not partitioned
	WriterID  int64
	Sequence  int32
	From      int64
}

// BeforeSend is called by an idempotent writer with the numbered batches of
// a write before it sends them (and again when a new writer id renumbered
// them). An error fails the write before anything is sent.
type BeforeSend func(ctx context.Context, stamps []BatchStamp) error

type beforeSendKey struct{}

// WithBeforeSend returns a context under which an idempotent Writer's
// writes call fn before sending (see BeforeSend).
func WithBeforeSend(ctx context.Context, fn BeforeSend) context.Context {
	return context.WithValue(ctx, beforeSendKey{}, fn)
}

func beforeSendOf(ctx context.Context) BeforeSend {
	fn, _ := ctx.Value(beforeSendKey{}).(BeforeSend)
	return fn
}

// announce hands the stamps of the batches numbered so far (used) to the
// context's BeforeSend, with the offset each will be appended at or above:
// the base offset of the bucket's last acknowledged batch, else the
// bucket's end offset read now.
func (w *Writer) announce(ctx context.Context, fn BeforeSend, partitionID int64, partName string, used map[int32]records.WriterState) error {
	var unknown []int32
	for b := range used {
		if w.idem.base(w.info.Bucket(partitionID, b)) < 0 {
			unknown = append(unknown, b)
		}
	}
	var ends map[int32]int64
	if len(unknown) > 0 {
		var err error
		if ends, err = w.c.ListOffsets(ctx, w.info, partitionID, unknown, LatestOffset()); err != nil {
			return fmt.Errorf("reading the end offsets before sending: %w", err)
		}
	}
	stamps := make([]BatchStamp, 0, len(used))
	for b, ws := range used {
		tb := w.info.Bucket(partitionID, b)
		from := w.idem.base(tb)
		if from < 0 {
			from = ends[b]
		}
		stamps = append(stamps, BatchStamp{Bucket: tb, Partition: partName, WriterID: ws.WriterID, Sequence: ws.BatchSequence, From: from})
	}
	return fn(ctx, stamps)
}
