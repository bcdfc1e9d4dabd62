package iggytest

import (
	"net"
	"strconv"
	"time"
)

// handle08 runs one 0.8 request with s.mu held and returns the response
// status and payload. Like server 0.8.0, it decodes the payload before it
// checks that the connection is logged in.
func (s *Server) handle08(c *conn, code Command, p []byte) (uint32, []byte) {
	d := &decoder{b: p}
	switch code {
	case CmdPing:
		return CodeOK, nil
	case CmdLoginUser:
		return s.loginUser08(c, d)
	case CmdLoginWithPersonalAccessToken:
		return s.loginWithToken08(c, d)
	case CmdLogoutUser:
		if !c.authed {
			return CodeUnauthenticated, nil
		}
		c.authed = false
		return CodeOK, nil
	case CmdGetMe, CmdGetClients, CmdGetClusterMetadata, CmdGetPersonalAccessTokens:
		return s.handleSession08(c, code)
	case CmdCreatePersonalAccessToken:
		return s.createToken08(c, d)
	case CmdDeletePersonalAccessToken:
		return s.deleteToken08(c, d)
	case CmdGetStream, CmdGetStreams, CmdCreateStream, CmdDeleteStream, CmdUpdateStream:
		return s.handleStreams08(c, code, d)
	case CmdGetTopic, CmdGetTopics, CmdCreateTopic, CmdDeleteTopic, CmdUpdateTopic:
		return s.handleTopics08(c, code, d)
	case CmdCreatePartitions, CmdDeletePartitions:
		return s.changePartitions08(c, d, code == CmdCreatePartitions)
	case CmdSendMessages:
		req, st := prepareSend08(c.authed, p)
		if st != CodeOK {
			return st, nil
		}
		return s.commitSend(req), nil
	case CmdPollMessages:
		return s.pollMessages08(c, d)
	case CmdFlushUnsavedBuffer:
		return s.flush08(c, d)
	case CmdStoreConsumerOffset, CmdGetConsumerOffset, CmdDeleteConsumerOffset:
		return s.handleOffsets08(c, code, d)
	case CmdGetConsumerGroup, CmdGetConsumerGroups, CmdCreateConsumerGroup, CmdDeleteConsumerGroup,
		CmdJoinConsumerGroup, CmdLeaveConsumerGroup:
		return s.handleGroups08(c, code, d)
	default:
		return CodeInvalidCommand, nil
	}
}

// ---- sessions -------------------------------------------------------------

func (s *Server) loginUser08(c *conn, d *decoder) (uint32, []byte) {
	username := d.name()
	password := d.str(int(d.u8()))
	if n := d.u32(); n > 0 { // client version
		d.str(int(n))
	}
	if n := d.u32(); n > 0 { // context
		d.str(int(n))
	}
	if d.err != 0 {
		return d.err, nil
	}
	u, code := s.checkPassword(username, password)
	if code != CodeOK {
		return code, nil
	}
	return loggedIn08(c, u)
}

func loggedIn08(c *conn, u *user) (uint32, []byte) {
	c.authed = true
	c.userID = u.id
	var e encoder
	e.u32(u.id)
	return CodeOK, e.b
}

func (s *Server) loginWithToken08(c *conn, d *decoder) (uint32, []byte) {
	raw := d.name()
	if d.err != 0 {
		return d.err, nil
	}
	u, code := s.checkToken(raw)
	if code != CodeOK {
		return code, nil
	}
	return loggedIn08(c, u)
}

// handleSession08 answers the session reads: get me, get clients, cluster
// metadata and the personal access tokens.
func (s *Server) handleSession08(c *conn, code Command) (uint32, []byte) {
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	var e encoder
	switch code {
	case CmdGetMe:
		encodeClient(&e, c)
	case CmdGetClients:
		for _, o := range s.sortedConns() {
			encodeClient(&e, o)
		}
	case CmdGetClusterMetadata:
		s.encodeClusterMetadata(&e)
	case CmdGetPersonalAccessTokens:
		encodeTokens(&e, s.userTokens(c.userID))
	}
	return CodeOK, e.b
}

func encodeTokens(e *encoder, tokens []*token) {
	for _, t := range tokens {
		e.name(t.name)
		e.u64(expiryOf(t.expiresAt))
	}
}

func (s *Server) createToken08(c *conn, d *decoder) (uint32, []byte) {
	name := d.name()
	expiry := d.u64()
	if d.err != 0 {
		return d.err, nil
	}
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	if len(name) < minTokenNameLen || len(name) > maxTokenNameLen {
		return CodeInvalidPersonalAccessTokenName, nil
	}
	t, code := s.createToken(c.userID, name, expiry)
	if code != CodeOK {
		return code, nil
	}
	var e encoder
	e.name(t.raw)
	return CodeOK, e.b
}

func (s *Server) deleteToken08(c *conn, d *decoder) (uint32, []byte) {
	name := d.name()
	if d.err != 0 {
		return d.err, nil
	}
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	return s.deleteToken(c.userID, name), nil
}

// encodeClient writes a client record (both dialects use this layout).
func encodeClient(e *encoder, c *conn) {
	e.u32(c.clientID)
	if c.authed {
		e.u32(c.userID)
	} else {
		e.u32(^uint32(0))
	}
	e.u8(1) // TCP
	e.str32(c.addr)
	e.u32(0) // consumer groups joined
}

// encodeClusterMetadata writes one healthy leader node named "iggy-node"
// in cluster "single-node", as a 0.8.0 server with clustering disabled
// answers (a 0.9 server uses the same layout).
func (s *Server) encodeClusterMetadata(e *encoder) {
	host, portStr, _ := net.SplitHostPort(s.addr)
	port, _ := strconv.ParseUint(portStr, 10, 16)
	e.str32("single-node")
	e.u32(1)
	e.str32("iggy-node")
	e.str32(host)
	e.u16(uint16(port)) // tcp
	e.u16(8080)         // quic (server default)
	e.u16(3000)         // http (server default)
	e.u16(8092)         // websocket (server default)
	e.u8(0)             // leader
	e.u8(0)             // healthy
}

// expiryOf converts a token expiry to the microseconds the wire carries.
func expiryOf(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixMicro())
}
