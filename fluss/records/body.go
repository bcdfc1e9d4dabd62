package records

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// maxNesting bounds the depth of nested types the loader follows.
const maxNesting = 64

// bodyLoader builds Arrow arrays from the body of one RecordBatch message.
// Every node and buffer is checked against the column's needs before use.
// Uncompressed buffers are slices of body (no copy), or with copyRaw copies
// in mem; decompressed ones are allocated from mem and count against budget.
type bodyLoader struct {
	meta   *recordBatchMeta
	body   []byte
	parent *memory.Buffer // wraps body; sliced for zero-copy buffers
	mem    memory.Allocator
	budget int64
	inode  int
	ibuf   int
	depth  int
	col    string // top-level column being loaded, for errors
	// copyRaw: buffers stored uncompressed are copied into mem rather than
	// sliced from body (WithOwnedBuffers).
	copyRaw bool
}

// raw returns the n uncompressed bytes at off of the body: a slice of it, or
// with copyRaw a copy in mem.
func (l *bodyLoader) raw(off, n int) *memory.Buffer {
	if !l.copyRaw {
		return memory.SliceBuffer(l.parent, off, n)
	}
	buf := l.alloc(n)
	copy(buf.Bytes(), l.body[off:off+n])
	return buf
}

// uninitAllocator is an allocator that can also hand out memory it has not
// zeroed, for buffers the caller overwrites whole (the scanner's recycler).
type uninitAllocator interface {
	AllocateUninit(size int) []byte
}

// alloc returns a buffer of n bytes from mem that the caller fills whole:
// not zeroed when mem can skip it, but for the padding up to a multiple of
// 64 bytes.
func (l *bodyLoader) alloc(n int) *memory.Buffer {
	ua, ok := l.mem.(uninitAllocator)
	if !ok {
		buf := memory.NewResizableBuffer(l.mem)
		buf.Resize(n)
		return buf
	}
	b := ua.AllocateUninit((n + 63) &^ 63)
	clear(b[n:])
	buf := memory.NewBufferWithAllocator(b, l.mem)
	buf.Resize(n) // the length only: the slice is already this size rounded up
	return buf
}

func (l *bodyLoader) errf(format string, args ...any) error {
	return fmt.Errorf("%w: column %q: %s", ErrInvalidBatch, l.col, fmt.Sprintf(format, args...))
}

// nextNode returns the next field node, checked for sane counts.
func (l *bodyLoader) nextNode() (fieldNode, error) {
	if l.inode >= l.meta.nNodes {
		return fieldNode{}, l.errf("body has %d field nodes, the schema needs more", l.meta.nNodes)
	}
	n := l.meta.node(l.inode)
	l.inode++
	if n.length < 0 || n.length > maxArrayLength || n.nullCount < 0 || n.nullCount > n.length {
		return fieldNode{}, l.errf("field node with length %d and null count %d", n.length, n.nullCount)
	}
	return n, nil
}

// maxBufferSlack is how far a decompressed buffer may exceed twice what its
// column needs (writers pad buffers; Java writes them exact).
const maxBufferSlack = 4096

// maxArrayLength keeps lengths and offsets within int32 (Arrow's non-large types).
const maxArrayLength = 1<<31 - 1

// skipBuffer advances past a buffer the array does not need.
func (l *bodyLoader) skipBuffer() error {
	if l.ibuf >= l.meta.nBuffers {
		return l.errf("body has %d buffers, the schema needs more", l.meta.nBuffers)
	}
	l.ibuf++
	return nil
}

// nextBuffer returns the next buffer, holding at least need bytes once
// decompressed. The caller owns the returned buffer (Release it).
func (l *bodyLoader) nextBuffer(need int64) (*memory.Buffer, error) {
	if l.ibuf >= l.meta.nBuffers {
		return nil, l.errf("body has %d buffers, the schema needs more", l.meta.nBuffers)
	}
	spec := l.meta.buffer(l.ibuf)
	l.ibuf++
	if spec.offset < 0 || spec.length < 0 || spec.offset > int64(len(l.body)) || spec.length > int64(len(l.body))-spec.offset {
		return nil, l.errf("buffer %d at [%d,+%d) outside the %d-byte body", l.ibuf-1, spec.offset, spec.length, len(l.body))
	}
	off, n := int(spec.offset), int(spec.length)
	if l.meta.codec == codecNone {
		if int64(n) < need {
			return nil, l.errf("buffer %d has %d bytes, needs %d", l.ibuf-1, n, need)
		}
		if n == 0 {
			return memory.NewBufferBytes(nil), nil
		}
		return l.raw(off, n), nil
	}
	// Compressed: int64 LE uncompressed length, then the codec's frame.
	if n == 0 {
		if need > 0 {
			return nil, l.errf("buffer %d is empty, needs %d bytes", l.ibuf-1, need)
		}
		return memory.NewBufferBytes(nil), nil
	}
	if n < 8 {
		return nil, l.errf("compressed buffer %d has %d bytes, no length prefix", l.ibuf-1, n)
	}
	declared := int64(binary.LittleEndian.Uint64(l.body[off:]))
	if declared == -1 { // stored uncompressed
		if int64(n-8) < need {
			return nil, l.errf("buffer %d has %d bytes, needs %d", l.ibuf-1, n-8, need)
		}
		return l.raw(off+8, n-8), nil
	}
	if declared < need || declared < 0 {
		return nil, l.errf("compressed buffer %d declares %d bytes, needs %d", l.ibuf-1, declared, need)
	}
	if declared == 0 {
		return memory.NewBufferBytes(nil), nil
	}
	if declared > l.budget {
		return nil, fmt.Errorf("%w: column %q: buffer %d declares %d uncompressed bytes, %d left of the batch limit",
			ErrTooLarge, l.col, l.ibuf-1, declared, l.budget)
	}
	if declared > 2*need+maxBufferSlack {
		return nil, l.errf("compressed buffer %d declares %d bytes, its column needs %d", l.ibuf-1, declared, need)
	}
	if declared > maxExpansion(l.meta.codec, int64(n-8)) {
		return nil, l.errf("compressed buffer %d declares %d bytes from %d compressed bytes", l.ibuf-1, declared, n-8)
	}
	l.budget -= declared
	buf := l.alloc(int(declared))
	if err := decompressInto(l.meta.codec, buf.Bytes(), l.body[off+8:off+n]); err != nil {
		buf.Release()
		return nil, fmt.Errorf("column %q buffer %d: %w", l.col, l.ibuf-1, err)
	}
	return buf, nil
}

// validity returns the validity bitmap (nil when the node has no nulls).
func (l *bodyLoader) validity(n fieldNode) (*memory.Buffer, error) {
	if n.nullCount == 0 {
		return nil, l.skipBuffer()
	}
	return l.nextBuffer((n.length + 7) / 8)
}

func releaseAll(bufs []*memory.Buffer) {
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
}

// loadArray loads one array of type dt. The caller owns the result.
func (l *bodyLoader) loadArray(dt arrow.DataType) (arrow.ArrayData, error) {
	if l.depth >= maxNesting {
		return nil, l.errf("nesting deeper than %d", maxNesting)
	}
	l.depth++
	defer func() { l.depth-- }()

	if dt.ID() == arrow.NULL {
		n, err := l.nextNode()
		if err != nil {
			return nil, err
		}
		return array.NewData(dt, int(n.length), []*memory.Buffer{nil}, nil, int(n.length), 0), nil
	}
	n, err := l.nextNode()
	if err != nil {
		return nil, err
	}
	valid, err := l.validity(n)
	if err != nil {
		return nil, err
	}
	bufs := []*memory.Buffer{valid}
	defer func() { releaseAll(bufs) }()

	switch dt.(type) {
	case *arrow.ListType, *arrow.MapType, *arrow.FixedSizeListType, *arrow.StructType:
		return l.loadNested(dt, n, &bufs)
	}
	return l.loadLeaf(dt, n, &bufs)
}

// loadLeaf loads the buffers of an array without children, appending them
// to bufs (which the caller releases).
func (l *bodyLoader) loadLeaf(dt arrow.DataType, n fieldNode, bufs *[]*memory.Buffer) (arrow.ArrayData, error) {
	length := int(n.length)
	switch dt := dt.(type) {
	case *arrow.BooleanType:
		b, err := l.nextBuffer((n.length + 7) / 8)
		if err != nil {
			return nil, err
		}
		*bufs = append(*bufs, b)
		return array.NewData(dt, length, *bufs, nil, int(n.nullCount), 0), nil

	case *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Int64Type,
		*arrow.Uint8Type, *arrow.Uint16Type, *arrow.Uint32Type, *arrow.Uint64Type,
		*arrow.Float16Type, *arrow.Float32Type, *arrow.Float64Type,
		*arrow.Decimal32Type, *arrow.Decimal64Type, *arrow.Decimal128Type, *arrow.Decimal256Type,
		*arrow.Date32Type, *arrow.Date64Type, *arrow.Time32Type, *arrow.Time64Type,
		*arrow.TimestampType, *arrow.DurationType,
		*arrow.MonthIntervalType, *arrow.DayTimeIntervalType, *arrow.MonthDayNanoIntervalType,
		*arrow.FixedSizeBinaryType:
		width := int64(dt.(arrow.FixedWidthDataType).BitWidth() / 8)
		b, err := l.nextBuffer(n.length * width)
		if err != nil {
			return nil, err
		}
		*bufs = append(*bufs, b)
		return array.NewData(dt, length, *bufs, nil, int(n.nullCount), 0), nil

	case *arrow.BinaryType, *arrow.StringType:
		offs, end, err := l.offsets(n.length)
		if err != nil {
			return nil, err
		}
		*bufs = append(*bufs, offs)
		data, err := l.nextBuffer(end)
		if err != nil {
			return nil, err
		}
		*bufs = append(*bufs, data)
		return array.NewData(dt, length, *bufs, nil, int(n.nullCount), 0), nil
	}
	return nil, l.errf("Arrow type %s is not supported in Fluss log batches", dt)
}

// loadNested loads a list, map, fixed-size list or struct array and its
// children, appending its buffers to bufs (which the caller releases).
func (l *bodyLoader) loadNested(dt arrow.DataType, n fieldNode, bufs *[]*memory.Buffer) (arrow.ArrayData, error) {
	length := int(n.length)
	switch dt := dt.(type) {
	case *arrow.ListType, *arrow.MapType:
		offs, end, err := l.offsets(n.length)
		if err != nil {
			return nil, err
		}
		*bufs = append(*bufs, offs)
		child, err := l.loadChild(dt.(arrow.ListLikeType).Elem(), end)
		if err != nil {
			return nil, err
		}
		defer child.Release()
		return array.NewData(dt, length, *bufs, []arrow.ArrayData{child}, int(n.nullCount), 0), nil

	case *arrow.FixedSizeListType:
		child, err := l.loadChild(dt.Elem(), n.length*int64(dt.Len()))
		if err != nil {
			return nil, err
		}
		defer child.Release()
		return array.NewData(dt, length, *bufs, []arrow.ArrayData{child}, int(n.nullCount), 0), nil

	case *arrow.StructType:
		children := make([]arrow.ArrayData, 0, dt.NumFields())
		defer func() {
			for _, c := range children {
				c.Release()
			}
		}()
		for _, f := range dt.Fields() {
			c, err := l.loadChild(f.Type, n.length)
			if err != nil {
				return nil, err
			}
			children = append(children, c)
		}
		return array.NewData(dt, length, *bufs, children, int(n.nullCount), 0), nil
	}
	return nil, l.errf("Arrow type %s is not supported in Fluss log batches", dt)
}

// loadChild loads a child array that must hold at least min elements.
func (l *bodyLoader) loadChild(dt arrow.DataType, min int64) (arrow.ArrayData, error) {
	c, err := l.loadArray(dt)
	if err != nil {
		return nil, err
	}
	if int64(c.Len()) < min {
		c.Release()
		return nil, l.errf("child array of %s has %d values, its parent needs %d", dt, c.Len(), min)
	}
	return c, nil
}

// offsets loads an int32 offsets buffer for n values and checks that it
// starts at 0 or more, never decreases and stays within int32; it returns
// the end offset (the size the data buffer or child must have).
func (l *bodyLoader) offsets(n int64) (*memory.Buffer, int64, error) {
	if n == 0 {
		// Writers may omit the single offset of an empty array.
		b, err := l.nextBuffer(0)
		return b, 0, err
	}
	b, err := l.nextBuffer((n + 1) * 4)
	if err != nil {
		return nil, 0, err
	}
	// Arrow buffers are little-endian, as the CPUs arrow-go reads them on;
	// the arrays read these offsets as int32 the same way.
	offs := arrow.Int32Traits.CastFromBytes(b.Bytes()[:(n+1)*4])
	if offs[0] < 0 {
		b.Release()
		return nil, 0, l.errf("negative first offset %d", offs[0])
	}
	for i := 1; i < len(offs); i++ {
		if offs[i] < offs[i-1] {
			b.Release()
			return nil, 0, l.errf("offset %d (%d) is below offset %d (%d)", i, offs[i], i-1, offs[i-1])
		}
	}
	return b, int64(offs[len(offs)-1]), nil
}

// skipArray advances past the nodes and buffers of a column that is not
// wanted (local projection) without reading them.
func (l *bodyLoader) skipArray(dt arrow.DataType) error {
	if l.depth >= maxNesting {
		return l.errf("nesting deeper than %d", maxNesting)
	}
	l.depth++
	defer func() { l.depth-- }()
	if _, err := l.nextNode(); err != nil {
		return err
	}
	nbufs := 0
	switch dt := dt.(type) {
	case *arrow.NullType:
		return nil
	case *arrow.BinaryType, *arrow.StringType:
		nbufs = 3
	case *arrow.ListType, *arrow.MapType:
		if err := l.skipBuffers(2); err != nil {
			return err
		}
		return l.skipArray(dt.(arrow.ListLikeType).Elem())
	case *arrow.FixedSizeListType:
		if err := l.skipBuffers(1); err != nil {
			return err
		}
		return l.skipArray(dt.Elem())
	case *arrow.StructType:
		if err := l.skipBuffers(1); err != nil {
			return err
		}
		for _, f := range dt.Fields() {
			if err := l.skipArray(f.Type); err != nil {
				return err
			}
		}
		return nil
	default:
		if _, ok := dt.(arrow.FixedWidthDataType); !ok {
			return l.errf("Arrow type %s is not supported in Fluss log batches", dt)
		}
		nbufs = 2
	}
	return l.skipBuffers(nbufs)
}

func (l *bodyLoader) skipBuffers(n int) error {
	for i := 0; i < n; i++ {
		if err := l.skipBuffer(); err != nil {
			return err
		}
	}
	return nil
}
