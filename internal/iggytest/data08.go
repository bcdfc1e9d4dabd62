package iggytest

import "encoding/binary"

// The 0.8 message commands besides SendMessages: poll, consumer offsets,
// flush.

// offsetTarget is the decoded head of a poll or consumer-offset request:
// consumer, stream, topic and optional partition.
type offsetTarget struct {
	kind     uint8 // 1 consumer, 2 consumer group
	consumer ident
	stream   ident
	topic    ident
	pid      uint32
	hasPID   bool
}

func decodeTarget(d *decoder) offsetTarget {
	var t offsetTarget
	t.kind, t.consumer = d.consumer()
	t.stream = d.ident()
	t.topic = d.ident()
	t.pid, t.hasPID = d.optPartition()
	return t
}

// partition08 resolves a target's partition as server 0.8.0 does: not
// found codes for stream and topic, consumer groups unknown, partition 0
// when none is given.
func (s *Server) partition08(t offsetTarget) (*partition, uint32) {
	_, tp, code := s.resolveTopic(t.stream, t.topic)
	if code != CodeOK {
		return nil, code
	}
	if t.kind == 2 {
		return nil, CodeConsumerGroupIDNotFound
	}
	pid := t.pid
	if !t.hasPID {
		pid = 0
	}
	p := tp.partition(pid)
	if p == nil {
		return nil, CodePartitionNotFound
	}
	return p, CodeOK
}

func (s *Server) pollMessages08(c *conn, d *decoder) (uint32, []byte) {
	target := decodeTarget(d)
	q := pollSpec{strategy: d.u8()}
	if d.err == 0 && (q.strategy < 1 || q.strategy > 5) {
		d.fail(CodeInvalidCommand)
	}
	q.value = d.u64()
	q.count = d.u32()
	q.autoCommit = d.u8() != 0
	if d.err != 0 {
		return d.err, nil
	}
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	p, code := s.partition08(target)
	if code != CodeOK {
		return code, nil
	}
	q.key = consumerKey(target.consumer)
	msgs := pollOp(p, q)
	size := 16
	for _, m := range msgs {
		size += len(m.raw)
	}
	e := encoder{b: make([]byte, 0, size)}
	e.u32(p.id)
	e.u64(p.currentOffset())
	e.u32(uint32(len(msgs)))
	for _, m := range msgs {
		e.b = appendMessage08(e.b, m)
	}
	return CodeOK, e.b
}

// appendMessage08 appends a stored message in the 0.8 layout: as stored,
// or converted from a 0.9 frame (with a 0.8 checksum).
func appendMessage08(b []byte, m storedMessage) []byte {
	if m.batch == nil {
		return append(b, m.raw...)
	}
	start := len(b)
	b = append(b, make([]byte, messageHeaderSize)...)
	h := b[start:]
	copy(h[8:24], m.id())
	binary.LittleEndian.PutUint64(h[24:32], m.offset)
	binary.LittleEndian.PutUint64(h[32:40], m.timestamp)
	binary.LittleEndian.PutUint64(h[40:48], m.originTimestamp())
	binary.LittleEndian.PutUint32(h[48:52], uint32(len(m.userHeaders())))
	binary.LittleEndian.PutUint32(h[52:56], uint32(len(m.payload())))
	b = append(append(b, m.payload()...), m.userHeaders()...)
	binary.LittleEndian.PutUint64(b[start:start+8], Checksum(b[start:]))
	return b
}

// handleOffsets08 serves store, get and delete consumer offset.
func (s *Server) handleOffsets08(c *conn, code Command, d *decoder) (uint32, []byte) {
	target := decodeTarget(d)
	var offset uint64
	if code == CmdStoreConsumerOffset {
		offset = d.u64()
	}
	if d.err != 0 {
		return d.err, nil
	}
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	p, st := s.partition08(target)
	key := consumerKey(target.consumer)
	switch {
	case code == CmdGetConsumerOffset && st != CodeOK:
		return CodeOK, nil // not found reads as no offset
	case st != CodeOK:
		return st, nil
	case code == CmdStoreConsumerOffset:
		return storeOffsetOp(p, key, offset), nil
	case code == CmdDeleteConsumerOffset:
		return deleteOffsetOp(p, key), nil
	}
	stored, ok := p.offsets[key]
	if !ok {
		return CodeOK, nil
	}
	var e encoder
	e.u32(p.id)
	e.u64(p.currentOffset())
	e.u64(stored)
	return CodeOK, e.b
}

// flush08 serves FlushUnsavedBuffer: [stream ident][topic ident]
// [u32 partition][u8 fsync]. The fsync flag is accepted and changes
// nothing here.
func (s *Server) flush08(c *conn, d *decoder) (uint32, []byte) {
	sid := d.ident()
	tid := d.ident()
	pid := d.u32()
	_ = d.u8() // fsync
	if d.err != 0 {
		return d.err, nil
	}
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	return s.flushOp(sid, tid, pid), nil
}
