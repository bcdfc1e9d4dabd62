package records

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Arrow buffer decompression with pooled codecs. arrow-go's ipc reader builds
// a new codec for every record batch; a fetch can carry hundreds of batches.

// Bounds on how much a compressed buffer can expand. A declared size above
// them cannot come from a real encoder, so it is rejected before allocating.
const (
	// LZ4 emits at most 255 bytes of match length per extra input byte.
	lz4MaxRatio = 256
	// A zstd RLE block spends 4 bytes on up to 128 KiB of output.
	zstdMaxRatio = 32 << 10
	// Slack for tiny buffers (frame headers dominate).
	ratioSlack = 1 << 10
)

var (
	zstdOnce sync.Once
	zstdDec  *zstd.Decoder
	zstdErr  error
)

// zstdDecoder returns the shared zstd decoder. DecodeAll is safe for
// concurrent use and needs no goroutines; the cap limit makes DecodeAll stop
// at cap(dst) instead of growing the output.
func zstdDecoder() (*zstd.Decoder, error) {
	zstdOnce.Do(func() {
		zstdDec, zstdErr = zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(0),
			zstd.WithDecodeAllCapLimit(true),
			zstd.WithDecoderMaxWindow(64<<20))
	})
	return zstdDec, zstdErr
}

type lz4State struct {
	r   *lz4.Reader
	src bytes.Reader
}

var lz4Pool = sync.Pool{New: func() any { return &lz4State{r: lz4.NewReader(nil)} }}

// maxExpansion is the largest uncompressed size a buffer of n compressed
// bytes can plausibly have under codec.
func maxExpansion(codec int, n int64) int64 {
	switch codec {
	case codecLZ4Frame:
		return n*lz4MaxRatio + ratioSlack
	default:
		return n*zstdMaxRatio + ratioSlack
	}
}

// decompressInto fills dst (of exactly the declared uncompressed size) from
// src, a compressed buffer without its 8-byte length prefix.
func decompressInto(codec int, dst, src []byte) error {
	switch codec {
	case codecLZ4Frame:
		st := lz4Pool.Get().(*lz4State)
		st.src.Reset(src)
		st.r.Reset(&st.src)
		_, err := io.ReadFull(st.r, dst)
		st.r.Reset(nil)
		st.src.Reset(nil)
		lz4Pool.Put(st)
		if err != nil {
			return fmt.Errorf("%w: LZ4_FRAME buffer: %v", ErrInvalidBatch, err)
		}
		return nil
	case codecZSTD:
		dec, err := zstdDecoder()
		if err != nil {
			return fmt.Errorf("fluss/records: zstd decoder: %w", err)
		}
		out, err := dec.DecodeAll(src, dst[:0])
		if err != nil {
			return fmt.Errorf("%w: ZSTD buffer: %v", ErrInvalidBatch, err)
		}
		if len(out) != len(dst) || (len(out) > 0 && &out[0] != &dst[0]) {
			return fmt.Errorf("%w: ZSTD buffer holds %d bytes, its prefix declares %d", ErrInvalidBatch, len(out), len(dst))
		}
		return nil
	}
	return fmt.Errorf("%w: compression codec %d", ErrInvalidBatch, codec)
}
