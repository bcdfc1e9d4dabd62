package records

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// The row-format encoders: CompactedRow and IndexedRow values (KV values,
// keys, INDEXED and COMPACTED log records) with their nested BinaryArray,
// BinaryMap and rows, the exact inverse of rowcompacted.go, rowindexed.go and
// rowarray.go (the layouts are described there). The Java writers they
// follow: compacted/CompactedRowWriter, indexed/IndexedRowWriter,
// BinaryArrayWriter with AbstractBinaryWriter, BinaryMap.valueOf. Values come
// from Arrow arrays of the types fluss/types derives from the Fluss types
// (types.ArrowType) and are converted back as the Java Arrow readers do.

// valueEnc appends one non-null value, a's row i, as a row of its format
// stores it (a CompactedRow field, or an IndexedRow field without its length).
type valueEnc func(dst []byte, a arrow.Array, i int) ([]byte, error)

// columns gives the arrays of a row's fields: a record's columns or a
// struct's fields.
type columns interface {
	col(c int) arrow.Array
}

type recordCols struct{ rec arrow.RecordBatch }

func (r recordCols) col(c int) arrow.Array { return r.rec.Column(c) }

type structCols struct{ s *array.Struct }

func (s structCols) col(c int) arrow.Array { return s.s.Field(c) }

// rowWriter encodes rows of fields in a row format (COMPACTED or INDEXED).
type rowWriter struct {
	format LogFormat
	what   string // "column" or "field", for errors
	specs  []*fieldSpec
	encs   []valueEnc
	nvar   int // variable-length fields (IndexedRow header)
}

// newRowWriter returns the writer of rows whose fields have the given specs
// and Arrow types.
func newRowWriter(format LogFormat, what string, specs []*fieldSpec, dts []arrow.DataType) (*rowWriter, error) {
	w := &rowWriter{format: format, what: what, specs: specs}
	for i, f := range specs {
		enc, err := newValueEnc(format, f, dts[i])
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", what, f.name, err)
		}
		w.encs = append(w.encs, enc)
		if f.fixed == 0 {
			w.nvar++
		}
	}
	return w, nil
}

// appendRow appends row i of cols: the null bitmap (and, INDEXED, the
// lengths of the variable-length values), then the non-null values. It is
// generic so that a recordCols is not boxed (allocated) for every row.
func appendRow[C columns](w *rowWriter, dst []byte, cols C, i int) ([]byte, error) {
	start := len(dst)
	nb := (len(w.specs) + 7) / 8
	hdr := nb
	indexed := w.format == LogFormatIndexed
	if indexed {
		hdr += 4 * w.nvar
	}
	dst = append(dst, make([]byte, hdr)...)
	slot := start + nb
	for c, f := range w.specs {
		a := cols.col(c)
		if a.IsNull(i) {
			if !f.nullable {
				return dst[:start], fmt.Errorf("%s %q: null in a NOT NULL %s", w.what, f.name, w.what)
			}
			dst[start+c>>3] |= 1 << (c & 7)
			continue
		}
		at := len(dst)
		var err error
		if dst, err = w.encs[c](dst, a, i); err != nil {
			return dst[:start], fmt.Errorf("%s %q: %w", w.what, f.name, err)
		}
		if indexed && f.fixed == 0 {
			n := len(dst) - at
			if n > math.MaxInt32 {
				return dst[:start], fmt.Errorf("%s %q: value of %d bytes", w.what, f.name, n)
			}
			binary.LittleEndian.PutUint32(dst[slot:], uint32(n))
			slot += 4
		}
	}
	return dst, nil
}

// newValueEnc returns the encoder of the values of f (Arrow type dt) in a
// row of format.
func newValueEnc(format LogFormat, f *fieldSpec, dt arrow.DataType) (valueEnc, error) {
	indexed := format == LogFormatIndexed
	switch f.kind {
	case types.KindBoolean, types.KindTinyInt, types.KindSmallInt, types.KindFloat, types.KindDouble:
		return fixedEnc(f, dt)
	case types.KindInt, types.KindDate, types.KindTime:
		if indexed {
			return fixedEnc(f, dt)
		}
		get, err := int32Of(dt)
		if err != nil {
			return nil, err
		}
		return func(dst []byte, a arrow.Array, i int) ([]byte, error) {
			return appendUvarint32(dst, uint32(get(a, i))), nil
		}, nil
	case types.KindBigInt:
		if indexed {
			return fixedEnc(f, dt)
		}
		if _, ok := dt.(*arrow.Int64Type); !ok {
			return nil, errArrowType(f, dt)
		}
		return func(dst []byte, a arrow.Array, i int) ([]byte, error) {
			return binary.AppendUvarint(dst, uint64(a.(*array.Int64).Value(i))), nil
		}, nil
	case types.KindDecimal:
		return decimalEnc(f, dt, indexed)
	case types.KindTimestamp, types.KindTimestampLTZ:
		return timestampEnc(f, dt, indexed)
	case types.KindChar, types.KindString, types.KindBinary, types.KindBytes:
		return bytesEnc(f, dt, indexed)
	case types.KindArray, types.KindMap, types.KindRow:
		body, err := nestedEnc(format, f, dt)
		if err != nil {
			return nil, err
		}
		if indexed {
			return body, nil
		}
		return func(dst []byte, a arrow.Array, i int) ([]byte, error) {
			start := len(dst)
			dst, err := body(dst, a, i)
			if err != nil {
				return dst[:start], err
			}
			return prefixLength(dst, start)
		}, nil
	}
	return nil, fmt.Errorf("type %s has no row-format encoding", f.kind)
}

// fixedEnc appends a value of a fixed-size kind as its little-endian bytes.
func fixedEnc(f *fieldSpec, dt arrow.DataType) (valueEnc, error) {
	put, err := fixedPut(f, dt, false)
	if err != nil {
		return nil, err
	}
	n := f.fixed
	return func(dst []byte, a arrow.Array, i int) ([]byte, error) {
		dst = append(dst, make([]byte, n)...)
		put(dst[len(dst)-n:], a, i)
		return dst, nil
	}, nil
}

func errArrowType(f *fieldSpec, dt arrow.DataType) error {
	return fmt.Errorf("a %s value in an Arrow %s array", f.kind, dt)
}

// prefixLength puts the LEB128 length of dst[start:] before it, as a
// CompactedRow stores a variable-length value.
func prefixLength(dst []byte, start int) ([]byte, error) {
	n := len(dst) - start
	if n > math.MaxInt32 {
		return dst[:start], fmt.Errorf("value of %d bytes", n)
	}
	k := uvarintLen(uint32(n))
	dst = append(dst, make([]byte, k)...)
	copy(dst[start+k:], dst[start:start+n])
	appendUvarint32(dst[start:start], uint32(n)) // in place: the k bytes just freed

	return dst, nil
}

// decimalEnc encodes DECIMAL: compact (precision <= 18) as the unscaled
// long (LEB128, INDEXED 8 bytes), else as the big-endian two's complement
// bytes of the unscaled value (COMPACTED after their length).
func decimalEnc(f *fieldSpec, dt arrow.DataType, indexed bool) (valueEnc, error) {
	if _, ok := dt.(*arrow.Decimal128Type); !ok {
		return nil, errArrowType(f, dt)
	}
	if f.compact {
		return func(dst []byte, a arrow.Array, i int) ([]byte, error) {
			v, err := compactDecimal(a, i)
			if err != nil {
				return dst, err
			}
			if indexed {
				return binary.LittleEndian.AppendUint64(dst, uint64(v)), nil
			}
			return binary.AppendUvarint(dst, uint64(v)), nil
		}, nil
	}
	return func(dst []byte, a arrow.Array, i int) ([]byte, error) {
		var buf [maxDecimalBytes]byte
		b := unscaledBytes(&buf, a.(*array.Decimal128).Value(i))
		if !indexed {
			dst = appendUvarint32(dst, uint32(len(b)))
		}
		return append(dst, b...), nil
	}, nil
}

// timestampEnc encodes TIMESTAMP(_LTZ): the epoch milliseconds, plus the
// nanoseconds of the millisecond above precision 3 (LEB128s, INDEXED 8 and
// 4 bytes).
func timestampEnc(f *fieldSpec, dt arrow.DataType, indexed bool) (valueEnc, error) {
	get, err := timestampOf(dt)
	if err != nil {
		return nil, err
	}
	compact := f.compact
	return func(dst []byte, a arrow.Array, i int) ([]byte, error) {
		ms, nanos := get(a, i)
		if indexed {
			dst = binary.LittleEndian.AppendUint64(dst, uint64(ms))
			if !compact {
				dst = binary.LittleEndian.AppendUint32(dst, uint32(nanos))
			}
			return dst, nil
		}
		dst = binary.AppendUvarint(dst, uint64(ms))
		if !compact {
			dst = appendUvarint32(dst, uint32(nanos))
		}
		return dst, nil
	}, nil
}

// bytesEnc encodes CHAR, STRING, BINARY and BYTES: COMPACTED their length
// and bytes; INDEXED the bytes, CHAR(n) and BINARY(n) zero-padded to n bytes
// (IndexedRowWriter refuses longer ones).
func bytesEnc(f *fieldSpec, dt arrow.DataType, indexed bool) (valueEnc, error) {
	get, err := bytesOf(dt)
	if err != nil {
		return nil, err
	}
	if !indexed {
		return func(dst []byte, a arrow.Array, i int) ([]byte, error) {
			v := get(a, i)
			return append(appendUvarint32(dst, uint32(len(v))), v...), nil
		}, nil
	}
	if f.fixed == 0 {
		return func(dst []byte, a arrow.Array, i int) ([]byte, error) {
			return append(dst, get(a, i)...), nil
		}, nil
	}
	n, kind := f.fixed, f.kind
	return func(dst []byte, a arrow.Array, i int) ([]byte, error) {
		v := get(a, i)
		if len(v) > n {
			return dst, fmt.Errorf("%s(%d) value of %d bytes", kind, n, len(v))
		}
		dst = append(dst, v...)
		return append(dst, make([]byte, n-len(v))...), nil
	}, nil
}

// flussTypeOf returns a Fluss type whose Arrow type (types.ArrowType) is dt:
// the inverse of that mapping, up to what the Arrow type cannot tell and
// CompactedRow does not either (CHAR is STRING, TIMESTAMP_LTZ TIMESTAMP,
// precisions the highest of their unit).
func flussTypeOf(dt arrow.DataType, nullable bool, depth int) (types.DataType, error) {
	if depth > maxNesting {
		return types.DataType{}, fmt.Errorf("nesting deeper than %d", maxNesting)
	}
	var t types.DataType
	switch dt := dt.(type) {
	case *arrow.BooleanType:
		t = types.Boolean()
	case *arrow.Int8Type:
		t = types.TinyInt()
	case *arrow.Int16Type:
		t = types.SmallInt()
	case *arrow.Int32Type:
		t = types.Int()
	case *arrow.Int64Type:
		t = types.BigInt()
	case *arrow.Float32Type:
		t = types.Float()
	case *arrow.Float64Type:
		t = types.Double()
	case *arrow.StringType:
		t = types.String()
	case *arrow.BinaryType:
		t = types.Bytes()
	case *arrow.FixedSizeBinaryType:
		t = types.Binary(dt.ByteWidth)
	case *arrow.Decimal128Type:
		t = types.Decimal(int(dt.Precision), int(dt.Scale))
	case *arrow.Date32Type:
		t = types.Date()
	case *arrow.Time32Type:
		t = types.Time(unitPrecision(dt.Unit))
	case *arrow.Time64Type:
		t = types.Time(unitPrecision(dt.Unit))
	case *arrow.TimestampType:
		t = types.Timestamp(unitPrecision(dt.Unit))
	case *arrow.ListType, *arrow.MapType, *arrow.StructType:
		return flussNestedTypeOf(dt, nullable, depth)
	default:
		return types.DataType{}, fmt.Errorf("the Arrow type %s has no Fluss type", dt)
	}
	return t.WithNullable(nullable), nil
}

func flussNestedTypeOf(dt arrow.DataType, nullable bool, depth int) (types.DataType, error) {
	var t types.DataType
	switch dt := dt.(type) {
	case *arrow.MapType:
		k, err := flussTypeOf(dt.KeyType(), false, depth+1)
		if err != nil {
			return t, err
		}
		v, err := flussTypeOf(dt.ItemType(), dt.ItemField().Nullable, depth+1)
		if err != nil {
			return t, err
		}
		t = types.MapOf(k, v)
	case *arrow.ListType:
		e, err := flussTypeOf(dt.Elem(), dt.ElemField().Nullable, depth+1)
		if err != nil {
			return t, err
		}
		t = types.ArrayOf(e)
	case *arrow.StructType:
		fields := make([]types.Field, dt.NumFields())
		for k, f := range dt.Fields() {
			ft, err := flussTypeOf(f.Type, f.Nullable, depth+1)
			if err != nil {
				return t, fmt.Errorf("field %q: %w", f.Name, err)
			}
			fields[k] = types.NewField(f.Name, ft)
		}
		t = types.RowOf(fields...)
	}
	return t.WithNullable(nullable), nil
}

// unitPrecision is the highest TIME or TIMESTAMP precision of an Arrow unit.
func unitPrecision(u arrow.TimeUnit) int {
	switch u {
	case arrow.Second:
		return 0
	case arrow.Millisecond:
		return 3
	case arrow.Microsecond:
		return 6
	}
	return 9
}
