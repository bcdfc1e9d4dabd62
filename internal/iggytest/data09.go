package iggytest

import "slices"

// Poll and consumer offsets in 0.9. Requests are laid out as in 0.8, except
// that store and delete consumer offset end with an ack level byte (0 none,
// 1 quorum), and that polls answer with batch records.

// target09 decodes the head of a poll or consumer-offset request; any
// decoding error is reported as !ok.
func target09(d *decoder) (offsetTarget, bool) {
	t := decodeTarget(d)
	return t, d.err == 0
}

// poll09 serves PollMessages: body [consumer][stream][topic][u8 has
// partition][u32 partition][u8 strategy][u64 value][u32 count][u8 auto
// commit]; reply [u32 partition][u64 current offset][u32 count][batches].
// As server 0.9.0: a body that does not decode gets an empty poll; a
// missing stream, topic or partition is refused with its not-found status.
// A group member must name a partition (else an empty poll of partition
// 0) it may poll: one it owns and is not handing over (else an empty poll
// of partition 4294967295, the sign to read its assignment again).
func (s *Server) poll09(c *conn, h reqHeader, body []byte) [][]byte {
	d := &decoder{b: body}
	target, _ := target09(d)
	q := pollSpec{strategy: d.u8(), value: d.u64(), count: d.u32(), autoCommit: d.u8() != 0}
	if d.err != 0 || q.strategy < 1 || q.strategy > 5 {
		return s.answer09(h, CodeOK, emptyPoll09(0))
	}
	var g *group
	if target.kind == 2 {
		if !target.hasPID {
			return s.answer09(h, CodeOK, emptyPoll09(0))
		}
		var m *member
		if g, m = s.fence09(c, target); m == nil || !m.pollable(target.pid) {
			return s.answer09(h, CodeOK, emptyPoll09(resyncPartition))
		}
	}
	pid := target.pid
	if !target.hasPID {
		pid = 0
	}
	_, p, code := s.resolvePartition(target.stream, target.topic, pid)
	if code != CodeOK {
		return s.answer09(h, code, nil)
	}
	q.key = consumerKey(target.consumer)
	if g != nil {
		q.key, q.offsets = uint64(g.id), p.groupOffsets
	}
	msgs := pollOp(p, q)
	if g != nil && len(msgs) > 0 {
		p.groupPolled[g.id] = msgs[len(msgs)-1].offset
	}
	e := encoder{b: make([]byte, 0, 16+batchHeaderSize+len(msgs)*64)}
	e.u32(p.id)
	e.u64(p.currentOffset())
	e.u32(uint32(len(msgs)))
	e.b = appendBatches09(e.b, p.id, msgs)
	return s.answer09(h, CodeOK, e.b)
}

// resyncPartition is the partition of an empty poll that tells a group
// member its assignment changed (RESYNC_REQUIRED_PARTITION_SENTINEL).
const resyncPartition = ^uint32(0)

// fence09 finds the group of a 0.9 group request and c's membership in
// it (nil when either is missing).
func (s *Server) fence09(c *conn, target offsetTarget) (*group, *member) {
	_, g, code := s.resolveGroup(target.stream, target.topic, target.consumer)
	if code != CodeOK {
		return nil, nil
	}
	return g, g.memberOf(c)
}

func emptyPoll09(pid uint32) []byte {
	var e encoder
	e.u32(pid)
	e.u64(0)
	e.u32(0)
	return e.b
}

// getOffset09 serves GetConsumerOffset: [partition u32][current u64]
// [stored u64], or an empty body when nothing is stored, the body does not
// decode, or the stream, topic or group is missing; a missing partition is
// refused with status 3007. Any client may read a group's offsets.
func (s *Server) getOffset09(h reqHeader, body []byte) [][]byte {
	target, ok := target09(&decoder{b: body})
	if !ok {
		return s.answer09(h, CodeOK, nil)
	}
	pid := target.pid
	if !target.hasPID {
		pid = 0
	}
	t, p, code := s.resolvePartition(target.stream, target.topic, pid)
	switch {
	case code == CodePartitionNotFound:
		return s.answer09(h, code, nil)
	case code != CodeOK:
		return s.answer09(h, CodeOK, nil)
	}
	offsets, key := p.offsets, consumerKey(target.consumer)
	if target.kind == 2 {
		g := t.group(target.consumer)
		if g == nil {
			return s.answer09(h, CodeOK, nil)
		}
		offsets, key = p.groupOffsets, uint64(g.id)
	}
	return s.answer09(h, CodeOK, encodeOffset(p, offsets, key))
}

// offsets09 serves StoreConsumerOffset (161: [consumer][stream][topic][u8
// has partition][u32 partition][u64 offset][u8 ack]) and
// DeleteConsumerOffset (162: the same without the offset). Like server
// 0.9.0 it needs an explicit partition and refuses every target that does
// not resolve with status 20: a group's offset too unless the connection
// is a member that owns the partition (handing it over included). An
// offset past the partition's is refused with 4100, deleting a missing one
// with 3021. The reply body is the result section [0].
func (s *Server) offsets09(c *conn, h reqHeader, body []byte) [][]byte {
	d := &decoder{b: body}
	target, _ := target09(d)
	var offset uint64
	if h.op == opStoreConsumerOff {
		offset = d.u64()
	}
	ack := d.u8()
	if d.err != 0 || ack > 1 || !target.hasPID {
		return s.deny09(c, h, CodeResourceNotFound)
	}
	var g *group
	if target.kind == 2 {
		var m *member
		if g, m = s.fence09(c, target); m == nil || !slices.Contains(m.partitions, target.pid) {
			return s.deny09(c, h, CodeResourceNotFound)
		}
	}
	t, p, code := s.resolvePartition(target.stream, target.topic, target.pid)
	if code != CodeOK {
		return s.deny09(c, h, CodeResourceNotFound)
	}
	offsets, key := p.offsets, consumerKey(target.consumer)
	if g != nil {
		offsets, key = p.groupOffsets, uint64(g.id)
	}
	if h.op == opStoreConsumerOff {
		code = storeOffsetOp(p, offsets, key, offset)
	} else {
		code = deleteOffsetOp(offsets, key)
	}
	if code != CodeOK {
		return s.deny09(c, h, code)
	}
	if g != nil {
		s.settleRevocations(t, g)
	}
	body = []byte{0, 0, 0, 0}
	return [][]byte{reply09(h, c.transportID(), 0, s.vsr.op, h.op, 0, len(body)), body}
}
