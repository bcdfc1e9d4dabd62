package sst

// indexIter walks the index block: one entry per data block, whose value is
// the block's handle. With value delta encoding (format version 4 and
// later), an entry that shares no key bytes (a restart point) holds a full
// handle and the others a signed size delta; their offset follows the
// previous block and its trailer (table/format.cc IndexValue::DecodeFrom).
type indexIter struct {
	b       blockIter
	delta   bool
	prev    handle
	hasPrev bool
}

func (x *indexIter) reset(entries []byte, delta bool) {
	x.b.reset(entries, delta)
	x.delta, x.hasPrev = delta, false
}

// next returns the handle of the next data block.
func (x *indexIter) next() (handle, bool, error) {
	shared, ok, err := x.b.next()
	if err != nil || !ok {
		return handle{}, false, err
	}
	d := decoder{b: x.b.value}
	var h handle
	switch {
	case !x.delta || shared == 0:
		h = decodeHandle(&d)
	case !x.hasPrev:
		return handle{}, false, corruptf("index entry delta-encoded without a previous handle")
	default:
		delta := d.varsigned64("block size delta")
		size := int64(x.prev.size) + delta
		if size < 0 {
			return handle{}, false, corruptf("negative block size in the index")
		}
		h = handle{offset: x.prev.offset + x.prev.size + trailerLen, size: uint64(size)}
	}
	if d.err != nil {
		return handle{}, false, d.err
	}
	if x.delta {
		x.b.consume(len(x.b.value) - len(d.b))
	}
	if x.hasPrev && h.offset < x.prev.offset+x.prev.size+trailerLen {
		return handle{}, false, corruptf("index: data block at %d overlaps the previous one", h.offset)
	}
	x.prev, x.hasPrev = h, true
	return h, true, nil
}
