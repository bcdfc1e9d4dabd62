package records

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// RowLogEncoder is part of the write path: it encodes Arrow records as log
// batches of a row format, INDEXED or COMPACTED (a log table's
// table.log.format), as the Java client's MemoryLogRecordsIndexedBuilder and
// MemoryLogRecordsCompactedBuilder do: the header of an ARROW batch, then one
// record per row, an int32 length (of what follows it), the change-type byte
// and the row (IndexedLogRecord, CompactedLogRecord). Row-format batches are
// not compressed. A RowLogEncoder is safe for concurrent use.
type RowLogEncoder struct {
	format LogFormat
	schema *arrow.Schema
	row    *rowWriter
}

// NewRowLogEncoder returns the encoder of records of schema (the Arrow
// schema types.Schema.ArrowSchema gives) as batches of format,
// LogFormatIndexed or LogFormatCompacted.
func NewRowLogEncoder(schema *types.Schema, format LogFormat) (*RowLogEncoder, error) {
	if !format.isRow() {
		return nil, fmt.Errorf("fluss/records: log format %q is not a row format (want INDEXED or COMPACTED)", string(format))
	}
	as, row, err := schemaRowWriter(schema, format)
	if err != nil {
		return nil, err
	}
	return &RowLogEncoder{format: format, schema: as, row: row}, nil
}

// schemaRowWriter returns the Arrow schema of a table schema and the writer
// of its rows in format.
func schemaRowWriter(schema *types.Schema, format LogFormat) (*arrow.Schema, *rowWriter, error) {
	if schema == nil {
		return nil, nil, fmt.Errorf("fluss/records: no schema")
	}
	as, err := schema.ArrowSchema()
	if err != nil {
		return nil, nil, fmt.Errorf("fluss/records: %w", err)
	}
	specs := make([]*fieldSpec, len(schema.Columns))
	dts := make([]arrow.DataType, len(schema.Columns))
	for i, c := range schema.Columns {
		if specs[i], err = newFieldSpec(c.Name, c.Type, 0); err != nil {
			return nil, nil, fmt.Errorf("fluss/records: column %q: %w", c.Name, err)
		}
		dts[i] = as.Field(i).Type
	}
	row, err := newRowWriter(format, "column", specs, dts)
	if err != nil {
		return nil, nil, fmt.Errorf("fluss/records: %w", err)
	}
	return as, row, nil
}

// Schema returns the Arrow schema the records must have.
func (e *RowLogEncoder) Schema() *arrow.Schema { return e.schema }

// Format returns the log format of the batches.
func (e *RowLogEncoder) Format() LogFormat { return e.format }

// AppendLogBatch appends a magic-0 log batch of the rows of rec to dst, as
// AppendLogBatch does in the ARROW format: opts.ChangeTypes become the
// records' change types (nil: an append-only batch, every record +A);
// opts.Compression and opts.Allocator do not apply. On error dst is
// returned as it was.
func (e *RowLogEncoder) AppendLogBatch(dst []byte, rec arrow.RecordBatch, opts LogBatchOptions) ([]byte, error) {
	if !rec.Schema().Equal(e.schema) {
		return dst, fmt.Errorf("fluss/records: record schema %s differs from the encoder's %s", rec.Schema(), e.schema)
	}
	h, err := newLogHeader(rec.NumRows(), &opts)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	dst = append(dst, make([]byte, HeaderSize)...)
	cols := recordCols{rec}
	for i := 0; i < int(rec.NumRows()); i++ {
		ct := AppendOnly
		if opts.ChangeTypes != nil {
			ct = opts.ChangeTypes[i]
		}
		at := len(dst)
		dst = append(dst, 0, 0, 0, 0, byte(ct))
		if dst, err = appendRow(e.row, dst, cols, i); err != nil {
			return dst[:start], fmt.Errorf("fluss/records: %s row %d: %w", e.format, i, err)
		}
		if n := len(dst) - at - 4; n > math.MaxInt32 {
			return dst[:start], fmt.Errorf("fluss/records: %s row %d of %d bytes", e.format, i, n)
		}
		binary.LittleEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	}
	return sealLogBatch(dst, start, &h)
}
