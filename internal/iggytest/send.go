package iggytest

import (
	"encoding/binary"

	"github.com/OneOfOne/xxhash"
	"github.com/zeebo/xxh3"
)

// Partitioning kinds of SendMessages (both dialects).
const (
	partitioningBalanced    = 1
	partitioningPartitionID = 2
	partitioningMessagesKey = 3
)

// PartitionForKey returns the partition a topic with the given number of
// partitions assigns to messages sent with messages-key partitioning:
// xxHash32(key, seed 0) modulo the partition count, as servers 0.8.0 and
// 0.9.0 do.
func PartitionForKey(key []byte, partitions uint32) uint32 {
	if partitions == 0 {
		return 0
	}
	return xxhash.Checksum32(key) % partitions
}

// Checksum returns the checksum of a stored message: the XXH3-64 hash of
// the message without its first 8 bytes, the checksum field itself. It
// holds for a 0.8 message (64-byte header, payload, user headers), which
// the server stamps, and for a 0.9 frame (48-byte header, payload, user
// headers), which the client stamps and the server verifies.
func Checksum(message []byte) uint64 {
	if len(message) < 8 {
		return 0
	}
	return xxh3.Hash(message[8:])
}

// pickPartition chooses the partition of a send to t, advancing the
// balanced round robin, or returns the 0.8 error code. It counts the sends
// that leave the choice to the key (KeyedSendCount).
func (s *Server) pickPartition(t *topic, kind uint8, value []byte) (uint32, uint32) {
	nparts := uint32(len(t.partitions))
	switch kind {
	case partitioningBalanced:
		if nparts == 0 {
			return 0, CodeTopicIDNotFound
		}
		pid := uint32(t.roundRobin % uint64(nparts))
		t.roundRobin = (t.roundRobin + 1) % uint64(nparts)
		return pid, CodeOK
	case partitioningPartitionID:
		return binary.LittleEndian.Uint32(value), CodeOK
	case partitioningMessagesKey:
		s.keyedSends++
		if nparts == 0 {
			return 0, CodePartitionNotFound
		}
		return PartitionForKey(value, nparts), CodeOK
	}
	return 0, CodeInvalidCommand
}

// saveAt is the unsaved-buffer threshold of topic t: 0 (save at once) for
// a persisted topic.
func (s *Server) saveAt(t *topic) int {
	if t.persisted {
		return 0
	}
	if t.messagesRequiredToSave > 0 {
		return int(t.messagesRequiredToSave)
	}
	return s.opts.MessagesRequiredToSave
}

func isZero(b []byte) bool {
	for _, v := range b {
		if v != 0 {
			return false
		}
	}
	return true
}
