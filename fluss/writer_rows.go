package fluss

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
)

// Write writes the rows of rec to the table, routing them as the Java
// client does: appends to a log table, and to a primary-key table an upsert
// per row, or a delete where deletes[i] is true (deletes may be nil). Rows of
// a partitioned table go to the partition their partition-key columns name
// (a missing one is created with WriteCreatePartitions, else the error names
// it); within a partition, rows go to buckets by the bucket key (AppendRows,
// PutKV). Rows keep their order within a bucket. On error, rows of other
// buckets or partitions may have been written.
func (w *Writer) Write(ctx context.Context, rec arrow.RecordBatch, deletes []bool) error {
	if err := w.checkSchema(rec); err != nil {
		return err
	}
	if deletes != nil && len(deletes) != int(rec.NumRows()) {
		return fmt.Errorf("fluss: write to %s: %d delete flags for %d rows", w.info.Path, len(deletes), rec.NumRows())
	}
	if len(w.info.PartitionKeys) == 0 {
		return w.writePartition(ctx, NoPartition, rec, deletes)
	}
	groups, err := w.partitionGroups(rec)
	if err != nil {
		return err
	}
	for _, g := range groups {
		pid, err := w.partitionID(ctx, g)
		if err != nil {
			return err
		}
		if err := w.writeRows(ctx, pid, rec, g.rows, deletes); err != nil {
			return err
		}
	}
	return nil
}

// writeRows writes the given rows of rec (all of them when rows covers rec
// in order) to one partition.
func (w *Writer) writeRows(ctx context.Context, partitionID int64, rec arrow.RecordBatch, rows []int32, deletes []bool) error {
	if len(rows) == int(rec.NumRows()) {
		return w.writePartition(ctx, partitionID, rec, deletes)
	}
	sub, err := takeRows(w.cfg.mem, rec, rows)
	if err != nil {
		return fmt.Errorf("fluss: write to %s: %w", w.info.Path, err)
	}
	defer sub.Release()
	var subDeletes []bool
	if deletes != nil {
		subDeletes = make([]bool, len(rows))
		for i, r := range rows {
			subDeletes[i] = deletes[r]
		}
	}
	return w.writePartition(ctx, partitionID, sub, subDeletes)
}

func (w *Writer) writePartition(ctx context.Context, partitionID int64, rec arrow.RecordBatch, deletes []bool) error {
	if w.info.HasPrimaryKey() {
		return w.PutKV(ctx, partitionID, rec, deletes)
	}
	for i, d := range deletes {
		if d {
			return fmt.Errorf("fluss: write to %s row %d: a log table takes appends only, not deletes", w.info.Path, i)
		}
	}
	return w.AppendRows(ctx, partitionID, rec)
}

// AppendRows appends the rows of rec to a log table's partition
// (partitionID NoPartition unless partitioned). With a bucket key, each row
// goes to the bucket Fluss's bucketing function gives its key (BucketOf, as
// the Java client); without one, all rows go to one bucket, the next in
// turn from write to write (the Java client's sticky assigner also moves on
// with each batch), starting from a random one.
func (w *Writer) AppendRows(ctx context.Context, partitionID int64, rec arrow.RecordBatch) error {
	if w.info.HasPrimaryKey() {
		return fmt.Errorf("fluss: append to %s: %w", w.info.Path, errcode.New(errcode.NonPrimaryKeyTable.Code, "the table has a primary key: use Upsert and Delete"))
	}
	_, numBuckets, err := w.c.checkBuckets(ctx, w.info, partitionID, []int32{})
	if err != nil {
		return fmt.Errorf("fluss: append to %s: %w", w.info.Path, err)
	}
	if w.bucketEnc == nil || numBuckets <= 1 {
		b := int32(w.nextBucket() % uint32(max(numBuckets, 1)))
		_, err := w.AppendBuckets(ctx, partitionID, map[int32]arrow.RecordBatch{b: rec})
		return err
	}
	rows, err := w.bucketRows(rec, numBuckets)
	if err != nil {
		return err
	}
	recs := make(map[int32]arrow.RecordBatch, len(rows))
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for b, rs := range rows {
		if recs[b], err = takeRows(w.cfg.mem, rec, rs); err != nil {
			delete(recs, b)
			return fmt.Errorf("fluss: append to %s bucket %d: %w", w.info.Path, b, err)
		}
	}
	_, err = w.AppendBuckets(ctx, partitionID, recs)
	return err
}

// nextBucket is the sticky assigner's cursor.
func (w *Writer) nextBucket() uint32 {
	w.stickyOnce.Do(func() { w.sticky.Store(rand.Uint32()) })
	return w.sticky.Add(1)
}

// bucketRows groups the rows of rec by the bucket their bucket key hashes to.
func (w *Writer) bucketRows(rec arrow.RecordBatch, numBuckets int32) (map[int32][]int32, error) {
	out := map[int32][]int32{}
	w.encMu.Lock()
	defer w.encMu.Unlock()
	var key []byte
	for i := 0; i < int(rec.NumRows()); i++ {
		var err error
		if key, err = w.bucketEnc.AppendKey(key[:0], rec, i); err != nil {
			return nil, fmt.Errorf("fluss: append to %s row %d: bucket key: %w", w.info.Path, i, err)
		}
		b := BucketOf(key, numBuckets)
		out[b] = append(out[b], int32(i))
	}
	return out, nil
}

// takeRows returns a new record of the given rows of rec, in that order:
// each column's runs of consecutive rows, sliced without copying, then
// concatenated. (arrow/compute's Take would add 20 MB to the binary.)
func takeRows(mem memory.Allocator, rec arrow.RecordBatch, rows []int32) (arrow.RecordBatch, error) {
	type run struct{ from, to int64 }
	var runs []run
	for _, r := range rows {
		if n := len(runs); n > 0 && runs[n-1].to == int64(r) {
			runs[n-1].to++
			continue
		}
		runs = append(runs, run{int64(r), int64(r) + 1})
	}
	cols := make([]arrow.Array, rec.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	parts := make([]arrow.Array, len(runs))
	for j := range cols {
		col := rec.Column(j)
		for k, r := range runs {
			parts[k] = array.NewSlice(col, r.from, r.to)
		}
		var err error
		cols[j], err = array.Concatenate(parts, mem)
		for _, p := range parts {
			p.Release()
		}
		if err != nil {
			return nil, fmt.Errorf("selecting %d rows of column %s: %w", len(rows), rec.ColumnName(j), err)
		}
	}
	return array.NewRecordBatch(rec.Schema(), cols, int64(len(rows))), nil
}
