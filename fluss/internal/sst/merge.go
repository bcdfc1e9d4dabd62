package sst

import (
	"bytes"
	"container/heap"
)

// Iterator yields user keys and values in ascending key order. Key and Value
// are valid until the next call to Next.
type Iterator interface {
	Next() bool
	Key() []byte
	Value() []byte
	Err() error
}

// Merge combines the tables of one RocksDB checkpoint (all levels): for each
// user key the entry with the highest sequence number wins; a delete or
// single delete hides the key, a value is yielded, and a merge operand or
// any other kind ends the iteration with an error. Between entries of equal
// sequence numbers the table passed first wins, so pass level-0 files newest
// first, then the levels in order.
func Merge(tables ...*Table) Iterator {
	m := &merger{}
	for i, t := range tables {
		m.pending = append(m.pending, &source{it: t.Iter(), order: i})
	}
	return m
}

type source struct {
	it    *TableIter
	order int
}

// merger is a heap of sources positioned on their current entries.
type merger struct {
	pending []*source // not yet started
	heap    sourceHeap
	key     []byte
	value   []byte
	err     error
}

// Next moves to the next live key.
func (m *merger) Next() bool {
	if m.err != nil || !m.start() {
		return false
	}
	for len(m.heap) > 0 {
		top := m.heap[0]
		it := top.it
		m.key = append(m.key[:0], it.Key()...)
		kind := it.Kind()
		if kind == KindValue {
			m.value = append(m.value[:0], it.Value()...)
		} else if kind != KindDelete && kind != KindSingleDelete {
			m.err = tableError(it.t.name, it.BlockOffset(),
				unsupportedf("key %x: newest entry (sequence %d) is a %v", m.key, it.Seq(), kind))
			return false
		}
		if !m.skip(m.key) {
			return false
		}
		if kind == KindValue {
			return true
		}
	}
	return false
}

// start positions every source on its first entry, once.
func (m *merger) start() bool {
	for _, s := range m.pending {
		if !m.push(s) {
			return false
		}
	}
	m.pending = nil
	return true
}

// push advances s and puts it back on the heap unless it ended.
func (m *merger) push(s *source) bool {
	if s.it.Next() {
		heap.Push(&m.heap, s)
		return true
	}
	m.err = s.it.Err()
	return m.err == nil
}

// skip advances every source past the entries of user key k.
func (m *merger) skip(k []byte) bool {
	for len(m.heap) > 0 && bytes.Equal(m.heap[0].it.Key(), k) {
		s := heap.Pop(&m.heap).(*source)
		if !m.push(s) {
			return false
		}
	}
	return true
}

func (m *merger) Key() []byte   { return m.key }
func (m *merger) Value() []byte { return m.value }
func (m *merger) Err() error    { return m.err }

type sourceHeap []*source

func (h sourceHeap) Len() int { return len(h) }

func (h sourceHeap) Less(i, j int) bool {
	a, b := h[i].it, h[j].it
	if c := bytes.Compare(a.Key(), b.Key()); c != 0 {
		return c < 0
	}
	if a.Seq() != b.Seq() {
		return a.Seq() > b.Seq()
	}
	return h[i].order < h[j].order
}

func (h sourceHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *sourceHeap) Push(x any)   { *h = append(*h, x.(*source)) }

func (h *sourceHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	*h = old[:len(old)-1]
	return s
}
