package iggyoutput

import (
	"encoding/binary"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/internal/flussmeta"
)

// flussMessageID computes DeterministicIDMapping without Bloblang: the hex
// digits "%08x%08x%04x%012x" of fluss_table_id + 1, fluss_partition_id + 1
// (-1 + 1 = 0 when missing or null), fluss_bucket and fluss_offset, read as
// one 128-bit number. It reports ok only when every value is an int64 (as
// the fluss input sets them) within the width of its field, where the
// result is exactly what the interpolation and ParseMessageID give; for
// anything else the caller runs the interpolation, which then decides (an
// id, or the error it reports). Formatting four numbers in Bloblang costs
// several µs per message; this costs a few map lookups.
func flussMessageID(msg *service.Message) (id [16]byte, ok bool) {
	table, ok := metaInt64(msg, flussmeta.TableID)
	if !ok {
		return id, false
	}
	part := int64(-1)
	if v, exists := msg.MetaGetMut(flussmeta.PartitionID); exists && v != nil {
		if part, ok = v.(int64); !ok {
			return id, false
		}
	}
	bucket, ok := metaInt64(msg, flussmeta.Bucket)
	if !ok {
		return id, false
	}
	offset, ok := metaInt64(msg, flussmeta.Offset)
	if !ok {
		return id, false
	}
	const max32, max16, max48 = 1<<32 - 1, 1<<16 - 1, 1<<48 - 1
	if table < -1 || table >= max32 || part < -1 || part >= max32 || bucket < 0 || bucket > max16 || offset < 0 || offset > max48 {
		return id, false
	}
	hi := uint64(table+1)<<32 | uint64(part+1)
	lo := uint64(bucket)<<48 | uint64(offset)
	binary.LittleEndian.PutUint64(id[:8], lo)
	binary.LittleEndian.PutUint64(id[8:], hi)
	return id, true
}

func metaInt64(msg *service.Message, key string) (int64, bool) {
	v, exists := msg.MetaGetMut(key)
	if !exists {
		return 0, false
	}
	n, ok := v.(int64)
	return n, ok
}
