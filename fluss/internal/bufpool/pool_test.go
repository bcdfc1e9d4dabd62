package bufpool

import (
	"testing"
	"unsafe"
)

// TestPool: slices handed back are reused for requests of the same
// power-of-two class, foreign ones are not kept, and the pool keeps no more
// than its limit.
func TestPool(t *testing.T) {
	p := New(16, 1<<18)
	small, _ := p.Get(100)
	if len(small) != 100 || cap(small) != 1<<16 {
		t.Fatalf("Get(100): len %d cap %d, want 100 and the 64 KiB minimum", len(small), cap(small))
	}
	a, reused := p.Get(100 << 10)
	if len(a) != 100<<10 || cap(a) != 128<<10 || reused {
		t.Fatalf("Get(100 KiB): len %d cap %d reused %v", len(a), cap(a), reused)
	}
	p.Put(a)
	b, reused := p.Get(70 << 10)
	if unsafe.SliceData(b) != unsafe.SliceData(a) || len(b) != 70<<10 || !reused {
		t.Fatal("a slice handed back was not reused for one of the same class")
	}
	p.Put(make([]byte, 100<<10)) // not a power of two: not from the pool
	if p.Kept() != 0 {
		t.Errorf("kept a foreign slice")
	}
	p.Put(b)
	c, _ := p.Get(200 << 10)
	p.Put(c) // 256 KiB: over the limit with b kept
	if p.Kept() != 128<<10 {
		t.Errorf("kept %d bytes, want only the 128 KiB slice under a %d-byte limit", p.Kept(), 1<<18)
	}
	if z, _ := p.Get(0); len(z) != 0 {
		t.Errorf("Get(0) has %d bytes", len(z))
	}
}
