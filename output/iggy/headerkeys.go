package iggyoutput

import (
	"encoding/binary"

	"github.com/fluss-iggy/fluss-iggy/iggy"
)

// headerOrder remembers the sorted header keys of the last message and each
// key written as it starts its header (kind, u32 length, bytes), for the
// messages after it: rows of one table carry the same metadata keys, so
// their headers go in that order without sorting and comparing keys again.
type headerOrder struct {
	keys   []string
	enc    []byte
	at     []int    // key j is enc[at[j]:at[j+1]]
	placed []metaKV // scratch: a message's headers in key order
}

// place puts kv in the remembered key order and returns it, or false when
// kv does not hold exactly the remembered keys.
func (o *headerOrder) place(kv []metaKV) ([]metaKV, bool) {
	if len(kv) != len(o.keys) || len(kv) == 0 {
		return nil, false
	}
	clear(o.placed)
	for _, h := range kv {
		j := o.index(h.key)
		if j < 0 || o.placed[j].key != "" {
			return nil, false
		}
		o.placed[j] = h
	}
	return o.placed, true
}

// index is the position of key among the remembered keys, or -1. Keys are
// few and usually the same strings as last time, so a scan beats a map.
func (o *headerOrder) index(key string) int {
	for j, k := range o.keys {
		if k == key {
			return j
		}
	}
	return -1
}

// remember makes sorted (in key order) the order of the next messages.
func (o *headerOrder) remember(sorted []metaKV) {
	o.keys, o.enc, o.at = o.keys[:0], o.enc[:0], append(o.at[:0], 0)
	for _, h := range sorted {
		o.keys = append(o.keys, h.key)
		o.enc = appendHeaderKey(o.enc, h.key)
		o.at = append(o.at, len(o.enc))
	}
	o.placed = make([]metaKV, len(sorted))
}

// key returns the encoded start of the j-th remembered key's header.
func (o *headerOrder) key(j int) []byte { return o.enc[o.at[j]:o.at[j+1]] }

// appendHeaderKey appends the start of a header: the key's kind (a string),
// its length and its bytes.
func appendHeaderKey(dst []byte, key string) []byte {
	dst = append(dst, byte(iggy.HeaderString))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(key)))
	return append(dst, key...)
}
