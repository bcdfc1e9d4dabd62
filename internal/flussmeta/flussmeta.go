// Package flussmeta names the metadata keys the fluss input sets on every
// message: the contract between the input, which writes them, and the
// pipelines and outputs that read them. Both sides import these names, so a
// renamed key cannot drift apart.
package flussmeta

import "fmt"

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
	SchemaID    = "fluss_schema_id"   // int64
	MessageID   = "fluss_message_id"  // string: FormatMessageID of the message's table, partition, bucket and offset
	SnapshotID  = "fluss_snapshot_id" // int64: rows of a KV snapshot only (start_offset: snapshot)
)

// FormatMessageID returns the deterministic id of the record at offset of
// bucket (in partition partitionID, -1 for none) of table tableID, as the
// iggy output's message_id accepts it: "0x" followed by the table id plus
// one (8 hex digits; never 0, since an id of 0 asks Iggy for a random one),
// the partition id plus one (8, 0 without partitions), the bucket (4) and
// the offset (12), one 128-bit number from which the four can be read back.
//
// It equals the Bloblang recipe
//
//	0x${! "%08x%08x%04x%012x".format(@fluss_table_id + 1, @fluss_partition_id.or(-1) + 1, @fluss_bucket, @fluss_offset) }
//
// for every input: a value that outgrows its field (or is negative) gives a
// longer or non-hex text, which the output rejects instead of letting two
// records share an id.
func FormatMessageID(tableID, partitionID int64, bucket int32, offset int64) string {
	var buf [34]byte
	return string(AppendMessageID(buf[:0], tableID, partitionID, bucket, offset))
}

// AppendMessageID appends FormatMessageID's text to dst.
func AppendMessageID(dst []byte, tableID, partitionID int64, bucket int32, offset int64) []byte {
	t, p, b := tableID+1, partitionID+1, int64(bucket)
	if t < 0 || t >= 1<<32 || p < 0 || p >= 1<<32 || b < 0 || b >= 1<<16 || offset < 0 || offset >= 1<<48 {
		return fmt.Appendf(dst, "0x%08x%08x%04x%012x", t, p, b, offset)
	}
	n := len(dst)
	dst = append(dst, "0x00000000000000000000000000000000"...)
	id := dst[n:]
	putHex(id[2:10], uint64(t))
	putHex(id[10:18], uint64(p))
	putHex(id[18:22], uint64(b))
	putHex(id[22:34], uint64(offset))
	return dst
}

// putHex writes v into dst as len(dst) lower-case hex digits, zero-padded.
func putHex(dst []byte, v uint64) {
	const digits = "0123456789abcdef"
	for i := len(dst) - 1; i >= 0; i-- {
		dst[i] = digits[v&0xf]
		v >>= 4
	}
}
