package records

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Compression is the Arrow buffer compression of a log batch, as set by a
// table's table.log.arrow.compression.type property.
type Compression int8

// The Arrow compression codecs Fluss supports.
const (
	CompressionNone Compression = iota
	CompressionLZ4Frame
	CompressionZSTD
)

// String returns the Fluss property value: "NONE", "LZ4_FRAME" or "ZSTD".
func (c Compression) String() string {
	switch c {
	case CompressionNone:
		return "NONE"
	case CompressionLZ4Frame:
		return "LZ4_FRAME"
	case CompressionZSTD:
		return "ZSTD"
	}
	return fmt.Sprintf("Compression(%d)", int8(c))
}

// ParseCompression parses a table.log.arrow.compression.type value
// (case-insensitive). The empty string is Fluss's default, ZSTD.
func ParseCompression(s string) (Compression, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "NONE":
		return CompressionNone, nil
	case "LZ4_FRAME":
		return CompressionLZ4Frame, nil
	case "ZSTD", "":
		return CompressionZSTD, nil
	}
	return 0, fmt.Errorf("fluss/records: unknown Arrow compression %q (want NONE, LZ4_FRAME or ZSTD)", s)
}

// WriterState identifies an idempotent producer's batch.
type WriterState struct {
	WriterID      int64
	BatchSequence int32
}

// LogBatchOptions describes the log batch EncodeLogBatch builds.
type LogBatchOptions struct {
	// SchemaID is the table schema the record was built for.
	SchemaID int16
	// Compression must be the table's codec: the server copies buffers
	// as written and projected reads declare the table's codec.
	Compression Compression
	// ChangeTypes, when not nil, has one entry per row and is written as the
	// change-type vector (attributes bit 0 clear). nil writes an append-only
	// batch, what producers to log tables send.
	ChangeTypes []ChangeType
	// Writer sets the idempotence fields; nil writes NoWriterID and
	// NoBatchSequence.
	Writer *WriterState
	// BaseOffset and CommitTimestamp are assigned by the server; producers
	// leave them 0. They are here to build fixtures.
	BaseOffset, CommitTimestamp int64
	// Allocator is used for Arrow's temporary buffers. Default: memory.DefaultAllocator.
	Allocator memory.Allocator
}

// EncodeLogBatch is part of the write path, test and benchmark support (the
// binary only decodes). It returns a magic-0 log batch holding rec, ready for a
// ProduceLog request: LE header with CRC-32C, optional change-type vector,
// then one Arrow IPC RecordBatch message (no schema message) whose buffers
// are compressed with opts.Compression. ZSTD uses the encoder's default
// level (3, Fluss's default too).
func EncodeLogBatch(rec arrow.RecordBatch, opts LogBatchOptions) ([]byte, error) {
	return AppendLogBatch(nil, rec, opts)
}

// AppendLogBatch is EncodeLogBatch appending to dst.
func AppendLogBatch(dst []byte, rec arrow.RecordBatch, opts LogBatchOptions) ([]byte, error) {
	h, err := newLogHeader(rec.NumRows(), &opts)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	dst = append(dst, make([]byte, HeaderSize)...)
	if n := rec.NumRows(); n > 0 {
		for _, c := range opts.ChangeTypes {
			dst = append(dst, byte(c))
		}
		if dst, err = appendArrowBody(dst, rec, &opts); err != nil {
			return dst[:start], err
		}
	}
	return sealLogBatch(dst, start, &h)
}

// newLogHeader checks the options of a batch of n rows and returns its
// header but for Length and CRC.
func newLogHeader(n int64, opts *LogBatchOptions) (Header, error) {
	if n > maxArrayLength {
		return Header{}, fmt.Errorf("fluss/records: %d rows do not fit a log batch", n)
	}
	if opts.ChangeTypes != nil && int64(len(opts.ChangeTypes)) != n {
		return Header{}, fmt.Errorf("fluss/records: %d change types for %d rows", len(opts.ChangeTypes), n)
	}
	for i, c := range opts.ChangeTypes {
		if !c.Valid() {
			return Header{}, fmt.Errorf("fluss/records: row %d: invalid change type %d", i, c)
		}
	}
	h := Header{
		BaseOffset:      opts.BaseOffset,
		CommitTimestamp: opts.CommitTimestamp,
		SchemaID:        opts.SchemaID,
		WriterID:        NoWriterID,
		BatchSequence:   NoBatchSequence,
		RecordCount:     int32(n),
	}
	if n > 0 {
		h.LastOffsetDelta = int32(n - 1)
	}
	if opts.Writer != nil {
		h.WriterID, h.BatchSequence = opts.Writer.WriterID, opts.Writer.BatchSequence
	}
	if opts.ChangeTypes == nil {
		h.Attributes = attrAppendOnly
	}
	return h, nil
}

// sealLogBatch writes the header h of the batch at dst[start:] (its length
// and CRC-32C from the bytes after it).
func sealLogBatch(dst []byte, start int, h *Header) ([]byte, error) {
	size := len(dst) - start
	if int64(size)-LogOverhead > 1<<31-1 {
		return dst[:start], fmt.Errorf("fluss/records: log batch of %d bytes is too large", size)
	}
	h.Length = int32(size - LogOverhead)
	b := dst[start:]
	putHeader(b, h)
	binary.LittleEndian.PutUint32(b[offCRC:], crc32c(b[offSchemaID:]))
	return dst, nil
}

type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}
