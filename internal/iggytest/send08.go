package iggytest

import (
	"crypto/rand"
	"encoding/binary"
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

// sendRequest is a parsed and validated SendMessages request.
type sendRequest struct {
	stream, topic ident
	kind          uint8
	value         []byte
	buf           []byte   // a private copy of the messages
	bounds        [][2]int // each message's range in buf
}

// prepareSend08 parses and validates a 0.8 SendMessages payload, in the order
// server 0.8.0 checks things, and copies the messages; it needs no lock.
func prepareSend08(authed bool, p []byte) (*sendRequest, uint32) {
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

	bounds, code := validateBatch08(indexes, messages, count)
	if code != CodeOK {
		return nil, code
	}
	req := &sendRequest{
		stream: sid, topic: tid, kind: pkind,
		value:  append([]byte(nil), pvalue...),
		buf:    append([]byte(nil), messages...),
		bounds: bounds,
	}
	assignIDs(req.buf, bounds)
	return req, CodeOK
}

// assignIDs gives every message sent with ID 0 a random UUID v4, as server
// 0.8.0 does.
func assignIDs(buf []byte, bounds [][2]int) {
	zero := 0
	for _, b := range bounds {
		if isZero(buf[b[0]+8 : b[0]+24]) {
			zero++
		}
	}
	if zero == 0 {
		return
	}
	ids := make([]byte, 16*zero)
	_, _ = rand.Read(ids)
	for _, b := range bounds {
		m := buf[b[0]:b[1]]
		if isZero(m[8:24]) {
			copy(m[8:24], ids[:16])
			ids = ids[16:]
			m[8+6] = m[8+6]&0x0f | 0x40 // UUID version 4
			m[8+8] = m[8+8]&0x3f | 0x80 // RFC 4122 variant
		}
	}
}

// commitSend picks the partition and appends the messages of a 0.8 send,
// setting offsets, the batch timestamp and checksums. s.mu must be held.
func (s *Server) commitSend(req *sendRequest) uint32 {
	_, t, code := s.resolveTopic(req.stream, req.topic)
	if code != CodeOK {
		return code
	}
	pid, code := s.pickPartition(t, req.kind, req.value)
	if code != CodeOK {
		return code
	}
	part := t.partition(pid)
	if part == nil {
		return CodePartitionNotFound
	}
	ts := nowMicros()
	stored := make([]storedMessage, len(req.bounds))
	offset := part.next
	for i, b := range req.bounds {
		m := req.buf[b[0]:b[1]:b[1]]
		binary.LittleEndian.PutUint64(m[24:32], offset)
		binary.LittleEndian.PutUint64(m[32:40], ts)
		binary.LittleEndian.PutUint64(m[0:8], Checksum(m))
		stored[i] = storedMessage{raw: m, offset: offset, timestamp: ts}
		offset++
	}
	part.append(stored, s.opts.MaxMessagesPerPartition, s.saveAt(t))
	return CodeOK
}

// validateBatch08 checks the 0.8 index table and the messages as the server's
// IggyMessagesBatchMut::validate does and returns each message's byte range.
func validateBatch08(indexes, messages []byte, count int) ([][2]int, uint32) {
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
