package fluss

import (
	"encoding/binary"
	"math/bits"
)

// BucketOf returns the bucket Fluss assigns to a row whose bucket key
// encodes to key (the bucket-key columns in CompactedRow encoding without
// null bitmap, as records.RowEncoder.AppendKey writes them): a Murmur3-32
// hash of the key (seed 42; 4-byte little-endian words, each tail byte
// mixed in alone as a sign-extended int), mixed once more and made
// non-negative, modulo numBuckets. This is Fluss's default bucketing
// function (fluss-protocol.md §6.3).
func BucketOf(key []byte, numBuckets int32) int32 {
	if numBuckets <= 1 {
		return 0
	}
	h := int32(murmurBytes(key))
	return murmurInt(h) % numBuckets
}

const (
	murmurC1   = 0xcc9e2d51
	murmurC2   = 0x1b873593
	murmurSeed = 42
)

func murmurMixK1(k uint32) uint32 {
	k *= murmurC1
	k = bits.RotateLeft32(k, 15)
	return k * murmurC2
}

func murmurMixH1(h, k uint32) uint32 {
	h ^= k
	h = bits.RotateLeft32(h, 13)
	return h*5 + 0xe6546b64
}

func murmurFmix(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// murmurBytes hashes b: whole 4-byte words (little-endian), then every
// remaining byte on its own, sign-extended, then the length.
func murmurBytes(b []byte) uint32 {
	h := uint32(murmurSeed)
	n := len(b) - len(b)%4
	for i := 0; i < n; i += 4 {
		h = murmurMixH1(h, murmurMixK1(binary.LittleEndian.Uint32(b[i:])))
	}
	for i := n; i < len(b); i++ {
		h = murmurMixH1(h, murmurMixK1(uint32(int32(int8(b[i])))))
	}
	return murmurFmix(h ^ uint32(len(b)))
}

// murmurInt is one more Murmur3 round over a 4-byte value, made
// non-negative (0 for the minimum int32).
func murmurInt(code int32) int32 {
	h := murmurMixK1(uint32(code))
	h = bits.RotateLeft32(h, 13)
	h = h*5 + 0xe6546b64
	h = murmurFmix(h ^ 4)
	v := int32(h)
	if v >= 0 {
		return v
	}
	if v == -1<<31 {
		return 0
	}
	return -v
}
