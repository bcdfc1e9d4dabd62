package iggytest

import "fmt"

// DeletePartitions removes the last n partitions of a topic, as the
// protocol's DeletePartitions does.
func (s *Server) DeletePartitions(stream, topic string, n uint32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.findTopicLocked(stream, topic)
	if t == nil {
		return fmt.Errorf("iggytest: no topic %q in stream %q", topic, stream)
	}
	if code := s.changePartitionsOp(t, n, false); code != 0 {
		return fmt.Errorf("iggytest: deleting %d partitions of %s/%s: error %d", n, stream, topic, code)
	}
	return nil
}
