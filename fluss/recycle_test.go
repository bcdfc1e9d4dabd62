package fluss

import (
	"testing"
	"unsafe"
)

// TestRecycler: buffers come back zeroed (all of their capacity) and
// 64-byte aligned, and Reallocate keeps the bytes written (bufpool tests
// the keeping).
func TestRecycler(t *testing.T) {
	r := newRecycler(1 << 12)
	aligned := func(b []byte) bool { return uintptr(unsafe.Pointer(unsafe.SliceData(b)))%64 == 0 }
	a := r.Allocate(100)
	if len(a) != 100 || cap(a) != 128 || !aligned(a) {
		t.Fatalf("Allocate(100): len %d cap %d aligned %v", len(a), cap(a), aligned(a))
	}
	for i := range a[:cap(a)] {
		a[:cap(a)][i] = 0xff
	}
	r.Free(a)
	b := r.Allocate(90)
	if unsafe.SliceData(b) != unsafe.SliceData(a) {
		t.Fatal("a freed buffer of the same class was not reused")
	}
	for i, v := range b[:cap(b)] {
		if v != 0 {
			t.Fatalf("reused buffer byte %d = %#x, want 0", i, v)
		}
	}
	b[0], b[89] = 1, 2
	c := r.Reallocate(300, b)
	if len(c) != 300 || c[0] != 1 || c[89] != 2 || c[299] != 0 || !aligned(c) {
		t.Fatalf("Reallocate(300): len %d, bytes %d %d %d", len(c), c[0], c[89], c[299])
	}
	if d := r.Allocate(128); unsafe.SliceData(d) != unsafe.SliceData(b) {
		t.Error("the buffer Reallocate replaced was not kept")
	}
	if z := r.Allocate(0); len(z) != 0 {
		t.Errorf("Allocate(0) has %d bytes", len(z))
	}
}
