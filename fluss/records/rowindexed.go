package records

import (
	"encoding/binary"
	"fmt"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// IndexedRow (common/row/indexed/IndexedRow.java, IndexedRowWriter.java): a
// null bitmap of ceil(n/8) bytes (bit i set = field i null, for every field),
// then one int32 LE length slot per variable-length field (STRING, BYTES,
// DECIMAL p > 18, ARRAY, MAP, ROW), filled in field order by the non-null
// ones, then the non-null values back to back: fixed-length ones in their
// size (BOOLEAN and TINYINT 1, SMALLINT 2, INT, FLOAT, DATE, TIME 4, BIGINT,
// DOUBLE, DECIMAL p <= 18 8, TIMESTAMP(_LTZ) 8 or, above precision 3, 12:
// milliseconds and nanoseconds, CHAR(n) and BINARY(n) n bytes, zero-padded),
// variable-length ones in their slot's length. Null values take no bytes.
// Numbers are little-endian; ARRAY and MAP are a BinaryArray or BinaryMap,
// ROW an IndexedRow.

// indexedRow reads an IndexedRow of the fields specs (nvar of them of
// variable length) into cols (nil: read and drop; a nil entry drops that
// field) and returns the bytes it used.
func (d *rowDec) indexedRow(specs []*fieldSpec, cols []*colBuilder, nvar int, row []byte) (int, error) {
	nb := (len(specs) + 7) / 8
	hdr := nb + 4*nvar
	if len(row) < hdr {
		return 0, fmt.Errorf("%d bytes, the header of %d fields needs %d", len(row), len(specs), hdr)
	}
	lens, pos, slot := row[nb:hdr], hdr, 0
	if cols == nil {
		cols = d.dropCols(len(specs))
	}
	for i, f := range specs {
		c := cols[i]
		if row[i>>3]&(1<<(i&7)) != 0 {
			c.appendNull()
			continue
		}
		n := f.fixed
		if n == 0 {
			n = int(int32(binary.LittleEndian.Uint32(lens[4*slot:])))
			slot++
			if n < 0 {
				return 0, fmt.Errorf("%s: negative length %d", f.name, n)
			}
		}
		if n > len(row)-pos {
			return 0, fmt.Errorf("%s: byte %d: needs %d bytes, %d left", f.name, pos, n, len(row)-pos)
		}
		if err := d.indexedValue(f, c, row[pos:pos+n]); err != nil {
			return 0, fmt.Errorf("%s: %w", f.name, err)
		}
		pos += n
	}
	return pos, nil
}

// indexedValue appends one non-null value of f stored in v.
func (d *rowDec) indexedValue(f *fieldSpec, c *colBuilder, v []byte) error {
	le := binary.LittleEndian
	switch f.kind {
	case types.KindTimestamp, types.KindTimestampLTZ:
		var nanos int32
		if !f.compact {
			nanos = int32(le.Uint32(v[8:]))
		}
		c.appendTimestamp(int64(le.Uint64(v)), nanos)
	case types.KindDecimal:
		if f.compact {
			c.appendDecimalLong(int64(le.Uint64(v)))
			return nil
		}
		return c.appendDecimalBytes(v)
	case types.KindChar:
		// Zero-padded to n bytes; IndexedRow.getChar drops trailing zeros.
		end := len(v)
		for end > 0 && v[end-1] == 0 {
			end--
		}
		return c.appendVar(v[:end])
	case types.KindString, types.KindBinary, types.KindBytes, types.KindArray, types.KindMap, types.KindRow:
		// BINARY(n) keeps its n bytes: IndexedRow.getBinary would also drop
		// trailing zero bytes, which a FixedSizeBinary(n) cannot hold (and
		// the value as written had them).
		return d.sizedValue(f, c, v)
	default:
		fixedValue(f, c, v)
	}
	return nil
}
