package records

import (
	"encoding/binary"
	"fmt"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// ARRAY and MAP values of both row formats are BinaryArray and BinaryMap
// (common/row/BinaryArray.java, BinaryArrayWriter.java, BinaryMap.java):
//
//	BinaryArray: int32 n, a null bitmap in 4-byte words (ceil(n/32)*4
//	bytes, bit i set = element i null), n slots, then variable-length data.
//	Slots: BOOLEAN, TINYINT 1 byte; SMALLINT 2; INT, FLOAT, DATE, TIME 4;
//	everything else 8. An 8-byte slot of BIGINT, DOUBLE, compact DECIMAL
//	or compact TIMESTAMP holds the value; of CHAR, STRING, BINARY, BYTES
//	either the bytes inline (top bit set, length in the rest of the top
//	byte, data in the low 7 bytes) or offset << 32 | length, offsets from
//	the array's start; of a wide DECIMAL offset << 32 | length of its
//	big-endian bytes; of a wide TIMESTAMP offset << 32 | nanoseconds, the
//	milliseconds an int64 at offset; of ARRAY, MAP, ROW offset << 32 |
//	length of a nested BinaryArray, BinaryMap, or row in the log's format.
//	BinaryMap: int32 size of the key array, the key BinaryArray, the value
//	BinaryArray (the rest).
//
// All numbers are little-endian.

// rowDec decodes the rows of one batch; nested rows are in its format.
type rowDec struct {
	format LogFormat
	acc    rowBudget
	none   []*colBuilder // all nil: the fields of a row that is read and dropped
}

// dropCols returns n nil builders.
func (d *rowDec) dropCols(n int) []*colBuilder {
	if len(d.none) < n {
		d.none = make([]*colBuilder, n)
	}
	return d.none[:n]
}

// rowValue appends a ROW value stored in v.
func (d *rowDec) rowValue(f *fieldSpec, c *colBuilder, v []byte) error {
	if c == nil {
		return nil
	}
	c.appendNested()
	var err error
	if d.format == LogFormatIndexed {
		_, err = d.indexedRow(f.kids, c.kids, f.nvar, v)
	} else {
		_, err = d.compactedRow(f.kids, c.kids, v)
	}
	return err
}

// binArray is a parsed BinaryArray header.
type binArray struct {
	b     []byte
	n     int
	slots int // offset of slot 0
	width int // slot size
}

func parseBinArray(b []byte, width int) (binArray, error) {
	if len(b) < 4 {
		return binArray{}, fmt.Errorf("array of %d bytes, its header needs 4", len(b))
	}
	n := int64(int32(binary.LittleEndian.Uint32(b)))
	if n < 0 {
		return binArray{}, fmt.Errorf("array of %d elements", n)
	}
	slots := 4 + (n+31)/32*4
	if need := slots + n*int64(width); need > int64(len(b)) {
		return binArray{}, fmt.Errorf("array of %d elements needs %d bytes, has %d", n, need, len(b))
	}
	return binArray{b: b, n: int(n), slots: int(slots), width: width}, nil
}

func (a *binArray) null(i int) bool { return a.b[4+i>>3]&(1<<(i&7)) != 0 }

func (a *binArray) slot(i int) []byte {
	off := a.slots + i*a.width
	return a.b[off : off+a.width]
}

// part returns the bytes an 8-byte slot addresses as offset << 32 | length,
// or holds inline (top bit set) when inline is allowed.
func (a *binArray) part(i int, inline bool) ([]byte, error) {
	s := a.slot(i)
	v := binary.LittleEndian.Uint64(s)
	if inline && v>>63 != 0 {
		n := int(v>>56) & 0x7f
		if n > 7 {
			return nil, fmt.Errorf("inline value of %d bytes (at most 7)", n)
		}
		return s[:n], nil
	}
	off, n := int64(int32(v>>32)), int64(int32(v))
	if off < 0 || n < 0 || off+n > int64(len(a.b)) {
		return nil, fmt.Errorf("value at [%d,+%d) outside the %d-byte array", off, n, len(a.b))
	}
	return a.b[off : off+n], nil
}

// arrayValue appends an ARRAY value stored in v.
func (d *rowDec) arrayValue(f *fieldSpec, c *colBuilder, v []byte) error {
	if c == nil {
		return nil
	}
	a, err := parseBinArray(v, f.kids[0].slot)
	if err != nil {
		return err
	}
	c.appendNested()
	return d.elements(f.kids[0], c.kids[0], &a, true)
}

// mapValue appends a MAP value stored in v.
func (d *rowDec) mapValue(f *fieldSpec, c *colBuilder, v []byte) error {
	if c == nil {
		return nil
	}
	if len(v) < 4 {
		return fmt.Errorf("map of %d bytes, its header needs 4", len(v))
	}
	kn := int64(int32(binary.LittleEndian.Uint32(v)))
	if kn < 0 || kn > int64(len(v)-4) {
		return fmt.Errorf("map key array of %d bytes in a %d-byte map", kn, len(v))
	}
	keys, err := parseBinArray(v[4:4+kn], f.kids[0].slot)
	if err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	vals, err := parseBinArray(v[4+kn:], f.kids[1].slot)
	if err != nil {
		return fmt.Errorf("values: %w", err)
	}
	if keys.n != vals.n {
		return fmt.Errorf("map with %d keys and %d values", keys.n, vals.n)
	}
	c.appendNested()
	if err := d.elements(f.kids[0], c.kids[0], &keys, false); err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	// Arrow refuses nulls in a map's NOT NULL values.
	if err := d.elements(f.kids[1], c.kids[1], &vals, f.kids[1].nullable); err != nil {
		return fmt.Errorf("values: %w", err)
	}
	return nil
}

// elements appends every element of a to c.
func (d *rowDec) elements(f *fieldSpec, c *colBuilder, a *binArray, nullOK bool) error {
	for i := 0; i < a.n; i++ {
		if a.null(i) {
			if !nullOK {
				return fmt.Errorf("element %d is null", i)
			}
			c.appendNull()
		} else if err := d.element(f, c, a, i); err != nil {
			return fmt.Errorf("element %d: %w", i, err)
		}
		if d.acc.over() {
			return d.acc.err()
		}
	}
	return nil
}

// element appends the non-null element i of a.
func (d *rowDec) element(f *fieldSpec, c *colBuilder, a *binArray, i int) error {
	switch f.kind {
	case types.KindTimestamp, types.KindTimestampLTZ:
		v := binary.LittleEndian.Uint64(a.slot(i))
		if f.compact {
			c.appendTimestamp(int64(v), 0)
			return nil
		}
		off := int64(int32(v >> 32))
		if off < 0 || off+8 > int64(len(a.b)) {
			return fmt.Errorf("timestamp at [%d,+8) outside the %d-byte array", off, len(a.b))
		}
		c.appendTimestamp(int64(binary.LittleEndian.Uint64(a.b[off:])), int32(v))
		return nil
	case types.KindDecimal:
		if f.compact {
			c.appendDecimalLong(int64(binary.LittleEndian.Uint64(a.slot(i))))
			return nil
		}
		v, err := a.part(i, false)
		if err != nil {
			return err
		}
		return c.appendDecimalBytes(v)
	case types.KindChar, types.KindString, types.KindBinary, types.KindBytes:
		v, err := a.part(i, true)
		if err != nil {
			return err
		}
		return c.appendVar(v)
	case types.KindArray, types.KindMap, types.KindRow:
		v, err := a.part(i, false)
		if err != nil {
			return err
		}
		return d.sizedValue(f, c, v)
	}
	fixedValue(f, c, a.slot(i))
	return nil
}
