package iggytest

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
// As server 0.9.0: a body that does not decode, or a consumer group (none
// exist here), gets an empty poll; a missing stream, topic or partition is
// refused with its not-found status.
func (s *Server) poll09(h reqHeader, body []byte) [][]byte {
	d := &decoder{b: body}
	target, _ := target09(d)
	q := pollSpec{strategy: d.u8(), value: d.u64(), count: d.u32(), autoCommit: d.u8() != 0}
	if d.err != 0 || q.strategy < 1 || q.strategy > 5 {
		return s.answer09(h, CodeOK, emptyPoll09(0))
	}
	if target.kind == 2 {
		pid := uint32(0)
		if target.hasPID {
			pid = ^uint32(0) // the re-sync sentinel of a fenced group member
		}
		return s.answer09(h, CodeOK, emptyPoll09(pid))
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
	msgs := pollOp(p, q)
	e := encoder{b: make([]byte, 0, 16+batchHeaderSize+len(msgs)*64)}
	e.u32(p.id)
	e.u64(p.currentOffset())
	e.u32(uint32(len(msgs)))
	e.b = appendBatches09(e.b, p.id, msgs)
	return s.answer09(h, CodeOK, e.b)
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
// decode, or the stream or topic is missing; a missing partition is
// refused with status 3007.
func (s *Server) getOffset09(h reqHeader, body []byte) [][]byte {
	target, ok := target09(&decoder{b: body})
	if !ok {
		return s.answer09(h, CodeOK, nil)
	}
	pid := target.pid
	if !target.hasPID {
		pid = 0
	}
	_, p, code := s.resolvePartition(target.stream, target.topic, pid)
	switch {
	case code == CodePartitionNotFound:
		return s.answer09(h, code, nil)
	case code != CodeOK || target.kind == 2:
		return s.answer09(h, CodeOK, nil)
	}
	stored, ok := p.offsets[consumerKey(target.consumer)]
	if !ok {
		return s.answer09(h, CodeOK, nil)
	}
	var e encoder
	e.u32(p.id)
	e.u64(p.currentOffset())
	e.u64(stored)
	return s.answer09(h, CodeOK, e.b)
}

// offsets09 serves StoreConsumerOffset (161: [consumer][stream][topic][u8
// has partition][u32 partition][u64 offset][u8 ack]) and
// DeleteConsumerOffset (162: the same without the offset). Like server
// 0.9.0 it needs an explicit partition and refuses every target that does
// not resolve (a consumer group too) with status 20; an offset past the
// partition's is refused with 4100, deleting a missing one with 3021. The
// reply body is the result section [0].
func (s *Server) offsets09(c *conn, h reqHeader, body []byte) [][]byte {
	d := &decoder{b: body}
	target, _ := target09(d)
	var offset uint64
	if h.op == opStoreConsumerOff {
		offset = d.u64()
	}
	ack := d.u8()
	if d.err != 0 || ack > 1 || target.kind != 1 || !target.hasPID {
		return s.deny09(c, h, CodeResourceNotFound)
	}
	_, p, code := s.resolvePartition(target.stream, target.topic, target.pid)
	if code != CodeOK {
		return s.deny09(c, h, CodeResourceNotFound)
	}
	key := consumerKey(target.consumer)
	if h.op == opStoreConsumerOff {
		code = storeOffsetOp(p, key, offset)
	} else {
		code = deleteOffsetOp(p, key)
	}
	if code != CodeOK {
		return s.deny09(c, h, code)
	}
	body = []byte{0, 0, 0, 0}
	return [][]byte{reply09(h, c.transportID(), 0, s.vsr.op, h.op, 0, len(body)), body}
}
