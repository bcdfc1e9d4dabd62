package records

import (
	"encoding/binary"
	"fmt"
)

// A minimal, bounds-checked reader for the Arrow IPC flatbuffer metadata of a
// RecordBatch message (Message.fbs / Schema.fbs). arrow-go keeps its generated
// flatbuffer code internal and trusts offsets; this reader checks every
// offset and length against the buffer so malformed metadata yields an error.

// fbTable is a flatbuffer table located at pos inside buf.
type fbTable struct {
	buf    []byte
	pos    int
	vtab   int
	vtabSz int
}

func fbU32(buf []byte, pos int) (uint32, bool) {
	if pos < 0 || pos > len(buf)-4 {
		return 0, false
	}
	return binary.LittleEndian.Uint32(buf[pos:]), true
}

func fbU16(buf []byte, pos int) (uint16, bool) {
	if pos < 0 || pos > len(buf)-2 {
		return 0, false
	}
	return binary.LittleEndian.Uint16(buf[pos:]), true
}

// fbRoot returns the root table of a flatbuffer.
func fbRoot(buf []byte) (fbTable, error) {
	off, ok := fbU32(buf, 0)
	if !ok {
		return fbTable{}, errFB("root offset")
	}
	return fbTableAt(buf, int64(off))
}

func errFB(what string) error {
	return fmt.Errorf("%w: Arrow message metadata: bad %s", ErrInvalidBatch, what)
}

func fbTableAt(buf []byte, pos int64) (fbTable, error) {
	if pos < 0 || pos > int64(len(buf))-4 {
		return fbTable{}, errFB("table offset")
	}
	p := int(pos)
	soff := int64(int32(binary.LittleEndian.Uint32(buf[p:])))
	vt := int64(p) - soff
	if vt < 0 || vt > int64(len(buf))-4 {
		return fbTable{}, errFB("vtable offset")
	}
	vsz, _ := fbU16(buf, int(vt))
	if vsz < 4 || int64(vsz)%2 != 0 || vt+int64(vsz) > int64(len(buf)) {
		return fbTable{}, errFB("vtable size")
	}
	return fbTable{buf: buf, pos: p, vtab: int(vt), vtabSz: int(vsz)}, nil
}

// field returns the absolute position of field id, or -1 when absent.
func (t fbTable) field(id int) int {
	slot := 4 + 2*id
	if slot+2 > t.vtabSz {
		return -1
	}
	off, _ := fbU16(t.buf, t.vtab+slot)
	if off == 0 {
		return -1
	}
	return t.pos + int(off)
}

func (t fbTable) int64Field(id int, def int64) (int64, error) {
	p := t.field(id)
	if p < 0 {
		return def, nil
	}
	if p > len(t.buf)-8 {
		return 0, errFB("int64 field")
	}
	return int64(binary.LittleEndian.Uint64(t.buf[p:])), nil
}

func (t fbTable) int16Field(id int, def int16) (int16, error) {
	p := t.field(id)
	if p < 0 {
		return def, nil
	}
	v, ok := fbU16(t.buf, p)
	if !ok {
		return 0, errFB("int16 field")
	}
	return int16(v), nil
}

func (t fbTable) uint8Field(id int, def uint8) (uint8, error) {
	p := t.field(id)
	if p < 0 {
		return def, nil
	}
	if p >= len(t.buf) {
		return 0, errFB("byte field")
	}
	return t.buf[p], nil
}

// tableField follows an offset field to a sub-table; ok is false when absent.
func (t fbTable) tableField(id int) (fbTable, bool, error) {
	p := t.field(id)
	if p < 0 {
		return fbTable{}, false, nil
	}
	off, ok := fbU32(t.buf, p)
	if !ok {
		return fbTable{}, false, errFB("table field")
	}
	sub, err := fbTableAt(t.buf, int64(p)+int64(off))
	return sub, err == nil, err
}

// structVector follows an offset field to a vector of fixed-size structs and
// returns the position of its first element and its length.
func (t fbTable) structVector(id, elemSize int) (start, n int, err error) {
	p := t.field(id)
	if p < 0 {
		return 0, 0, nil
	}
	off, ok := fbU32(t.buf, p)
	if !ok {
		return 0, 0, errFB("vector field")
	}
	vp := int64(p) + int64(off)
	if vp > int64(len(t.buf))-4 {
		return 0, 0, errFB("vector offset")
	}
	cnt := binary.LittleEndian.Uint32(t.buf[vp:])
	start64 := vp + 4
	if int64(cnt) > (int64(len(t.buf))-start64)/int64(elemSize) {
		return 0, 0, errFB("vector length")
	}
	return int(start64), int(cnt), nil
}

// Arrow flatbuffer field ids and enum values used below.
const (
	fbMessageVersion    = 0
	fbMessageHeaderType = 1
	fbMessageHeader     = 2
	fbMessageBodyLength = 3

	fbRecordBatchLength      = 0
	fbRecordBatchNodes       = 1
	fbRecordBatchBuffers     = 2
	fbRecordBatchCompression = 3
	fbRecordBatchVariadic    = 4

	fbBodyCompressionCodec  = 0
	fbBodyCompressionMethod = 1

	fbHeaderRecordBatch = 3
	fbMetadataV4        = 3
	fbMetadataV5        = 4

	// Compression codecs of the Arrow format (CompressionType).
	codecLZ4Frame = 0
	codecZSTD     = 1
	codecNone     = -1
)

// fieldNode and bufferSpec mirror the FieldNode and Buffer structs.
type fieldNode struct{ length, nullCount int64 }
type bufferSpec struct{ offset, length int64 }

// recordBatchMeta is the decoded metadata of an Arrow RecordBatch message.
type recordBatchMeta struct {
	bodyLength int64
	length     int64
	codec      int // codecNone, codecLZ4Frame or codecZSTD
	buf        []byte
	nodesAt    int
	nNodes     int
	buffersAt  int
	nBuffers   int
}

func (m *recordBatchMeta) node(i int) fieldNode {
	p := m.nodesAt + 16*i
	return fieldNode{
		length:    int64(binary.LittleEndian.Uint64(m.buf[p:])),
		nullCount: int64(binary.LittleEndian.Uint64(m.buf[p+8:])),
	}
}

func (m *recordBatchMeta) buffer(i int) bufferSpec {
	p := m.buffersAt + 16*i
	return bufferSpec{
		offset: int64(binary.LittleEndian.Uint64(m.buf[p:])),
		length: int64(binary.LittleEndian.Uint64(m.buf[p+8:])),
	}
}

// parseRecordBatchMeta decodes a Message flatbuffer that must hold a RecordBatch.
func parseRecordBatchMeta(buf []byte) (recordBatchMeta, error) {
	var m recordBatchMeta
	msg, err := fbRoot(buf)
	if err != nil {
		return m, err
	}
	version, err := msg.int16Field(fbMessageVersion, 0)
	if err != nil {
		return m, err
	}
	if version != fbMetadataV4 && version != fbMetadataV5 {
		return m, fmt.Errorf("%w: Arrow metadata version %d (want V4 or V5)", ErrInvalidBatch, version+1)
	}
	htype, err := msg.uint8Field(fbMessageHeaderType, 0)
	if err != nil {
		return m, err
	}
	if htype != fbHeaderRecordBatch {
		return m, fmt.Errorf("%w: Arrow message type %d, want RecordBatch", ErrInvalidBatch, htype)
	}
	if m.bodyLength, err = msg.int64Field(fbMessageBodyLength, 0); err != nil {
		return m, err
	}
	rb, ok, err := msg.tableField(fbMessageHeader)
	if err != nil {
		return m, err
	}
	if !ok {
		return m, errFB("record batch header")
	}
	if m.length, err = rb.int64Field(fbRecordBatchLength, 0); err != nil {
		return m, err
	}
	if m.nodesAt, m.nNodes, err = rb.structVector(fbRecordBatchNodes, 16); err != nil {
		return m, err
	}
	if m.buffersAt, m.nBuffers, err = rb.structVector(fbRecordBatchBuffers, 16); err != nil {
		return m, err
	}
	if _, n, err := rb.structVector(fbRecordBatchVariadic, 8); err != nil {
		return m, err
	} else if n != 0 {
		return m, fmt.Errorf("%w: Arrow variadic buffers (view types) are not used by Fluss", ErrInvalidBatch)
	}
	m.codec = codecNone
	comp, ok, err := rb.tableField(fbRecordBatchCompression)
	if err != nil {
		return m, err
	}
	if ok {
		codec, err := comp.uint8Field(fbBodyCompressionCodec, codecLZ4Frame)
		if err != nil {
			return m, err
		}
		method, err := comp.uint8Field(fbBodyCompressionMethod, 0)
		if err != nil {
			return m, err
		}
		if method != 0 {
			return m, fmt.Errorf("%w: Arrow body compression method %d (only BUFFER)", ErrInvalidBatch, method)
		}
		if codec != codecLZ4Frame && codec != codecZSTD {
			return m, fmt.Errorf("%w: Arrow compression codec %d", ErrInvalidBatch, codec)
		}
		m.codec = int(codec)
	}
	m.buf = buf
	return m, nil
}
