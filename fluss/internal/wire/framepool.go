package wire

import "github.com/fluss-iggy/fluss-iggy/fluss/internal/bufpool"

// frames holds frames handed back with WithFrameRelease for the next
// responses to be read into: a scan's fetch reads up to several MiB per
// response, which from the Go allocator is memory to zero, fault in and
// collect, response after response. Frames under 64 KiB are not kept; 64 MiB
// at most are.
var frames = bufpool.New(minFrameClass, 64<<20)

// minFrameClass: frames below 1<<minFrameClass bytes are plain allocations.
const minFrameClass = 16

// frameBuf returns a buffer for a frame of n bytes (not zeroed).
func frameBuf(n int) []byte {
	if n < 1<<minFrameClass {
		return make([]byte, n)
	}
	b, _ := frames.Get(n)
	return b
}
