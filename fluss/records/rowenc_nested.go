package records

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// nestedEnc returns the encoder of an ARRAY (a BinaryArray), MAP (a
// BinaryMap) or ROW (a row of format) value, without the length a
// CompactedRow puts before it.
func nestedEnc(format LogFormat, f *fieldSpec, dt arrow.DataType) (valueEnc, error) {
	switch f.kind {
	case types.KindArray:
		lt, ok := dt.(*arrow.ListType)
		if !ok {
			return nil, errArrowType(f, dt)
		}
		elems, err := newArrayEnc(format, f.kids[0], lt.Elem(), f.kids[0].nullable)
		if err != nil {
			return nil, err
		}
		return func(dst []byte, a arrow.Array, i int) ([]byte, error) {
			l := a.(*array.List)
			from, to := l.ValueOffsets(i)
			return elems.appendArray(dst, l.ListValues(), int(from), int(to))
		}, nil
	case types.KindMap:
		return mapEnc(format, f, dt)
	case types.KindRow:
		st, ok := dt.(*arrow.StructType)
		if !ok || st.NumFields() != len(f.kids) {
			return nil, errArrowType(f, dt)
		}
		dts := make([]arrow.DataType, st.NumFields())
		for k := range dts {
			dts[k] = st.Field(k).Type
		}
		rw, err := newRowWriter(format, "field", f.kids, dts)
		if err != nil {
			return nil, err
		}
		return func(dst []byte, a arrow.Array, i int) ([]byte, error) {
			return appendRow(rw, dst, structCols{a.(*array.Struct)}, i)
		}, nil
	}
	return nil, fmt.Errorf("type %s is not nested", f.kind)
}

// mapEnc encodes a MAP as a BinaryMap: the int32 size of the key array,
// the key BinaryArray, the value BinaryArray.
func mapEnc(format LogFormat, f *fieldSpec, dt arrow.DataType) (valueEnc, error) {
	mt, ok := dt.(*arrow.MapType)
	if !ok {
		return nil, errArrowType(f, dt)
	}
	keys, err := newArrayEnc(format, f.kids[0], mt.KeyType(), false)
	if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	vals, err := newArrayEnc(format, f.kids[1], mt.ItemType(), f.kids[1].nullable)
	if err != nil {
		return nil, fmt.Errorf("value: %w", err)
	}
	return func(dst []byte, a arrow.Array, i int) ([]byte, error) {
		m := a.(*array.Map)
		from, to := m.ValueOffsets(i)
		entries := m.ListValues().(*array.Struct)
		start := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		dst, err := keys.appendArray(dst, entries.Field(0), int(from), int(to))
		if err != nil {
			return dst[:start], fmt.Errorf("keys: %w", err)
		}
		binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
		if dst, err = vals.appendArray(dst, entries.Field(1), int(from), int(to)); err != nil {
			return dst[:start], fmt.Errorf("values: %w", err)
		}
		return dst, nil
	}, nil
}

// elemEnc writes one non-null element, a's value i, into the BinaryArray
// that starts at dst[base]: a fixed-size value into its slot at dst[slot:];
// bytes of at most 7 inline in the slot; anything else after the array's
// end, 8-byte aligned, the slot holding its offset from base and its length
// (a wide TIMESTAMP: offset and nanoseconds).
type elemEnc func(dst []byte, base, slot int, a arrow.Array, i int) ([]byte, error)

// arrayEnc encodes BinaryArrays of one element type.
type arrayEnc struct {
	spec   *fieldSpec
	nullOK bool
	enc    elemEnc
}

func newArrayEnc(format LogFormat, f *fieldSpec, dt arrow.DataType, nullOK bool) (*arrayEnc, error) {
	enc, err := newElemEnc(format, f, dt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.name, err)
	}
	return &arrayEnc{spec: f, nullOK: nullOK, enc: enc}, nil
}

// appendArray appends the values [from, to) of a as a BinaryArray: the
// element count, the null bitmap in 4-byte words, the slots (all three
// padded to 8 bytes), then the variable-length parts.
func (e *arrayEnc) appendArray(dst []byte, a arrow.Array, from, to int) ([]byte, error) {
	n := to - from
	base := len(dst)
	hdr := 4 + (n+31)/32*4
	if int64(hdr)+int64(n)*int64(e.spec.slot) > math.MaxInt32 {
		return dst, fmt.Errorf("array of %d elements", n)
	}
	dst = append(dst, make([]byte, roundUp8(hdr+n*e.spec.slot))...)
	binary.LittleEndian.PutUint32(dst[base:], uint32(n))
	for k := 0; k < n; k++ {
		j := from + k
		if a.IsNull(j) {
			if !e.nullOK {
				return dst[:base], fmt.Errorf("%s %d: null in a NOT NULL %s", e.spec.name, k, e.spec.name)
			}
			dst[base+4+k>>3] |= 1 << (k & 7)
			continue
		}
		var err error
		if dst, err = e.enc(dst, base, base+hdr+k*e.spec.slot, a, j); err != nil {
			return dst[:base], fmt.Errorf("%s %d: %w", e.spec.name, k, err)
		}
	}
	if len(dst)-base > math.MaxInt32 {
		return dst[:base], fmt.Errorf("array of %d bytes", len(dst)-base)
	}
	return dst, nil
}

func roundUp8(n int) int { return (n + 7) &^ 7 }

// newElemEnc returns the encoder of f's values (Arrow type dt) as elements
// of a BinaryArray whose nested rows are in format.
func newElemEnc(format LogFormat, f *fieldSpec, dt arrow.DataType) (elemEnc, error) {
	switch f.kind {
	case types.KindDecimal:
		return decimalElemEnc(f, dt)
	case types.KindTimestamp, types.KindTimestampLTZ:
		return timestampElemEnc(f, dt)
	case types.KindChar, types.KindString, types.KindBinary, types.KindBytes:
		get, err := bytesOf(dt)
		if err != nil {
			return nil, err
		}
		return func(dst []byte, base, slot int, a arrow.Array, i int) ([]byte, error) {
			v := get(a, i)
			if len(v) <= 7 {
				copy(dst[slot:], v)
				dst[slot+7] = 0x80 | byte(len(v))
				return dst, nil
			}
			at := len(dst)
			return endPart(append(dst, v...), base, slot, at)
		}, nil
	case types.KindArray, types.KindMap, types.KindRow:
		body, err := nestedEnc(format, f, dt)
		if err != nil {
			return nil, err
		}
		return func(dst []byte, base, slot int, a arrow.Array, i int) ([]byte, error) {
			at := len(dst)
			dst, err := body(dst, a, i)
			if err != nil {
				return dst[:at], err
			}
			return endPart(dst, base, slot, at)
		}, nil
	}
	put, err := fixedPut(f, dt, true)
	if err != nil {
		return nil, err
	}
	w := f.slot
	return func(dst []byte, base, slot int, a arrow.Array, i int) ([]byte, error) {
		put(dst[slot:slot+w], a, i)
		return dst, nil
	}, nil
}

// endPart points the slot at dst[at:], a variable-length part just
// appended, and pads it to 8 bytes.
func endPart(dst []byte, base, slot, at int) ([]byte, error) {
	n := len(dst) - at
	if int64(at-base)+int64(roundUp8(n)) > math.MaxInt32 {
		return dst[:at], fmt.Errorf("array of more than %d bytes", math.MaxInt32)
	}
	binary.LittleEndian.PutUint64(dst[slot:], uint64(at-base)<<32|uint64(n))
	return append(dst, make([]byte, roundUp8(n)-n)...), nil
}

// decimalElemEnc: a compact DECIMAL in its slot; a wide one's bytes in 16
// bytes reserved after the array's end (AbstractBinaryWriter.writeDecimal).
func decimalElemEnc(f *fieldSpec, dt arrow.DataType) (elemEnc, error) {
	if _, ok := dt.(*arrow.Decimal128Type); !ok {
		return nil, errArrowType(f, dt)
	}
	if f.compact {
		return func(dst []byte, base, slot int, a arrow.Array, i int) ([]byte, error) {
			v, err := compactDecimal(a, i)
			binary.LittleEndian.PutUint64(dst[slot:], uint64(v))
			return dst, err
		}, nil
	}
	return func(dst []byte, base, slot int, a arrow.Array, i int) ([]byte, error) {
		var buf [maxDecimalBytes]byte
		b := unscaledBytes(&buf, a.(*array.Decimal128).Value(i))
		at := len(dst)
		dst = append(dst, make([]byte, maxDecimalBytes)...)
		copy(dst[at:], b)
		if int64(at-base)+maxDecimalBytes > math.MaxInt32 {
			return dst[:at], fmt.Errorf("array of more than %d bytes", math.MaxInt32)
		}
		binary.LittleEndian.PutUint64(dst[slot:], uint64(at-base)<<32|uint64(len(b)))
		return dst, nil
	}, nil
}

// timestampElemEnc: a compact TIMESTAMP's milliseconds in its slot; a wide
// one's in 8 bytes after the array's end, the slot holding their offset and
// the nanoseconds of the millisecond.
func timestampElemEnc(f *fieldSpec, dt arrow.DataType) (elemEnc, error) {
	get, err := timestampOf(dt)
	if err != nil {
		return nil, err
	}
	compact := f.compact
	return func(dst []byte, base, slot int, a arrow.Array, i int) ([]byte, error) {
		ms, nanos := get(a, i)
		if compact {
			binary.LittleEndian.PutUint64(dst[slot:], uint64(ms))
			return dst, nil
		}
		at := len(dst)
		if int64(at-base)+8 > math.MaxInt32 {
			return dst, fmt.Errorf("array of more than %d bytes", math.MaxInt32)
		}
		dst = binary.LittleEndian.AppendUint64(dst, uint64(ms))
		binary.LittleEndian.PutUint64(dst[slot:], uint64(at-base)<<32|uint64(uint32(nanos)))
		return dst, nil
	}, nil
}
