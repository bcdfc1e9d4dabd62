package records

import (
	"encoding/binary"
	"fmt"
)

// StampLogBatch writes an idempotent writer's id and batch sequence into an
// encoded log batch and recomputes its CRC, so that a batch is encoded once
// and numbered when it is sent (the sequence of a bucket is only known
// then). The batch must be whole: one batch of a magic this package knows.
func StampLogBatch(batch []byte, ws WriterState) error {
	if len(batch) < LogOverhead+1 {
		return fmt.Errorf("fluss/records: stamping a log batch of %d bytes: too short", len(batch))
	}
	l := headerLayoutOf(int8(batch[offMagic]))
	if l == nil {
		return fmt.Errorf("fluss/records: stamping a log batch: magic %d unknown", int8(batch[offMagic]))
	}
	if len(batch) < l.size {
		return fmt.Errorf("fluss/records: stamping a log batch of %d bytes: shorter than its %d-byte header", len(batch), l.size)
	}
	le := binary.LittleEndian
	le.PutUint64(batch[l.writerID:], uint64(ws.WriterID))
	le.PutUint32(batch[l.batchSequence:], uint32(ws.BatchSequence))
	le.PutUint32(batch[l.crc:], crc32c(batch[l.schemaID:]))
	return nil
}

// StampKVBatch is StampLogBatch for a KV batch (PutKv records).
func StampKVBatch(batch []byte, ws WriterState) error {
	if len(batch) < KVHeaderSize {
		return fmt.Errorf("fluss/records: stamping a KV batch of %d bytes: shorter than its %d-byte header", len(batch), KVHeaderSize)
	}
	le := binary.LittleEndian
	le.PutUint64(batch[kvOffWriterID:], uint64(ws.WriterID))
	le.PutUint32(batch[kvOffBatchSequence:], uint32(ws.BatchSequence))
	le.PutUint32(batch[kvOffCRC:], crc32c(batch[kvOffSchemaID:]))
	return nil
}
