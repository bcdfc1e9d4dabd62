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
	small := p.Get(100)
	if len(small) != 100 || cap(small) != 1<<16 {
		t.Fatalf("Get(100): len %d cap %d, want 100 and the 64 KiB minimum", len(small), cap(small))
	}
	a := p.Get(100 << 10)
	if len(a) != 100<<10 || cap(a) != 128<<10 {
		t.Fatalf("Get(100 KiB): len %d cap %d", len(a), cap(a))
	}
	p.Put(a)
	b := p.Get(70 << 10)
	if unsafe.SliceData(b) != unsafe.SliceData(a) || len(b) != 70<<10 {
		t.Fatal("a slice handed back was not reused for one of the same class")
	}
	p.Put(make([]byte, 100<<10)) // not a power of two: not from the pool
	if p.Kept() != 0 {
		t.Errorf("kept a foreign slice")
	}
	p.Put(b)
	p.Put(p.Get(200 << 10)) // 256 KiB: over the limit with b kept
	if p.Kept() != 128<<10 {
		t.Errorf("kept %d bytes, want only the 128 KiB slice under a %d-byte limit", p.Kept(), 1<<18)
	}
	if z := p.Get(0); len(z) != 0 {
		t.Errorf("Get(0) has %d bytes", len(z))
	}
	if huge := p.Get(1<<maxClass + 1); cap(huge) != 1<<maxClass+1 {
		t.Errorf("Get beyond the largest class: cap %d, want a plain slice", cap(huge))
	}
}
