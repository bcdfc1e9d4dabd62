package flussinput

import (
	"context"
	"fmt"
	"strconv"

	"github.com/fluss-iggy/fluss-iggy/fluss"
)

// bucketCheckpointKey is the cache key of one bucket's position:
// <base>_bucket_<b>, or <base>_p<partition id>_bucket_<b> for a bucket of a
// partition (ids, unlike names, are never reused by another partition).
func bucketCheckpointKey(base string, k bucketKey) string {
	b := base
	if k.partitionID != fluss.NoPartition {
		b += "_p" + strconv.FormatInt(k.partitionID, 10)
	}
	return b + "_bucket_" + strconv.FormatInt(int64(k.bucket), 10)
}

// BucketCheckpointKey is the cache key under which a sharded input keeps
// the position of one bucket (partitionID fluss.NoPartition for tables
// without partitions), for tools that inspect checkpoints.
func BucketCheckpointKey(base string, partitionID int64, bucket int32) string {
	return bucketCheckpointKey(base, bucketKey{partitionID: partitionID, bucket: bucket})
}

// loadBucketKeys reads the per-bucket keys of the buckets a first start
// reads and merges them into loaded, the furthest position of a bucket
// winning (see further). A sharded input keeps its positions there; an
// unsharded one finds those a sharded run (of any shard count) left. A
// value of another table id (dropped and created again) or one that cannot
// be parsed is reported and ignored, or an error with
// on_unresumable_offset: fail.
func (in *input) loadBucketKeys(ctx context.Context, info *fluss.TableInfo, keys []bucketKey, loaded map[bucketKey]int64) error {
	for _, k := range keys {
		key := bucketCheckpointKey(in.conf.checkpointKey, k)
		raw, err := in.store.getKey(ctx, key)
		if err != nil || raw == nil {
			return err
		}
		b, err := in.bucketValue(key, raw, info, k)
		if err != nil {
			return err
		}
		if b != nil {
			in.cp.mergeLoaded(*b, loaded)
		}
	}
	return nil
}

// bucketValue parses the value under one bucket's key; nil when it is
// ignored.
func (in *input) bucketValue(key string, raw []byte, info *fluss.TableInfo, k bucketKey) (*checkpointBucket, error) {
	fail := in.conf.onUnresumable == unresumableFail
	v, err := parseCheckpoint(key, raw)
	if err == nil && v.TableID != info.TableID {
		err = fmt.Errorf("the position in cache key %q belongs to table id %d, but table %s now has id %d (dropped and created again?)", key, v.TableID, in.tablePath(), info.TableID)
	}
	if err == nil {
		for _, b := range v.Buckets {
			if b.key() == k {
				return &b, nil
			}
		}
		return nil, nil
	}
	if fail {
		return nil, fmt.Errorf("%w; delete the key or set %s to earliest or latest", err, fiFieldOnUnresumable)
	}
	in.log.Warnf("Ignoring the position of table %s %s: %v", in.tablePath(), k, err)
	return nil, nil
}

// mergeLoaded adds a loaded bucket position to loaded (and its snapshot
// phase), unless loaded already holds one at least as far.
func (c *checkpointer) mergeLoaded(b checkpointBucket, loaded map[bucketKey]int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := b.key()
	if off, ok := loaded[k]; ok {
		cur := checkpointBucket{Bucket: k.bucket, Offset: off}
		if s, ok := c.loadedSnaps[k]; ok {
			cur.Snapshot = &s
		}
		if !further(b, cur) {
			return
		}
	}
	loaded[k] = b.Offset
	delete(c.loadedSnaps, k)
	if b.Snapshot != nil {
		c.loadedSnaps[k] = *b.Snapshot
	}
}

// further reports whether position a is past position b of the same
// bucket. Positions in a changelog compare by offset; one in a snapshot
// phase is behind a changelog offset at or past the snapshot's log offset,
// and ahead of one before it; two in snapshots compare by snapshot id, then
// rows. Every stored position was written after the rows below it were
// acknowledged, so the furthest loses nothing.
func further(a, b checkpointBucket) bool {
	switch {
	case a.Snapshot == nil && b.Snapshot == nil:
		return a.Offset > b.Offset
	case a.Snapshot != nil && b.Snapshot != nil:
		if a.Snapshot.ID != b.Snapshot.ID {
			return a.Snapshot.ID > b.Snapshot.ID
		}
		return a.Offset > b.Offset
	case a.Snapshot == nil:
		return a.Offset >= b.Snapshot.LogOffset
	default:
		return b.Offset < a.Snapshot.LogOffset
	}
}
