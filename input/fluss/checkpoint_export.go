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
