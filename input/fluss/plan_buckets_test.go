package flussinput

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/fluss-iggy/fluss-iggy/fluss"
)

// rescaledCluster answers planning as a Fluss 1.0 cluster does for a
// partitioned log table whose bucket.num was altered between the creation
// of its partitions: every partition has its own bucket count. Offsets are
// 0 (earliest) and 9 (latest) in every bucket.
type rescaledCluster struct {
	parts   []fluss.PartitionInfo
	buckets map[int64]int32 // partition id -> bucket count
}

func (c *rescaledCluster) Partitions(context.Context, *fluss.TableInfo) ([]fluss.PartitionInfo, error) {
	return c.parts, nil
}

func (c *rescaledCluster) NumBuckets(_ context.Context, _ *fluss.TableInfo, partitionID int64) (int32, error) {
	n, ok := c.buckets[partitionID]
	if !ok {
		return 0, fmt.Errorf("no partition %d", partitionID)
	}
	return n, nil
}

func (c *rescaledCluster) ListOffsets(_ context.Context, _ *fluss.TableInfo, partitionID int64, buckets []int32, spec fluss.OffsetSpec) (map[int32]int64, error) {
	out := map[int32]int64{}
	for _, b := range buckets {
		if b >= c.buckets[partitionID] {
			return nil, fmt.Errorf("partition %d has no bucket %d", partitionID, b)
		}
		out[b] = 0
		if spec.String() == "latest" {
			out[b] = 9
		}
	}
	return out, nil
}

func (c *rescaledCluster) LatestKVSnapshots(context.Context, *fluss.TableInfo, fluss.PartitionInfo) ([]fluss.KVSnapshot, error) {
	return nil, errors.New("a log table has no KV snapshots")
}

// planKeys plans the buckets of the table for one input configuration and
// returns them with their partition names.
func planKeys(t *testing.T, c *rescaledCluster, info *fluss.TableInfo, extra string) map[bucketKey]string {
	t.Helper()
	in, _ := newTestInput(t, extra)
	plan, parts, err := in.planBuckets(context.Background(), c, info)
	if err != nil {
		t.Fatalf("%q: %v", extra, err)
	}
	if len(parts) != len(c.parts) {
		t.Errorf("%q: %d partitions returned, want %d", extra, len(parts), len(c.parts))
	}
	out := map[bucketKey]string{}
	for _, pb := range plan {
		if _, dup := out[pb.key]; dup {
			t.Errorf("%q: %s planned twice", extra, pb.key)
		}
		if pb.offset != 0 {
			t.Errorf("%q: %s starts at %d, want the earliest offset 0", extra, pb.key, pb.offset)
		}
		out[pb.key] = pb.partition
	}
	return out
}

// TestPlanShardsRescaledPartitions: a partitioned table whose partitions
// have 2 and 5 buckets while the table says 3 (Fluss 1.0, bucket.num
// altered in between). Every (partition, bucket) is planned by exactly one
// shard, for any shard count, and no shard plans a bucket a partition
// does not have; a bucket filter applies to each partition's own buckets.
func TestPlanShardsRescaledPartitions(t *testing.T) {
	c := &rescaledCluster{
		parts:   []fluss.PartitionInfo{{ID: 10, Name: "a"}, {ID: 11, Name: "b"}},
		buckets: map[int64]int32{10: 2, 11: 5},
	}
	info := &fluss.TableInfo{Path: fluss.NewTablePath("shop", "orders"), TableID: 7, NumBuckets: 3, PartitionKeys: []string{"p"}}
	want := map[bucketKey]string{}
	for _, p := range c.parts {
		for b := int32(0); b < c.buckets[p.ID]; b++ {
			want[bucketKey{partitionID: p.ID, bucket: b}] = p.Name
		}
	}
	for count := 1; count <= 8; count++ {
		got := map[bucketKey]int{}
		for idx := 0; idx < count; idx++ {
			for k, name := range planKeys(t, c, info, fmt.Sprintf("shard: { index: %d, count: %d }\n", idx, count)) {
				got[k]++
				if want[k] != name {
					t.Errorf("shard %d of %d: %s planned in partition %q, want %q", idx, count, k, name, want[k])
				}
			}
		}
		if len(got) != len(want) {
			t.Errorf("%d shards planned %d buckets, want %d: %v", count, len(got), len(want), got)
		}
		for k, n := range got {
			if n != 1 {
				t.Errorf("%d shards: %s planned %d times", count, k, n)
			}
		}
	}
	got := planKeys(t, c, info, "buckets: [ 1, 4 ]\n")
	if len(got) != 3 || got[bucketKey{10, 1}] != "a" || got[bucketKey{11, 1}] != "b" || got[bucketKey{11, 4}] != "b" {
		t.Errorf("buckets [1, 4] planned %v, want a/1, b/1 and b/4", got)
	}
}
