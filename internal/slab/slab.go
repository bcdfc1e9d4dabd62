// Package slab boxes many small values into interfaces (Slab) and copies
// many short byte strings into strings (Text) with one allocation per block
// of values instead of one per value.
//
// Storing an int64 or a string in an `any` makes Go allocate a copy of it
// on the heap (except for a few small integers). Code that hands out
// millions of boxed values (a row's columns as map values, a message's
// metadata) spends much of its time and GC work on those copies. A Slab
// stores the values in blocks and builds each interface around a pointer
// into its block, which is what the runtime itself would have built around
// its own copy: the result is an ordinary interface holding a T (type
// switches, ==, reflect and fmt see no difference). A block lives while any
// value in it does, and its values are never written again once handed
// out, so the interfaces stay immutable.
package slab

import "unsafe"

// blockLen is the number of values in a block.
const blockLen = 512

// Value is what a Slab boxes: integers and strings (and types based on
// them, such as json.Number), which Go stores in an interface as a pointer
// to a copy. Types that are a single pointer are stored in the interface
// itself: the constraint keeps them out, as Box would break them.
type Value interface {
	~int64 | ~string
}

// Slab hands out boxed values of T. The zero Slab is ready to use. It is
// not safe for concurrent use.
type Slab[T Value] struct {
	typ   unsafe.Pointer // T's type word in an interface
	block []T
}

// eface is the layout of an interface value: its type word and a pointer to
// its value.
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

// Box returns v as an interface, its value stored in the slab's block.
func (s *Slab[T]) Box(v T) any {
	if len(s.block) == cap(s.block) {
		if s.typ == nil {
			var zero T
			boxed := any(zero)
			s.typ = (*eface)(unsafe.Pointer(&boxed)).typ
		}
		s.block = make([]T, 0, blockLen)
	}
	s.block = append(s.block, v)
	e := eface{typ: s.typ, data: unsafe.Pointer(&s.block[len(s.block)-1])}
	return *(*any)(unsafe.Pointer(&e))
}

// textBlock is the size of the blocks Text copies bytes into.
const textBlock = 32 << 10

// Text copies byte strings into shared blocks and hands them out as
// strings: one allocation for the strings of many rows instead of one per
// string. A block lives while any string in it does; its bytes are only
// ever appended to, never written over, so the strings stay immutable. The
// zero Text is ready to use. It is not safe for concurrent use.
type Text struct {
	block []byte
}

// String returns a string holding a copy of b.
func (t *Text) String(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if cap(t.block)-len(t.block) < len(b) {
		t.block = make([]byte, 0, max(textBlock, len(b)))
	}
	start := len(t.block)
	t.block = append(t.block, b...)
	return unsafe.String(&t.block[start], len(b))
}
