package records

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Log batch headers. All fields are little-endian. Fluss 1.0 knows three
// magics (LogRecordBatchFormat in apache/fluss main; LOG_MAGIC_VALUE_V* and
// record_batch_header_size in fluss-rs 1.0.0 src/record/log_record_batch.rs):
//
//	field              V0   V1   V2
//	BaseOffset          0    0    0
//	Length              8    8    8
//	Magic              12   12   12
//	CommitTimestamp    13   13   13
//	LeaderEpoch         -    -   21
//	CRC                21   21   25
//	SchemaID           25   25   29
//	Attributes         27   27   31
//	LastOffsetDelta    28   28   32
//	WriterID           32   32   36
//	BatchSequence      40   40   44
//	RecordCount        44   44   48
//	StatisticsLength    -   48   52
//	header size        48   52   56
//
// V1 and V2 follow the header with StatisticsLength bytes of column
// statistics (STATISTICS_VERSION 1: min, max and null count per collected
// column), then the records; V0 starts its records right after the header.
// The CRC-32C covers SchemaID to the end of the batch, statistics included.
// Fluss 1.0 writes V1 for tables with table.statistics.columns and V0
// otherwise; V2 is defined and read but written by no default path. A
// server-projected V1 batch keeps magic 1 with StatisticsLength 0.
//
// Magic 1 meant something else in Fluss 0.7 to 0.9.1: V0 plus a leader epoch
// at 21 (the V2 layout without StatisticsLength). No released writer emitted
// it (CURRENT_LOG_MAGIC_VALUE stayed V0 "for compatibility" and nothing set
// the epoch), whereas 1.0 writes its V1 whenever statistics are on, so this
// package reads magic 1 with the 1.0 layout. A batch in the old layout fails
// the header or CRC checks, with an error that says it matches the old layout.

// The V0 field offsets (those of V1 too, which only appends StatisticsLength).
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
	// HeaderSize is the size of a magic-0 log batch header, the smallest
	// header. Use Header.RecordsOffset for where a batch's records start.
	HeaderSize = 48
	// CurrentMagic is the magic this package writes (as Fluss 1.0 does for
	// tables without column statistics). It reads magics 0, 1 and 2.
	CurrentMagic = 0

	// NoWriterID is the writer id of a non-idempotent producer.
	NoWriterID int64 = -1
	// NoBatchSequence is the batch sequence of a non-idempotent producer.
	NoBatchSequence int32 = -1
	// NoLeaderEpoch is the LeaderEpoch of batches whose magic has none (0, 1).
	NoLeaderEpoch int32 = -1

	// attrAppendOnly is attributes bit 0: no change-type vector, all rows +A.
	attrAppendOnly = 0x01
)

// headerLayout is where one magic puts its header fields; -1: no such field.
type headerLayout struct {
	crc, schemaID, attributes, lastOffsetDelta int
	writerID, batchSequence, recordCount       int
	leaderEpoch, statsLength, size             int
}

// headerLayouts is indexed by magic.
var headerLayouts = [...]headerLayout{
	{crc: offCRC, schemaID: offSchemaID, attributes: offAttributes, lastOffsetDelta: offLastOffsetDelta,
		writerID: offWriterID, batchSequence: offBatchSequence, recordCount: offRecordCount,
		leaderEpoch: -1, statsLength: -1, size: HeaderSize},
	{crc: offCRC, schemaID: offSchemaID, attributes: offAttributes, lastOffsetDelta: offLastOffsetDelta,
		writerID: offWriterID, batchSequence: offBatchSequence, recordCount: offRecordCount,
		leaderEpoch: -1, statsLength: 48, size: 52},
	{crc: 25, schemaID: 29, attributes: 31, lastOffsetDelta: 32, writerID: 36, batchSequence: 44, recordCount: 48,
		leaderEpoch: 21, statsLength: 52, size: 56},
}

// headerLayoutOf returns the layout of magic, nil for a magic this package does
// not know.
func headerLayoutOf(magic int8) *headerLayout {
	if magic < 0 || int(magic) >= len(headerLayouts) {
		return nil
	}
	return &headerLayouts[magic]
}

// headerSize is the header size of magic, 0 for a magic this package does
// not know.
func headerSize(magic int8) int {
	if l := headerLayoutOf(magic); l != nil {
		return l.size
	}
	return 0
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crc32c returns the CRC-32C (Castagnoli) of b.
func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// Errors reported by the batch decoder. They are wrapped with the offset of
// the batch; test them with errors.Is.
var (
	// ErrUnsupportedMagic: the batch uses a format version other than 0, 1 or 2.
	ErrUnsupportedMagic = errors.New("fluss/records: unsupported log batch magic")
	// ErrCorruptBatch: the batch's CRC-32C does not match its bytes.
	ErrCorruptBatch = errors.New("fluss/records: log batch CRC mismatch")
	// ErrInvalidBatch: the batch's header or body is malformed.
	ErrInvalidBatch = errors.New("fluss/records: invalid log batch")
	// ErrTooLarge: the batch declares more data than the decoder accepts.
	ErrTooLarge = errors.New("fluss/records: log batch exceeds size limit")
)

// Header is the decoded header of a log batch.
type Header struct {
	// BaseOffset is the log offset of the batch's first row (assigned by the server).
	BaseOffset int64
	// Length is the number of bytes after the Length field (batch size - 12).
	Length int32
	// Magic is the format version: 0, 1 or 2.
	Magic int8
	// CommitTimestamp is the append time in epoch milliseconds, shared by all rows.
	CommitTimestamp int64
	// LeaderEpoch is the epoch of the leader that appended the batch (magic
	// 2), NoLeaderEpoch for magics 0 and 1.
	LeaderEpoch int32
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
	// StatisticsLength is the size of the column statistics between the
	// header and the records (magics 1 and 2; 0 for magic 0 and for
	// server-projected batches). This package does not interpret them.
	StatisticsLength int32
}

// AppendOnly reports whether the batch has no change-type vector (every row is +A).
func (h *Header) AppendOnly() bool { return h.Attributes&attrAppendOnly != 0 }

// Size is the total size of the batch in bytes.
func (h *Header) Size() int64 { return int64(h.Length) + LogOverhead }

// NextOffset is the offset that follows the batch: BaseOffset+LastOffsetDelta+1.
// Use it, not RecordCount, to advance: empty batches still consume an offset.
func (h *Header) NextOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) + 1 }

// HeaderLen is the size of the batch's fixed header: 48, 52 or 56 bytes for
// magic 0, 1 or 2 (0 for a magic this package does not know).
func (h *Header) HeaderLen() int { return headerSize(h.Magic) }

// RecordsOffset is where the batch's records start, after the header and
// the statistics: the change-type vector (if any) and the Arrow message,
// or the first row-format record.
func (h *Header) RecordsOffset() int { return h.HeaderLen() + int(h.StatisticsLength) }

// what names the batch in errors: "batch at offset 7 (magic 1)".
func (h *Header) what() string {
	return fmt.Sprintf("batch at offset %d (magic %d)", h.BaseOffset, h.Magic)
}

// ParseHeader decodes the header at the start of b. It checks the magic and
// that the declared length and statistics length are sane, but not the CRC
// and not that b holds the whole batch.
func ParseHeader(b []byte) (Header, error) {
	h, err := parseHeader(b)
	if err != nil && h.Magic == 1 && oldMagic1(b, h.Size()) {
		err = fmt.Errorf("%w%s", err, oldMagic1Hint)
	}
	return h, err
}

func parseHeader(b []byte) (Header, error) {
	var h Header
	if len(b) < LogOverhead+1 {
		return h, fmt.Errorf("%w: %d bytes, a header needs at least %d", ErrInvalidBatch, len(b), HeaderSize)
	}
	le := binary.LittleEndian
	h.BaseOffset = int64(le.Uint64(b[offBaseOffset:]))
	h.Length = int32(le.Uint32(b[offLength:]))
	h.Magic = int8(b[offMagic])
	l := headerLayoutOf(h.Magic)
	if l == nil {
		return h, fmt.Errorf("%w %d at offset %d (this reader knows magics 0, 1 and 2, those of Fluss up to 1.0)",
			ErrUnsupportedMagic, h.Magic, h.BaseOffset)
	}
	if len(b) < l.size {
		return h, fmt.Errorf("%w: %s: %d bytes, its header needs %d", ErrInvalidBatch, h.what(), len(b), l.size)
	}
	if h.Size() < int64(l.size) {
		return h, fmt.Errorf("%w: %s declares length %d, less than its %d-byte header", ErrInvalidBatch, h.what(), h.Length, l.size)
	}
	h.CommitTimestamp = int64(le.Uint64(b[offCommitTimestamp:]))
	h.LeaderEpoch = NoLeaderEpoch
	if l.leaderEpoch >= 0 {
		h.LeaderEpoch = int32(le.Uint32(b[l.leaderEpoch:]))
	}
	h.CRC = le.Uint32(b[l.crc:])
	h.SchemaID = int16(le.Uint16(b[l.schemaID:]))
	h.Attributes = int8(b[l.attributes])
	h.LastOffsetDelta = int32(le.Uint32(b[l.lastOffsetDelta:]))
	h.WriterID = int64(le.Uint64(b[l.writerID:]))
	h.BatchSequence = int32(le.Uint32(b[l.batchSequence:]))
	h.RecordCount = int32(le.Uint32(b[l.recordCount:]))
	if h.RecordCount < 0 {
		return h, fmt.Errorf("%w: %s declares %d records (byte %d)", ErrInvalidBatch, h.what(), h.RecordCount, l.recordCount)
	}
	if h.LastOffsetDelta < 0 {
		return h, fmt.Errorf("%w: %s has last offset delta %d (byte %d)", ErrInvalidBatch, h.what(), h.LastOffsetDelta, l.lastOffsetDelta)
	}
	if l.statsLength >= 0 {
		h.StatisticsLength = int32(le.Uint32(b[l.statsLength:]))
		if room := h.Size() - int64(l.size); h.StatisticsLength < 0 || int64(h.StatisticsLength) > room {
			return h, fmt.Errorf("%w: %s: statistics length %d (byte %d) with %d bytes after the %d-byte header",
				ErrInvalidBatch, h.what(), h.StatisticsLength, l.statsLength, room, l.size)
		}
	}
	return h, nil
}

// putHeader writes h into b[:HeaderSize] in the magic-0 layout (the CRC
// field as given).
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

// checkFrame checks what DecodeBatch relies on in a batch that may not come
// from BatchIterator: a known magic, Bytes as long as the header says, and
// the header and statistics inside them.
func (r *RawBatch) checkFrame() error {
	l := headerLayoutOf(r.Magic)
	switch {
	case l == nil:
		return fmt.Errorf("%w %d at offset %d", ErrUnsupportedMagic, r.Magic, r.BaseOffset)
	case int64(len(r.Bytes)) != r.Size():
		return fmt.Errorf("%w: %s: %d bytes, header says %d", ErrInvalidBatch, r.what(), len(r.Bytes), r.Size())
	case r.StatisticsLength < 0 || len(r.Bytes) < r.RecordsOffset():
		return fmt.Errorf("%w: %s: %d bytes do not hold its %d-byte header and %d bytes of statistics",
			ErrInvalidBatch, r.what(), len(r.Bytes), l.size, r.StatisticsLength)
	}
	return nil
}

// CheckCRC verifies the stored CRC-32C against the batch bytes. Do not call
// it on batches the server projected: projection rewrites the body but not
// the CRC.
func (r *RawBatch) CheckCRC() error {
	l := headerLayoutOf(r.Magic)
	if l == nil || len(r.Bytes) < l.size {
		return fmt.Errorf("%w: %s: %d bytes, no header to check", ErrInvalidBatch, r.what(), len(r.Bytes))
	}
	got := crc32c(r.Bytes[l.schemaID:])
	if got == r.CRC {
		return nil
	}
	err := fmt.Errorf("%w: %s stores %#08x at byte %d, bytes %d to %d give %#08x",
		ErrCorruptBatch, r.what(), r.CRC, l.crc, l.schemaID, len(r.Bytes), got)
	if r.Magic == 1 && oldMagic1(r.Bytes, r.Size()) {
		err = fmt.Errorf("%w%s", err, oldMagic1Hint)
	}
	return err
}

// oldMagic1Hint ends the error about a batch oldMagic1 recognises.
const oldMagic1Hint = "; it is a batch in the magic-1 layout of Fluss 0.7 to 0.9 (leader epoch at byte 21), " +
	"which no released Fluss wrote and this reader does not read"

// oldMagic1 reports whether b starts with a whole batch of size bytes whose
// CRC matches the pre-1.0 magic-1 layout: the CRC at byte 25 over the bytes
// from 29 on.
func oldMagic1(b []byte, size int64) bool {
	return size >= 52 && int64(len(b)) >= size && binary.LittleEndian.Uint32(b[25:]) == crc32c(b[29:size])
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
	if len(rest) < HeaderSize || len(rest) < headerSize(int8(rest[offMagic])) {
		// Too short for its header: a truncated tail (or the end).
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
