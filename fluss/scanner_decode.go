package fluss

import (
	"errors"
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
	"github.com/fluss-iggy/fluss-iggy/fluss/records"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// Batches carry the schema id they were written with. Rows of the table's
// current schema id decode straight into the output columns. Rows of an
// older schema id (written before ADD COLUMN) are decoded with that schema
// and mapped to the output columns by column id; the columns the old
// schema lacks come out as null columns, as the Java client does.

type decoderKey struct {
	schemaID int16
	pushed   bool // the body holds the server-projected columns
}

// batchDecoder decodes the batches of one schema id.
type batchDecoder struct {
	dec *records.Decoder
	// outCols maps output column j to column outCols[j] of the decoded
	// record, or -1 for a column the batch's schema does not have. nil:
	// the decoded record has the output columns already.
	outCols []int
}

type decoders struct {
	s  *Scanner
	mu sync.Mutex
	m  map[decoderKey]*batchDecoder
}

func (d *decoders) init(s *Scanner) {
	d.s = s
	d.m = map[decoderKey]*batchDecoder{}
}

func (d *decoders) get(schemaID int16, pushed bool) (*batchDecoder, error) {
	k := decoderKey{schemaID, pushed}
	d.mu.Lock()
	bd, ok := d.m[k]
	d.mu.Unlock()
	if ok {
		return bd, nil
	}
	bd, err := d.build(schemaID, pushed)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	if old, ok := d.m[k]; ok {
		bd = old
	} else {
		d.m[k] = bd
	}
	d.mu.Unlock()
	return bd, nil
}

// options are the decoder options every schema's decoder starts from.
// Owned buffers: no batch refers to the fetch response, whose frame then
// takes the next response (scanner_fetch.go).
func (d *decoders) options() []records.Option {
	s := d.s
	opts := []records.Option{records.WithAllocator(s.cfg.mem), records.WithCRCCheck(s.cfg.checkCRC), records.WithOwnedBuffers(true)}
	if s.format != records.LogFormatArrow {
		opts = append(opts, records.WithLogFormat(s.format, func(id int16) (*types.Schema, error) {
			return s.c.Schema(s.ctx, s.info, int32(id))
		}))
	}
	return opts
}

func (d *decoders) build(schemaID int16, pushed bool) (*batchDecoder, error) {
	s := d.s
	info := s.info
	lookup := func(id int16) (*arrow.Schema, error) { return s.c.ArrowSchema(s.ctx, info, int32(id)) }
	opts := d.options()
	if int32(schemaID) == info.SchemaID {
		if s.proj != nil {
			opts = append(opts, records.WithProjection(s.proj), records.WithProjectionPushedDown(pushed))
		}
		dec, err := records.NewDecoder(lookup, opts...)
		if err != nil {
			return nil, err
		}
		return &batchDecoder{dec: dec}, nil
	}

	old, err := s.c.Schema(s.ctx, info, int32(schemaID))
	if err != nil {
		return nil, err
	}
	latest := info.Schema
	out := s.proj
	if out == nil {
		out = make([]int, len(latest.Columns))
		for i := range out {
			out[i] = i
		}
	}
	byID := latest.HasColumnIDs && old.HasColumnIDs
	var present []int
	outCols := make([]int, len(out))
	for j, li := range out {
		k := findColumn(old, &latest.Columns[li], byID)
		if k < 0 {
			outCols[j] = -1
			continue
		}
		if !old.Columns[k].Type.Equal(latest.Columns[li].Type) {
			return nil, fmt.Errorf("column %q is %s in schema %d and %s in schema %d",
				latest.Columns[li].Name, old.Columns[k].Type, schemaID, latest.Columns[li].Type, info.SchemaID)
		}
		outCols[j] = len(present)
		present = append(present, k)
	}
	if pushed {
		// The server projected by position with the table's current
		// indices; that only works when the old schema has them all, at
		// the same positions.
		for j, li := range out {
			if li >= len(old.Columns) || present == nil || outCols[j] < 0 || present[outCols[j]] != li {
				return nil, errcode.New(errcode.InvalidColumnProjection.Code,
					fmt.Sprintf("schema %d has no column %d (%q) for a pushed-down projection", schemaID, li, latest.Columns[li].Name))
			}
		}
	}
	if present == nil {
		present = []int{}
	}
	opts = append(opts, records.WithProjection(present), records.WithProjectionPushedDown(pushed))
	dec, err := records.NewDecoder(lookup, opts...)
	if err != nil {
		return nil, err
	}
	identity := len(present) == len(out)
	for j := range outCols {
		if outCols[j] != j {
			identity = false
		}
	}
	if identity {
		outCols = nil
	}
	return &batchDecoder{dec: dec, outCols: outCols}, nil
}

// findColumn returns the index in s of column c (by id, else by name), or -1.
func findColumn(s *types.Schema, c *types.Column, byID bool) int {
	for i := range s.Columns {
		if byID {
			if s.Columns[i].ID == c.ID {
				return i
			}
		} else if s.Columns[i].Name == c.Name {
			return i
		}
	}
	return -1
}

// decodeInto decodes the back-to-back batches in recs and appends their
// rows at or after r.next (t.offset at the start of a fetch) to r, advancing
// r.next: rows are returned once each and in order even when batches
// overlap (remote segments can). It returns the bytes of the complete
// batches it walked. On error r.err is set and r holds the batches decoded
// before the failing one.
//
// Offsets are dense in a Fluss log, so a batch starting after r.next means
// rows are missing: that is an error (errOffsetGap), never a skip. Only
// server-projected responses may skip offsets: the server drops empty
// batches when it projects.
func (s *Scanner) decodeInto(t fetchTarget, recs []byte, r *fetchResult, remote bool) int {
	pushed := t.pushed && !remote
	consumed := 0
	it := records.NewBatchIterator(recs)
	for it.Next() {
		raw := it.Batch()
		if !pushed && raw.BaseOffset > r.next {
			r.err = fmt.Errorf("%w: offsets [%d, %d) are missing", errOffsetGap, r.next, raw.BaseOffset)
			return consumed
		}
		bd, err := s.dec.get(raw.SchemaID, pushed)
		if err != nil {
			r.err = fmt.Errorf("batch at offset %d (schema id %d): %w", raw.BaseOffset, raw.SchemaID, err)
			return consumed
		}
		b, err := bd.dec.DecodeBatch(raw, r.next)
		if err != nil {
			r.err = err
			return consumed
		}
		consumed += len(raw.Bytes)
		r.lastSchemaID = int32(raw.SchemaID)
		if b != nil {
			if bd.outCols != nil {
				if err := s.remap(b, bd.outCols); err != nil {
					b.Release()
					r.err = fmt.Errorf("batch at offset %d (schema id %d): %w", raw.BaseOffset, raw.SchemaID, err)
					return consumed
				}
			}
			r.batches = append(r.batches, &ScanBatch{
				Batch:         b,
				Table:         s.info.Path,
				Bucket:        t.st.tb,
				Partition:     t.st.partition,
				HighWatermark: r.hw,
				Remote:        remote,
			})
		}
		if n := raw.NextOffset(); n > r.next {
			r.next = n
		}
	}
	if err := it.Err(); err != nil {
		r.err = fmt.Errorf("after offset %d: %w", r.next, err)
	}
	return consumed
}

// errOffsetGap: the log read skips offsets (fluss-protocol.md §3.4: every
// offset belongs to a batch, empty batches included).
var errOffsetGap = errors.New("fluss: gap in the log offsets")

// remap replaces b.Record by a record with the scanner's output columns:
// decoded columns where outCols points at one, null columns elsewhere.
func (s *Scanner) remap(b *records.Batch, outCols []int) error {
	rec := b.Record
	n := rec.NumRows()
	cols := make([]arrow.Array, len(outCols))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for j, k := range outCols {
		if k >= 0 {
			c := rec.Column(k)
			c.Retain()
			cols[j] = c
			continue
		}
		cols[j] = array.MakeArrayOfNull(s.cfg.mem, s.arrowSchema.Field(j).Type, int(n))
	}
	out := array.NewRecordBatch(s.arrowSchema, cols, n)
	rec.Release()
	b.Record = out
	return nil
}
