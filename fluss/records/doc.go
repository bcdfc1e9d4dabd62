// Package records reads and writes the record batches that Apache Fluss stores
// in its logs and accepts in its write requests.
//
// A log batch (all fields little-endian) is a header, an optional
// change-type vector (one byte per row, absent for append-only batches) and
// one Arrow IPC RecordBatch message without its schema: the schema comes from
// the table metadata, looked up by the batch's schema id. Arrow buffer
// compression (LZ4_FRAME, ZSTD) is supported both ways. The header is that
// of magic 0 (48 bytes, every Fluss release), magic 1 (Fluss 1.0: 52 bytes,
// then column statistics, which the decoder skips) or magic 2 (Fluss 1.0:
// 56 bytes with a leader epoch, then statistics); see header.go for the
// layouts and for what magic 1 meant before Fluss 1.0. The encoders write
// magic 0.
//
// Tables with table.log.format INDEXED or COMPACTED store one record per
// row instead (int32 length, change-type byte, IndexedRow or CompactedRow,
// no change-type vector); [WithLogFormat] makes a Decoder read them into
// the same Arrow records, projection and change types as ARROW batches of
// the same rows. The encoders write ARROW batches only.
//
// # Decoding
//
// [Decoder] turns the records bytes of one bucket of a fetch response into
// [Batch] values. It walks the concatenated batches, stops quietly at a
// truncated trailing batch, checks CRC-32C (unless the server projected the
// columns, which invalidates it), skips rows below the fetch offset and
// steps over empty batches while still advancing the next fetch offset.
//
// The Arrow body is loaded by this package, not by arrow-go's ipc.Reader: the
// message metadata is read with a bounds-checked flatbuffer walker, every
// buffer is checked against what its column needs before an array is built,
// and decompression reuses pooled codecs with a limit on the declared sizes.
// Malformed input yields an error, never a panic or an allocation beyond
// [WithMaxBatchBytes].
//
// # Ownership
//
// Uncompressed buffers are not copied: the arrays of a decoded record point
// into the byte slice given to the decoder. That slice must therefore stay
// unmodified while any record decoded from it (or any slice of it) is alive;
// the Go garbage collector keeps it reachable. Decompressed buffers come from
// the decoder's allocator. Every [Batch] must be released with
// [Batch.Release]; a test on memory.CheckedAllocator shows nothing leaks.
//
// # Encoding
//
// [EncodeLogBatch] builds a log batch from an arrow.RecordBatch, the format
// the ProduceLog request carries, and [KVBatchBuilder] builds the KV batch
// of a PutKv request from rows encoded as CompactedRow.
package records
