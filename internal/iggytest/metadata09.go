package iggytest

// The replicated metadata operations of 0.9. A request first passes the
// server's pre-consensus checks (a body that does not decode, an option
// key out of the catalog, a partition count out of bounds: a reply with
// that status and no body), then the client table (a replay gets the
// cached reply), then commits: its reply body is the result section,
// [0] and the payload on success, [1][0][code] for a refusal the state
// machine committed (stream not found, name taken, ...).

// metaRun carries out an admitted operation and returns its result code
// and payload.
type metaRun func() (uint32, []byte)

// metadata09 serves a replicated metadata operation of a bound connection.
func (s *Server) metadata09(c *conn, h reqHeader, body []byte) [][]byte {
	run, status := s.admitMeta09(c, h, body)
	if status != CodeOK {
		return s.deny09(c, h, status)
	}
	e := s.vsr.clients[c.vsrClient]
	if e == nil {
		return [][]byte{eviction09(c.transportID(), EvictNoSession, 0, 0)}
	}
	frame, status, drop := e.replay(h)
	switch {
	case drop:
		return nil // a request number reused for other arguments
	case frame != nil:
		return [][]byte{frame}
	case status != CodeOK:
		return s.deny09(c, h, status)
	}
	s.vsr.op++
	code, payload := run()
	var out encoder
	if code == CodeOK {
		out.u32(0)
		out.b = append(out.b, payload...)
	} else {
		out.u32(1)
		out.u32(0)
		out.u32(code)
	}
	operation := h.op
	switch h.op {
	case opCreateTopic:
		operation = opCreateTopicAssign
	case opCreatePartitions:
		operation = opCreatePartsAssign
	}
	frame = append(reply09(h, c.vsrClient, s.vsr.op, s.vsr.op, operation, 0, len(out.b)), out.b...)
	e.remember(h, frame)
	return [][]byte{frame}
}

// admitMeta09 decodes and checks a metadata operation; it returns what to
// run on commit, or the status that refuses it.
func (s *Server) admitMeta09(c *conn, h reqHeader, body []byte) (metaRun, uint32) {
	d := &decoder{b: body}
	switch h.op {
	case opCreateStream, opUpdateStream:
		return s.admitStream09(h.op, d)
	case opDeleteStream:
		id := d.ident()
		if d.err != 0 {
			return nil, CodeInvalidCommand
		}
		return func() (uint32, []byte) { return s.deleteStreamOp(id), nil }, CodeOK
	case opCreateTopic:
		return s.admitCreateTopic09(d)
	case opUpdateTopic:
		return s.admitUpdateTopic09(d)
	case opDeleteTopic:
		return s.admitDeleteTopic09(d)
	case opCreatePartitions, opDeletePartitions:
		return s.admitPartitions09(d, h.op == opCreatePartitions)
	case opCreatePAT, opDeletePAT:
		return s.admitToken09(c, d, h.op == opCreatePAT)
	case opCreateGroup:
		return s.admitCreateGroup09(d)
	case opDeleteGroup, opJoinGroup, opLeaveGroup:
		return s.admitGroupOp09(c, h.op, d)
	}
	return nil, CodeInvalidCommand // not modelled
}

// admitStream09 admits CreateStream ([name][options]) and UpdateStream
// ([stream ident][name][options]); streams take no option keys.
func (s *Server) admitStream09(op uint8, d *decoder) (metaRun, uint32) {
	var id ident
	if op == opUpdateStream {
		id = d.ident()
	}
	name := d.name()
	opts, ok := parseOptions(d.rest())
	if d.err != 0 || !ok {
		return nil, CodeInvalidCommand
	}
	if code := checkKeys(opts, nil); code != CodeOK {
		return nil, code
	}
	if op == opUpdateStream {
		return func() (uint32, []byte) { return s.updateStreamOp(id, name), nil }, CodeOK
	}
	return func() (uint32, []byte) {
		st, code := s.createStreamOp(name)
		if code != CodeOK {
			return code, nil
		}
		var e encoder
		encodeStream09(&e, st)
		return CodeOK, e.b
	}, CodeOK
}

// admitCreateTopic09 admits [stream ident][u32 partitions][name][options].
func (s *Server) admitCreateTopic09(d *decoder) (metaRun, uint32) {
	sid := d.ident()
	partitions := d.u32()
	name := d.name()
	opts, ok := parseOptions(d.rest())
	if d.err != 0 || !ok {
		return nil, CodeInvalidCommand
	}
	parsed, code := parseTopicOptions(opts, defaultTopicConfig(name))
	switch {
	case code != CodeOK:
		return nil, code
	case partitions > maxPartitions09:
		return nil, CodeTooManyPartitions
	case parsed.set[optMaxTopicSize] && parsed.cfg.maxTopicSize < parsed.cfg.segmentSize:
		return nil, CodeInvalidTopicSize
	}
	cfg := parsed.cfg
	cfg.explicitOptions = encodeOptions(parsed.explicit)
	return func() (uint32, []byte) {
		st := s.data.stream(sid)
		if st == nil {
			return CodeStreamIDNotFound, nil
		}
		t, code := s.createTopicOp(st, cfg, partitions)
		if code != CodeOK {
			return code, nil
		}
		var e encoder
		s.encodeTopic09(&e, t)
		for _, p := range t.partitions {
			encodePartition(&e, p, 0)
		}
		return CodeOK, e.b
	}, CodeOK
}

// admitUpdateTopic09 admits [stream ident][topic ident][name][options]:
// a rename, and the updatable options present.
func (s *Server) admitUpdateTopic09(d *decoder) (metaRun, uint32) {
	sid, tid := d.ident(), d.ident()
	name := d.name()
	opts, ok := parseOptions(d.rest())
	if d.err != 0 || !ok {
		return nil, CodeInvalidCommand
	}
	if code := checkKeys(opts, updatableTopicKeys); code != CodeOK {
		return nil, code
	}
	parsed, code := parseTopicOptions(opts, topicConfig{})
	if code != CodeOK {
		return nil, code
	}
	segment := uint64(defaultSegmentSize)
	if _, t, code := s.resolveTopic(sid, tid); code == CodeOK {
		segment = t.segmentSize
	}
	if parsed.set[optMaxTopicSize] && parsed.cfg.maxTopicSize < segment {
		return nil, CodeInvalidTopicSize
	}
	return func() (uint32, []byte) {
		st, t, code := s.resolveTopic(sid, tid)
		if code == CodeOK {
			code = s.renameTopicOp(st, t, name)
		}
		if code != CodeOK {
			return code, nil
		}
		if parsed.set[optCompression] {
			t.compression = parsed.cfg.compression
		}
		if parsed.set[optExpiry] {
			t.messageExpiry = parsed.cfg.messageExpiry
		}
		if parsed.set[optMaxTopicSize] {
			t.maxTopicSize = parsed.cfg.maxTopicSize
		}
		t.explicitOptions = mergeOptions(t.explicitOptions, parsed.explicit)
		return CodeOK, nil
	}, CodeOK
}

// admitDeleteTopic09 admits [stream ident][topic ident].
func (s *Server) admitDeleteTopic09(d *decoder) (metaRun, uint32) {
	sid, tid := d.ident(), d.ident()
	if d.err != 0 {
		return nil, CodeInvalidCommand
	}
	return func() (uint32, []byte) {
		st, t, code := s.resolveTopic(sid, tid)
		if code == CodeOK {
			st.deleteTopic(t)
		}
		return code, nil
	}, CodeOK
}

// admitPartitions09 admits [stream ident][topic ident][u32 count]; a count
// of 0 or over 1000 is refused with TooManyPartitions.
func (s *Server) admitPartitions09(d *decoder, create bool) (metaRun, uint32) {
	sid, tid := d.ident(), d.ident()
	n := d.u32()
	switch {
	case d.err != 0:
		return nil, CodeInvalidCommand
	case n == 0 || n > maxPartitions09:
		return nil, CodeTooManyPartitions
	}
	return func() (uint32, []byte) {
		_, t, code := s.resolveTopic(sid, tid)
		if code != CodeOK {
			return code, nil
		}
		return s.changePartitionsOp(t, n, create), nil
	}, CodeOK
}

// admitToken09 admits CreatePersonalAccessToken ([name][u64 expiry]) and
// DeletePersonalAccessToken ([name]) for the connection's user.
func (s *Server) admitToken09(c *conn, d *decoder, create bool) (metaRun, uint32) {
	name := d.name()
	var expiry uint64
	if create {
		expiry = d.u64()
	}
	if d.err != 0 {
		return nil, CodeInvalidCommand
	}
	userID := c.userID
	if !create {
		return func() (uint32, []byte) { return s.deleteToken(userID, name), nil }, CodeOK
	}
	return func() (uint32, []byte) {
		t, code := s.createToken(userID, name, expiry)
		if code != CodeOK {
			return code, nil
		}
		var e encoder
		e.name(t.raw)
		return CodeOK, e.b
	}, CodeOK
}
