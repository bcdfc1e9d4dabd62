package records

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
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
// milliseconds of day, TIMESTAMP precision from the unit, DECIMAL precision).
// ARRAY, MAP and ROW columns are not supported yet.
type RowEncoder struct {
	schema *arrow.Schema
	fields []valueWriter
	pk     []int
	key    []byte
	value  []byte
}

type valueWriter func(dst []byte, arr arrow.Array, i int) []byte

// NewRowEncoder returns an encoder for records of schema whose primary key
// is the given column indices, in primary-key order.
func NewRowEncoder(schema *arrow.Schema, primaryKey []int) (*RowEncoder, error) {
	e := &RowEncoder{schema: schema, pk: append([]int(nil), primaryKey...)}
	for _, f := range schema.Fields() {
		w, err := compactedWriter(f.Type)
		if err != nil {
			return nil, fmt.Errorf("fluss/records: column %q: %w", f.Name, err)
		}
		e.fields = append(e.fields, w)
	}
	if len(primaryKey) == 0 {
		return nil, fmt.Errorf("fluss/records: no primary key columns")
	}
	for _, c := range primaryKey {
		if c < 0 || c >= len(e.fields) {
			return nil, fmt.Errorf("fluss/records: primary key column index %d out of range", c)
		}
	}
	return e, nil
}

// AppendValue appends row i of rec as a CompactedRow: a null bitmap of
// ceil(n/8) bytes, then the non-null fields in order.
func (e *RowEncoder) AppendValue(dst []byte, rec arrow.RecordBatch, i int) ([]byte, error) {
	if !rec.Schema().Equal(e.schema) {
		return dst, fmt.Errorf("fluss/records: record schema differs from the encoder's")
	}
	n := len(e.fields)
	start := len(dst)
	dst = append(dst, make([]byte, (n+7)/8)...)
	for c, w := range e.fields {
		col := rec.Column(c)
		if col.IsNull(i) {
			if !e.schema.Field(c).Nullable {
				return dst[:start], fmt.Errorf("fluss/records: row %d: null in NOT NULL column %q", i, e.schema.Field(c).Name)
			}
			dst[start+c/8] |= 1 << (c % 8)
			continue
		}
		dst = w(dst, col, i)
	}
	return dst, nil
}

// AppendKey appends the primary key of row i of rec: the key columns in
// key order, encoded as in a CompactedRow but without a null bitmap.
func (e *RowEncoder) AppendKey(dst []byte, rec arrow.RecordBatch, i int) ([]byte, error) {
	if !rec.Schema().Equal(e.schema) {
		return dst, fmt.Errorf("fluss/records: record schema differs from the encoder's")
	}
	for _, c := range e.pk {
		col := rec.Column(c)
		if col.IsNull(i) {
			return dst, fmt.Errorf("fluss/records: row %d: null in primary key column %q", i, e.schema.Field(c).Name)
		}
		dst = e.fields[c](dst, col, i)
	}
	return dst, nil
}

// compactedWriter returns the CompactedRow encoding of a non-null value.
func compactedWriter(dt arrow.DataType) (valueWriter, error) {
	switch dt := dt.(type) {
	case *arrow.BooleanType:
		return func(dst []byte, a arrow.Array, i int) []byte {
			if a.(*array.Boolean).Value(i) {
				return append(dst, 1)
			}
			return append(dst, 0)
		}, nil
	case *arrow.Int8Type:
		return func(dst []byte, a arrow.Array, i int) []byte {
			return append(dst, byte(a.(*array.Int8).Value(i)))
		}, nil
	case *arrow.Int16Type:
		return func(dst []byte, a arrow.Array, i int) []byte {
			return binary.LittleEndian.AppendUint16(dst, uint16(a.(*array.Int16).Value(i)))
		}, nil
	case *arrow.Int32Type:
		return func(dst []byte, a arrow.Array, i int) []byte {
			return appendUvarint32(dst, uint32(a.(*array.Int32).Value(i)))
		}, nil
	case *arrow.Date32Type:
		return func(dst []byte, a arrow.Array, i int) []byte {
			return appendUvarint32(dst, uint32(a.(*array.Date32).Value(i)))
		}, nil
	case *arrow.Time32Type:
		mul := int32(1)
		if dt.Unit == arrow.Second {
			mul = 1000
		}
		return func(dst []byte, a arrow.Array, i int) []byte {
			return appendUvarint32(dst, uint32(int32(a.(*array.Time32).Value(i))*mul))
		}, nil
	case *arrow.Time64Type:
		div := int64(1000)
		if dt.Unit == arrow.Nanosecond {
			div = 1000000
		}
		return func(dst []byte, a arrow.Array, i int) []byte {
			return appendUvarint32(dst, uint32(int32(floorDiv(int64(a.(*array.Time64).Value(i)), div))))
		}, nil
	case *arrow.Int64Type:
		return func(dst []byte, a arrow.Array, i int) []byte {
			return binary.AppendUvarint(dst, uint64(a.(*array.Int64).Value(i)))
		}, nil
	case *arrow.Float32Type:
		return func(dst []byte, a arrow.Array, i int) []byte {
			return binary.LittleEndian.AppendUint32(dst, math.Float32bits(a.(*array.Float32).Value(i)))
		}, nil
	case *arrow.Float64Type:
		return func(dst []byte, a arrow.Array, i int) []byte {
			return binary.LittleEndian.AppendUint64(dst, math.Float64bits(a.(*array.Float64).Value(i)))
		}, nil
	case *arrow.StringType:
		return func(dst []byte, a arrow.Array, i int) []byte {
			v := a.(*array.String).Value(i)
			return append(appendUvarint32(dst, uint32(len(v))), v...)
		}, nil
	case *arrow.BinaryType:
		return func(dst []byte, a arrow.Array, i int) []byte {
			v := a.(*array.Binary).Value(i)
			return append(appendUvarint32(dst, uint32(len(v))), v...)
		}, nil
	case *arrow.FixedSizeBinaryType:
		return func(dst []byte, a arrow.Array, i int) []byte {
			v := a.(*array.FixedSizeBinary).Value(i)
			return append(appendUvarint32(dst, uint32(len(v))), v...)
		}, nil
	case *arrow.Decimal128Type:
		return compactedDecimalWriter(dt), nil
	case *arrow.TimestampType:
		return compactedTimestampWriter(dt), nil
	}
	return nil, fmt.Errorf("the Arrow type %s has no KV (CompactedRow) encoding here", dt)
}

// compactedDecimalWriter encodes DECIMAL: compact (precision <= 18) as the
// unscaled long, else as the big-endian two's complement bytes.
func compactedDecimalWriter(dt *arrow.Decimal128Type) valueWriter {
	if dt.Precision <= 18 {
		return func(dst []byte, a arrow.Array, i int) []byte {
			return binary.AppendUvarint(dst, uint64(a.(*array.Decimal128).Value(i).LowBits()))
		}
	}
	return func(dst []byte, a arrow.Array, i int) []byte {
		v := twosComplementBE(a.(*array.Decimal128).Value(i))
		return append(appendUvarint32(dst, uint32(len(v))), v...)
	}
}

// compactedTimestampWriter encodes TIMESTAMP: milliseconds, plus the
// nanoseconds within the millisecond for precisions above 3.
func compactedTimestampWriter(dt *arrow.TimestampType) valueWriter {
	switch dt.Unit {
	case arrow.Second:
		return func(dst []byte, a arrow.Array, i int) []byte {
			return binary.AppendUvarint(dst, uint64(int64(a.(*array.Timestamp).Value(i))*1000))
		}
	case arrow.Millisecond:
		return func(dst []byte, a arrow.Array, i int) []byte {
			return binary.AppendUvarint(dst, uint64(a.(*array.Timestamp).Value(i)))
		}
	default:
		perMilli := int64(1000)
		nanoMul := int64(1000)
		if dt.Unit == arrow.Nanosecond {
			perMilli, nanoMul = 1000000, 1
		}
		return func(dst []byte, a arrow.Array, i int) []byte {
			v := int64(a.(*array.Timestamp).Value(i))
			ms := floorDiv(v, perMilli)
			nanos := (v - ms*perMilli) * nanoMul
			dst = binary.AppendUvarint(dst, uint64(ms))
			return appendUvarint32(dst, uint32(nanos))
		}
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// twosComplementBE is Java's BigInteger.toByteArray of the unscaled value:
// the minimal big-endian two's-complement bytes.
func twosComplementBE(v decimal128.Num) []byte {
	bi := v.BigInt()
	if bi.Sign() >= 0 {
		b := bi.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// For negative x: bytes of 2^(8n) + x with the smallest n that keeps the sign bit set.
	n := (bi.BitLen()+8)/8 + 0
	mod := new(big.Int).Lsh(big.NewInt(1), uint(8*n))
	b := new(big.Int).Add(mod, bi).Bytes()
	for len(b) < n {
		b = append([]byte{0xff}, b...)
	}
	// Drop redundant leading 0xff bytes.
	for len(b) > 1 && b[0] == 0xff && b[1]&0x80 != 0 {
		b = b[1:]
	}
	return b
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
