package records

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// Readers of Arrow values as Fluss stores them, shared by the row and
// array encoders.

// putFn writes one non-null value of a into b, which has its size.
type putFn func(b []byte, a arrow.Array, i int)

// fixedPut returns the little-endian writer of a fixed-size kind:
// BOOLEAN, TINYINT (1 byte), SMALLINT (2), INT, DATE, TIME, FLOAT (4),
// BIGINT, DOUBLE (8). canonNaN writes every NaN as Java's canonical NaN,
// as BinaryArrayWriter does (the row writers keep the bits).
func fixedPut(f *fieldSpec, dt arrow.DataType, canonNaN bool) (putFn, error) {
	le := binary.LittleEndian
	switch f.kind {
	case types.KindInt, types.KindDate, types.KindTime:
		get, err := int32Of(dt)
		if err != nil {
			return nil, err
		}
		return func(b []byte, a arrow.Array, i int) { le.PutUint32(b, uint32(get(a, i))) }, nil
	}
	switch dt.(type) {
	case *arrow.BooleanType:
		return func(b []byte, a arrow.Array, i int) {
			b[0] = 0
			if a.(*array.Boolean).Value(i) {
				b[0] = 1
			}
		}, nil
	case *arrow.Int8Type:
		return func(b []byte, a arrow.Array, i int) { b[0] = byte(a.(*array.Int8).Value(i)) }, nil
	case *arrow.Int16Type:
		return func(b []byte, a arrow.Array, i int) { le.PutUint16(b, uint16(a.(*array.Int16).Value(i))) }, nil
	case *arrow.Int64Type:
		return func(b []byte, a arrow.Array, i int) { le.PutUint64(b, uint64(a.(*array.Int64).Value(i))) }, nil
	case *arrow.Float32Type:
		return func(b []byte, a arrow.Array, i int) {
			v := a.(*array.Float32).Value(i)
			bits := math.Float32bits(v)
			if canonNaN && math.IsNaN(float64(v)) {
				bits = 0x7fc00000
			}
			le.PutUint32(b, bits)
		}, nil
	case *arrow.Float64Type:
		return func(b []byte, a arrow.Array, i int) {
			v := a.(*array.Float64).Value(i)
			bits := math.Float64bits(v)
			if canonNaN && math.IsNaN(float64(v)) {
				bits = 0x7ff8000000000000
			}
			le.PutUint64(b, bits)
		}, nil
	}
	return nil, errArrowType(f, dt)
}

// int32Of returns the reader of the int Fluss stores for INT, DATE (days)
// and TIME (milliseconds of the day, from the column's unit).
func int32Of(dt arrow.DataType) (func(a arrow.Array, i int) int32, error) {
	switch dt := dt.(type) {
	case *arrow.Int32Type:
		return func(a arrow.Array, i int) int32 { return a.(*array.Int32).Value(i) }, nil
	case *arrow.Date32Type:
		return func(a arrow.Array, i int) int32 { return int32(a.(*array.Date32).Value(i)) }, nil
	case *arrow.Time32Type:
		mul := int32(1)
		if dt.Unit == arrow.Second {
			mul = 1000
		}
		return func(a arrow.Array, i int) int32 { return int32(a.(*array.Time32).Value(i)) * mul }, nil
	case *arrow.Time64Type:
		div := int64(1000)
		if dt.Unit == arrow.Nanosecond {
			div = 1000000
		}
		return func(a arrow.Array, i int) int32 {
			return int32(floorDiv(int64(a.(*array.Time64).Value(i)), div))
		}, nil
	}
	return nil, fmt.Errorf("an INT, DATE or TIME value in an Arrow %s array", dt)
}

// timestampOf returns the reader of a TIMESTAMP(_LTZ) value as Fluss holds
// it: epoch milliseconds and the nanoseconds of the millisecond.
func timestampOf(dt arrow.DataType) (func(a arrow.Array, i int) (int64, int32), error) {
	t, ok := dt.(*arrow.TimestampType)
	if !ok {
		return nil, fmt.Errorf("a TIMESTAMP value in an Arrow %s array", dt)
	}
	switch t.Unit {
	case arrow.Second:
		return func(a arrow.Array, i int) (int64, int32) {
			return int64(a.(*array.Timestamp).Value(i)) * 1000, 0
		}, nil
	case arrow.Millisecond:
		return func(a arrow.Array, i int) (int64, int32) { return int64(a.(*array.Timestamp).Value(i)), 0 }, nil
	}
	perMilli, nanoMul := int64(1000), int64(1000)
	if t.Unit == arrow.Nanosecond {
		perMilli, nanoMul = 1000000, 1
	}
	return func(a arrow.Array, i int) (int64, int32) {
		v := int64(a.(*array.Timestamp).Value(i))
		ms := floorDiv(v, perMilli)
		return ms, int32((v - ms*perMilli) * nanoMul)
	}, nil
}

// bytesOf returns the reader of the bytes of a CHAR or STRING (UTF-8),
// BINARY or BYTES value. They alias the array.
func bytesOf(dt arrow.DataType) (func(a arrow.Array, i int) []byte, error) {
	switch dt.(type) {
	case *arrow.StringType:
		return func(a arrow.Array, i int) []byte {
			s := a.(*array.String)
			offs := s.ValueOffsets()
			return s.ValueBytes()[offs[i]-offs[0] : offs[i+1]-offs[0]]
		}, nil
	case *arrow.BinaryType:
		return func(a arrow.Array, i int) []byte { return a.(*array.Binary).Value(i) }, nil
	case *arrow.FixedSizeBinaryType:
		return func(a arrow.Array, i int) []byte { return a.(*array.FixedSizeBinary).Value(i) }, nil
	}
	return nil, fmt.Errorf("a CHAR, STRING, BINARY or BYTES value in an Arrow %s array", dt)
}

// compactDecimal returns the unscaled value of a DECIMAL of precision <= 18,
// which must fit a long.
func compactDecimal(a arrow.Array, i int) (int64, error) {
	v := a.(*array.Decimal128).Value(i)
	lo := int64(v.LowBits())
	if v.HighBits() != lo>>63 {
		return 0, fmt.Errorf("DECIMAL of precision <= %d with unscaled value %s, beyond a long",
			maxCompactDecimalPrecision, v.BigInt())
	}
	return lo, nil
}

// unscaledBytes returns Java's BigInteger.toByteArray of the unscaled value
// v: its shortest big-endian two's complement bytes, in buf.
func unscaledBytes(buf *[maxDecimalBytes]byte, v decimal128.Num) []byte {
	binary.BigEndian.PutUint64(buf[:8], uint64(v.HighBits()))
	binary.BigEndian.PutUint64(buf[8:], v.LowBits())
	b := buf[:]
	// A leading byte is redundant when it only repeats the sign of the next.
	for len(b) > 1 && (b[0] == 0 && b[1]&0x80 == 0 || b[0] == 0xff && b[1]&0x80 != 0) {
		b = b[1:]
	}
	return b
}
