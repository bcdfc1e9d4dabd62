package sst

import (
	"encoding/binary"
	"math"
)

// decoder reads RocksDB's varints from a byte slice; the first failure sticks.
type decoder struct {
	b   []byte
	err error
}

// uvarint64 reads a varint64 (util/coding.h GetVarint64).
func (d *decoder) uvarint64(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = corruptf("bad varint (%s)", what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

// uvarint32 reads a varint32 (GetVarint32).
func (d *decoder) uvarint32(what string) uint32 {
	v := d.uvarint64(what)
	if v > math.MaxUint32 {
		d.err = corruptf("varint32 out of range (%s)", what)
		return 0
	}
	return uint32(v)
}

// varsigned64 reads a zigzag-encoded signed varint (GetVarsignedint64).
func (d *decoder) varsigned64(what string) int64 {
	u := d.uvarint64(what)
	return int64(u>>1) ^ -int64(u&1)
}

// bytes reads n raw bytes.
func (d *decoder) bytes(n uint64, what string) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = corruptf("%s overruns its block (%d bytes, %d left)", what, n, len(d.b))
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}
