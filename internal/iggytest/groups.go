package iggytest

import (
	"slices"
	"time"
)

// Consumer groups, shared by both front ends (guarded by Server.mu). A
// member is a connection; the server assigns a topic's partitions to the
// members round robin. The rules are those of server-0.8.0
// core/server/src/metadata/consumer_group.rs (ConsumerGroupMeta) and
// server-0.9.0-edge.5 core/metadata/src/stm/consumer_group.rs
// (ConsumerGroup):
//
//   - a leave, a disconnect or a change of the partition count reassigns
//     every partition: partition i to the i-th member (modulo), members in
//     id order;
//   - a join is cooperative: partitions nobody holds go to the members
//     holding none; then every member above its fair share (partitions /
//     members, one more for the first remainder ones) gives its last
//     partitions to the members holding none (0.8: one each, the rest
//     stays; 0.9: all the excess, round robin). A partition whose polled
//     messages the group has not committed (0.9: only such a partition;
//     0.8: any, though one never polled or already committed moves at once)
//     stays with its member, which can still commit but no longer polls it,
//     until the group's offset reaches what was polled or
//     Options.RebalancingTimeout passes (pending revocation);
//   - a group's offsets and "last polled" marks are kept per partition
//     under the group's id; 0.8 ids are slab keys (a freed one is reused),
//     0.9 ids never repeat.

// group is a consumer group of a topic.
type group struct {
	id         uint32
	name       string
	members    slab[member] // keys are the 0.9 member ids
	generation uint64       // 0.9: moves on with every change of assignment
}

// member is one connection's membership in a group.
type member struct {
	id         uint32 // as reported: 0.8 one above the highest, 0.9 the slab key
	conn       *conn
	partitions []uint32 // owned, pending revocations included
	pending    []revocation
	cursor     int // 0.8: the turn of the next poll without a partition
}

// revocation is a partition on its way from its member to target.
type revocation struct {
	partition uint32
	target    *member
	since     time.Time
}

// group finds a topic's group by id or name.
func (t *topic) group(id ident) *group { return lookup(&t.groups, t.groupByName, id) }

// resolveGroup finds a group or returns the code of the level that missed.
func (s *Server) resolveGroup(sid, tid, gid ident) (*topic, *group, uint32) {
	_, t, code := s.resolveTopic(sid, tid)
	if code != CodeOK {
		return nil, nil, code
	}
	g := t.group(gid)
	if g == nil {
		return t, nil, CodeConsumerGroupIDNotFound
	}
	s.settleRevocations(t, g)
	return t, g, CodeOK
}

// createGroupOp creates a group in t.
func (s *Server) createGroupOp(t *topic, name string) (*group, uint32) {
	if _, ok := t.groupByName[name]; ok {
		return nil, CodeConsumerGroupNameAlreadyExists
	}
	g := &group{name: name}
	g.id = t.groups.insert(g)
	if t.groupByName == nil {
		t.groupByName = map[string]uint32{}
	}
	t.groupByName[name] = g.id
	return g, CodeOK
}

// deleteGroupOp deletes a group, its memberships and its offsets.
func (s *Server) deleteGroupOp(t *topic, g *group) {
	delete(t.groupByName, g.name)
	if s.opts.Version.vsr() {
		t.groups.retire(g.id)
	} else {
		t.groups.remove(g.id)
	}
	for _, p := range t.partitions {
		delete(p.groupOffsets, uint64(g.id))
		delete(p.groupPolled, g.id)
	}
}

// memberOf returns c's membership in g, or nil.
func (g *group) memberOf(c *conn) *member {
	var found *member
	g.members.each(func(_ uint32, m *member) {
		if m.conn == c {
			found = m
		}
	})
	return found
}

// joinGroupOp makes c a member of g (again: nothing changes) and hands it
// partitions cooperatively.
func (s *Server) joinGroupOp(t *topic, g *group, c *conn) {
	if g.memberOf(c) != nil {
		return
	}
	m := &member{conn: c}
	if s.opts.Version.vsr() {
		inFlight := s.inFlight(t, g)
		m.id = g.members.insert(m)
		s.cooperative09(t, g, inFlight)
		return
	}
	g.members.each(func(_ uint32, o *member) { m.id = max(m.id, o.id+1) })
	g.members.insert(m)
	s.cooperative08(t, g)
	s.settleRevocations(t, g)
}

// leaveGroupOp ends c's membership in g.
func (s *Server) leaveGroupOp(t *topic, g *group, c *conn) uint32 {
	m := g.memberOf(c)
	if m == nil {
		return CodeConsumerGroupMemberNotFound
	}
	s.removeMember(t, g, m)
	return CodeOK
}

// removeMember drops m and reassigns. 0.8 forgets what m had polled; 0.9
// keeps the marks, which a later join counts as in flight if the
// partition's new member has not committed past them.
func (s *Server) removeMember(t *topic, g *group, m *member) {
	for _, pid := range m.partitions {
		if p := t.partition(pid); p != nil && !s.opts.Version.vsr() {
			delete(p.groupPolled, g.id)
		}
	}
	g.members.each(func(key uint32, o *member) {
		if o == m {
			g.members.remove(key)
		}
	})
	g.rebalance(t)
}

// dropMemberships removes a closed connection from every group, as a
// server does when a client disconnects.
func (s *Server) dropMemberships(c *conn) {
	s.data.streams.each(func(_ uint32, st *stream) {
		st.topics.each(func(_ uint32, t *topic) {
			t.groups.each(func(_ uint32, g *group) {
				if m := g.memberOf(c); m != nil {
					s.removeMember(t, g, m)
				}
			})
		})
	})
}

// rebalanceGroups reassigns every group of t (its partition count changed).
func (t *topic) rebalanceGroups() {
	t.groups.each(func(_ uint32, g *group) { g.rebalance(t) })
}

// rebalance assigns every partition again, round robin over the members.
func (g *group) rebalance(t *topic) {
	g.generation++
	var ms []*member
	g.members.each(func(_ uint32, m *member) {
		m.partitions, m.pending = nil, nil
		ms = append(ms, m)
	})
	if len(ms) == 0 {
		return
	}
	for i := range t.partitions {
		m := ms[i%len(ms)]
		m.partitions = append(m.partitions, uint32(i))
	}
}

// pollable reports whether m polls partition pid: owned and not pending.
func (m *member) pollable(pid uint32) bool {
	return slices.Contains(m.partitions, pid) && !m.revoking(pid)
}

func (m *member) revoking(pid uint32) bool {
	return slices.ContainsFunc(m.pending, func(r revocation) bool { return r.partition == pid })
}

// pollablePartitions returns the partitions m polls, in order.
func (m *member) pollablePartitions() []uint32 {
	var out []uint32
	for _, pid := range m.partitions {
		if !m.revoking(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// pick08 chooses the partition of a 0.8 group request: an explicit one if
// m owns it (pending included), else none; without one, m's pollable
// partitions in turn (a poll moves the turn on, an offset request reads
// the current one), as resolve_consumer_group_partition does.
func (m *member) pick08(pid uint32, explicit, advance bool) (uint32, bool) {
	if explicit {
		return pid, slices.Contains(m.partitions, pid)
	}
	ps := m.pollablePartitions()
	if len(ps) == 0 {
		return 0, false
	}
	i := m.cursor % len(ps)
	if advance {
		m.cursor = (m.cursor + 1) % len(ps)
	}
	return ps[i], true
}
