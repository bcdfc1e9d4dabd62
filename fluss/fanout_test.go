package fluss

import (
	"sync"
	"testing"
)

// TestForEachLane: every bucket is sent once, on lane bucket mod lanes, and
// one lane (or one bucket) makes a single call.
func TestForEachLane(t *testing.T) {
	for _, tc := range []struct {
		buckets   []int32
		lanes     int
		wantCalls int
	}{
		{[]int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 4, 4},
		{[]int32{3, 7, 11}, 4, 1},
		{[]int32{5}, 4, 1},
		{[]int32{0, 1, 2}, 1, 1},
		{[]int32{0, 1, 2}, 8, 3},
	} {
		var mu sync.Mutex
		calls := 0
		seen := map[int32]int{}
		forEachLane(tc.buckets, tc.lanes, func(lane int, bs []int32) {
			mu.Lock()
			defer mu.Unlock()
			calls++
			for _, b := range bs {
				seen[b]++
				if want := int(b) % tc.lanes; lane != want {
					t.Errorf("lanes %d: bucket %d on lane %d, want %d", tc.lanes, b, lane, want)
				}
			}
		})
		if calls != tc.wantCalls {
			t.Errorf("buckets %v over %d lanes: %d calls, want %d", tc.buckets, tc.lanes, calls, tc.wantCalls)
		}
		for _, b := range tc.buckets {
			if seen[b] != 1 {
				t.Errorf("buckets %v over %d lanes: bucket %d sent %d times", tc.buckets, tc.lanes, b, seen[b])
			}
		}
	}
}
