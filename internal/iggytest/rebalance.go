package iggytest

import "time"

// The cooperative rebalance of a join and its pending revocations (see
// groups.go).

// membersInOrder returns g's members in id order.
func (g *group) membersInOrder() []*member {
	var ms []*member
	g.members.each(func(_ uint32, m *member) { ms = append(ms, m) })
	return ms
}

// assignUnheld gives the partitions no member holds to the members that
// hold none, round robin (the first step of both versions).
func (g *group) assignUnheld(t *topic, ms []*member) {
	held := map[uint32]bool{}
	var idle []*member
	for _, m := range ms {
		for _, pid := range m.partitions {
			held[pid] = true
		}
		if len(m.partitions) == 0 {
			idle = append(idle, m)
		}
	}
	if len(idle) == 0 {
		return
	}
	i := 0
	for pid := range uint32(len(t.partitions)) {
		if !held[pid] {
			m := idle[i%len(idle)]
			m.partitions = append(m.partitions, pid)
			i++
		}
	}
}

// idleMembers returns the members holding nothing that no revocation is
// on its way to.
func idleMembers(ms []*member) []*member {
	targets := map[*member]bool{}
	for _, m := range ms {
		for _, r := range m.pending {
			targets[r.target] = true
		}
	}
	var idle []*member
	for _, m := range ms {
		if len(m.partitions) == 0 && !targets[m] {
			idle = append(idle, m)
		}
	}
	return idle
}

// excess returns, newest first, the partitions m holds beyond its share
// (fair, or fair+1 while *withRemainder lasts) that are not pending.
func (m *member) excess(fair int, withRemainder *int) []uint32 {
	effective := m.pollablePartitions()
	allowed := fair
	if *withRemainder > 0 {
		allowed++
	}
	if len(effective) > fair && *withRemainder > 0 {
		*withRemainder--
	}
	if len(effective) <= allowed {
		return nil
	}
	out := make([]uint32, 0, len(effective)-allowed)
	for i := len(effective) - 1; len(out) < len(effective)-allowed; i-- {
		out = append(out, effective[i])
	}
	return out
}

// cooperative08 is server 0.8.0's rebalance_cooperative: each idle member
// gets at most one partition of an over-assigned member, as a pending
// revocation (settleRevocations completes those with nothing in flight).
func (s *Server) cooperative08(t *topic, g *group) {
	ms := g.membersInOrder()
	if len(ms) == 0 || len(t.partitions) == 0 {
		return
	}
	g.assignUnheld(t, ms)
	idle := idleMembers(ms)
	fair, remainder := len(t.partitions)/len(ms), len(t.partitions)%len(ms)
	for _, m := range ms {
		if len(idle) == 0 {
			break
		}
		for _, pid := range m.excess(fair, &remainder) {
			if len(idle) == 0 {
				break
			}
			m.pending = append(m.pending, revocation{partition: pid, target: idle[0], since: time.Now()})
			idle = idle[1:]
		}
	}
}

// inFlight returns the partitions of g whose polled messages the group
// has not committed, held by a member; it forgets the marks of partitions
// nobody holds (a departed member's), as the 0.9 join's gather_in_flight.
func (s *Server) inFlight(t *topic, g *group) map[uint32]bool {
	held := map[uint32]bool{}
	g.members.each(func(_ uint32, m *member) {
		for _, pid := range m.partitions {
			held[pid] = true
		}
	})
	out := map[uint32]bool{}
	for _, p := range t.partitions {
		polled, ok := p.groupPolled[g.id]
		if committed, done := p.groupOffsets[uint64(g.id)]; !ok || done && committed >= polled {
			continue
		}
		if held[p.id] {
			out[p.id] = true
		} else {
			delete(p.groupPolled, g.id)
		}
	}
	return out
}

// cooperative09 is server 0.9's rebalance_cooperative: the excess of every
// over-assigned member goes round robin to the idle members, at once for a
// partition with nothing in flight, as a pending revocation otherwise.
func (s *Server) cooperative09(t *topic, g *group, inFlight map[uint32]bool) {
	g.generation++
	ms := g.membersInOrder()
	if len(ms) == 0 || len(t.partitions) == 0 {
		return
	}
	g.assignUnheld(t, ms)
	idle := idleMembers(ms)
	if len(idle) == 0 {
		return
	}
	type move struct {
		pid    uint32
		source *member
	}
	var moves []move
	fair, remainder := len(t.partitions)/len(ms), len(t.partitions)%len(ms)
	for _, m := range ms {
		for _, pid := range m.excess(fair, &remainder) {
			moves = append(moves, move{pid, m})
		}
	}
	for i, mv := range moves {
		target := idle[i%len(idle)]
		if inFlight[mv.pid] {
			mv.source.pending = append(mv.source.pending, revocation{partition: mv.pid, target: target, since: time.Now()})
			continue
		}
		mv.source.partitions = removePartition(mv.source.partitions, mv.pid)
		target.partitions = append(target.partitions, mv.pid)
	}
}

func removePartition(ps []uint32, pid uint32) []uint32 {
	out := ps[:0]
	for _, p := range ps {
		if p != pid {
			out = append(out, p)
		}
	}
	return out
}

// settleRevocations completes every pending revocation of g whose
// partition was never polled by the group, whose polled messages are
// committed, or that waited Options.RebalancingTimeout (the server checks
// on offset commits and on a timer; this model whenever it looks at g).
func (s *Server) settleRevocations(t *topic, g *group) {
	timeout := s.opts.RebalancingTimeout
	for _, m := range g.membersInOrder() {
		for i := 0; i < len(m.pending); {
			r := m.pending[i]
			p := t.partition(r.partition)
			done := p == nil || time.Since(r.since) >= timeout
			if p != nil {
				polled, ok := p.groupPolled[g.id]
				committed, stored := p.groupOffsets[uint64(g.id)]
				done = done || !ok || stored && committed >= polled
			}
			if !done {
				i++
				continue
			}
			if !s.completeRevocation(t, g, m, i) {
				return // a full rebalance cleared every revocation
			}
		}
	}
}

// completeRevocation moves the i-th pending partition of m to its target;
// when the target has left, it reassigns everything and returns false.
func (s *Server) completeRevocation(t *topic, g *group, m *member, i int) bool {
	r := m.pending[i]
	m.pending = append(m.pending[:i:i], m.pending[i+1:]...)
	m.partitions = removePartition(m.partitions, r.partition)
	if g.memberOf(r.target.conn) != r.target {
		g.rebalance(t)
		return false
	}
	r.target.partitions = append(r.target.partitions, r.partition)
	g.generation++
	return true
}
