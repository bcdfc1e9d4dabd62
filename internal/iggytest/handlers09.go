package iggytest

import "encoding/binary"

// dispatch09 routes a valid 0.9 request as server 0.9.0's
// handle_client_request does and returns the answer's parts, or nil for
// none.
func (s *Server) dispatch09(c *conn, h reqHeader, body []byte) [][]byte {
	if h.op == opSendMessages && h.checksumOK(body) {
		return s.send09(c, h, body) // takes the lock itself
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !h.checksumOK(body) {
		return s.deny09(c, h, CodeInvalidFormat)
	}
	switch h.op {
	case opNonReplicated:
		return s.nonReplicated09(c, h, body)
	case opRegister:
		return s.register09(c, h, body)
	case opLogout:
		return s.logout09(c, h)
	}
	if c.session == 0 {
		// A replicated request on a connection without a login.
		return [][]byte{eviction09(c.transportID(), EvictNoSession, 0, 0)}
	}
	if h.op >= opPartitionPlaneBase {
		return s.offsets09(c, h, body)
	}
	return s.metadata09(c, h, body)
}

// deny09 refuses a request before it is carried out: a reply with the
// status and an empty body.
func (s *Server) deny09(c *conn, h reqHeader, status uint32) [][]byte {
	return [][]byte{reply09(h, c.transportID(), 0, s.vsr.op, h.op, status, 0)}
}

// answer09 answers a NonReplicated request.
func (s *Server) answer09(h reqHeader, status uint32, body []byte) [][]byte {
	return [][]byte{reply09(h, h.client, h.session, s.vsr.op, h.op, status, len(body)), body}
}

// evict09 ends a login attempt with an Eviction frame.
func evict09(h reqHeader, reason uint8) [][]byte {
	return [][]byte{eviction09(h.client, reason, 0, 0)}
}

// protocolWindow is the range of client protocols the server accepts.
func (s *Server) protocolWindow() (lo, hi uint32) {
	if s.opts.Version == Version010 {
		return Protocol010, Protocol010
	}
	return Protocol09, Protocol09
}

// register09 serves a login (operation Register) as
// handle_login_register_request does: the protocol gate, then the body as
// username/password, then as a token.
func (s *Server) register09(c *conn, h reqHeader, body []byte) [][]byte {
	protocol, _, ok := decodeLoginPrefix(body)
	if !ok {
		return evict09(h, EvictMalformedLogin)
	}
	lo, hi := s.protocolWindow()
	if s.opts.Version == Version010 && s.opts.LoginInvalidFormat {
		return s.deny09(c, h, CodeInvalidFormat)
	}
	if s.opts.Version == Version010 || protocol < lo || protocol>>10 > hi>>10 {
		return [][]byte{eviction09(h.client, EvictIncompatibleProtocol, hi, lo)}
	}
	rejected := false
	if l, ok := decodeLogin09(body); ok {
		if u, code := s.checkPassword(l.username, l.password); code == CodeOK {
			return s.bind09(c, h, u)
		}
		rejected = true // inactive users read as bad credentials too
	}
	if l, ok := decodeTokenLogin09(body); ok {
		u, code := s.checkToken(l.token)
		switch code {
		case CodeOK:
			return s.bind09(c, h, u)
		case CodeUserInactive:
			return evict09(h, EvictUserInactive)
		}
		return evict09(h, EvictInvalidToken)
	}
	if rejected {
		return evict09(h, EvictInvalidCredentials)
	}
	return evict09(h, EvictMalformedLogin)
}

// bind09 commits the Register and binds the session to the connection. A
// login on a connection that has a session is answered with that session.
func (s *Server) bind09(c *conn, h reqHeader, u *user) [][]byte {
	if c.session == 0 {
		s.vsr.op++
		e := s.vsr.clients[h.client]
		if e == nil {
			e = &vsrClient{}
			s.vsr.clients[h.client] = e
		} else if o := e.conn; o != nil && o != c {
			o.session, o.vsrClient, o.authed = 0, u128{}, false
		}
		e.epoch, e.conn = s.vsr.op, c
		c.vsrClient, c.session, c.authed, c.userID = h.client, s.vsr.op, true, u.id
	}
	version := serverVersion09
	if s.opts.Version == Version010 {
		version = serverVersion010
	}
	lo, _ := s.protocolWindow()
	var e encoder
	e.u32(0) // result section: success
	e.u32(u.id)
	e.u64(c.session)
	e.u32(lo)
	e.name(version)
	hdr := reply09(h, h.client, c.session, max(s.vsr.op, c.session), opRegister, 0, len(e.b))
	return [][]byte{hdr, e.b}
}

// logout09 ends the connection's session (a connection without one gets
// an OK).
func (s *Server) logout09(c *conn, h reqHeader) [][]byte {
	if c.session == 0 {
		return [][]byte{reply09(h, c.transportID(), 0, s.vsr.op, opLogout, 0, 0)}
	}
	client, session := c.vsrClient, c.session
	s.vsr.disconnect(c)
	s.dropMemberships(c)
	return [][]byte{reply09(h, client, session, s.vsr.op, opLogout, 0, 0)}
}

// nonReplicated09 serves a NonReplicated request (ping and the reads).
func (s *Server) nonReplicated09(c *conn, h reqHeader, body []byte) [][]byte {
	code := Command(h.code)
	switch {
	case code == CmdLoginUser || code == CmdLoginWithPersonalAccessToken:
		return evict09(h, EvictMalformedLogin) // 0.8 login codes
	case code == CmdPing:
		return s.answer09(h, CodeOK, nil)
	case c.session == 0:
		return [][]byte{reply09(h, c.transportID(), 0, 0, h.op, CodeUnauthenticated, 0)}
	}
	switch code {
	case CmdGetMe, CmdGetClients, CmdGetClusterMetadata, CmdGetPersonalAccessTokens:
		status, payload := s.handleSession08(c, code) // same layouts in 0.9
		return s.answer09(h, status, payload)
	case CmdGetStream, CmdGetStreams, CmdGetTopic, CmdGetTopics:
		return s.readMetadata09(h, code, body)
	case CmdPollMessages:
		return s.poll09(c, h, body)
	case CmdGetConsumerGroup, CmdGetConsumerGroups, CmdSyncConsumerGroup:
		return s.readGroups09(c, h, code, body)
	case CmdGetConsumerOffset:
		return s.getOffset09(h, body)
	case CmdFlushUnsavedBuffer:
		return s.flush09(h, body)
	case CmdLogoutUser, 40, 45: // non-replicated codes without a reply body
		return s.answer09(h, CodeOK, nil)
	}
	for _, replicated := range opCommands {
		if replicated == code {
			return s.answer09(h, CodeFeatureUnavailable, nil)
		}
	}
	return s.answer09(h, CodeInvalidCommand, nil)
}

// flush09 serves FlushUnsavedBuffer: server 0.9.0 answers
// FeatureUnavailable without reading the body; with Options.Flush09 the
// body [stream ident][topic ident][u32 partition][u8 fsync] is carried out.
func (s *Server) flush09(h reqHeader, body []byte) [][]byte {
	if !s.opts.Flush09 {
		return s.answer09(h, CodeFeatureUnavailable, nil)
	}
	d := &decoder{b: body}
	sid, tid := d.ident(), d.ident()
	pid := d.u32()
	_ = d.u8() // fsync
	if d.err != 0 {
		return s.answer09(h, CodeInvalidCommand, nil)
	}
	return s.answer09(h, s.flushOp(sid, tid, pid), nil)
}

// readMetadata09 serves get stream(s) and get topic(s). A missing stream
// or topic reads as an empty body (a missing stream's topics as none).
func (s *Server) readMetadata09(h reqHeader, code Command, body []byte) [][]byte {
	d := &decoder{b: body}
	var sid, tid ident
	if code != CmdGetStreams {
		sid = d.ident()
	}
	if code == CmdGetTopic {
		tid = d.ident()
	}
	if d.err != 0 {
		return s.answer09(h, CodeInvalidCommand, nil)
	}
	var e encoder
	switch code {
	case CmdGetStream:
		if st := s.data.stream(sid); st != nil {
			encodeStream09(&e, st)
			st.topics.each(func(_ uint32, t *topic) { s.encodeTopic09(&e, t) })
		}
	case CmdGetStreams:
		s.data.streams.each(func(_ uint32, st *stream) { encodeStream09(&e, st) })
	case CmdGetTopic:
		if _, t, code := s.resolveTopic(sid, tid); code == CodeOK {
			s.encodeTopic09(&e, t)
			for _, p := range t.partitions {
				encodePartition(&e, p, 1)
			}
		}
	case CmdGetTopics:
		e.u32(0)
		if st := s.data.stream(sid); st != nil {
			binary.LittleEndian.PutUint32(e.b, uint32(st.topics.len()))
			st.topics.each(func(_ uint32, t *topic) { s.encodeTopic09(&e, t) })
		}
	}
	return s.answer09(h, CodeOK, e.b)
}

// encodeStream09 writes a stream record: the 0.8 fields and a u32-length
// options block (streams have no options).
func encodeStream09(e *encoder, st *stream) {
	encodeStream08(e, st)
	e.u32(0)
}

// encodeTopic09 writes a topic record: no replication factor, then the
// explicit and the derived options blocks, each u32-length prefixed.
func (s *Server) encodeTopic09(e *encoder, t *topic) {
	size, count := t.stats()
	e.u32(t.id)
	e.u64(t.createdAt)
	e.u32(uint32(len(t.partitions)))
	e.u64(t.messageExpiry)
	e.u8(t.compression)
	e.u64(t.maxTopicSize)
	e.u64(size)
	e.u64(count)
	e.name(t.name)
	e.block(t.explicitOptions)
	e.block(encodeOptions(s.derivedOptions(t)))
}
