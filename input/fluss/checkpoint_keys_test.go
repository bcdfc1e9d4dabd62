package flussinput

import (
	"context"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/fluss"
)

func TestBucketCheckpointKey(t *testing.T) {
	for k, want := range map[bucketKey]string{
		{partitionID: fluss.NoPartition, bucket: 3}: "fluss_db_t_bucket_3",
		{partitionID: 17, bucket: 0}:                "fluss_db_t_p17_bucket_0",
	} {
		if got := bucketCheckpointKey("fluss_db_t", k); got != want {
			t.Errorf("%v: %q, want %q", k, got, want)
		}
	}
}

func TestFurther(t *testing.T) {
	snap := func(id, logOff int64) *checkpointSnapshot { return &checkpointSnapshot{ID: id, LogOffset: logOff} }
	pos := func(off int64, s *checkpointSnapshot) checkpointBucket {
		return checkpointBucket{Offset: off, Snapshot: s}
	}
	for _, c := range []struct {
		name string
		a, b checkpointBucket
		want bool
	}{
		{"log ahead", pos(10, nil), pos(5, nil), true},
		{"log equal", pos(5, nil), pos(5, nil), false},
		{"log behind", pos(4, nil), pos(5, nil), false},
		{"same snapshot, more rows", pos(9, snap(2, 100)), pos(3, snap(2, 100)), true},
		{"newer snapshot", pos(1, snap(3, 200)), pos(50, snap(2, 100)), true},
		{"older snapshot", pos(50, snap(2, 100)), pos(1, snap(3, 200)), false},
		{"log past the snapshot's log offset", pos(100, nil), pos(70, snap(2, 100)), true},
		{"log before the snapshot's log offset", pos(99, nil), pos(70, snap(2, 100)), false},
		{"snapshot ahead of an early log offset", pos(70, snap(2, 100)), pos(99, nil), true},
		{"snapshot behind a later log offset", pos(70, snap(2, 100)), pos(100, nil), false},
	} {
		if got := further(c.a, c.b); got != c.want {
			t.Errorf("%s: further = %v, want %v", c.name, got, c.want)
		}
	}
}

// mergeLoaded keeps the furthest position of a bucket and its snapshot
// phase.
func TestMergeLoaded(t *testing.T) {
	c := newCheckpointer(4)
	k := bucketKey{partitionID: fluss.NoPartition, bucket: 1}
	loaded := map[bucketKey]int64{k: 50}
	c.mergeLoaded(checkpointBucket{Bucket: 1, Offset: 40}, loaded)
	if loaded[k] != 50 {
		t.Fatalf("a position behind replaced the loaded one: %d", loaded[k])
	}
	c.mergeLoaded(checkpointBucket{Bucket: 1, Offset: 80}, loaded)
	if loaded[k] != 80 {
		t.Fatalf("the furthest position was not taken: %d", loaded[k])
	}
	k2 := bucketKey{partitionID: fluss.NoPartition, bucket: 2}
	c.mergeLoaded(checkpointBucket{Bucket: 2, Offset: 7, Snapshot: &checkpointSnapshot{ID: 4, LogOffset: 90}}, loaded)
	if s, ok := c.snapshotPhase(k2); loaded[k2] != 7 || !ok || s.ID != 4 {
		t.Fatalf("snapshot phase not loaded: %d %v %+v", loaded[k2], ok, s)
	}
	c.mergeLoaded(checkpointBucket{Bucket: 2, Offset: 95}, loaded)
	if _, ok := c.snapshotPhase(k2); loaded[k2] != 95 || ok {
		t.Fatalf("a changelog offset past the snapshot did not replace it: %d %v", loaded[k2], ok)
	}
}

// A sharded input writes each bucket it reads under its own key, only
// when its position changed, never the buckets it merely loaded, and
// deletes the key of a bucket it stopped reading.
func TestBucketStoreWrites(t *testing.T) {
	mgr := service.MockResources(service.MockResourcesOptAddCache("offs"))
	s := newCheckpointStore(mgr, &inputConfig{checkpointCache: "offs", checkpointKey: "fluss_d_t", shardCount: 2})
	ctx := context.Background()
	c := newCheckpointer(8)
	c.loadOnce(&checkpointValue{Version: checkpointVersion, TableID: 9, Buckets: []checkpointBucket{{Bucket: 5, Offset: 500}}})
	kA := bucketKey{partitionID: fluss.NoPartition, bucket: 0}
	kB := bucketKey{partitionID: 3, bucket: 1}
	c.start(kA, "", 10)
	c.start(kB, "p", 20)
	write := func() {
		t.Helper()
		snap, err := c.takeSnapshot("d", "t")
		if err != nil || snap == nil {
			t.Fatalf("snapshot %v %v", snap, err)
		}
		if err := s.write(ctx, snap); err != nil {
			t.Fatal(err)
		}
		c.persisted(snap)
	}
	write()
	for key, want := range map[string]int64{"fluss_d_t_bucket_0": 10, "fluss_d_t_p3_bucket_1": 20} {
		raw, err := s.getKey(ctx, key)
		if err != nil || raw == nil {
			t.Fatalf("key %s: %q %v", key, raw, err)
		}
		v, err := parseCheckpoint(key, raw)
		if err != nil || len(v.Buckets) != 1 || v.Buckets[0].Offset != want || v.TableID != 9 {
			t.Fatalf("key %s: %s %v", key, raw, err)
		}
	}
	if raw, _ := s.getKey(ctx, "fluss_d_t_bucket_5"); raw != nil {
		t.Fatalf("a bucket this instance does not read was written: %s", raw)
	}
	// An unchanged bucket is not written again: a value put there by
	// someone else stays.
	if err := s.set(ctx, "fluss_d_t_bucket_0", []byte("other")); err != nil {
		t.Fatal(err)
	}
	handOut(t, c, kB, 20, 30)
	c.ack(c.states[kB].entries)
	write()
	if raw, _ := s.getKey(ctx, "fluss_d_t_bucket_0"); string(raw) != "other" {
		t.Fatalf("an unchanged bucket was written again: %s", raw)
	}
	c.remove(kB)
	write()
	if raw, _ := s.getKey(ctx, "fluss_d_t_p3_bucket_1"); raw != nil {
		t.Fatalf("the key of a bucket no longer read was kept: %s", raw)
	}
}
