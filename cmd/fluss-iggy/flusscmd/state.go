package flusscmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
	"github.com/fluss-iggy/fluss-iggy/fluss/jsonrow"
	"github.com/fluss-iggy/fluss-iggy/fluss/records"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// State writes the current state of a primary-key table, `scan --snapshot`:
// per bucket, the rows of its latest KV snapshot merged with its changelog
// from the snapshot's log offset (from the earliest offset when the bucket
// has no snapshot) to the latest offset seen after listing the snapshots:
// +I and +U rows replace the key's row, -D rows delete the key, -U rows are
// ignored. One line per live key,
//
//	{"partition":null,"bucket":0,"row":{...}}
//
// with rows in the canonical JSON mapping (projected to o.Columns), ordered
// by partition name, then by primary key: the bytes of the canonical JSON
// object of the primary-key columns ({"id":3} < {"id":30} < {"id":4}),
// whatever the projection. The Java tool's `state` command prints the same.
func State(ctx context.Context, c *fluss.Client, path fluss.TablePath, w io.Writer, o ScanOptions, snapOpts ...fluss.SnapshotOption) error {
	info, err := c.RefreshTable(ctx, path)
	if err != nil {
		return err
	}
	if !info.HasPrimaryKey() {
		return fmt.Errorf("table %s has no primary key; scan --snapshot reads primary-key tables", path)
	}
	enc, err := newStateEncoder(info, o.Columns)
	if err != nil {
		return err
	}
	parts, err := partitionsOf(ctx, c, info, o.Partition)
	if err != nil {
		return err
	}
	s, err := c.NewScanner(info, o.ScanOptions...)
	if err != nil {
		return err
	}
	defer s.Close()
	for _, p := range parts {
		rows, err := partitionState(ctx, c, s, info, p, enc, o, snapOpts)
		if err != nil {
			return err
		}
		if err := writeState(w, p, rows); err != nil {
			return err
		}
	}
	return nil
}

// stateRow is a live key's bucket and rendered row.
type stateRow struct {
	bucket int32
	row    string
}

// partitionState builds the state of one partition: primary-key JSON ->
// row.
func partitionState(ctx context.Context, c *fluss.Client, s *fluss.Scanner, info *fluss.TableInfo, p fluss.PartitionInfo,
	enc *stateEncoder, o ScanOptions, snapOpts []fluss.SnapshotOption) (map[string]stateRow, error) {
	// Snapshots first: the latest offsets listed after them cover them.
	snaps, err := c.LatestKVSnapshots(ctx, info, p)
	if err != nil {
		return nil, err
	}
	ranges, err := c.BucketRanges(ctx, info, p.Name)
	if err != nil {
		return nil, err
	}
	bySnap := map[int32]fluss.KVSnapshot{}
	for _, sn := range snaps {
		bySnap[sn.Bucket.Bucket] = sn
	}
	rows := map[string]stateRow{}
	for _, r := range ranges {
		from := r.Start
		if sn, ok := bySnap[r.Bucket.Bucket]; ok && sn.SnapshotID != fluss.NoSnapshot {
			var err error
			if sn, err = readLatestSnapshot(ctx, c, info, p, sn, enc, rows, snapOpts); err != nil {
				return nil, err
			}
			if sn.LogOffset < r.Start {
				return nil, fmt.Errorf("%s %s: snapshot %d covers the changelog up to offset %d, which starts at %d now",
					info.Path, describe(r), sn.SnapshotID, sn.LogOffset, r.Start)
			}
			from, r.End = sn.LogOffset, max(r.End, sn.LogOffset)
		}
		if r.End <= from {
			continue
		}
		tail := r
		tail.Start = from
		err := readWatched(ctx, s, []fluss.BucketRange{tail}, o.Timeout, func(b *fluss.ScanBatch) error {
			return enc.apply(b, rows)
		})
		if err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// snapshotAttempts bounds the reads of a bucket's latest snapshot when the
// server replaces it meanwhile (it keeps only the latest).
const snapshotAttempts = 5

// readLatestSnapshot adds the rows of the bucket's snapshot sn to rows; if
// the server deleted it meanwhile, it reads the bucket's new latest one. It
// returns the snapshot read.
func readLatestSnapshot(ctx context.Context, c *fluss.Client, info *fluss.TableInfo, p fluss.PartitionInfo, sn fluss.KVSnapshot,
	enc *stateEncoder, rows map[string]stateRow, opts []fluss.SnapshotOption) (fluss.KVSnapshot, error) {
	for attempt := 1; ; attempt++ {
		bucket := map[string]stateRow{}
		err := readSnapshot(ctx, c, info, sn, enc, bucket, opts)
		if err == nil {
			for k, v := range bucket {
				rows[k] = v
			}
			return sn, nil
		}
		code, _ := errcode.Code(err)
		if attempt == snapshotAttempts || code != errcode.KvSnapshotNotExist.Code && !errors.Is(err, fluss.ErrSnapshotGone) {
			return sn, err
		}
		snaps, err := c.LatestKVSnapshots(ctx, info, p)
		if err != nil {
			return sn, err
		}
		for _, s := range snaps {
			if s.Bucket.Bucket == sn.Bucket.Bucket {
				sn = s
			}
		}
	}
}

// readSnapshot adds the rows of one bucket's snapshot to rows.
func readSnapshot(ctx context.Context, c *fluss.Client, info *fluss.TableInfo, sn fluss.KVSnapshot, enc *stateEncoder,
	rows map[string]stateRow, opts []fluss.SnapshotOption) error {
	r, err := c.OpenKVSnapshot(ctx, info, sn, opts...)
	if err != nil {
		return err
	}
	defer r.Close()
	for {
		rec, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		err = enc.each(rec, func(i int, key, row []byte) {
			rows[string(key)] = stateRow{bucket: sn.Bucket.Bucket, row: string(row)}
		})
		rec.Release()
		if err != nil {
			return fmt.Errorf("%s bucket %d snapshot %d: %w", info.Path, sn.Bucket.Bucket, sn.SnapshotID, err)
		}
	}
}

// writeState writes the rows of one partition ordered by key.
func writeState(w io.Writer, p fluss.PartitionInfo, rows map[string]stateRow) error {
	keys := make([]string, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	sort.Strings(keys) // Go compares strings bytewise
	var line []byte
	for _, k := range keys {
		r := rows[k]
		line = appendPartition(line[:0], p)
		line = append(line, `,"bucket":`...)
		line = strconv.AppendInt(line, int64(r.bucket), 10)
		line = append(line, `,"row":`...)
		line = append(line, r.row...)
		line = append(line, "}\n"...)
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	return nil
}

// stateEncoder renders the primary key and the projected row of full-width
// records (every column of the table's current schema).
type stateEncoder struct {
	pkIdx, outIdx []int
	pkSchema      *arrow.Schema
	outSchema     *arrow.Schema
	pk, out       *jsonrow.Encoder
	key, row      []byte
}

func newStateEncoder(info *fluss.TableInfo, columns []string) (*stateEncoder, error) {
	e := &stateEncoder{}
	var err error
	if e.pkIdx, err = info.Schema.ProjectionIndices(info.PrimaryKey); err != nil {
		return nil, fmt.Errorf("%s: primary key: %w", info.Path, err)
	}
	e.outIdx = make([]int, len(info.Schema.Columns))
	for i := range e.outIdx {
		e.outIdx[i] = i
	}
	if columns != nil {
		if e.outIdx, err = info.Schema.ProjectionIndices(columns); err != nil {
			return nil, fmt.Errorf("%s: %w", info.Path, err)
		}
		if len(e.outIdx) == 0 {
			return nil, fmt.Errorf("%s: the projection selects no column", info.Path)
		}
	}
	if e.pk, e.pkSchema, err = projectedEncoder(info.Schema, e.pkIdx); err != nil {
		return nil, fmt.Errorf("%s: %w", info.Path, err)
	}
	if e.out, e.outSchema, err = projectedEncoder(info.Schema, e.outIdx); err != nil {
		return nil, fmt.Errorf("%s: %w", info.Path, err)
	}
	return e, nil
}

// projectedEncoder returns an encoder of the columns idx of s and their
// Arrow schema.
func projectedEncoder(s *types.Schema, idx []int) (*jsonrow.Encoder, *arrow.Schema, error) {
	ps, err := s.ProjectIndices(idx)
	if err != nil {
		return nil, nil, err
	}
	as, err := ps.ArrowSchema()
	if err != nil {
		return nil, nil, err
	}
	enc, err := jsonrow.NewEncoder(ps.RowType(), as)
	return enc, as, err
}

// each calls fn with every row's primary-key JSON and projected row JSON
// (valid during the call).
func (e *stateEncoder) each(rec arrow.RecordBatch, fn func(i int, key, row []byte)) error {
	pk := project(rec, e.pkSchema, e.pkIdx)
	defer pk.Release()
	out := project(rec, e.outSchema, e.outIdx)
	defer out.Release()
	if err := e.pk.Bind(pk); err != nil {
		return err
	}
	if err := e.out.Bind(out); err != nil {
		return err
	}
	for i := 0; i < int(rec.NumRows()); i++ {
		e.key = e.pk.AppendRow(e.key[:0], i)
		e.row = e.out.AppendRow(e.row[:0], i)
		fn(i, e.key, e.row)
	}
	return nil
}

// apply applies the changelog rows of b to rows.
func (e *stateEncoder) apply(b *fluss.ScanBatch, rows map[string]stateRow) error {
	return e.each(b.Record, func(i int, key, row []byte) {
		switch b.ChangeType(i) {
		case records.Insert, records.UpdateAfter, records.AppendOnly:
			rows[string(key)] = stateRow{bucket: b.Bucket.Bucket, row: string(row)}
		case records.Delete:
			delete(rows, string(key))
		}
	})
}

// project returns the columns idx of rec under schema s.
func project(rec arrow.RecordBatch, s *arrow.Schema, idx []int) arrow.RecordBatch {
	cols := make([]arrow.Array, len(idx))
	for j, i := range idx {
		cols[j] = rec.Column(i)
	}
	return array.NewRecordBatch(s, cols, rec.NumRows())
}
