// Package sst reads the RocksDB block-based table files (SST files) of Fluss
// KV snapshots, without cgo.
//
// It handles what Fluss 0.9 writes (RocksDB 6.20 through frocksdb): footer
// format versions 2 to 5 with the block-based table magic, CRC32c block
// checksums, blocks stored raw or compressed with LZ4, LZ4HC, ZSTD, Snappy or
// zlib (raw deflate), the bytewise comparator, and a binary-search index whose
// block handles may be delta encoded (format version 4 and later). Filter
// blocks are skipped: a full scan does not need them. Anything else (range
// deletions, partitioned or hash indexes, compression dictionaries, other
// comparators, newer footers) fails with an *Error that names the file and the
// offset of the block at fault and wraps ErrUnsupported; damaged input fails
// with ErrCorrupt.
//
// Open reads a table's footer, metaindex, properties and index block; Iter
// walks its entries (internal keys) one data block at a time; Merge combines
// the tables of one RocksDB checkpoint into the live user keys and values.
package sst
