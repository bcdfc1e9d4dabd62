package iggytest

// The consumer group commands of both front ends (groups.go has the
// model). Bodies are the same in 0.8 and 0.9: create [stream][topic]
// [name]; get, delete, join, leave (and 0.9's sync) [stream][topic][group];
// get groups [stream][topic].

// encodeGroup writes a group: [id u32][partitions u32][members u32]
// [name], then with members, per member [id u32][count u32]
// [partition u32]* (the partitions it owns, handovers included).
func encodeGroup(e *encoder, t *topic, g *group, members bool) {
	ms := g.membersInOrder()
	e.u32(g.id)
	e.u32(uint32(len(t.partitions)))
	if !members {
		e.u32(0)
		e.name(g.name)
		return
	}
	e.u32(uint32(len(ms)))
	e.name(g.name)
	for _, m := range ms {
		e.u32(m.id)
		e.u32(uint32(len(m.partitions)))
		for _, pid := range m.partitions {
			e.u32(pid)
		}
	}
}

// encodeGroups writes every group of t without members.
func encodeGroups(e *encoder, t *topic) {
	t.groups.each(func(_ uint32, g *group) {
		e.u32(g.id)
		e.u32(uint32(len(t.partitions)))
		e.u32(uint32(g.members.len()))
		e.name(g.name)
	})
}

// handleGroups08 serves the 0.8 consumer group commands as server 0.8.0:
// reads of a missing stream, topic or group answer an empty body; create
// answers the group without members; the others answer nothing, with the
// codes 1009, 2010, 5000 (no such group), 5004 (name taken) and 5006
// (leaving a group the connection is not a member of).
func (s *Server) handleGroups08(c *conn, code Command, d *decoder) (uint32, []byte) {
	sid, tid := d.ident(), d.ident()
	var gid ident
	var name string
	switch code {
	case CmdCreateConsumerGroup:
		name = d.name()
	case CmdGetConsumerGroups:
	default:
		gid = d.ident()
	}
	if d.err != 0 {
		return d.err, nil
	}
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	var e encoder
	switch code {
	case CmdGetConsumerGroups:
		if _, t, st := s.resolveTopic(sid, tid); st == CodeOK {
			encodeGroups(&e, t)
		}
		return CodeOK, e.b
	case CmdGetConsumerGroup:
		if t, g, st := s.resolveGroup(sid, tid, gid); st == CodeOK {
			encodeGroup(&e, t, g, true)
		}
		return CodeOK, e.b
	case CmdCreateConsumerGroup:
		_, t, st := s.resolveTopic(sid, tid)
		if st != CodeOK {
			return st, nil
		}
		g, st := s.createGroupOp(t, name)
		if st != CodeOK {
			return st, nil
		}
		encodeGroup(&e, t, g, false)
		return CodeOK, e.b
	}
	return s.groupOp(c, code, sid, tid, gid), nil
}

// groupOp carries out join, leave or delete group.
func (s *Server) groupOp(c *conn, code Command, sid, tid, gid ident) uint32 {
	t, g, st := s.resolveGroup(sid, tid, gid)
	if st != CodeOK {
		return st
	}
	switch code {
	case CmdJoinConsumerGroup:
		s.joinGroupOp(t, g, c)
	case CmdLeaveConsumerGroup:
		return s.leaveGroupOp(t, g, c)
	default:
		s.deleteGroupOp(t, g)
	}
	return CodeOK
}

// admitCreateGroup09 admits CreateConsumerGroup ([stream][topic][name]);
// the committed payload is the group without members.
func (s *Server) admitCreateGroup09(d *decoder) (metaRun, uint32) {
	sid, tid := d.ident(), d.ident()
	name := d.name()
	if d.err != 0 {
		return nil, CodeInvalidCommand
	}
	return func() (uint32, []byte) {
		_, t, code := s.resolveTopic(sid, tid)
		if code != CodeOK {
			return code, nil
		}
		g, code := s.createGroupOp(t, name)
		if code != CodeOK {
			return code, nil
		}
		var e encoder
		encodeGroup(&e, t, g, false)
		return CodeOK, e.b
	}, CodeOK
}

// admitGroupOp09 admits DeleteConsumerGroup, JoinConsumerGroup and
// LeaveConsumerGroup ([stream][topic][group]) for the connection c.
func (s *Server) admitGroupOp09(c *conn, op uint8, d *decoder) (metaRun, uint32) {
	sid, tid, gid := d.ident(), d.ident(), d.ident()
	if d.err != 0 {
		return nil, CodeInvalidCommand
	}
	return func() (uint32, []byte) { return s.groupOp(c, opCommands[op], sid, tid, gid), nil }, CodeOK
}

// readGroups09 serves the 0.9 group reads: get group and get groups (a
// missing stream or topic is refused with its status, a missing group is
// an empty body) and sync group, the caller's assignment: [generation u64]
// [count u32][partition u32]* of the partitions it polls (not those it is
// handing over), or an empty body when it is no member or anything is
// missing.
func (s *Server) readGroups09(c *conn, h reqHeader, code Command, body []byte) [][]byte {
	d := &decoder{b: body}
	sid, tid := d.ident(), d.ident()
	var gid ident
	if code != CmdGetConsumerGroups {
		gid = d.ident()
	}
	if d.err != 0 {
		return s.answer09(h, CodeInvalidCommand, nil)
	}
	var e encoder
	_, t, st := s.resolveTopic(sid, tid)
	switch {
	case st != CodeOK && code == CmdSyncConsumerGroup:
		return s.answer09(h, CodeOK, nil)
	case st != CodeOK:
		return s.answer09(h, st, nil)
	case code == CmdGetConsumerGroups:
		encodeGroups(&e, t)
		return s.answer09(h, CodeOK, e.b)
	}
	g := t.group(gid)
	if g == nil {
		return s.answer09(h, CodeOK, nil)
	}
	s.settleRevocations(t, g)
	if code == CmdGetConsumerGroup {
		encodeGroup(&e, t, g, true)
		return s.answer09(h, CodeOK, e.b)
	}
	m := g.memberOf(c)
	if m == nil {
		return s.answer09(h, CodeOK, nil)
	}
	ps := m.pollablePartitions()
	e.u64(g.generation)
	e.u32(uint32(len(ps)))
	for _, pid := range ps {
		e.u32(pid)
	}
	return s.answer09(h, CodeOK, e.b)
}
