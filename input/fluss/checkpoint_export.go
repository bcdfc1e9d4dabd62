package flussinput

// Checkpoint is the value the input stores under its checkpoint_key: the
// table it belongs to (database, table, table id) and, in Buckets, the next
// offset to read of every bucket it has started (PartitionID is nil for
// tables without partitions).
type Checkpoint = checkpointValue

// DecodeCheckpoint decodes a value the input stored under key, with the
// checks the input itself applies on start-up, for tools that inspect
// checkpoints (`fluss-iggy fluss checkpoints`). Errors name the key.
func DecodeCheckpoint(key string, value []byte) (*Checkpoint, error) {
	return parseCheckpoint(key, value)
}

// MergeCheckpoints returns base with the bucket positions of more added,
// the furthest position of a bucket winning, as the input resumes from a
// sharded run's per-bucket keys and an unsharded run's value. A nil base
// gives more itself. The table id is base's.
func MergeCheckpoints(base, more *Checkpoint) *Checkpoint {
	if base == nil {
		return more
	}
	at := make(map[bucketKey]int, len(base.Buckets))
	for i, b := range base.Buckets {
		at[b.key()] = i
	}
	for _, b := range more.Buckets {
		i, ok := at[b.key()]
		switch {
		case !ok:
			at[b.key()] = len(base.Buckets)
			base.Buckets = append(base.Buckets, b)
		case further(b, base.Buckets[i]):
			base.Buckets[i] = b
		}
	}
	return base
}
