package records

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// The row decoders append one value at a time; going through arrow-go's
// builders cost an interface call, a capacity check and a bitmap write per
// value, and half the decode time of a COMPACTED batch. colBuilder writes
// the Arrow buffers itself instead: fixed-width values and offsets straight
// into allocator memory (ne below), and the validity bitmap at the end from
// the positions of the nulls.

// ne is the byte order of Arrow's in-memory buffers: the machine's.
var ne = binary.NativeEndian

// colLayout is how a column's values are laid out in Arrow.
type colLayout uint8

const (
	layoutFixed  colLayout = iota // width bytes per value in vals
	layoutBool                    // one bit per value in vals
	layoutVar                     // int32 offsets in vals, bytes in data
	layoutList                    // int32 offsets in vals, elements in kids[0]
	layoutMap                     // int32 offsets in vals, entries in kids[0] (keys), kids[1] (values)
	layoutStruct                  // fields in kids
)

// colBuf is a growable buffer from an allocator; b is its used part.
type colBuf struct {
	buf *memory.Buffer
	b   []byte
}

// next extends b by k bytes and returns them (not zeroed).
func (g *colBuf) next(mem memory.Allocator, k int) []byte {
	n := len(g.b)
	if k > cap(g.b)-n {
		g.grow(mem, n+k)
	}
	g.b = g.b[:n+k]
	return g.b[n:]
}

func (g *colBuf) grow(mem memory.Allocator, need int) {
	if g.buf == nil {
		g.buf = memory.NewResizableBuffer(mem)
	}
	g.buf.Reserve(max(need, 2*cap(g.b), 64))
	g.b = g.buf.Buf()[:len(g.b)]
}

// take hands the buffer over (the caller releases it) and leaves g empty;
// nil if nothing was ever written and need is false.
func (g *colBuf) take(mem memory.Allocator, need bool) *memory.Buffer {
	if g.buf == nil {
		if !need {
			return nil
		}
		g.grow(mem, 0)
	}
	buf := g.buf
	buf.ResizeNoShrink(len(g.b))
	*g = colBuf{}
	return buf
}

func (g *colBuf) release() {
	if g.buf != nil {
		g.buf.Release()
	}
	*g = colBuf{}
}

// layoutOf returns the Arrow layout of the values of f and, for
// layoutFixed, their width in bytes (the Arrow types of types.ArrowType).
func layoutOf(f *fieldSpec) (colLayout, int) {
	switch f.kind {
	case types.KindBoolean:
		return layoutBool, 0
	case types.KindTinyInt:
		return layoutFixed, 1
	case types.KindSmallInt:
		return layoutFixed, 2
	case types.KindInt, types.KindFloat, types.KindDate:
		return layoutFixed, 4
	case types.KindTime:
		if f.unit == arrow.Second || f.unit == arrow.Millisecond {
			return layoutFixed, 4
		}
		return layoutFixed, 8
	case types.KindDecimal:
		return layoutFixed, 16
	case types.KindBinary:
		return layoutFixed, f.length
	case types.KindChar, types.KindString, types.KindBytes:
		return layoutVar, 0
	case types.KindArray:
		return layoutList, 0
	case types.KindMap:
		return layoutMap, 0
	case types.KindRow:
		return layoutStruct, 0
	}
	return layoutFixed, 8 // BIGINT, DOUBLE, TIMESTAMP(_LTZ)
}

// setNull records that the value at index n-1 is null. Valid values cost
// nothing: newData builds the validity bitmap from the null positions.
func (c *colBuilder) setNull() {
	c.nullAt = append(c.nullAt, int32(c.n-1))
}

// validity returns the validity bitmap of the n values, nil without nulls.
func (c *colBuilder) validity() *memory.Buffer {
	if len(c.nullAt) == 0 {
		return nil
	}
	buf := memory.NewResizableBuffer(c.mem)
	buf.Resize((c.n + 7) / 8)
	b := buf.Bytes()
	for i := range b {
		b[i] = 0xff
	}
	if r := c.n & 7; r != 0 {
		b[len(b)-1] = byte(1<<r) - 1
	}
	for _, i := range c.nullAt {
		b[i>>3] &^= 1 << (i & 7)
	}
	c.nullAt = c.nullAt[:0]
	return buf
}

// fixed returns the bytes of the next fixed-width value.
func (c *colBuilder) fixed() []byte {
	c.n++
	return c.vals.next(c.mem, c.width)
}

// offset appends the start offset of the next variable-length value or
// list: the data or child length so far.
func (c *colBuilder) offset(at int) {
	ne.PutUint32(c.vals.next(c.mem, 4), uint32(at))
}

// null appends a null without counting it against the budget (nested
// fields of a null ROW, which its width already counts).
func (c *colBuilder) null() {
	c.n++
	c.setNull()
	switch c.layout {
	case layoutFixed:
		clear(c.vals.next(c.mem, c.width))
	case layoutBool:
		c.appendBit(false)
	case layoutVar:
		c.offset(len(c.data.b))
	case layoutList, layoutMap:
		c.offset(c.kids[0].n)
	case layoutStruct:
		for _, k := range c.kids {
			k.null()
		}
	}
}

// appendBit writes value bit n-1 of a BOOLEAN column.
func (c *colBuilder) appendBit(v bool) {
	i := c.n - 1
	if i&7 == 0 {
		c.vals.next(c.mem, 1)[0] = 0
	}
	if v {
		c.vals.b[i>>3] |= 1 << (i & 7)
	}
}

// newArray hands the values appended so far over as an array (the caller
// releases it) and starts anew.
func (c *colBuilder) newArray() arrow.Array {
	d := c.newData()
	defer d.Release()
	return array.MakeFromData(d)
}

func (c *colBuilder) newData() arrow.ArrayData {
	var bufs []*memory.Buffer
	var kids []arrow.ArrayData
	switch c.layout {
	case layoutFixed, layoutBool:
		bufs = []*memory.Buffer{nil, c.vals.take(c.mem, true)}
	case layoutVar:
		c.offset(len(c.data.b))
		if c.n > 0 {
			c.spec.dataHint.Store(int64(len(c.data.b)) * 16 / int64(c.n))
		}
		bufs = []*memory.Buffer{nil, c.vals.take(c.mem, true), c.data.take(c.mem, true)}
	case layoutList:
		c.offset(c.kids[0].n)
		bufs = []*memory.Buffer{nil, c.vals.take(c.mem, true)}
		kids = []arrow.ArrayData{c.kids[0].newData()}
	case layoutMap:
		c.offset(c.kids[0].n)
		bufs = []*memory.Buffer{nil, c.vals.take(c.mem, true)}
		kids = []arrow.ArrayData{c.entries()}
	case layoutStruct:
		bufs = []*memory.Buffer{nil}
		for _, k := range c.kids {
			kids = append(kids, k.newData())
		}
	}
	nulls := len(c.nullAt)
	bufs[0] = c.validity()
	d := array.NewData(c.dt, c.n, bufs, kids, nulls, 0)
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	for _, k := range kids {
		k.Release()
	}
	c.n = 0
	return d
}

// entries is the struct array of a map's keys and values.
func (c *colBuilder) entries() arrow.ArrayData {
	n := c.kids[0].n
	st := c.dt.(*arrow.MapType).Elem()
	keys, vals := c.kids[0].newData(), c.kids[1].newData()
	defer keys.Release()
	defer vals.Release()
	return array.NewData(st, n, []*memory.Buffer{nil}, []arrow.ArrayData{keys, vals}, 0, 0)
}

// release frees the buffers of a column and of its children.
func (c *colBuilder) release() {
	if c == nil {
		return
	}
	c.vals.release()
	c.data.release()
	for _, k := range c.kids {
		k.release()
	}
}

// reserve makes room for rows more values of a top-level column.
func (c *colBuilder) reserve(rows int) {
	switch c.layout {
	case layoutFixed:
		c.vals.grow(c.mem, rows*c.width)
	case layoutVar:
		c.vals.grow(c.mem, (rows+1)*4)
		// The last batch's mean, and a sixteenth more.
		if h := c.spec.dataHint.Load(); h > 0 {
			c.data.grow(c.mem, int(min(h*int64(rows)*17/256, maxDataHint, c.acc.limit)))
		}
	case layoutList, layoutMap:
		c.vals.grow(c.mem, (rows+1)*4)
	}
}

// maxDataHint caps the bytes reserved up front for a column's values.
const maxDataHint = 64 << 20

// varOverflow reports whether k more bytes would overflow int32 offsets.
func (c *colBuilder) varOverflow(k int) error {
	if int64(len(c.data.b))+int64(k) > math.MaxInt32 {
		return fmt.Errorf("column %s: more than %d bytes of values", c.spec.name, math.MaxInt32)
	}
	return nil
}
