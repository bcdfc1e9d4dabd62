package flussinput

import (
	"slices"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/fluss"
)

// TestNextSnapshot: the worker reads the open snapshot, else the first not
// waiting to be opened again, else the one due first; the others keep their
// order behind it.
func TestNextSnapshot(t *testing.T) {
	now := time.Now()
	later, latest := now.Add(time.Minute), now.Add(time.Hour)
	cases := []struct {
		name    string
		retryAt []time.Time // of buckets 0, 1, 2 in queue order
		open    bool        // bucket 0's reader is open
		want    []int32
	}{
		{"none waits", []time.Time{{}, {}, {}}, false, []int32{0, 1, 2}},
		{"head waits", []time.Time{later, {}, {}}, false, []int32{1, 0, 2}},
		{"two wait", []time.Time{later, latest, {}}, false, []int32{2, 0, 1}},
		{"all wait", []time.Time{latest, later, latest}, false, []int32{1, 0, 2}},
		{"past pause", []time.Time{now.Add(-time.Second), {}, {}}, false, []int32{0, 1, 2}},
		{"head open", []time.Time{{}, {}, {}}, true, []int32{0, 1, 2}},
	}
	for _, c := range cases {
		w := &worker{}
		for b, at := range c.retryAt {
			w.snapshots = append(w.snapshots, &snapshotRead{key: bucketKey{partitionID: fluss.NoPartition, bucket: int32(b)}, retryAt: at})
		}
		if c.open {
			w.snapshots[0].reader = &fluss.SnapshotReader{}
		}
		s := w.nextSnapshot()
		var got []int32
		for _, q := range w.snapshots {
			got = append(got, q.key.bucket)
		}
		if s != w.snapshots[0] || !slices.Equal(got, c.want) {
			t.Errorf("%s: queue %v (returned bucket %d), want %v", c.name, got, s.key.bucket, c.want)
		}
	}
}
