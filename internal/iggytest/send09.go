package iggytest

import (
	"encoding/binary"

	"github.com/zeebo/xxh3"
)

// SendMessages in 0.9 (operation 160): body [u32 metadata length][stream
// ident][topic ident][partitioning kind u8, len u8, value][u32 count], then
// one batch: a 256-byte header (partition id u64 @0, base offset @8, base
// timestamp @16, origin timestamp @24, batch length @32 (header + frames),
// batch checksum @40, message count u32 @48, zeros from 52) and the
// frames, each a 48-byte header (checksum u64, id u128, offset delta u32,
// timestamp delta u32, user headers length u32, payload length u32,
// reserved u64 = 0), the payload, the user headers.
//
// As in server 0.9.0 (dispatch_partition_request, then the partition's
// on_request and convert_request_message): a target that does not
// resolve is refused with status 20 (ResourceNotFound); a batch that does
// not decode or verify (frame or batch checksum, count, length, reserved
// bytes) is dropped without an answer; a send whose request number its
// client has used for a stored send already is a duplicate, answered with
// status 0 and an empty body and not stored. The reply body is
// [u32 count = 1][stream u32][topic u32][partition u32][base offset u64].

// sendMeta09 is the decoded metadata section of a send.
type sendMeta09 struct {
	stream, topic ident
	kind          uint8
	value         []byte
	count         uint32
	exact         bool // the section is exactly the metadata length
	batch         []byte
}

// decodeSendMeta09 reads the metadata section as SendMessagesHeader does.
func decodeSendMeta09(body []byte) (sendMeta09, bool) {
	var m sendMeta09
	if len(body) < 4 {
		return m, false
	}
	n := uint64(binary.LittleEndian.Uint32(body))
	if n > uint64(len(body)-4) {
		return m, false
	}
	d := &decoder{b: body[4 : 4+n]}
	m.stream, m.topic = d.ident(), d.ident()
	m.kind = d.u8()
	plen := int(d.u8())
	m.value = d.take(plen)
	m.count = d.u32()
	switch {
	case d.err != 0,
		m.kind == partitioningBalanced && plen != 0,
		m.kind == partitioningPartitionID && plen != 4,
		m.kind == partitioningMessagesKey && plen == 0,
		m.kind < partitioningBalanced || m.kind > partitioningMessagesKey:
		return m, false
	}
	m.exact = d.pos == len(d.b)
	m.batch = body[4+n:]
	return m, true
}

// send09 serves a SendMessages of any connection.
func (s *Server) send09(c *conn, h reqHeader, body []byte) [][]byte {
	s.mu.Lock()
	if c.session == 0 {
		s.mu.Unlock()
		return [][]byte{eviction09(c.transportID(), EvictNoSession, 0, 0)}
	}
	m, ok := decodeSendMeta09(body)
	var t *topic
	var p *partition
	if ok {
		t, p, ok = s.sendTarget09(m)
	}
	if !ok {
		defer s.mu.Unlock()
		return s.deny09(c, h, CodeResourceNotFound)
	}
	s.mu.Unlock()
	frames, ok := verifyBatch09(m.batch, m.count)
	if !ok || !m.exact {
		return nil // the server drops a batch it cannot admit
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.partition(p.id) != p {
		return nil // deleted meanwhile
	}
	if e := s.vsr.clients[c.vsrClient]; e != nil && e.duplicateSend(h.request) {
		s.duplicateSends++
		return [][]byte{reply09(h, c.transportID(), 0, s.vsr.op, opSendMessages, 0, 0)}
	}
	base := s.commitBatch09(t, p, m.batch, frames)
	var e encoder
	e.u32(1)
	e.u32(t.streamID)
	e.u32(t.id)
	e.u32(p.id)
	e.u64(base)
	return [][]byte{reply09(h, c.transportID(), 0, s.vsr.op, opSendMessages, 0, len(e.b)), e.b}
}

// sendTarget09 resolves the partition of a send, advancing the balanced
// round robin.
func (s *Server) sendTarget09(m sendMeta09) (*topic, *partition, bool) {
	_, t, code := s.resolveTopic(m.stream, m.topic)
	if code != CodeOK {
		return nil, nil, false
	}
	pid, code := s.pickPartition(t, m.kind, m.value)
	if code != CodeOK {
		return nil, nil, false
	}
	p := t.partition(pid)
	return t, p, p != nil
}

// verifyBatch09 decodes and verifies a batch as decode_batch_slice does
// and returns each frame's byte range in it.
func verifyBatch09(b []byte, count uint32) ([][2]int, bool) {
	if len(b) < batchHeaderSize {
		return nil, false
	}
	length := binary.LittleEndian.Uint64(b[32:40])
	n := binary.LittleEndian.Uint32(b[48:52])
	if length < batchHeaderSize || length != uint64(len(b)) || !isZero(b[52:batchHeaderSize]) ||
		n == 0 || n != count {
		return nil, false
	}
	var frames [][2]int
	sums := make([]byte, 0, 44+8*int(n))
	sums = append(append(sums, b[0:40]...), b[48:52]...)
	for pos := batchHeaderSize; pos < len(b); {
		end, ok := frameEnd09(b, pos)
		if !ok || uint32(len(frames)) == n {
			return nil, false
		}
		frames = append(frames, [2]int{pos, end})
		sums = append(sums, b[pos:pos+8]...)
		pos = end
	}
	if uint32(len(frames)) != n || xxh3.Hash(sums) != binary.LittleEndian.Uint64(b[40:48]) {
		return nil, false
	}
	return frames, true
}

// frameEnd09 checks the frame at pos (layout, reserved bytes, checksum)
// and returns where it ends.
func frameEnd09(b []byte, pos int) (int, bool) {
	if len(b)-pos < frameHeaderSize || !isZero(b[pos+40:pos+48]) {
		return 0, false
	}
	size := uint64(frameHeaderSize) + uint64(binary.LittleEndian.Uint32(b[pos+32:])) +
		uint64(binary.LittleEndian.Uint32(b[pos+36:]))
	if size > uint64(len(b)-pos) {
		return 0, false
	}
	end := pos + int(size)
	return end, xxh3.Hash(b[pos+8:end]) == binary.LittleEndian.Uint64(b[pos:pos+8])
}

// commitBatch09 stores a verified batch in p with the next offsets and one
// timestamp, and returns its base offset. s.mu must be held.
func (s *Server) commitBatch09(t *topic, p *partition, batch []byte, frames [][2]int) uint64 {
	buf := append([]byte(nil), batch...)
	info := &batchInfo{
		partitionID:   p.id,
		baseOffset:    p.next,
		baseTimestamp: nowMicros(),
		origin:        binary.LittleEndian.Uint64(buf[24:32]),
		count:         uint32(len(frames)),
	}
	stored := make([]storedMessage, len(frames))
	for i, f := range frames {
		stored[i] = storedMessage{raw: buf[f[0]:f[1]:f[1]], batch: info,
			offset: info.baseOffset + uint64(i), timestamp: info.baseTimestamp}
	}
	p.append(stored, s.opts.MaxMessagesPerPartition, s.saveAt(t))
	return info.baseOffset
}

// appendBatches09 appends polled messages as batch records: each run of
// messages from one stored batch as that batch (its header rewritten for
// the count, length and checksum when only part of it is polled), a
// message stored by a 0.8 front end as a batch of its own.
func appendBatches09(b []byte, pid uint32, msgs []storedMessage) []byte {
	for i := 0; i < len(msgs); {
		j := i + 1
		for msgs[i].batch != nil && j < len(msgs) && msgs[j].batch == msgs[i].batch {
			j++
		}
		b = appendBatch09(b, pid, msgs[i:j])
		i = j
	}
	return b
}

// appendBatch09 appends one batch record of messages from one batch.
func appendBatch09(b []byte, pid uint32, run []storedMessage) []byte {
	info := run[0].batch
	var frames [][]byte
	if info == nil {
		m := run[0]
		info = &batchInfo{partitionID: pid, baseOffset: m.offset, baseTimestamp: m.timestamp, origin: m.originTimestamp()}
		frames = [][]byte{frameOf08(m)}
	} else {
		for _, m := range run {
			frames = append(frames, m.raw)
		}
	}
	hdr := make([]byte, batchHeaderSize)
	binary.LittleEndian.PutUint64(hdr[0:8], uint64(info.partitionID))
	binary.LittleEndian.PutUint64(hdr[8:16], info.baseOffset)
	binary.LittleEndian.PutUint64(hdr[16:24], info.baseTimestamp)
	binary.LittleEndian.PutUint64(hdr[24:32], info.origin)
	length := batchHeaderSize
	for _, f := range frames {
		length += len(f)
	}
	binary.LittleEndian.PutUint64(hdr[32:40], uint64(length))
	binary.LittleEndian.PutUint32(hdr[48:52], uint32(len(frames)))
	sums := append(append([]byte(nil), hdr[0:40]...), hdr[48:52]...)
	for _, f := range frames {
		sums = append(sums, f[0:8]...)
	}
	binary.LittleEndian.PutUint64(hdr[40:48], xxh3.Hash(sums))
	b = append(b, hdr...)
	for _, f := range frames {
		b = append(b, f...)
	}
	return b
}

// frameOf08 converts a 0.8 message to a 0.9 frame (deltas 0).
func frameOf08(m storedMessage) []byte {
	f := make([]byte, frameHeaderSize, frameHeaderSize+len(m.payload())+len(m.userHeaders()))
	copy(f[8:24], m.id())
	binary.LittleEndian.PutUint32(f[32:36], uint32(len(m.userHeaders())))
	binary.LittleEndian.PutUint32(f[36:40], uint32(len(m.payload())))
	f = append(append(f, m.payload()...), m.userHeaders()...)
	binary.LittleEndian.PutUint64(f[0:8], Checksum(f))
	return f
}
