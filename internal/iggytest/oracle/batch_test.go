package oracle

import (
	"fmt"

	"github.com/zeebo/xxh3"
)

// Batch header fields (src/batch.rs: BatchHeader): partition id u64,
// base offset u64, base timestamp u64, origin timestamp u64, length u64,
// checksum u64, message count u32; zero from 52 on.
const (
	batchBaseOffset = 8
	batchBaseTime   = 16
	batchLength     = 32
	batchChecksum   = 40
	batchCount      = 48
	batchReserved   = 52
)

// Message frame header fields (BatchMessageHeader): checksum u64, id u128,
// offset delta u32, timestamp delta u32, user headers length u32, payload
// length u32, reserved u64; then the payload, then the user headers.
const (
	frameHeadersLen = 32
	framePayloadLen = 36
	frameReserved   = 40
)

// batchFrames returns where each message frame of batch (header included)
// starts, checking that the frames tile the batch and match its count.
func batchFrames(batch []byte) ([]int, error) {
	if len(batch) < batchHeaderBytes {
		return nil, fmt.Errorf("a batch of %d bytes has no 256-byte header", len(batch))
	}
	if n := le.Uint64(batch[batchLength:]); n != uint64(len(batch)) {
		return nil, fmt.Errorf("batch.length says %d bytes, the batch has %d", n, len(batch))
	}
	for _, b := range batch[batchReserved:batchHeaderBytes] {
		if b != 0 {
			return nil, fmt.Errorf("batch header bytes %d..256 are not zero", batchReserved)
		}
	}
	var starts []int
	for p := batchHeaderBytes; p < len(batch); {
		if len(batch)-p < frameHeaderBytes {
			return nil, fmt.Errorf("a message header at batch byte %d runs past the batch", p)
		}
		if le.Uint64(batch[p+frameReserved:]) != 0 {
			return nil, fmt.Errorf("message %d: reserved bytes are not zero", len(starts))
		}
		end := p + frameHeaderBytes + int(le.Uint32(batch[p+framePayloadLen:])) + int(le.Uint32(batch[p+frameHeadersLen:]))
		if end > len(batch) || end < p {
			return nil, fmt.Errorf("message %d at batch byte %d runs past the batch", len(starts), p)
		}
		starts = append(starts, p)
		p = end
	}
	if n := le.Uint32(batch[batchCount:]); int(n) != len(starts) {
		return nil, fmt.Errorf("batch.message_count says %d, the batch holds %d frames", n, len(starts))
	}
	return starts, nil
}

// batchSum is the batch checksum: XXH3-64 (seed 0) over header bytes
// 0..40 and 48..52, then every frame's checksum (calculate_batch_checksum).
func batchSum(batch []byte, starts []int) uint64 {
	h := xxh3.New()
	_, _ = h.Write(batch[:batchChecksum])
	_, _ = h.Write(batch[batchCount : batchCount+4])
	for _, p := range starts {
		_, _ = h.Write(batch[p : p+8])
	}
	return h.Sum64()
}

// checkSums verifies every frame checksum (XXH3-64 over frame bytes 8..end)
// and the batch checksum of batch.
func checkSums(batch []byte) error {
	starts, err := batchFrames(batch)
	if err != nil {
		return err
	}
	for i, p := range starts {
		end := len(batch)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		if got, want := le.Uint64(batch[p:]), xxh3.Hash(batch[p+8:end]); got != want {
			return fmt.Errorf("message %d: checksum %#x, XXH3 of its bytes is %#x", i, got, want)
		}
	}
	if got, want := le.Uint64(batch[batchChecksum:]), batchSum(batch, starts); got != want {
		return fmt.Errorf("batch.checksum %#x, XXH3 of the header fields and frame checksums is %#x", got, want)
	}
	return nil
}

// batchOf returns the batch (header and frames) of a send request.
func batchOf(r *request) []byte {
	for _, f := range r.fields {
		if f.name == "batch.partition_id" {
			return r.raw[f.off:]
		}
	}
	return nil
}
