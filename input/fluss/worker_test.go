package flussinput

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/records"
)

// interleaveWorker is a worker for handleBatches alone: units of two rows,
// buckets A, B, C of a non-partitioned table with the given next offsets.
func interleaveWorker(t *testing.T, units chan *unit, produced map[bucketKey]int64) *worker {
	t.Helper()
	in, _ := newTestInput(t, "")
	in.conf.maxBatchRows = 2
	s, as, rec := testRecord(t, memory.DefaultAllocator, 0, 1)
	rec.Release()
	mb, err := newMessageBuilder(tableMeta{database: "db", table: "t", tableID: 9}, s, as, false)
	if err != nil {
		t.Fatal(err)
	}
	return &worker{in: in, c: &connection{units: units}, builder: mb, produced: produced, parts: map[int64]string{}}
}

func bucketOf(b int32) bucketKey { return bucketKey{partitionID: fluss.NoPartition, bucket: b} }

// scanBatch is a batch of bucket b holding offsets [first, first+n).
func scanBatch(t *testing.T, mem memory.Allocator, b int32, first int64, n int) *fluss.ScanBatch {
	t.Helper()
	_, _, rec := testRecord(t, mem, first, first+int64(n))
	return &fluss.ScanBatch{
		Batch:         &records.Batch{Header: records.Header{BaseOffset: first, LastOffsetDelta: int32(n - 1)}, FirstOffset: first, Record: rec},
		Bucket:        fluss.TableBucket{TableID: 9, PartitionID: fluss.NoPartition, Bucket: b},
		HighWatermark: -1,
	}
}

// The units of one poll take turns by bucket while each bucket's stay in
// order, gaps included, and every batch is released.
func TestHandleBatchesInterleavesBuckets(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	a, b, c := bucketOf(0), bucketOf(1), bucketOf(2)
	units := make(chan *unit, 64)
	w := interleaveWorker(t, units, map[bucketKey]int64{a: 0, b: 10, c: 5})
	batches := []*fluss.ScanBatch{
		scanBatch(t, mem, 0, 0, 5), scanBatch(t, mem, 0, 5, 5), // A: two batches
		scanBatch(t, mem, 1, 10, 3), // B
		scanBatch(t, mem, 2, 7, 4),  // C: offsets 5 and 6 were empty batches
	}
	if err := w.handleBatches(context.Background(), batches); err != nil {
		t.Fatal(err)
	}
	close(units)
	var got []string
	for u := range units {
		kind := "rows"
		if u.kind == unitGap {
			kind = "gap"
		}
		got = append(got, fmt.Sprintf("%d:%s[%d,%d)/%d", u.key.bucket, kind, u.start, u.end, len(u.msgs)))
	}
	want := []string{
		"0:rows[0,2)/2", "1:rows[10,12)/2", "2:gap[5,7)/0", "2:rows[7,9)/2",
		"0:rows[2,4)/2", "1:rows[12,13)/1", "2:rows[9,11)/2",
		"0:rows[4,5)/1",
		"0:rows[5,7)/2", "0:rows[7,9)/2", "0:rows[9,10)/1",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("units\n got %v\nwant %v", got, want)
	}
	if w.produced[a] != 10 || w.produced[b] != 13 || w.produced[c] != 11 {
		t.Fatalf("produced %v", w.produced)
	}
}

// A send that fails (the worker stopping) releases every batch of the poll,
// those not started too.
func TestHandleBatchesReleasesOnError(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	w := interleaveWorker(t, make(chan *unit), map[bucketKey]int64{bucketOf(0): 0, bucketOf(1): 0})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	batches := []*fluss.ScanBatch{scanBatch(t, mem, 0, 0, 5), scanBatch(t, mem, 0, 5, 5), scanBatch(t, mem, 1, 0, 3)}
	if err := w.handleBatches(ctx, batches); err == nil {
		t.Fatal("no error from a cancelled send")
	}
}
