package flussinput

import (
	"fmt"
	"slices"

	"github.com/fluss-iggy/fluss-iggy/fluss"
)

// bucketKey identifies one bucket of the table the input reads (a
// fluss.TableBucket without the table id, which the input knows once).
type bucketKey struct {
	partitionID int64 // fluss.NoPartition for non-partitioned tables
	bucket      int32
}

func (k bucketKey) String() string {
	if k.partitionID == fluss.NoPartition {
		return fmt.Sprintf("bucket %d", k.bucket)
	}
	return fmt.Sprintf("partition %d bucket %d", k.partitionID, k.bucket)
}

// assigner decides which (partition, bucket) pairs this instance reads.
type assigner struct {
	buckets    []int32 // empty: all
	partitions []string
	shardIndex int
	shardCount int // 0: no sharding
}

func newAssigner(c *inputConfig) assigner {
	return assigner{buckets: c.buckets, partitions: c.partitions, shardIndex: c.shardIndex, shardCount: c.shardCount}
}

// wantsPartition reports whether a partition (by name) is read.
func (a assigner) wantsPartition(name string) bool {
	return len(a.partitions) == 0 || slices.Contains(a.partitions, name)
}

// owns reports whether this instance reads the bucket. The shard of a pair
// is (partition id + bucket) mod count, with partition id 0 for tables
// without partitions, so that every instance computes the same split
// without talking to the others, and consecutive buckets of one partition
// go to different instances.
func (a assigner) owns(k bucketKey) bool {
	if len(a.buckets) > 0 && !slices.Contains(a.buckets, k.bucket) {
		return false
	}
	if a.shardCount > 1 {
		p := k.partitionID
		if p < 0 {
			p = 0
		}
		return (uint64(p)+uint64(k.bucket))%uint64(a.shardCount) == uint64(a.shardIndex)
	}
	return true
}

// bucketsOf returns the buckets of one partition (or of the table) this
// instance reads, in bucket order. numBuckets is the partition's bucket
// count (input.bucketsToRead).
func (a assigner) bucketsOf(partitionID int64, numBuckets int32) []bucketKey {
	var out []bucketKey
	for b := int32(0); b < numBuckets; b++ {
		k := bucketKey{partitionID: partitionID, bucket: b}
		if a.owns(k) {
			out = append(out, k)
		}
	}
	return out
}

// checkBuckets verifies that the configured bucket numbers exist in a table
// of numBuckets buckets (for a partitioned table, the count of partitions
// created from now on; older partitions may have fewer or more on Fluss 1.0,
// where the filter selects those of its buckets they have).
func (a assigner) checkBuckets(numBuckets int32) error {
	for _, b := range a.buckets {
		if b >= numBuckets {
			return fmt.Errorf("field %s: bucket %d does not exist (the table has %d buckets)", fiFieldBuckets, b, numBuckets)
		}
	}
	return nil
}
