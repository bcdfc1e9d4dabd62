package iggytest

import (
	"crypto/rand"
	"encoding/binary"

	"github.com/OneOfOne/xxhash"
	"github.com/zeebo/xxh3"
)

// Partitioning kinds of SendMessages.
const (
	partitioningBalanced    = 1
	partitioningPartitionID = 2
	partitioningMessagesKey = 3
)

// rawIdent parses an identifier the way the send path does
// (Identifier::from_raw_bytes): every defect is InvalidIdentifier.
func rawIdent(b []byte) (ident, int, uint32) {
	if len(b) < 2 {
		return ident{}, 0, CodeInvalidIdentifier
	}
	kind, n := b[0], int(b[1])
	if kind != 1 && kind != 2 || len(b) < 2+n || n == 0 {
		return ident{}, 0, CodeInvalidIdentifier
	}
	v := b[2 : 2+n]
	if kind == 1 {
		if n != 4 {
			return ident{}, 0, CodeInvalidIdentifier
		}
		return ident{numeric: true, id: binary.LittleEndian.Uint32(v)}, 2 + n, CodeOK
	}
	// The server reads names lossily; invalid UTF-8 then finds no stream.
	return ident{name: string(v)}, 2 + n, CodeOK
}

// PartitionForKey returns the partition a topic with the given number of
// partitions assigns to messages sent with messages-key partitioning:
// xxHash32(key, seed 0) modulo the partition count, as server 0.8.0 does.
func PartitionForKey(key []byte, partitions uint32) uint32 {
	if partitions == 0 {
		return 0
	}
	return xxhash.Checksum32(key) % partitions
}

// Checksum returns the checksum the server stores in a message header: the
// XXH3-64 hash of the whole message (header, payload, user headers) without
// its first 8 bytes, the checksum field itself.
func Checksum(message []byte) uint64 {
	if len(message) < 8 {
		return 0
	}
	return xxh3.Hash(message[8:])
}

// sendRequest is a parsed and validated SendMessages request.
type sendRequest struct {
	stream, topic ident
	kind          uint8
	value         []byte
	buf           []byte   // a private copy of the messages
	bounds        [][2]int // each message's range in buf
}

// sendMessages handles a SendMessages request with s.mu held.
func (s *Server) sendMessages(c *conn, p []byte) (uint32, []byte) {
	req, code := prepareSend(c.authed, p)
	if code != CodeOK {
		return code, nil
	}
	return s.commitSend(req), nil
}

// prepareSend parses and validates a SendMessages payload, in the order
// server 0.8.0 checks things, and copies the messages; it needs no lock.
func prepareSend(authed bool, p []byte) (*sendRequest, uint32) {
	if !authed {
		return nil, CodeUnauthenticated
	}
	total := len(p)
	if total < 4 {
		return nil, CodeInvalidCommand
	}
	metaLen := int(binary.LittleEndian.Uint32(p[0:4]))
	if metaLen > total-4 {
		return nil, CodeInvalidCommand
	}
	meta := p[4 : 4+metaLen]

	sid, n, code := rawIdent(meta)
	if code != CodeOK {
		return nil, code
	}
	pos := n
	tid, n, code := rawIdent(meta[pos:])
	if code != CodeOK {
		return nil, code
	}
	pos += n
	if len(meta) < pos+2 {
		return nil, CodeInvalidCommand
	}
	pkind, plen := meta[pos], int(meta[pos+1])
	switch {
	case pkind < partitioningBalanced || pkind > partitioningMessagesKey,
		pkind == partitioningPartitionID && plen != 4,
		pkind == partitioningBalanced && plen != 0,
		len(meta) < pos+2+plen:
		return nil, CodeInvalidCommand
	}
	pvalue := meta[pos+2 : pos+2+plen]
	pos += 2 + plen
	if len(meta) < pos+4 {
		return nil, CodeInvalidCommand
	}
	count := int(binary.LittleEndian.Uint32(meta[pos : pos+4]))
	indexesSize := count * indexSize
	if indexesSize > total {
		return nil, CodeInvalidCommand
	}
	messagesSize := total - metaLen - indexesSize - 4
	if messagesSize < 0 {
		return nil, CodeInvalidCommand
	}
	indexes := p[4+metaLen : 4+metaLen+indexesSize]
	messages := p[4+metaLen+indexesSize:]

	bounds, code := validateBatch(indexes, messages, count)
	if code != CodeOK {
		return nil, code
	}
	req := &sendRequest{
		stream: sid, topic: tid, kind: pkind,
		value:  append([]byte(nil), pvalue...),
		buf:    append([]byte(nil), messages...),
		bounds: bounds,
	}
	// Random IDs for messages sent with ID 0.
	zero := 0
	for _, b := range bounds {
		if isZero(req.buf[b[0]+8 : b[0]+24]) {
			zero++
		}
	}
	if zero > 0 {
		ids := make([]byte, 16*zero)
		_, _ = rand.Read(ids)
		for _, b := range bounds {
			m := req.buf[b[0]:b[1]]
			if isZero(m[8:24]) {
				copy(m[8:24], ids[:16])
				ids = ids[16:]
				m[8+6] = m[8+6]&0x0f | 0x40 // UUID version 4
				m[8+8] = m[8+8]&0x3f | 0x80 // RFC 4122 variant
			}
		}
	}
	return req, CodeOK
}

// commitSend picks the partition and appends the messages, setting offsets,
// the batch timestamp and checksums. s.mu must be held.
func (s *Server) commitSend(req *sendRequest) uint32 {
	_, t, code := s.resolveTopic(req.stream, req.topic)
	if code != CodeOK {
		return code
	}
	nparts := uint32(len(t.partitions))
	var pid uint32
	switch req.kind {
	case partitioningBalanced:
		if nparts == 0 {
			return CodeTopicIDNotFound
		}
		pid = uint32(t.roundRobin % uint64(nparts))
		t.roundRobin = (t.roundRobin + 1) % uint64(nparts)
	case partitioningPartitionID:
		pid = binary.LittleEndian.Uint32(req.value)
	case partitioningMessagesKey:
		if nparts == 0 {
			return CodePartitionNotFound
		}
		pid = PartitionForKey(req.value, nparts)
	}
	part := t.partition(pid)
	if part == nil {
		return CodePartitionNotFound
	}

	ts := nowMicros()
	stored := make([]storedMessage, len(req.bounds))
	offset := part.next
	for i, b := range req.bounds {
		m := storedMessage(req.buf[b[0]:b[1]:b[1]])
		binary.LittleEndian.PutUint64(m[24:32], offset)
		binary.LittleEndian.PutUint64(m[32:40], ts)
		binary.LittleEndian.PutUint64(m[0:8], Checksum(m))
		stored[i] = m
		offset++
	}
	part.append(stored, s.opts.MaxMessagesPerPartition)
	return CodeOK
}

// validateBatch checks the index table and the messages as the server's
// IggyMessagesBatchMut::validate does and returns each message's byte range.
func validateBatch(indexes, messages []byte, count int) ([][2]int, uint32) {
	if count == 0 {
		return nil, CodeInvalidMessagesCount
	}
	position := func(i int) int { return int(binary.LittleEndian.Uint32(indexes[i*indexSize+4:])) }
	bounds := make([][2]int, count)
	var prevOffset uint64
	var prevPosition, sizes int
	for i := 0; i < count; i++ {
		idx := indexes[i*indexSize : (i+1)*indexSize]
		if binary.LittleEndian.Uint32(idx[0:4]) != 0 {
			return nil, CodeNonZeroOffset
		}
		if binary.LittleEndian.Uint64(idx[8:16]) != 0 {
			return nil, CodeNonZeroTimestamp
		}
		start, end := 0, len(messages)
		if i > 0 {
			start = position(i - 1)
		}
		if i+1 < count {
			end = position(i)
		}
		if start > len(messages) || end > len(messages) || start > end || end-start < messageHeaderSize {
			return nil, CodeMissingIndex
		}
		h := messages[start:end]
		payloadLen := uint64(binary.LittleEndian.Uint32(h[52:56]))
		headersLen := uint64(binary.LittleEndian.Uint32(h[48:52]))
		size := messageHeaderSize + payloadLen + headersLen
		if size > uint64(end-start) {
			return nil, CodeMissingIndex
		}
		if payloadLen > maxPayloadSize {
			return nil, CodeTooBigMessagePayload
		}
		if headersLen > maxUserHeadersSize {
			return nil, CodeTooBigUserHeaders
		}
		offset := binary.LittleEndian.Uint64(h[24:32])
		if offset < prevOffset {
			return nil, CodeInvalidOffset
		}
		if position(i) < prevPosition {
			return nil, CodeCannotReadIndexPosition
		}
		prevOffset, prevPosition = offset, position(i)
		sizes += int(size)
		bounds[i] = [2]int{start, start + int(size)}
	}
	if sizes != len(messages) {
		return nil, CodeInvalidMessagesSize
	}
	return bounds, CodeOK
}

func isZero(b []byte) bool {
	for _, v := range b {
		if v != 0 {
			return false
		}
	}
	return true
}
