package records

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
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
// key, value) to its Arrow builder, converting them as the Java Arrow
// writers do. A nil *colBuilder drops values: columns a local projection
// skips are read (to find the next column) but not built.
type colBuilder struct {
	spec *fieldSpec
	b    array.Builder
	kids []*colBuilder // mirrors spec.kids; children of b, owned by it
	acc  *rowBudget
}

func newColBuilder(spec *fieldSpec, b array.Builder, acc *rowBudget) *colBuilder {
	c := &colBuilder{spec: spec, b: b, acc: acc}
	switch bb := b.(type) {
	case *array.ListBuilder:
		c.kids = []*colBuilder{newColBuilder(spec.kids[0], bb.ValueBuilder(), acc)}
	case *array.MapBuilder:
		c.kids = []*colBuilder{newColBuilder(spec.kids[0], bb.KeyBuilder(), acc), newColBuilder(spec.kids[1], bb.ItemBuilder(), acc)}
	case *array.StructBuilder:
		for i, k := range spec.kids {
			c.kids = append(c.kids, newColBuilder(k, bb.FieldBuilder(i), acc))
		}
	}
	return c
}

// newRowCols returns a builder per column of the plan's body, nil for the
// columns it does not keep. The caller releases them (releaseCols).
func newRowCols(plan *schemaPlan, mem memory.Allocator, acc *rowBudget, rows int) []*colBuilder {
	cols := make([]*colBuilder, len(plan.rows))
	for i, spec := range plan.rows {
		if !plan.keep[i] {
			continue
		}
		b := array.NewBuilder(mem, plan.body.Field(i).Type)
		b.Reserve(rows)
		cols[i] = newColBuilder(spec, b, acc)
	}
	return cols
}

func releaseCols(cols []*colBuilder) {
	for _, c := range cols {
		if c != nil {
			c.b.Release()
		}
	}
}

func (c *colBuilder) appendNull() {
	if c != nil {
		c.b.AppendNull()
		c.acc.used += c.spec.width
	}
}

func (c *colBuilder) appendBool(v bool) {
	if c != nil {
		c.b.(*array.BooleanBuilder).Append(v)
		c.acc.used += c.spec.width
	}
}

func (c *colBuilder) appendInt8(v int8) {
	if c != nil {
		c.b.(*array.Int8Builder).Append(v)
		c.acc.used += c.spec.width
	}
}

func (c *colBuilder) appendInt16(v int16) {
	if c != nil {
		c.b.(*array.Int16Builder).Append(v)
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
	switch c.spec.kind {
	case types.KindDate:
		c.b.(*array.Date32Builder).Append(arrow.Date32(v))
	case types.KindTime:
		switch c.spec.unit {
		case arrow.Second:
			c.b.(*array.Time32Builder).Append(arrow.Time32(v / 1000))
		case arrow.Millisecond:
			c.b.(*array.Time32Builder).Append(arrow.Time32(v))
		case arrow.Microsecond:
			c.b.(*array.Time64Builder).Append(arrow.Time64(int64(v) * 1000))
		default:
			c.b.(*array.Time64Builder).Append(arrow.Time64(int64(v) * 1_000_000))
		}
	default:
		c.b.(*array.Int32Builder).Append(v)
	}
}

func (c *colBuilder) appendInt64(v int64) {
	if c != nil {
		c.b.(*array.Int64Builder).Append(v)
		c.acc.used += c.spec.width
	}
}

func (c *colBuilder) appendFloat32(bits uint32) {
	if c != nil {
		c.b.(*array.Float32Builder).Append(math.Float32frombits(bits))
		c.acc.used += c.spec.width
	}
}

func (c *colBuilder) appendFloat64(bits uint64) {
	if c != nil {
		c.b.(*array.Float64Builder).Append(math.Float64frombits(bits))
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
	c.b.(*array.TimestampBuilder).Append(arrow.Timestamp(v))
	c.acc.used += c.spec.width
}

// appendDecimalLong appends a compact DECIMAL (precision <= 18): its
// unscaled value.
func (c *colBuilder) appendDecimalLong(v int64) {
	if c != nil {
		c.b.(*array.Decimal128Builder).Append(decimal128.FromI64(v))
		c.acc.used += c.spec.width
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
	hi, lo := binary.BigEndian.Uint64(buf[:8]), binary.BigEndian.Uint64(buf[8:])
	c.b.(*array.Decimal128Builder).Append(decimal128.New(int64(hi), lo))
	c.acc.used += c.spec.width
	return nil
}

// appendVar appends a CHAR, STRING, BINARY(n) or BYTES value. A BINARY(n)
// value must have n bytes (the Arrow column is FixedSizeBinary(n)).
func (c *colBuilder) appendVar(b []byte) error {
	if c == nil {
		return nil
	}
	switch bb := c.b.(type) {
	case *array.StringBuilder:
		bb.BinaryBuilder.Append(b)
	case *array.BinaryBuilder:
		bb.Append(b)
	case *array.FixedSizeBinaryBuilder:
		if len(b) != c.spec.length {
			return fmt.Errorf("BINARY(%d) value of %d bytes", c.spec.length, len(b))
		}
		bb.Append(b)
	default:
		return fmt.Errorf("no variable-length values in a %s column", c.b.Type())
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
	switch bb := c.b.(type) {
	case *array.ListBuilder:
		bb.Append(true)
	case *array.MapBuilder:
		bb.Append(true)
	case *array.StructBuilder:
		bb.Append(true)
		c.acc.used++ // the fields count themselves
		return
	}
	c.acc.used += c.spec.width
}
