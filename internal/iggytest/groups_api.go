package iggytest

import (
	"errors"
	"fmt"
)

// CreateConsumerGroup creates a consumer group in a topic without a client
// and returns its ID.
func (s *Server) CreateConsumerGroup(stream, topic, name string) (uint32, error) {
	if len(name) == 0 || len(name) > 255 {
		return 0, errors.New("iggytest: consumer group name must be 1-255 bytes")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.findTopicLocked(stream, topic)
	if t == nil {
		return 0, fmt.Errorf("iggytest: no topic %q in stream %q", topic, stream)
	}
	g, code := s.createGroupOp(t, name)
	if code != CodeOK {
		return 0, fmt.Errorf("iggytest: consumer group %q in %s/%s: error %d", name, stream, topic, code)
	}
	return g.id, nil
}

// ConsumerGroupAssignment returns the partitions each member of a group
// owns (a partition on its way to another member included), members in ID
// order; ok is false when there is no such group. The group is a name, or
// a decimal ID when no group has that name.
func (s *Server) ConsumerGroupAssignment(stream, topic, group string) (members [][]uint32, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, g := s.findGroupLocked(stream, topic, group)
	if g == nil {
		return nil, false
	}
	s.settleRevocations(t, g)
	for _, m := range g.membersInOrder() {
		members = append(members, append([]uint32{}, m.partitions...))
	}
	return members, true
}

// ConsumerGroupOffset returns the offset a consumer group stored on a
// partition.
func (s *Server) ConsumerGroupOffset(stream, topic, group string, partition uint32) (uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, g := s.findGroupLocked(stream, topic, group)
	if g == nil {
		return 0, false
	}
	p := t.partition(partition)
	if p == nil {
		return 0, false
	}
	o, ok := p.groupOffsets[uint64(g.id)]
	return o, ok
}

func (s *Server) findGroupLocked(stream, topic, group string) (*topic, *group) {
	t := s.findTopicLocked(stream, topic)
	if t == nil {
		return nil, nil
	}
	return t, t.group(lookupIdent(group, t.groupByName))
}
