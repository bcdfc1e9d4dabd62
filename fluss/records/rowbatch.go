package records

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// recordOverhead is the part of a row-format record before its row: the
// int32 length (of what follows it) and the change-type byte.
const recordOverhead = 5

// decodeRowBatch decodes a batch of INDEXED or COMPACTED records (the
// header is checked, the batch has rows at or after fetchOffset). Records
// below fetchOffset are checked but not decoded.
func (d *Decoder) decodeRowBatch(raw *RawBatch, fetchOffset int64) (*Batch, error) {
	plan, err := d.plan(raw.SchemaID)
	if err != nil {
		return nil, fmt.Errorf("batch at offset %d: %w", raw.BaseOffset, err)
	}
	rows := int(raw.RecordCount)
	if room := (len(raw.Bytes) - raw.RecordsOffset()) / recordOverhead; rows > room {
		return nil, fmt.Errorf("%w: batch at offset %d declares %d records, its %d bytes hold at most %d",
			ErrInvalidBatch, raw.BaseOffset, rows, len(raw.Bytes), room)
	}
	skip := 0
	if fetchOffset > raw.BaseOffset {
		skip = int(min(fetchOffset-raw.BaseOffset, int64(rows)))
	}
	if skip >= rows {
		return nil, nil
	}
	dec := &rowDec{format: d.cfg.format, acc: rowBudget{limit: d.cfg.maxBytes}}
	cols := newRowCols(plan, d.cfg.mem, &dec.acc, rows-skip)
	defer releaseCols(cols)
	cts, err := dec.records(raw, plan, cols, skip)
	if err != nil {
		return nil, fmt.Errorf("batch at offset %d (schema id %d): %w", raw.BaseOffset, raw.SchemaID, err)
	}
	rec := assembleRecord(plan, cols, int64(rows-skip))
	return &Batch{Header: raw.Header, FirstOffset: raw.BaseOffset + int64(skip), Record: rec, ChangeTypes: cts}, nil
}

// records walks the records of raw, decoding those from index skip on into
// cols, and returns their change types (nil when the batch is append-only
// and every record says so, as for an ARROW batch).
func (d *rowDec) records(raw *RawBatch, plan *schemaPlan, cols []*colBuilder, skip int) ([]ChangeType, error) {
	b := raw.Bytes
	rows := int(raw.RecordCount)
	nvar := 0
	for _, f := range plan.rows {
		if f.fixed == 0 {
			nvar++
		}
	}
	cts := make([]ChangeType, 0, rows-skip)
	allAppend := true
	pos := raw.RecordsOffset()
	for i := 0; i < rows; i++ {
		at := raw.BaseOffset + int64(i)
		if len(b)-pos < recordOverhead {
			return nil, fmt.Errorf("%w: record %d (offset %d) at byte %d: %d bytes left, a record needs at least %d",
				ErrInvalidBatch, i, at, pos, len(b)-pos, recordOverhead)
		}
		n := int64(int32(binary.LittleEndian.Uint32(b[pos:])))
		if n < 1 || n > int64(len(b)-pos-4) {
			return nil, fmt.Errorf("%w: record %d (offset %d) at byte %d: length %d with %d bytes left",
				ErrInvalidBatch, i, at, pos, n, len(b)-pos-4)
		}
		ct := ChangeType(b[pos+4])
		row := b[pos+recordOverhead : pos+4+int(n)]
		pos += 4 + int(n)
		if !ct.Valid() {
			return nil, fmt.Errorf("%w: record %d (offset %d): change type %d", ErrInvalidBatch, i, at, ct)
		}
		if i < skip {
			continue
		}
		cts = append(cts, ct)
		allAppend = allAppend && ct == AppendOnly
		if err := d.row(plan.rows, cols, nvar, row); err != nil {
			return nil, fmt.Errorf("%w: record %d (offset %d): %s row: %w", ErrInvalidBatch, i, at, d.format, err)
		}
		if d.acc.over() {
			return nil, d.acc.err()
		}
	}
	if pos != len(b) {
		return nil, fmt.Errorf("%w: %d bytes after the last of %d records", ErrInvalidBatch, len(b)-pos, rows)
	}
	if allAppend && raw.AppendOnly() {
		return nil, nil
	}
	return cts, nil
}

// row decodes one top-level row, which must use all its bytes.
func (d *rowDec) row(specs []*fieldSpec, cols []*colBuilder, nvar int, row []byte) error {
	var n int
	var err error
	if d.format == LogFormatIndexed {
		n, err = d.indexedRow(specs, cols, nvar, row)
	} else {
		n, err = d.compactedRow(specs, cols, row)
	}
	if err != nil {
		return err
	}
	if n != len(row) {
		return fmt.Errorf("%d bytes left after the last column (the row has %d)", len(row)-n, len(row))
	}
	return nil
}

// assembleRecord finishes the kept columns and orders them as the plan's
// output.
func assembleRecord(plan *schemaPlan, cols []*colBuilder, rows int64) arrow.RecordBatch {
	loaded := make([]arrow.Array, 0, len(cols))
	defer func() {
		for _, a := range loaded {
			a.Release()
		}
	}()
	for _, c := range cols {
		if c != nil {
			loaded = append(loaded, c.newArray())
		}
	}
	out := loaded
	if !plan.identity {
		out = make([]arrow.Array, len(plan.outCols))
		for i, j := range plan.outCols {
			out[i] = loaded[j]
		}
	}
	return array.NewRecordBatch(plan.out, out, rows)
}
