package flussinput

import (
	"testing"

	"github.com/fluss-iggy/fluss-iggy/fluss"
)

func TestShardsSplitEveryPairOnce(t *testing.T) {
	for _, count := range []int{1, 2, 3, 5} {
		for _, numBuckets := range []int32{1, 2, 3, 4, 7} {
			seen := map[bucketKey]int{}
			for idx := 0; idx < count; idx++ {
				a := assigner{shardIndex: idx, shardCount: count}
				for _, pid := range []int64{fluss.NoPartition, 0, 1, 2, 17, 1000} {
					for _, k := range a.bucketsOf(pid, numBuckets) {
						seen[k]++
					}
				}
			}
			if len(seen) != 6*int(numBuckets) {
				t.Errorf("count %d buckets %d: %d pairs assigned, want %d", count, numBuckets, len(seen), 6*numBuckets)
			}
			for k, n := range seen {
				if n != 1 {
					t.Errorf("count %d: %s assigned %d times", count, k, n)
				}
			}
		}
	}
}

func TestShardsBalanceBuckets(t *testing.T) {
	// 4 buckets between 2 instances: 2 each in every partition.
	for idx := 0; idx < 2; idx++ {
		a := assigner{shardIndex: idx, shardCount: 2}
		for _, pid := range []int64{fluss.NoPartition, 3, 4} {
			if n := len(a.bucketsOf(pid, 4)); n != 2 {
				t.Errorf("shard %d partition %d: %d buckets", idx, pid, n)
			}
		}
	}
}

func TestBucketFilter(t *testing.T) {
	a := assigner{buckets: []int32{2, 0}}
	got := a.bucketsOf(fluss.NoPartition, 4)
	if len(got) != 2 || got[0].bucket != 0 || got[1].bucket != 2 {
		t.Errorf("got %v", got)
	}
	if err := a.checkBuckets(2); err == nil {
		t.Error("bucket 2 of a 2-bucket table accepted")
	}
	if err := a.checkBuckets(3); err != nil {
		t.Error(err)
	}
}

func TestPartitionFilter(t *testing.T) {
	a := assigner{partitions: []string{"2026", "2027"}}
	if !a.wantsPartition("2026") || a.wantsPartition("2025") {
		t.Error("filter wrong")
	}
	if !(assigner{}).wantsPartition("x") {
		t.Error("no filter should read every partition")
	}
}
