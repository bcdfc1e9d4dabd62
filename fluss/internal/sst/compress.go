package sst

import (
	"bytes"
	"compress/flate"
	"io"
	"sync"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Compression types of the block trailer (include/rocksdb/compression_type.h).
const (
	noCompression     = 0x0
	snappyCompression = 0x1
	zlibCompression   = 0x2
	lz4Compression    = 0x4
	lz4hcCompression  = 0x5
	zstdCompression   = 0x7
	zstdNotFinal      = 0x40
)

// maxBlockLen bounds a block's decompressed size: RocksDB's blocks are a few
// KiB (a single huge value makes a larger one); this stops corrupt sizes.
const maxBlockLen = 256 << 20

var (
	zstdOnce sync.Once
	zstdDec  *zstd.Decoder
	zstdErr  error
)

// zstdDecoder is one shared decoder (DecodeAll may run concurrently).
func zstdDecoder() (*zstd.Decoder, error) {
	zstdOnce.Do(func() {
		zstdDec, zstdErr = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxMemory(maxBlockLen))
	})
	return zstdDec, zstdErr
}

// decompress returns the contents of a block stored with compression type
// typ. LZ4, ZSTD and zlib blocks start with the decompressed size as a
// varint32 (format versions 2 and later); Snappy carries its own.
func decompress(typ byte, src []byte) ([]byte, error) {
	switch typ {
	case noCompression:
		return src, nil
	case snappyCompression:
		return unsnappy(src)
	}
	d := decoder{b: src}
	n := d.uvarint32("decompressed size")
	if d.err != nil {
		return nil, d.err
	}
	if n > maxBlockLen {
		return nil, corruptf("decompressed size %d over %d", n, maxBlockLen)
	}
	switch typ {
	case lz4Compression, lz4hcCompression:
		return unlz4(d.b, int(n))
	case zstdCompression, zstdNotFinal:
		return unzstd(d.b, int(n))
	case zlibCompression:
		return unzlib(d.b, int(n))
	}
	return nil, unsupportedf("compression type %#x", typ)
}

func unsnappy(src []byte) ([]byte, error) {
	n, err := snappy.DecodedLen(src)
	if err != nil || n > maxBlockLen || n > 32*len(src)+64 {
		return nil, corruptf("bad snappy block header")
	}
	out, err := snappy.Decode(make([]byte, n), src)
	if err != nil {
		return nil, corruptf("snappy: %v", err)
	}
	return out, nil
}

func unlz4(src []byte, n int) ([]byte, error) {
	// An LZ4 sequence expands at most 255 times (plus a short tail); a larger
	// claimed size is damage, and must not be allocated.
	if n > 255*len(src)+16 {
		return nil, corruptf("lz4 size %d impossible for %d compressed bytes", n, len(src))
	}
	out := make([]byte, n)
	got, err := lz4.UncompressBlock(src, out)
	if err != nil || got != n {
		return nil, corruptf("lz4: %d of %d bytes (%v)", got, n, err)
	}
	return out, nil
}

func unzstd(src []byte, n int) ([]byte, error) {
	dec, err := zstdDecoder()
	if err != nil {
		return nil, err
	}
	out, err := dec.DecodeAll(src, nil)
	if err != nil || len(out) != n {
		return nil, corruptf("zstd: %d of %d bytes (%v)", len(out), n, err)
	}
	return out, nil
}

// unzlib reads raw deflate (RocksDB's default window_bits=-14).
func unzlib(src []byte, n int) ([]byte, error) {
	r := flate.NewReader(bytes.NewReader(src))
	defer r.Close()
	out, err := io.ReadAll(io.LimitReader(r, int64(n)+1))
	if err != nil || len(out) != n {
		return nil, corruptf("zlib: %d of %d bytes (%v)", len(out), n, err)
	}
	return out, nil
}
