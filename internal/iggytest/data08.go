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

// read08 is where a 0.8 poll or offset request reads and writes: the
// partition and the stored offsets (a single consumer's, or its group's)
// with the key in them. none is a group request without a partition of the
// member's to act on.
type read08 struct {
	p       *partition
	offsets map[uint64]uint64
	key     uint64
	g       *group
	t       *topic
	none    bool
}

// resolve08 resolves a target as server 0.8.0's
// resolve_consumer_with_partition_id does: not-found codes for stream and
// topic; a single consumer reads partition 0 when none is given; a group
// needs the connection to be a member (5000, 5006) and reads the partition
// given if the member owns it, else its partitions in turn (advance: a
// poll, which moves the turn on).
func (s *Server) resolve08(c *conn, tg offsetTarget, advance bool) (read08, uint32) {
	_, tp, code := s.resolveTopic(tg.stream, tg.topic)
	if code != CodeOK {
		return read08{}, code
	}
	r := read08{t: tp, key: consumerKey(tg.consumer)}
	pid := tg.pid
	if tg.kind == 2 {
		if r.g = tp.group(tg.consumer); r.g == nil {
			return r, CodeConsumerGroupIDNotFound
		}
		s.settleRevocations(tp, r.g)
		m := r.g.memberOf(c)
		if m == nil {
			return r, CodeConsumerGroupMemberNotFound
		}
		var ok bool
		if pid, ok = m.pick08(tg.pid, tg.hasPID, advance); !ok {
			r.none = true
			return r, CodeOK
		}
		r.key = uint64(r.g.id)
	} else if !tg.hasPID {
		pid = 0
	}
	if r.p = tp.partition(pid); r.p == nil {
		return r, CodePartitionNotFound
	}
	r.offsets = r.p.offsets
	if r.g != nil {
		r.offsets = r.p.groupOffsets
	}
	return r, CodeOK
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
	r, code := s.resolve08(c, target, true)
	if code != CodeOK {
		return code, nil
	}
	var e encoder
	if r.none { // a member with nothing to poll there: an empty poll
		e.u32(0)
		e.u64(0)
		e.u32(0)
		return CodeOK, e.b
	}
	q.key, q.offsets = r.key, r.offsets
	msgs := pollOp(r.p, q)
	if r.g != nil && len(msgs) > 0 {
		r.p.groupPolled[r.g.id] = msgs[len(msgs)-1].offset
	}
	size := 16
	for _, m := range msgs {
		size += len(m.raw)
	}
	e.b = make([]byte, 0, size)
	e.u32(r.p.id)
	e.u64(r.p.currentOffset())
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

// handleOffsets08 serves store, get and delete consumer offset. Reading
// needs no membership (any client may read a group's offsets) and answers
// every failure with an empty body, as "no offset"; storing and deleting a
// group's offset need a partition the member owns (else 3022).
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
	if code == CmdGetConsumerOffset {
		return CodeOK, s.getOffset08(target)
	}
	r, st := s.resolve08(c, target, false)
	switch {
	case st != CodeOK:
		return st, nil
	case r.none:
		return CodeConsumerNotResolved, nil
	case code == CmdDeleteConsumerOffset:
		return deleteOffsetOp(r.offsets, r.key), nil
	}
	if st = storeOffsetOp(r.p, r.offsets, r.key, offset); st == CodeOK && r.g != nil {
		s.settleRevocations(r.t, r.g)
	}
	return st, nil
}

// getOffset08 answers GetConsumerOffset: [partition u32][current u64]
// [stored u64], or nothing.
func (s *Server) getOffset08(target offsetTarget) []byte {
	_, tp, code := s.resolveTopic(target.stream, target.topic)
	if code != CodeOK {
		return nil
	}
	pid := target.pid
	if !target.hasPID {
		pid = 0
	}
	p := tp.partition(pid)
	if p == nil {
		return nil
	}
	offsets, key := p.offsets, consumerKey(target.consumer)
	if target.kind == 2 {
		g := tp.group(target.consumer)
		if g == nil {
			return nil
		}
		offsets, key = p.groupOffsets, uint64(g.id)
	}
	return encodeOffset(p, offsets, key)
}

// encodeOffset writes [partition u32][current u64][stored u64], or nothing
// when no offset is stored under key.
func encodeOffset(p *partition, offsets map[uint64]uint64, key uint64) []byte {
	stored, ok := offsets[key]
	if !ok {
		return nil
	}
	var e encoder
	e.u32(p.id)
	e.u64(p.currentOffset())
	e.u64(stored)
	return e.b
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
