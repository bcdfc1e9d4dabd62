package records

import (
	"encoding/binary"
	"fmt"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// CompactedRow (common/row/compacted/CompactedRowWriter.java, -Reader.java):
// a null bitmap of ceil(n/8) bytes (bit i set = field i null; NOT NULL
// fields are read whatever their bit says, as the Java reader does), then
// the non-null fields in order: BOOLEAN and TINYINT one byte, SMALLINT two
// bytes LE, INT, DATE and TIME an unsigned LEB128 of the 32-bit value,
// BIGINT one of the 64-bit value, FLOAT and DOUBLE IEEE LE, CHAR, STRING,
// BINARY and BYTES a LEB128 length and the bytes, DECIMAL p <= 18 the LEB128
// unscaled value, else a length and the big-endian unscaled bytes,
// TIMESTAMP(_LTZ) p <= 3 the LEB128 milliseconds, else the milliseconds and
// the LEB128 nanoseconds of the millisecond; ARRAY and MAP a length and a
// BinaryArray or BinaryMap, ROW a length and a CompactedRow.

// cursor reads a byte slice front to back; every read is bounds-checked.
type cursor struct {
	b   []byte
	pos int
}

func (r *cursor) short(need int) error {
	return fmt.Errorf("byte %d: needs %d bytes, %d left", r.pos, need, len(r.b)-r.pos)
}

// take returns the next n bytes.
func (r *cursor) take(n int) ([]byte, error) {
	if n < 0 || n > len(r.b)-r.pos {
		return nil, r.short(n)
	}
	v := r.b[r.pos : r.pos+n]
	r.pos += n
	return v, nil
}

func (r *cursor) u8() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, r.short(1)
	}
	v := r.b[r.pos]
	r.pos++
	return v, nil
}

// uvarint32 reads Fluss's writeInt: at most 5 LEB128 bytes.
func (r *cursor) uvarint32() (uint32, error) {
	var v uint32
	for i, shift := r.pos, uint(0); i < len(r.b) && shift < 35; i, shift = i+1, shift+7 {
		c := r.b[i]
		v |= uint32(c&0x7f) << shift
		if c < 0x80 {
			r.pos = i + 1
			return v, nil
		}
	}
	if len(r.b)-r.pos >= 5 {
		return 0, fmt.Errorf("byte %d: varint longer than 5 bytes", r.pos)
	}
	return 0, r.short(len(r.b) - r.pos + 1)
}

// uvarint64 reads Fluss's writeLong: at most 10 LEB128 bytes.
func (r *cursor) uvarint64() (uint64, error) {
	v, n := binary.Uvarint(r.b[r.pos:])
	if n <= 0 {
		if n == 0 {
			return 0, r.short(len(r.b) - r.pos + 1)
		}
		return 0, fmt.Errorf("byte %d: varint longer than 10 bytes", r.pos)
	}
	r.pos += n
	return v, nil
}

// sized reads a LEB128 length and that many bytes.
func (r *cursor) sized() ([]byte, error) {
	at := r.pos
	n, err := r.uvarint32()
	if err != nil {
		return nil, err
	}
	if int32(n) < 0 {
		return nil, fmt.Errorf("byte %d: negative length %d", at, int32(n))
	}
	return r.take(int(n))
}

// compactedRow reads a CompactedRow of the fields specs into cols (nil:
// read and drop; a nil entry drops that field) and returns the bytes it
// used.
func (d *rowDec) compactedRow(specs []*fieldSpec, cols []*colBuilder, row []byte) (int, error) {
	nb := (len(specs) + 7) / 8
	if len(row) < nb {
		return 0, fmt.Errorf("%d bytes, the null bitmap of %d fields needs %d", len(row), len(specs), nb)
	}
	r := cursor{b: row, pos: nb}
	if cols == nil {
		cols = d.dropCols(len(specs))
	}
	for i, f := range specs {
		c := cols[i]
		if f.nullable && row[i>>3]&(1<<(i&7)) != 0 {
			c.appendNull()
			continue
		}
		if err := d.compactedValue(f, c, &r); err != nil {
			return 0, fmt.Errorf("%s: %w", f.name, err)
		}
	}
	return r.pos, nil
}

// compactedValue reads one non-null value of f.
func (d *rowDec) compactedValue(f *fieldSpec, c *colBuilder, r *cursor) error {
	switch f.kind {
	case types.KindBoolean, types.KindTinyInt:
		v, err := r.u8()
		if err != nil {
			return err
		}
		if f.kind == types.KindBoolean {
			c.appendBool(v != 0)
		} else {
			c.appendInt8(int8(v))
		}
	case types.KindSmallInt, types.KindFloat, types.KindDouble:
		v, err := r.take(f.fixed)
		if err != nil {
			return err
		}
		fixedValue(f, c, v)
	case types.KindInt, types.KindDate, types.KindTime:
		v, err := r.uvarint32()
		if err != nil {
			return err
		}
		c.appendInt32(int32(v))
	case types.KindBigInt:
		v, err := r.uvarint64()
		if err != nil {
			return err
		}
		c.appendInt64(int64(v))
	case types.KindTimestamp, types.KindTimestampLTZ:
		return compactedTimestamp(f, c, r)
	case types.KindDecimal:
		if f.compact {
			v, err := r.uvarint64()
			if err != nil {
				return err
			}
			c.appendDecimalLong(int64(v))
			return nil
		}
		v, err := r.sized()
		if err != nil {
			return err
		}
		return c.appendDecimalBytes(v)
	case types.KindChar, types.KindString, types.KindBinary, types.KindBytes:
		v, err := r.sized()
		if err != nil {
			return err
		}
		return c.appendVar(v)
	default:
		v, err := r.sized()
		if err != nil {
			return err
		}
		return d.sizedValue(f, c, v)
	}
	return nil
}

func compactedTimestamp(f *fieldSpec, c *colBuilder, r *cursor) error {
	ms, err := r.uvarint64()
	if err != nil {
		return err
	}
	var nanos uint32
	if !f.compact {
		if nanos, err = r.uvarint32(); err != nil {
			return err
		}
	}
	c.appendTimestamp(int64(ms), int32(nanos))
	return nil
}

// sizedValue appends a value a row stores as a length and bytes: CHAR,
// STRING, BINARY, BYTES, ARRAY, MAP, ROW.
func (d *rowDec) sizedValue(f *fieldSpec, c *colBuilder, v []byte) error {
	switch f.kind {
	case types.KindArray:
		return d.arrayValue(f, c, v)
	case types.KindMap:
		return d.mapValue(f, c, v)
	case types.KindRow:
		return d.rowValue(f, c, v)
	}
	return c.appendVar(v)
}

// fixedValue appends a little-endian fixed-size value: SMALLINT, INT, DATE,
// TIME, BIGINT, FLOAT, DOUBLE, BOOLEAN, TINYINT (v has the type's size).
func fixedValue(f *fieldSpec, c *colBuilder, v []byte) {
	le := binary.LittleEndian
	switch f.kind {
	case types.KindBoolean:
		c.appendBool(v[0] != 0)
	case types.KindTinyInt:
		c.appendInt8(int8(v[0]))
	case types.KindSmallInt:
		c.appendInt16(int16(le.Uint16(v)))
	case types.KindInt, types.KindDate, types.KindTime:
		c.appendInt32(int32(le.Uint32(v)))
	case types.KindFloat:
		c.appendFloat32(le.Uint32(v))
	case types.KindBigInt:
		c.appendInt64(int64(le.Uint64(v)))
	case types.KindDouble:
		c.appendFloat64(le.Uint64(v))
	}
}
