package records

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Layout of a magic-0 log batch header. All fields are little-endian.
const (
	offBaseOffset      = 0
	offLength          = 8
	offMagic           = 12
	offCommitTimestamp = 13
	offCRC             = 21
	offSchemaID        = 25
	offAttributes      = 27
	offLastOffsetDelta = 28
	offWriterID        = 32
	offBatchSequence   = 40
	offRecordCount     = 44

	// LogOverhead is the size of the fields before a batch's magic byte
	// (base offset and length); length counts the bytes after them.
	LogOverhead = 12
	// HeaderSize is the size of a magic-0 log batch header.
	HeaderSize = 48
	// CurrentMagic is the only log batch magic this package reads and writes.
	CurrentMagic = 0

	// NoWriterID is the writer id of a non-idempotent producer.
	NoWriterID int64 = -1
	// NoBatchSequence is the batch sequence of a non-idempotent producer.
	NoBatchSequence int32 = -1

	// attrAppendOnly is attributes bit 0: no change-type vector, all rows +A.
	attrAppendOnly = 0x01
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crc32c returns the CRC-32C (Castagnoli) of b.
func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// Errors reported by the batch decoder. They are wrapped with the offset of
// the batch; test them with errors.Is.
var (
	// ErrUnsupportedMagic: the batch uses a format version other than 0.
	ErrUnsupportedMagic = errors.New("fluss/records: unsupported log batch magic")
	// ErrCorruptBatch: the batch's CRC-32C does not match its bytes.
	ErrCorruptBatch = errors.New("fluss/records: log batch CRC mismatch")
	// ErrInvalidBatch: the batch's header or body is malformed.
	ErrInvalidBatch = errors.New("fluss/records: invalid log batch")
	// ErrTooLarge: the batch declares more data than the decoder accepts.
	ErrTooLarge = errors.New("fluss/records: log batch exceeds size limit")
)

// Header is the decoded header of a magic-0 log batch.
type Header struct {
	// BaseOffset is the log offset of the batch's first row (assigned by the server).
	BaseOffset int64
	// Length is the number of bytes after the Length field (batch size - 12).
	Length int32
	// Magic is the format version, 0.
	Magic int8
	// CommitTimestamp is the append time in epoch milliseconds, shared by all rows.
	CommitTimestamp int64
	// CRC is the stored CRC-32C of the bytes from SchemaID to the end of the batch.
	CRC uint32
	// SchemaID identifies the table schema the rows were written with.
	SchemaID int16
	// Attributes holds flags; bit 0 set means append-only (no change-type vector).
	Attributes int8
	// LastOffsetDelta is the offset of the last row relative to BaseOffset.
	LastOffsetDelta int32
	// WriterID is the idempotent producer id, or NoWriterID.
	WriterID int64
	// BatchSequence is the idempotent producer sequence, or NoBatchSequence.
	BatchSequence int32
	// RecordCount is the number of rows in the batch (0 for an empty batch).
	RecordCount int32
}

// AppendOnly reports whether the batch has no change-type vector (every row is +A).
func (h *Header) AppendOnly() bool { return h.Attributes&attrAppendOnly != 0 }

// Size is the total size of the batch in bytes.
func (h *Header) Size() int64 { return int64(h.Length) + LogOverhead }

// NextOffset is the offset that follows the batch: BaseOffset+LastOffsetDelta+1.
// Use it, not RecordCount, to advance: empty batches still consume an offset.
func (h *Header) NextOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) + 1 }

// ParseHeader decodes the header at the start of b. It checks the magic and
// that the declared length is sane, but not the CRC and not that b holds
// the whole batch.
func ParseHeader(b []byte) (Header, error) {
	var h Header
	if len(b) < LogOverhead+1 {
		return h, fmt.Errorf("%w: %d bytes, header needs %d", ErrInvalidBatch, len(b), HeaderSize)
	}
	le := binary.LittleEndian
	h.BaseOffset = int64(le.Uint64(b[offBaseOffset:]))
	h.Length = int32(le.Uint32(b[offLength:]))
	h.Magic = int8(b[offMagic])
	if h.Magic != CurrentMagic {
		return h, fmt.Errorf("%w %d at offset %d (only magic 0, written by Fluss 0.8 and 0.9, is supported)",
			ErrUnsupportedMagic, h.Magic, h.BaseOffset)
	}
	if len(b) < HeaderSize {
		return h, fmt.Errorf("%w: %d bytes, header needs %d", ErrInvalidBatch, len(b), HeaderSize)
	}
	if int64(h.Length)+LogOverhead < HeaderSize {
		return h, fmt.Errorf("%w: batch at offset %d declares length %d, less than its header",
			ErrInvalidBatch, h.BaseOffset, h.Length)
	}
	h.CommitTimestamp = int64(le.Uint64(b[offCommitTimestamp:]))
	h.CRC = le.Uint32(b[offCRC:])
	h.SchemaID = int16(le.Uint16(b[offSchemaID:]))
	h.Attributes = int8(b[offAttributes])
	h.LastOffsetDelta = int32(le.Uint32(b[offLastOffsetDelta:]))
	h.WriterID = int64(le.Uint64(b[offWriterID:]))
	h.BatchSequence = int32(le.Uint32(b[offBatchSequence:]))
	h.RecordCount = int32(le.Uint32(b[offRecordCount:]))
	if h.RecordCount < 0 {
		return h, fmt.Errorf("%w: batch at offset %d declares %d records", ErrInvalidBatch, h.BaseOffset, h.RecordCount)
	}
	if h.LastOffsetDelta < 0 {
		return h, fmt.Errorf("%w: batch at offset %d has last offset delta %d", ErrInvalidBatch, h.BaseOffset, h.LastOffsetDelta)
	}
	return h, nil
}

// putHeader writes h into b[:HeaderSize] (the CRC field as given).
func putHeader(b []byte, h *Header) {
	le := binary.LittleEndian
	le.PutUint64(b[offBaseOffset:], uint64(h.BaseOffset))
	le.PutUint32(b[offLength:], uint32(h.Length))
	b[offMagic] = byte(h.Magic)
	le.PutUint64(b[offCommitTimestamp:], uint64(h.CommitTimestamp))
	le.PutUint32(b[offCRC:], h.CRC)
	le.PutUint16(b[offSchemaID:], uint16(h.SchemaID))
	b[offAttributes] = byte(h.Attributes)
	le.PutUint32(b[offLastOffsetDelta:], uint32(h.LastOffsetDelta))
	le.PutUint64(b[offWriterID:], uint64(h.WriterID))
	le.PutUint32(b[offBatchSequence:], uint32(h.BatchSequence))
	le.PutUint32(b[offRecordCount:], uint32(h.RecordCount))
}

// RawBatch is one complete log batch inside a records buffer, not yet decoded.
type RawBatch struct {
	Header
	// Bytes is the whole batch, header included; it aliases the input.
	Bytes []byte
}

// CheckCRC verifies the stored CRC-32C against the batch bytes. Do not call
// it on batches the server projected: projection rewrites the body but not
// the CRC.
func (r *RawBatch) CheckCRC() error {
	if got := crc32c(r.Bytes[offSchemaID:]); got != r.CRC {
		return fmt.Errorf("%w: batch at offset %d stores %#08x, bytes give %#08x", ErrCorruptBatch, r.BaseOffset, r.CRC, got)
	}
	return nil
}

// BatchIterator walks the log batches concatenated in a records buffer
// without decoding their bodies. A trailing batch cut off by the server's
// byte limit is not an error: Next returns false and Truncated reports the
// number of bytes left over.
type BatchIterator struct {
	buf  []byte
	pos  int
	cur  RawBatch
	err  error
	tail int
}

// NewBatchIterator returns an iterator over the batches in records.
func NewBatchIterator(records []byte) *BatchIterator { return &BatchIterator{buf: records} }

// Next advances to the next complete batch. It returns false at the end of
// the buffer, at a truncated trailing batch, or on a malformed header (see Err).
func (it *BatchIterator) Next() bool {
	if it.err != nil {
		return false
	}
	rest := it.buf[it.pos:]
	if len(rest) < HeaderSize {
		// Too short for even a header: a truncated tail (or the end).
		it.tail = len(rest)
		return false
	}
	h, err := ParseHeader(rest)
	if err != nil {
		it.err = fmt.Errorf("records byte %d: %w", it.pos, err)
		return false
	}
	size := h.Size()
	if size > int64(len(rest)) {
		it.tail = len(rest)
		return false
	}
	it.cur = RawBatch{Header: h, Bytes: rest[:size:size]}
	it.pos += int(size)
	return true
}

// Batch returns the batch Next stopped at; its Bytes alias the input.
func (it *BatchIterator) Batch() *RawBatch { return &it.cur }

// Err returns the error that stopped the iteration, if any.
func (it *BatchIterator) Err() error { return it.err }

// Truncated returns the number of trailing bytes that did not form a complete
// batch (0 when the buffer ended on a batch boundary).
func (it *BatchIterator) Truncated() int { return it.tail }
