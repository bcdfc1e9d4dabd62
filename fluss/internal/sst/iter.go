package sst

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Kind is the type of an entry, the low byte of its internal key's trailer
// (db/dbformat.h ValueType).
type Kind uint8

// The kinds Merge understands; others make it fail.
const (
	KindDelete       Kind = 0x0
	KindValue        Kind = 0x1
	KindMerge        Kind = 0x2
	KindSingleDelete Kind = 0x7
)

func (k Kind) String() string {
	switch k {
	case KindDelete:
		return "delete"
	case KindValue:
		return "value"
	case KindMerge:
		return "merge"
	case KindSingleDelete:
		return "single delete"
	}
	return fmt.Sprintf("kind %#x", uint8(k))
}

// TableIter walks a table's entries in internal-key order: user keys
// ascending, then sequence numbers descending. It holds one data block at a
// time. Key and Value are valid until the next call to Next.
type TableIter struct {
	t      *Table
	index  indexIter
	data   blockIter
	block  handle // the current data block
	key    []byte
	value  []byte
	seq    uint64
	kind   Kind
	prev   []byte // previous internal key, to check the order
	count  uint64
	err    error
	done   bool
	inData bool
}

// Iter returns an iterator over the table's entries.
func (t *Table) Iter() *TableIter {
	it := &TableIter{t: t}
	it.index.reset(t.index, t.props.IndexValueIsDeltaEncoded)
	return it
}

// Next moves to the next entry; false at the end or on error (see Err).
func (it *TableIter) Next() bool {
	for !it.done {
		if it.inData {
			_, ok, err := it.data.next()
			if err != nil {
				return it.fail(int64(it.block.offset), fmt.Errorf("data block: %w", err))
			}
			if ok {
				return it.decode()
			}
		}
		it.nextBlock()
	}
	return false
}

// nextBlock loads the next data block, or ends the iteration.
func (it *TableIter) nextBlock() {
	h, ok, err := it.index.next()
	if err != nil {
		it.fail(int64(it.t.footer.index.offset), fmt.Errorf("index block: %w", err))
		return
	}
	if !ok {
		it.done = true
		if n := it.t.props.NumEntries; it.count != n {
			it.err = tableError(it.t.name, -1, corruptf("read %d entries, properties say %d", it.count, n))
		}
		return
	}
	block, err := it.t.readBlock(h)
	var ents []byte
	if err == nil {
		ents, err = entries(block)
	}
	if err != nil {
		it.fail(int64(h.offset), fmt.Errorf("data block: %w", err))
		return
	}
	it.block, it.inData = h, true
	it.data.reset(ents, false)
}

// decode splits the current internal key and checks the order.
func (it *TableIter) decode() bool {
	k := it.data.key
	if len(k) < 8 {
		return it.fail(int64(it.block.offset), corruptf("internal key of %d bytes", len(k)))
	}
	trailer := binary.LittleEndian.Uint64(k[len(k)-8:])
	if len(it.prev) > 0 && compareInternal(it.prev, k) >= 0 {
		return it.fail(int64(it.block.offset), corruptf("key %x after %x: out of order", k, it.prev))
	}
	it.prev = append(it.prev[:0], k...)
	it.key, it.value = k[:len(k)-8], it.data.value
	it.seq, it.kind = trailer>>8, Kind(trailer&0xff)
	it.count++
	return true
}

// compareInternal orders internal keys: user key ascending, then the
// trailer (sequence, kind) descending.
func compareInternal(a, b []byte) int {
	if c := bytes.Compare(a[:len(a)-8], b[:len(b)-8]); c != 0 {
		return c
	}
	ta, tb := binary.LittleEndian.Uint64(a[len(a)-8:]), binary.LittleEndian.Uint64(b[len(b)-8:])
	switch {
	case ta > tb:
		return -1
	case ta < tb:
		return 1
	}
	return 0
}

func (it *TableIter) fail(offset int64, err error) bool {
	it.err, it.done = tableError(it.t.name, offset, err), true
	return false
}

// Key is the current entry's user key.
func (it *TableIter) Key() []byte { return it.key }

// Value is the current entry's value (empty for deletes).
func (it *TableIter) Value() []byte { return it.value }

// Seq is the current entry's sequence number.
func (it *TableIter) Seq() uint64 { return it.seq }

// Kind is the current entry's type.
func (it *TableIter) Kind() Kind { return it.kind }

// BlockOffset is the offset of the data block holding the current entry.
func (it *TableIter) BlockOffset() int64 { return int64(it.block.offset) }

// Err is the error that ended the iteration, if any.
func (it *TableIter) Err() error { return it.err }
