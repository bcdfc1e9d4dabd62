package sst

import (
	"encoding/binary"
	"hash/crc32"
	"io"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// unmaskCRC undoes RocksDB's crc32c::Mask (util/crc32c.h).
func unmaskCRC(m uint32) uint32 {
	r := m - 0xa282ead8
	return r>>17 | r<<15
}

// readBlock reads the block at h with its trailer, verifies the checksum
// (over the contents and the compression type byte) and returns the
// decompressed contents. Errors are not yet wrapped with the file name.
func (t *Table) readBlock(h handle) ([]byte, error) {
	end := h.offset + h.size + trailerLen
	if h.size > maxBlockLen || end < h.offset || end > uint64(t.size)-footerLen {
		return nil, corruptf("block handle (offset %d, size %d) outside the file (%d bytes)",
			h.offset, h.size, t.size)
	}
	buf := make([]byte, h.size+trailerLen)
	if n, err := t.r.ReadAt(buf, int64(h.offset)); n != len(buf) {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	typ := buf[h.size]
	if t.footer.checksum == checksumCRC && !t.skipChecksums {
		want := unmaskCRC(binary.LittleEndian.Uint32(buf[h.size+1:]))
		if got := crc32.Checksum(buf[:h.size+1], castagnoli); got != want {
			return nil, corruptf("checksum mismatch (stored %#08x, computed %#08x)", want, got)
		}
	}
	return decompress(typ, buf[:h.size])
}

// entries returns the entry region of a block (what precedes its restart
// array) and checks the block footer (table/block_based/block.cc and
// data_block_hash_index.h: the top bit of the last word marks a hash index
// between the restart array and that word).
func entries(b []byte) ([]byte, error) {
	if len(b) < 4 {
		return nil, corruptf("block of %d bytes", len(b))
	}
	end := uint64(len(b)) - 4
	word := binary.LittleEndian.Uint32(b[end:])
	restarts := uint64(word & 0x7fffffff)
	if word>>31 == 1 {
		if end < 2 {
			return nil, corruptf("block too short for its hash index")
		}
		buckets := uint64(binary.LittleEndian.Uint16(b[end-2:]))
		if buckets+2 > end {
			return nil, corruptf("hash index of %d buckets overruns the block", buckets)
		}
		end -= buckets + 2
	}
	if restarts*4 > end {
		return nil, corruptf("%d restart points overrun a block of %d bytes", restarts, len(b))
	}
	end -= restarts * 4
	if restarts > 0 && binary.LittleEndian.Uint32(b[end:]) != 0 {
		return nil, corruptf("first restart point is not 0")
	}
	return b[:end], nil
}

// blockIter walks the entries of one block: keys are prefix compressed
// (shared bytes of the previous key, then the rest). Values are
// length-prefixed, except in an index block with delta-encoded values,
// where the caller decodes them (see indexIter).
type blockIter struct {
	rest     []byte // entries not yet read
	key      []byte // current key, owned
	value    []byte // current value (a slice of the block)
	noValLen bool   // index block with delta-encoded values
}

func (it *blockIter) reset(entries []byte, noValLen bool) {
	it.rest, it.key, it.value, it.noValLen = entries, it.key[:0], nil, noValLen
}

// next reads the next entry; false at the end of the block or on error.
// It returns the number of shared key bytes (index values depend on it).
func (it *blockIter) next() (shared uint32, ok bool, err error) {
	if len(it.rest) == 0 {
		return 0, false, nil
	}
	d := decoder{b: it.rest}
	shared = d.uvarint32("shared key length")
	nonShared := d.uvarint32("key length")
	var valLen uint32
	if !it.noValLen {
		valLen = d.uvarint32("value length")
	}
	if d.err == nil && int(shared) > len(it.key) {
		d.err = corruptf("entry shares %d bytes of a %d-byte key", shared, len(it.key))
	}
	delta := d.bytes(uint64(nonShared), "key")
	if it.noValLen {
		it.value = d.b // the caller consumes it through consume
	} else {
		it.value = d.bytes(uint64(valLen), "value")
	}
	if d.err != nil {
		return 0, false, d.err
	}
	it.key = append(it.key[:shared], delta...)
	it.rest = d.b
	return shared, true, nil
}

// consume drops n bytes of a value decoded by the caller (noValLen blocks).
func (it *blockIter) consume(n int) {
	it.rest = it.rest[n:]
}
