package records

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// Layout of a KV batch (PutKv records), all little-endian.
const (
	kvOffLength        = 0
	kvOffMagic         = 4
	kvOffCRC           = 5
	kvOffSchemaID      = 9
	kvOffAttributes    = 11
	kvOffWriterID      = 12
	kvOffBatchSequence = 20
	kvOffRecordCount   = 24
	// KVHeaderSize is the size of a KV batch header.
	KVHeaderSize = 28
)

// KVBatchBuilder is part of the write path, test and benchmark support (the
// binary only reads). It builds the KV batch of a PutKv request for one bucket:
// a 28-byte header with CRC-32C, then per record an int32 length, the key
// length as unsigned LEB128, the key and the value row (nothing for a delete).
// The zero value is not usable; call NewKVBatchBuilder.
type KVBatchBuilder struct {
	buf   []byte
	count int32
	h     kvHeader
}

type kvHeader struct {
	schemaID int16
	writerID int64
	sequence int32
}

// NewKVBatchBuilder starts a KV batch for rows of schemaID. writer may be
// nil (NoWriterID, NoBatchSequence).
func NewKVBatchBuilder(schemaID int16, writer *WriterState) *KVBatchBuilder {
	b := &KVBatchBuilder{h: kvHeader{schemaID: schemaID, writerID: NoWriterID, sequence: NoBatchSequence}}
	if writer != nil {
		b.h.writerID, b.h.sequence = writer.WriterID, writer.BatchSequence
	}
	b.Reset()
	return b
}

// Reset empties the builder, keeping its buffer.
func (b *KVBatchBuilder) Reset() {
	b.buf = append(b.buf[:0], make([]byte, KVHeaderSize)...)
	b.count = 0
}

// Len returns the number of records appended.
func (b *KVBatchBuilder) Len() int { return int(b.count) }

// Size returns the size in bytes the batch has so far.
func (b *KVBatchBuilder) Size() int { return len(b.buf) }

// Append adds an upsert of key to value (a CompactedRow), or a delete of
// key when value is nil.
func (b *KVBatchBuilder) Append(key, value []byte) error {
	size := uvarintLen(uint32(len(key))) + len(key) + len(value)
	if int64(len(b.buf))+4+int64(size) > math.MaxInt32 {
		return fmt.Errorf("fluss/records: KV batch would exceed 2 GiB")
	}
	b.buf = binary.LittleEndian.AppendUint32(b.buf, uint32(size))
	b.buf = appendUvarint32(b.buf, uint32(len(key)))
	b.buf = append(b.buf, key...)
	b.buf = append(b.buf, value...)
	b.count++
	return nil
}

// AppendRow adds row of rec: its key encoded by enc, and its value (or
// nothing when del is true, a delete).
func (b *KVBatchBuilder) AppendRow(enc *RowEncoder, rec arrow.RecordBatch, row int, del bool) error {
	var err error
	enc.key, err = enc.AppendKey(enc.key[:0], rec, row)
	if err != nil {
		return err
	}
	var value []byte
	if !del {
		enc.value, err = enc.AppendValue(enc.value[:0], rec, row)
		if err != nil {
			return err
		}
		value = enc.value
		if value == nil {
			value = []byte{}
		}
	}
	if !del && len(value) == 0 {
		// A row of zero columns cannot be told apart from a delete.
		return fmt.Errorf("fluss/records: row %d encodes to an empty value", row)
	}
	return b.Append(enc.key, value)
}

// Build finishes the header and returns the batch. The bytes alias the
// builder's buffer: copy them or stop using the builder before Reset.
func (b *KVBatchBuilder) Build() []byte {
	le := binary.LittleEndian
	buf := b.buf
	le.PutUint32(buf[kvOffLength:], uint32(len(buf)-4))
	buf[kvOffMagic] = 0
	le.PutUint16(buf[kvOffSchemaID:], uint16(b.h.schemaID))
	buf[kvOffAttributes] = 0
	le.PutUint64(buf[kvOffWriterID:], uint64(b.h.writerID))
	le.PutUint32(buf[kvOffBatchSequence:], uint32(b.h.sequence))
	le.PutUint32(buf[kvOffRecordCount:], uint32(b.count))
	le.PutUint32(buf[kvOffCRC:], crc32c(buf[kvOffSchemaID:]))
	return buf
}

// RowEncoder encodes rows of Arrow records as Fluss CompactedRow values and
// compacted keys, the default table.kv.format (COMPACTED). The Arrow schema
// must be the one fluss/types derives from the table schema (§4.2 of the
// protocol reference): the Arrow types give the Fluss encodings (TIME as
// milliseconds of day, TIMESTAMP precision from the unit, DECIMAL precision;
// CHAR and STRING, TIMESTAMP and TIMESTAMP_LTZ encode alike). ARRAY, MAP and
// ROW columns are BinaryArray, BinaryMap and nested CompactedRow values; key
// columns cannot be of those types (Fluss refuses them in keys too).
type RowEncoder struct {
	schema *arrow.Schema
	row    *rowWriter // the values
	keys   *rowWriter // COMPACTED, whatever the values' format: its encs encode the key columns
	pk     []int
	key    []byte
	value  []byte
	// seen is the last record schema found equal to schema: Schema.Equal
	// compares every field and its metadata, too dear for every row.
	seen atomic.Pointer[arrow.Schema]
}

// sameSchema tells whether records of s can be encoded.
func (e *RowEncoder) sameSchema(s *arrow.Schema) bool {
	if s == e.schema || s == e.seen.Load() {
		return true
	}
	if !s.Equal(e.schema) {
		return false
	}
	e.seen.Store(s)
	return true
}

// NewRowEncoder returns an encoder for records of schema whose primary key
// is the given column indices, in primary-key order.
func NewRowEncoder(schema *arrow.Schema, primaryKey []int) (*RowEncoder, error) {
	e := &RowEncoder{schema: schema, pk: append([]int(nil), primaryKey...)}
	specs := make([]*fieldSpec, schema.NumFields())
	dts := make([]arrow.DataType, schema.NumFields())
	for i, f := range schema.Fields() {
		t, err := flussTypeOf(f.Type, f.Nullable, 0)
		if err != nil {
			return nil, fmt.Errorf("fluss/records: column %q: %w", f.Name, err)
		}
		if specs[i], err = newFieldSpec(f.Name, t, 0); err != nil {
			return nil, fmt.Errorf("fluss/records: column %q: %w", f.Name, err)
		}
		dts[i] = f.Type
	}
	var err error
	if e.row, err = newRowWriter(LogFormatCompacted, "column", specs, dts); err != nil {
		return nil, fmt.Errorf("fluss/records: %w", err)
	}
	e.keys = e.row
	if len(primaryKey) == 0 {
		return nil, fmt.Errorf("fluss/records: no primary key columns")
	}
	for _, c := range primaryKey {
		if c < 0 || c >= len(specs) {
			return nil, fmt.Errorf("fluss/records: primary key column index %d out of range", c)
		}
		if k := specs[c].kind; k == types.KindArray || k == types.KindMap || k == types.KindRow {
			return nil, fmt.Errorf("fluss/records: key column %q is %s: Fluss keys cannot hold ARRAY, MAP or ROW values",
				specs[c].name, schema.Field(c).Type)
		}
	}
	return e, nil
}

// NewKVEncoder returns an encoder of the rows of a primary-key table of
// schema (records of the Arrow schema types.Schema.ArrowSchema gives) whose
// values are in kvFormat, the table's table.kv.format: LogFormatCompacted
// (the default; then it is NewRowEncoder's) or LogFormatIndexed (IndexedRow
// values, which need the Fluss types: a CHAR(n) takes n bytes). Keys are
// compacted in both.
func NewKVEncoder(schema *types.Schema, primaryKey []int, kvFormat LogFormat) (*RowEncoder, error) {
	if !kvFormat.isRow() {
		return nil, fmt.Errorf("fluss/records: kv format %q is not a row format (want COMPACTED or INDEXED)", string(kvFormat))
	}
	as, row, err := schemaRowWriter(schema, kvFormat)
	if err != nil {
		return nil, err
	}
	e, err := NewRowEncoder(as, primaryKey)
	if err != nil {
		return nil, err
	}
	e.row = row
	return e, nil
}

// AppendValue appends row i of rec as a row of the encoder's format (a
// CompactedRow: a null bitmap of ceil(n/8) bytes, then the non-null fields
// in order).
func (e *RowEncoder) AppendValue(dst []byte, rec arrow.RecordBatch, i int) ([]byte, error) {
	if !e.sameSchema(rec.Schema()) {
		return dst, fmt.Errorf("fluss/records: record schema differs from the encoder's")
	}
	out, err := appendRow(e.row, dst, recordCols{rec}, i)
	if err != nil {
		return out, fmt.Errorf("fluss/records: row %d: %w", i, err)
	}
	return out, nil
}

// AppendKey appends the primary key of row i of rec: the key columns in
// key order, encoded as in a CompactedRow but without a null bitmap.
func (e *RowEncoder) AppendKey(dst []byte, rec arrow.RecordBatch, i int) ([]byte, error) {
	if !e.sameSchema(rec.Schema()) {
		return dst, fmt.Errorf("fluss/records: record schema differs from the encoder's")
	}
	for _, c := range e.pk {
		col := rec.Column(c)
		if col.IsNull(i) {
			return dst, fmt.Errorf("fluss/records: row %d: null in primary key column %q", i, e.schema.Field(c).Name)
		}
		var err error
		if dst, err = e.keys.encs[c](dst, col, i); err != nil {
			return dst, fmt.Errorf("fluss/records: row %d: key column %q: %w", i, e.schema.Field(c).Name, err)
		}
	}
	return dst, nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func uvarintLen(v uint32) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// appendUvarint32 is Fluss's writeInt: unsigned LEB128 of the 32-bit value
// (a negative int takes 5 bytes).
func appendUvarint32(dst []byte, v uint32) []byte {
	for v >= 0x80 {
		dst = append(dst, byte(v)|0x80)
		v >>= 7
	}
	return append(dst, byte(v))
}
