package iggytest

// The 0.8 stream, topic and partition commands: decoding, checks in
// server 0.8.0's order, and the 0.8 response layouts.

func encodeStream08(e *encoder, st *stream) {
	size, count := st.stats()
	e.u32(st.id)
	e.u64(st.createdAt)
	e.u32(uint32(st.topics.len()))
	e.u64(size)
	e.u64(count)
	e.name(st.name)
}

func encodeTopic08(e *encoder, t *topic) {
	size, count := t.stats()
	e.u32(t.id)
	e.u64(t.createdAt)
	e.u32(uint32(len(t.partitions)))
	e.u64(t.messageExpiry)
	e.u8(t.compression)
	e.u64(t.maxTopicSize)
	e.u8(t.replicationFactor)
	e.u64(size)
	e.u64(count)
	e.name(t.name)
}

// encodePartition writes a partition record (both dialects use this
// layout); segments is what the segment count field says.
func encodePartition(e *encoder, p *partition, segments uint32) {
	e.u32(p.id)
	e.u64(p.createdAt)
	e.u32(segments)
	e.u64(p.currentOffset())
	e.u64(p.sizeBytes)
	e.u64(p.messagesCount())
}

func encodeTopicWithPartitions08(e *encoder, t *topic) {
	encodeTopic08(e, t)
	for _, p := range t.partitions {
		encodePartition(e, p, 1)
	}
}

// handleStreams08 serves the stream commands.
func (s *Server) handleStreams08(c *conn, code Command, d *decoder) (uint32, []byte) {
	var id ident
	var name string
	switch code {
	case CmdGetStream, CmdDeleteStream:
		id = d.ident()
	case CmdCreateStream:
		name = d.name()
	case CmdUpdateStream:
		id = d.ident()
		name = d.name()
	}
	if d.err != 0 {
		return d.err, nil
	}
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	var e encoder
	switch code {
	case CmdGetStream:
		if st := s.data.stream(id); st != nil {
			encodeStream08(&e, st)
			st.topics.each(func(_ uint32, t *topic) { encodeTopic08(&e, t) })
		}
	case CmdGetStreams:
		s.data.streams.each(func(_ uint32, st *stream) { encodeStream08(&e, st) })
	case CmdCreateStream:
		st, code := s.createStreamOp(name)
		if code != CodeOK {
			return code, nil
		}
		encodeStream08(&e, st)
	case CmdDeleteStream:
		return s.deleteStreamOp(id), nil
	case CmdUpdateStream:
		return s.updateStreamOp(id, name), nil
	}
	return CodeOK, e.b
}

// handleTopics08 serves the topic commands.
func (s *Server) handleTopics08(c *conn, code Command, d *decoder) (uint32, []byte) {
	switch code {
	case CmdCreateTopic:
		return s.createTopic08(c, d)
	case CmdUpdateTopic:
		return s.updateTopic08(c, d)
	}
	sid := d.ident()
	var tid ident
	if code != CmdGetTopics {
		tid = d.ident()
	}
	if d.err != 0 {
		return d.err, nil
	}
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	var e encoder
	switch code {
	case CmdGetTopic:
		if _, t, code := s.resolveTopic(sid, tid); code == CodeOK {
			encodeTopicWithPartitions08(&e, t)
		}
	case CmdGetTopics:
		if st := s.data.stream(sid); st != nil {
			st.topics.each(func(_ uint32, t *topic) { encodeTopic08(&e, t) })
		}
	case CmdDeleteTopic:
		st, t, code := s.resolveTopic(sid, tid)
		if code != CodeOK {
			return code, nil
		}
		st.deleteTopic(t)
	}
	return CodeOK, e.b
}

// topicSettings08 resolves the create/update topic settings as server
// 0.8.0 does with its default config (expiry "none", max size "unlimited",
// 1 GiB segments).
func topicSettings08(cfg *topicConfig) uint32 {
	if cfg.compression != 1 && cfg.compression != 2 {
		return CodeInvalidCommand
	}
	if cfg.messageExpiry == 0 {
		cfg.messageExpiry = unlimited
	}
	switch {
	case cfg.maxTopicSize == 0:
		cfg.maxTopicSize = unlimited
	case cfg.maxTopicSize != unlimited && cfg.maxTopicSize < defaultSegmentSize:
		return CodeInvalidTopicSize
	}
	if cfg.replicationFactor == 0 {
		cfg.replicationFactor = 1
	}
	return CodeOK
}

// decodeTopicSettings08 reads the fixed settings of a create/update topic
// request: compression, expiry, max size, replication factor, name.
func decodeTopicSettings08(d *decoder) topicConfig {
	var cfg topicConfig
	cfg.compression = d.u8()
	cfg.messageExpiry = d.u64()
	cfg.maxTopicSize = d.u64()
	cfg.replicationFactor = d.u8()
	cfg.name = d.name()
	cfg.segmentSize, cfg.sizeToSave = defaultSegmentSize, defaultSizeToSave
	return cfg
}

func (s *Server) createTopic08(c *conn, d *decoder) (uint32, []byte) {
	sid := d.ident()
	partitions := d.u32()
	cfg := decodeTopicSettings08(d)
	if d.err != 0 {
		return d.err, nil
	}
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	if partitions > maxPartitionsPerCall {
		return CodeTooManyPartitions, nil
	}
	code := topicSettings08(&cfg)
	if code == CodeInvalidCommand {
		return code, nil
	}
	st := s.data.stream(sid)
	if st == nil {
		return CodeStreamIDNotFound, nil
	}
	if code != CodeOK {
		return code, nil
	}
	t, code := s.createTopicOp(st, cfg, partitions)
	if code != CodeOK {
		return code, nil
	}
	var e encoder
	encodeTopicWithPartitions08(&e, t)
	return CodeOK, e.b
}

func (s *Server) updateTopic08(c *conn, d *decoder) (uint32, []byte) {
	sid := d.ident()
	tid := d.ident()
	cfg := decodeTopicSettings08(d)
	if d.err != 0 {
		return d.err, nil
	}
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	if code := topicSettings08(&cfg); code != CodeOK {
		return code, nil
	}
	st, t, code := s.resolveTopic(sid, tid)
	if code != CodeOK {
		return code, nil
	}
	if code := s.renameTopicOp(st, t, cfg.name); code != CodeOK {
		return code, nil
	}
	t.compression, t.messageExpiry, t.maxTopicSize, t.replicationFactor =
		cfg.compression, cfg.messageExpiry, cfg.maxTopicSize, cfg.replicationFactor
	return CodeOK, nil
}

func (s *Server) changePartitions08(c *conn, d *decoder, create bool) (uint32, []byte) {
	sid := d.ident()
	tid := d.ident()
	n := d.u32()
	if d.err != 0 {
		return d.err, nil
	}
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	if n < 1 || n > maxPartitionsPerCall {
		return CodeTooManyPartitions, nil
	}
	_, t, code := s.resolveTopic(sid, tid)
	if code != CodeOK {
		return code, nil
	}
	return s.changePartitionsOp(t, n, create), nil
}
