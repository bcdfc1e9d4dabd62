// Package bufpool keeps byte slices for reuse by power-of-two capacity.
// The scanner's allocator keeps the Arrow buffers of released batches in
// one, the connections the frames of fetch responses in another: a scan
// otherwise asks the runtime for memory it must zero, the kernel must fault
// in and the collector must collect, batch after batch.
package bufpool

import (
	"math/bits"
	"sync"
)

// maxClass bounds the capacities a pool hands out and keeps (1 GiB).
const maxClass = 30

// Pool hands out slices of power-of-two capacity and keeps those given
// back, up to a limit in bytes. It is safe for concurrent use.
type Pool struct {
	minClass int // the smallest capacity is 1 << minClass
	limit    int
	mu       sync.Mutex
	free     [maxClass + 1][][]byte
	kept     int
}

// New returns a pool whose slices have a capacity of at least 1<<minClass
// bytes and that keeps at most limit bytes.
func New(minClass, limit int) *Pool { return &Pool{minClass: minClass, limit: limit} }

func (p *Pool) class(n int) int { return max(bits.Len(uint(n-1)), p.minClass) }

// Get returns a slice of n bytes with a power-of-two capacity and whether
// it was reused. A new slice is zeroed (to its capacity), a reused one is
// not; beyond 1 GiB it is a plain make.
func (p *Pool) Get(n int) (b []byte, reused bool) {
	c := p.class(n)
	if c > maxClass {
		return make([]byte, n), false
	}
	p.mu.Lock()
	if k := len(p.free[c]); k > 0 {
		b = p.free[c][k-1]
		p.free[c][k-1] = nil
		p.free[c] = p.free[c][:k-1]
		p.kept -= cap(b)
		p.mu.Unlock()
		return b[:n], true
	}
	p.mu.Unlock()
	return make([]byte, n, 1<<c), false
}

// Put keeps b for a later Get when its capacity is one Get hands out and
// the limit allows; other slices are left to the garbage collector. b must
// not be used afterwards.
func (p *Pool) Put(b []byte) {
	c := p.class(cap(b))
	if cap(b) == 0 || c > maxClass || 1<<c != cap(b) {
		return
	}
	p.mu.Lock()
	if p.kept+cap(b) <= p.limit {
		p.free[c] = append(p.free[c], b[:0])
		p.kept += cap(b)
	}
	p.mu.Unlock()
}

// Kept returns the bytes the pool holds.
func (p *Pool) Kept() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.kept
}
