package records

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// rowBudget bounds the Arrow bytes built from one row-format batch: every
// append adds what it costs (its fieldSpec width, plus the bytes of a
// variable-length value), and the decoder stops with ErrTooLarge once used
// passes limit. Without it a small batch could claim a huge output (an
// array of many null rows, many array elements pointing at one long string).
type rowBudget struct {
	used, limit int64
}

func (b *rowBudget) over() bool { return b.used > b.limit }

func (b *rowBudget) err() error {
	return fmt.Errorf("%w: its rows need more than %d bytes of Arrow arrays", ErrTooLarge, b.limit)
}

// colBuilder appends the values of one column (or nested field, element,
// key, value) to Arrow buffers (rowcol.go), converting them as the Java
// Arrow writers do. A nil *colBuilder drops values: columns a local
// projection skips are read (to find the next column) but not built.
type colBuilder struct {
	spec   *fieldSpec
	dt     arrow.DataType
	acc    *rowBudget
	mem    memory.Allocator
	layout colLayout
	width  int           // layoutFixed: bytes per value
	n      int           // values appended
	nullAt []int32       // positions of the nulls
	vals   colBuf        // fixed-width values, BOOLEAN bits, or int32 start offsets
	data   colBuf        // layoutVar: the bytes
	kids   []*colBuilder // mirrors spec.kids
}

// newColBuilder returns the builder of values of spec, whose Arrow type is
// dt (types.ArrowType of spec's type).
func newColBuilder(spec *fieldSpec, dt arrow.DataType, mem memory.Allocator, acc *rowBudget) *colBuilder {
	c := &colBuilder{spec: spec, dt: dt, acc: acc, mem: mem}
	c.layout, c.width = layoutOf(spec)
	switch t := dt.(type) {
	case *arrow.ListType:
		c.kids = []*colBuilder{newColBuilder(spec.kids[0], t.Elem(), mem, acc)}
	case *arrow.MapType:
		c.kids = []*colBuilder{newColBuilder(spec.kids[0], t.KeyType(), mem, acc),
			newColBuilder(spec.kids[1], t.ItemType(), mem, acc)}
	case *arrow.StructType:
		for i, k := range spec.kids {
			c.kids = append(c.kids, newColBuilder(k, t.Field(i).Type, mem, acc))
		}
	}
	return c
}

// newRowCols returns a builder per column of the plan's body, nil for the
// columns it does not keep. The caller releases them (releaseCols).
func newRowCols(plan *schemaPlan, mem memory.Allocator, acc *rowBudget, rows int) []*colBuilder {
	cols := make([]*colBuilder, len(plan.rows))
	var width int64
	for i, spec := range plan.rows {
		if plan.keep[i] {
			cols[i] = newColBuilder(spec, plan.body.Field(i).Type, mem, acc)
			width += spec.width
		}
	}
	// A batch's record count is not checked yet: reserve no more rows
	// than the budget lets it build.
	rows = int(min(int64(rows), acc.limit/max(width, 1)))
	for _, c := range cols {
		if c != nil {
			c.reserve(rows)
		}
	}
	return cols
}

func releaseCols(cols []*colBuilder) {
	for _, c := range cols {
		c.release()
	}
}

func (c *colBuilder) appendNull() {
	if c != nil {
		c.null()
		c.acc.used += c.spec.width
	}
}

func (c *colBuilder) appendBool(v bool) {
	if c != nil {
		c.n++
		c.appendBit(v)
		c.acc.used += c.spec.width
	}
}

func (c *colBuilder) appendInt8(v int8) {
	if c != nil {
		c.fixed()[0] = byte(v)
		c.acc.used += c.spec.width
	}
}

func (c *colBuilder) appendInt16(v int16) {
	if c != nil {
		ne.PutUint16(c.fixed(), uint16(v))
		c.acc.used += c.spec.width
	}
}

// appendInt32 appends an INT, a DATE (days) or a TIME (milliseconds of the
// day, scaled to the column's unit like ArrowTimeWriter).
func (c *colBuilder) appendInt32(v int32) {
	if c == nil {
		return
	}
	c.acc.used += c.spec.width
	if c.spec.kind != types.KindTime {
		ne.PutUint32(c.fixed(), uint32(v))
		return
	}
	switch c.spec.unit {
	case arrow.Second:
		ne.PutUint32(c.fixed(), uint32(v/1000))
	case arrow.Millisecond:
		ne.PutUint32(c.fixed(), uint32(v))
	case arrow.Microsecond:
		ne.PutUint64(c.fixed(), uint64(int64(v)*1000))
	default:
		ne.PutUint64(c.fixed(), uint64(int64(v)*1_000_000))
	}
}

func (c *colBuilder) appendInt64(v int64) {
	if c != nil {
		ne.PutUint64(c.fixed(), uint64(v))
		c.acc.used += c.spec.width
	}
}

func (c *colBuilder) appendFloat32(bits uint32) {
	if c != nil {
		ne.PutUint32(c.fixed(), bits)
		c.acc.used += c.spec.width
	}
}

func (c *colBuilder) appendFloat64(bits uint64) {
	if c != nil {
		ne.PutUint64(c.fixed(), bits)
		c.acc.used += c.spec.width
	}
}

// appendTimestamp appends epoch (or wall-clock) milliseconds plus the
// nanoseconds of the millisecond in the column's unit, like the Java
// ArrowTimestampNtzWriter/LtzWriter (Java's truncating division included).
func (c *colBuilder) appendTimestamp(ms int64, nanos int32) {
	if c == nil {
		return
	}
	var v int64
	switch c.spec.unit {
	case arrow.Second:
		v = ms / 1000
	case arrow.Millisecond:
		v = ms
	case arrow.Microsecond:
		v = ms*1000 + int64(nanos/1000)
	default:
		v = ms*1_000_000 + int64(nanos)
	}
	ne.PutUint64(c.fixed(), uint64(v))
	c.acc.used += c.spec.width
}

// appendDecimal128 appends an unscaled DECIMAL value as arrow-go's
// decimal128.Num lays it out: the low 64 bits, then the high ones.
func (c *colBuilder) appendDecimal128(hi int64, lo uint64) {
	b := c.fixed()
	ne.PutUint64(b, lo)
	ne.PutUint64(b[8:], uint64(hi))
	c.acc.used += c.spec.width
}

// appendDecimalLong appends a compact DECIMAL (precision <= 18): its
// unscaled value.
func (c *colBuilder) appendDecimalLong(v int64) {
	if c != nil {
		c.appendDecimal128(v>>63, uint64(v))
	}
}

// appendDecimalBytes appends a DECIMAL stored as the big-endian two's
// complement bytes of its unscaled value (Java's BigInteger.toByteArray).
func (c *colBuilder) appendDecimalBytes(b []byte) error {
	if len(b) == 0 || len(b) > maxDecimalBytes {
		return fmt.Errorf("DECIMAL of %d bytes (want 1 to %d)", len(b), maxDecimalBytes)
	}
	if c == nil {
		return nil
	}
	var buf [maxDecimalBytes]byte
	if b[0]&0x80 != 0 {
		for i := range buf {
			buf[i] = 0xff
		}
	}
	copy(buf[maxDecimalBytes-len(b):], b)
	c.appendDecimal128(int64(binary.BigEndian.Uint64(buf[:8])), binary.BigEndian.Uint64(buf[8:]))
	return nil
}

// appendVar appends a CHAR, STRING, BINARY(n) or BYTES value. A BINARY(n)
// value must have n bytes (the Arrow column is FixedSizeBinary(n)).
func (c *colBuilder) appendVar(b []byte) error {
	if c == nil {
		return nil
	}
	switch c.layout {
	case layoutVar:
		if err := c.varOverflow(len(b)); err != nil {
			return err
		}
		c.n++
		c.offset(len(c.data.b))
		copy(c.data.next(c.mem, len(b)), b)
	case layoutFixed:
		if c.spec.kind != types.KindBinary || len(b) != c.width {
			return fmt.Errorf("BINARY(%d) value of %d bytes", c.spec.length, len(b))
		}
		copy(c.fixed(), b)
	default:
		return fmt.Errorf("no variable-length values in a %s column", c.dt)
	}
	c.acc.used += c.spec.width + int64(len(b))
	return nil
}

// appendNested appends a non-null ARRAY, MAP or ROW entry (its children
// come separately).
func (c *colBuilder) appendNested() {
	if c == nil {
		return
	}
	c.n++
	if c.layout == layoutStruct {
		c.acc.used++ // the fields count themselves
		return
	}
	c.offset(c.kids[0].n)
	c.acc.used += c.spec.width
}
