package iggyinput

// partition is what the input knows of one partition: where it reads
// next, and which read messages are not acknowledged yet.
type partition struct {
	id    uint32
	known bool   // next is set
	next  uint64 // the offset of the next message to read
	// spans are the runs of messages handed out and not yet committed, in
	// offset order.
	spans []*span
	// inFlight is how many messages the spans hold.
	inFlight int
	// committed is the offset of the last message of the longest run
	// acknowledged from the start; hasCommitted is false until one is.
	committed    uint64
	hasCommitted bool
	// stored is what the server was last told (valid with hasStored).
	stored    uint64
	hasStored bool
	// failed stops commits at a span that was not delivered (a nack with
	// replays off): its messages are read again after a restart.
	failed bool
}

// span is one batch of a partition: messages up to last.
type span struct {
	p     *partition
	first uint64
	last  uint64
	n     int
	done  bool
	nack  bool
}

// track records that messages first to last (n of them) were handed out.
func (p *partition) track(first, last uint64, n int) *span {
	s := &span{p: p, first: first, last: last, n: n}
	p.spans = append(p.spans, s)
	p.inFlight += n
	return s
}

// settle marks s acknowledged (or not delivered) and reports whether the
// committed offset moved.
func (p *partition) settle(s *span, delivered bool) bool {
	s.done, s.nack = true, !delivered
	moved := false
	for len(p.spans) > 0 && p.spans[0].done && !p.failed {
		head := p.spans[0]
		if head.nack {
			p.failed = true
			break
		}
		p.spans = p.spans[1:]
		p.inFlight -= head.n
		p.committed, p.hasCommitted, moved = head.last, true, true
	}
	return moved
}

// unstored tells whether the committed offset is ahead of the stored one.
func (p *partition) unstored() bool {
	return p.hasCommitted && (!p.hasStored || p.stored != p.committed)
}

// forget drops what is in flight: the partition is read again from the
// server's stored offset (after it moved to another member and back).
func (p *partition) forget() {
	for _, s := range p.spans {
		s.p = nil
	}
	p.spans, p.inFlight, p.known, p.failed = nil, 0, false, false
	p.hasCommitted, p.hasStored = false, false
}
