// Package flussmeta names the metadata keys the fluss input sets on every
// message: the contract between the input, which writes them, and the iggy
// output, which reads some of them (its native deterministic message id).
// Both import these names, so a renamed key cannot drift apart.
package flussmeta

// Metadata keys of a message from the fluss input.
const (
	Database    = "fluss_database"
	Table       = "fluss_table"
	TableID     = "fluss_table_id"     // int64
	Partition   = "fluss_partition"    // string; absent for unpartitioned tables
	PartitionID = "fluss_partition_id" // int64; absent for unpartitioned tables
	Bucket      = "fluss_bucket"       // int64
	Offset      = "fluss_offset"       // int64: the row's log offset (the batch's first with arrow_ipc)
	LastOffset  = "fluss_last_offset"  // int64: arrow_ipc only
	Timestamp   = "fluss_timestamp"    // int64, ms
	ChangeType  = "fluss_change_type"
	SchemaID    = "fluss_schema_id" // int64
)
