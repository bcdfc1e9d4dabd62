package flussinput

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/fluss-iggy/fluss-iggy/fluss"
)

// checkpointVersion is the version of the stored JSON value.
const checkpointVersion = 1

// checkpointValue is the JSON value stored under checkpoint_key: the next
// offset to read of every bucket, and the id of the table they belong to.
type checkpointValue struct {
	Version  int                `json:"version"`
	Database string             `json:"database"`
	Table    string             `json:"table"`
	TableID  int64              `json:"table_id"`
	Buckets  []checkpointBucket `json:"buckets"`

	// unresumable marks a value that could not be used (corrupt, or of
	// another table id): buckets start by on_unresumable_offset.
	unresumable bool
}

// checkpointBucket is the position of one bucket.
type checkpointBucket struct {
	// PartitionID is absent for tables without partitions.
	PartitionID *int64 `json:"partition_id,omitempty"`
	// Partition is the partition name, for people reading the value.
	Partition string `json:"partition,omitempty"`
	Bucket    int32  `json:"bucket"`
	// Offset is the next offset to read: every row below it was acknowledged.
	// With Snapshot set it counts the snapshot's rows instead.
	Offset int64 `json:"offset"`
	// Snapshot is set while the bucket is in its snapshot phase
	// (start_offset: snapshot): Offset rows of the snapshot, in key order,
	// were acknowledged; the changelog continues at Snapshot.LogOffset.
	Snapshot *checkpointSnapshot `json:"snapshot,omitempty"`
}

// checkpointSnapshot names the KV snapshot a bucket is being read from.
type checkpointSnapshot struct {
	ID        int64 `json:"id"`
	LogOffset int64 `json:"log_offset"`
}

func (b checkpointBucket) key() bucketKey {
	k := bucketKey{partitionID: fluss.NoPartition, bucket: b.Bucket}
	if b.PartitionID != nil {
		k.partitionID = *b.PartitionID
	}
	return k
}

// errCorruptCheckpoint marks a stored value that can never be parsed.
var errCorruptCheckpoint = errors.New("corrupt checkpoint")

// parseCheckpoint decodes a stored value. Errors wrap errCorruptCheckpoint
// and name the key.
func parseCheckpoint(key string, b []byte) (*checkpointValue, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w in cache key %q: %s", errCorruptCheckpoint, key, fmt.Sprintf(format, args...))
	}
	var v checkpointValue
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, bad("not a JSON checkpoint: %v", err)
	}
	if dec.More() {
		return nil, bad("trailing data after the JSON value")
	}
	if v.Version != checkpointVersion {
		return nil, bad("unsupported version %d (this input writes version %d)", v.Version, checkpointVersion)
	}
	if v.TableID < 0 {
		return nil, bad("negative table_id %d", v.TableID)
	}
	seen := make(map[bucketKey]bool, len(v.Buckets))
	for _, b := range v.Buckets {
		k := b.key()
		if b.Bucket < 0 || b.Offset < 0 || (b.PartitionID != nil && *b.PartitionID < 0) {
			return nil, bad("invalid position %+v", b)
		}
		if s := b.Snapshot; s != nil && (s.ID < 0 || s.LogOffset < 0 || b.Offset >= s.LogOffset && s.LogOffset > 0) {
			return nil, bad("invalid snapshot position of %s: row %d of snapshot %d, which covers the log to offset %d", k, b.Offset, s.ID, s.LogOffset)
		}
		if seen[k] {
			return nil, bad("%s listed twice", k)
		}
		seen[k] = true
	}
	return &v, nil
}
