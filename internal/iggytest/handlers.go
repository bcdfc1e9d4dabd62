package iggytest

import (
	"crypto/rand"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/OneOfOne/xxhash"
)

// handle runs one request with s.mu held and returns the response status
// and payload. Like the server, it decodes the payload before it checks that
// the connection is logged in.
func (s *Server) handle(c *conn, code Command, p []byte) (uint32, []byte) {
	d := &decoder{b: p}
	switch code {
	case CmdPing:
		return CodeOK, nil
	case CmdLoginUser:
		return s.loginUser(c, d)
	case CmdLoginWithPersonalAccessToken:
		return s.loginWithToken(c, d)
	case CmdLogoutUser:
		if !c.authed {
			return CodeUnauthenticated, nil
		}
		c.authed = false
		return CodeOK, nil
	case CmdGetPersonalAccessTokens:
		return s.getTokens(c)
	case CmdCreatePersonalAccessToken:
		return s.createToken(c, d)
	case CmdDeletePersonalAccessToken:
		return s.deleteToken(c, d)
	case CmdGetMe:
		if !c.authed {
			return CodeUnauthenticated, nil
		}
		var e encoder
		s.encodeClient(&e, c)
		return CodeOK, e.b
	case CmdGetClients:
		return s.getClients(c)
	case CmdGetClusterMetadata:
		return s.clusterMetadata(c)
	case CmdGetStream:
		return s.getStream(c, d)
	case CmdGetStreams:
		return s.getStreams(c)
	case CmdCreateStream:
		return s.createStream(c, d)
	case CmdDeleteStream:
		return s.deleteStream(c, d)
	case CmdUpdateStream:
		return s.updateStream(c, d)
	case CmdGetTopic:
		return s.getTopic(c, d)
	case CmdGetTopics:
		return s.getTopics(c, d)
	case CmdCreateTopic:
		return s.createTopic(c, d)
	case CmdDeleteTopic:
		return s.deleteTopic(c, d)
	case CmdUpdateTopic:
		return s.updateTopic(c, d)
	case CmdCreatePartitions, CmdDeletePartitions:
		return s.changePartitions(c, d, code == CmdCreatePartitions)
	case CmdSendMessages:
		return s.sendMessages(c, p)
	case CmdPollMessages:
		return s.pollMessages(c, d)
	case CmdStoreConsumerOffset:
		return s.storeOffset(c, d)
	case CmdGetConsumerOffset:
		return s.getOffset(c, d)
	case CmdDeleteConsumerOffset:
		return s.deleteOffset(c, d)
	default:
		return CodeInvalidCommand, nil
	}
}

// ---- sessions -------------------------------------------------------------

func (s *Server) loginUser(c *conn, d *decoder) (uint32, []byte) {
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
	if len(username) < minUsernameLen || len(username) > maxUsernameLen {
		return CodeInvalidUsername, nil
	}
	if len(password) < minPasswordLen || len(password) > maxPasswordLen {
		return CodeInvalidPassword, nil
	}
	u := s.userByName(username)
	if u == nil {
		return CodeInvalidCredentials, nil
	}
	if u.inactive {
		return CodeUserInactive, nil
	}
	if u.password != password {
		return CodeInvalidCredentials, nil
	}
	return s.loggedIn(c, u)
}

func (s *Server) loggedIn(c *conn, u *user) (uint32, []byte) {
	c.authed = true
	c.userID = u.id
	var e encoder
	e.u32(u.id)
	return CodeOK, e.b
}

func (s *Server) loginWithToken(c *conn, d *decoder) (uint32, []byte) {
	raw := d.name()
	if d.err != 0 {
		return d.err, nil
	}
	var t *token
	for _, o := range s.tokens {
		if o.raw == raw {
			t = o
			break
		}
	}
	if t == nil {
		return CodeResourceNotFound, nil
	}
	if !t.expiresAt.IsZero() && !time.Now().Before(t.expiresAt) {
		return CodePersonalAccessTokenExpired, nil
	}
	u := s.userByID(t.userID)
	if u == nil {
		return CodeInvalidCredentials, nil
	}
	if u.inactive {
		return CodeUserInactive, nil
	}
	return s.loggedIn(c, u)
}

func (s *Server) getTokens(c *conn) (uint32, []byte) {
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	var e encoder
	for _, t := range s.tokens {
		if t.userID != c.userID {
			continue
		}
		e.name(t.name)
		if t.expiresAt.IsZero() {
			e.u64(0)
		} else {
			e.u64(uint64(t.expiresAt.UnixMicro()))
		}
	}
	return CodeOK, e.b
}

func (s *Server) createToken(c *conn, d *decoder) (uint32, []byte) {
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
	for _, t := range s.tokens {
		if t.userID == c.userID && t.name == name {
			return CodePersonalAccessTokenExists, nil
		}
	}
	t := &token{userID: c.userID, name: name, raw: randomToken()}
	if expiry != 0 && expiry != unlimited {
		// The expiry is a duration in microseconds; cap it so it stays a valid time.
		const maxMicros = uint64(100 * 365 * 24 * time.Hour / time.Microsecond)
		t.expiresAt = time.Now().Add(time.Duration(min(expiry, maxMicros)) * time.Microsecond)
	}
	s.tokens = append(s.tokens, t)
	var e encoder
	e.name(t.raw)
	return CodeOK, e.b
}

func (s *Server) deleteToken(c *conn, d *decoder) (uint32, []byte) {
	name := d.name()
	if d.err != 0 {
		return d.err, nil
	}
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	for i, t := range s.tokens {
		if t.userID == c.userID && t.name == name {
			s.tokens = slices.Delete(s.tokens, i, i+1)
			return CodeOK, nil
		}
	}
	return CodeResourceNotFound, nil
}

func randomToken() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 50)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

func (s *Server) encodeClient(e *encoder, c *conn) {
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

func (s *Server) getClients(c *conn) (uint32, []byte) {
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	all := make([]*conn, 0, len(s.conns))
	for o := range s.conns {
		all = append(all, o)
	}
	slices.SortFunc(all, func(a, b *conn) int { return int(int64(a.clientID) - int64(b.clientID)) })
	var e encoder
	for _, o := range all {
		s.encodeClient(&e, o)
	}
	return CodeOK, e.b
}

func (s *Server) clusterMetadata(c *conn) (uint32, []byte) {
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	host, portStr, _ := net.SplitHostPort(s.addr)
	port, _ := strconv.ParseUint(portStr, 10, 16)
	var e encoder
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
	return CodeOK, e.b
}

// ---- streams and topics ---------------------------------------------------

func encodeStream(e *encoder, st *stream) {
	size, count := st.stats()
	e.u32(st.id)
	e.u64(st.createdAt)
	e.u32(uint32(st.topics.len()))
	e.u64(size)
	e.u64(count)
	e.name(st.name)
}

func encodeTopic(e *encoder, t *topic) {
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

func encodePartition(e *encoder, p *partition) {
	e.u32(p.id)
	e.u64(p.createdAt)
	e.u32(1) // segments
	e.u64(p.currentOffset())
	e.u64(p.sizeBytes)
	e.u64(p.messagesCount())
}

func (s *Server) getStream(c *conn, d *decoder) (uint32, []byte) {
	id := d.ident()
	if d.err != 0 {
		return d.err, nil
	}
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	st := s.data.stream(id)
	if st == nil {
		return CodeOK, nil
	}
	var e encoder
	encodeStream(&e, st)
	st.topics.each(func(_ uint32, t *topic) { encodeTopic(&e, t) })
	return CodeOK, e.b
}

func (s *Server) getStreams(c *conn) (uint32, []byte) {
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	var e encoder
	s.data.streams.each(func(_ uint32, st *stream) { encodeStream(&e, st) })
	return CodeOK, e.b
}

func (s *Server) createStream(c *conn, d *decoder) (uint32, []byte) {
	name := d.name()
	if d.err != 0 {
		return d.err, nil
	}
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	if _, ok := s.data.byName[name]; ok {
		return CodeStreamNameAlreadyExists, nil
	}
	st := s.data.createStream(name)
	var e encoder
	encodeStream(&e, st)
	return CodeOK, e.b
}

func (s *Server) deleteStream(c *conn, d *decoder) (uint32, []byte) {
	id := d.ident()
	if d.err != 0 {
		return d.err, nil
	}
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	st := s.data.stream(id)
	if st == nil {
		return CodeStreamIDNotFound, nil
	}
	s.data.deleteStream(st)
	return CodeOK, nil
}

func (s *Server) updateStream(c *conn, d *decoder) (uint32, []byte) {
	id := d.ident()
	name := d.name()
	if d.err != 0 {
		return d.err, nil
	}
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	st := s.data.stream(id)
	if st == nil {
		return CodeStreamIDNotFound, nil
	}
	if other, ok := s.data.byName[name]; ok && other != st.id {
		return CodeStreamNameAlreadyExists, nil
	}
	delete(s.data.byName, st.name)
	st.name = name
	s.data.byName[name] = st.id
	return CodeOK, nil
}

// resolveTopic finds a topic or returns the server's not-found code.
func (s *Server) resolveTopic(sid, tid ident) (*stream, *topic, uint32) {
	st := s.data.stream(sid)
	if st == nil {
		return nil, nil, CodeStreamIDNotFound
	}
	t := st.topic(tid)
	if t == nil {
		return st, nil, CodeTopicIDNotFound
	}
	return st, t, CodeOK
}

func (s *Server) getTopic(c *conn, d *decoder) (uint32, []byte) {
	sid := d.ident()
	tid := d.ident()
	if d.err != 0 {
		return d.err, nil
	}
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	_, t, code := s.resolveTopic(sid, tid)
	if code != CodeOK {
		return CodeOK, nil
	}
	var e encoder
	encodeTopic(&e, t)
	for _, p := range t.partitions {
		encodePartition(&e, p)
	}
	return CodeOK, e.b
}

func (s *Server) getTopics(c *conn, d *decoder) (uint32, []byte) {
	sid := d.ident()
	if d.err != 0 {
		return d.err, nil
	}
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	st := s.data.stream(sid)
	if st == nil {
		return CodeOK, nil
	}
	var e encoder
	st.topics.each(func(_ uint32, t *topic) { encodeTopic(&e, t) })
	return CodeOK, e.b
}

// topicSettings resolves the create/update topic settings as the server does
// with its default config (expiry "none", max size "unlimited", 1 GiB segments).
func topicSettings(compression uint8, expiry, maxSize uint64, replication uint8) (uint8, uint64, uint64, uint8, uint32) {
	if compression != 1 && compression != 2 {
		return 0, 0, 0, 0, CodeInvalidCommand
	}
	if expiry == 0 {
		expiry = unlimited
	}
	switch {
	case maxSize == 0:
		maxSize = unlimited
	case maxSize != unlimited && maxSize < defaultSegmentSize:
		return 0, 0, 0, 0, CodeInvalidTopicSize
	}
	if replication == 0 {
		replication = 1
	}
	return compression, expiry, maxSize, replication, CodeOK
}

func (s *Server) createTopic(c *conn, d *decoder) (uint32, []byte) {
	sid := d.ident()
	partitions := d.u32()
	compression := d.u8()
	expiry := d.u64()
	maxSize := d.u64()
	replication := d.u8()
	name := d.name()
	if d.err != 0 {
		return d.err, nil
	}
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	if partitions > maxPartitionsPerCall {
		return CodeTooManyPartitions, nil
	}
	compression, expiry, maxSize, replication, code := topicSettings(compression, expiry, maxSize, replication)
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
	if _, ok := st.byName[name]; ok {
		return CodeTopicNameAlreadyExists, nil
	}
	t := st.createTopic(name, partitions, compression, expiry, maxSize, replication)
	var e encoder
	encodeTopic(&e, t)
	for _, p := range t.partitions {
		encodePartition(&e, p)
	}
	return CodeOK, e.b
}

func (s *Server) deleteTopic(c *conn, d *decoder) (uint32, []byte) {
	sid := d.ident()
	tid := d.ident()
	if d.err != 0 {
		return d.err, nil
	}
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	st, t, code := s.resolveTopic(sid, tid)
	if code != CodeOK {
		return code, nil
	}
	st.deleteTopic(t)
	return CodeOK, nil
}

func (s *Server) updateTopic(c *conn, d *decoder) (uint32, []byte) {
	sid := d.ident()
	tid := d.ident()
	compression := d.u8()
	expiry := d.u64()
	maxSize := d.u64()
	replication := d.u8()
	name := d.name()
	if d.err != 0 {
		return d.err, nil
	}
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	compression, expiry, maxSize, replication, code := topicSettings(compression, expiry, maxSize, replication)
	if code != CodeOK {
		return code, nil
	}
	st, t, code := s.resolveTopic(sid, tid)
	if code != CodeOK {
		return code, nil
	}
	if other, ok := st.byName[name]; ok && other != t.id {
		return CodeTopicNameAlreadyExists, nil
	}
	delete(st.byName, t.name)
	t.name = name
	st.byName[name] = t.id
	t.compression, t.messageExpiry, t.maxTopicSize, t.replicationFactor = compression, expiry, maxSize, replication
	return CodeOK, nil
}

func (s *Server) changePartitions(c *conn, d *decoder, create bool) (uint32, []byte) {
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
	if create {
		t.addPartitions(n)
		return CodeOK, nil
	}
	if int64(n) > int64(len(t.partitions)) {
		return CodeInvalidPartitionsCount, nil
	}
	t.partitions = t.partitions[:len(t.partitions)-int(n)]
	return CodeOK, nil
}

// ---- polling and consumer offsets -------------------------------------------

// consumerKey is the key the server files a single consumer's offsets
// under: the numeric ID, or the xxHash32 of the name.
func consumerKey(id ident) uint64 {
	if id.numeric {
		return uint64(id.id)
	}
	return uint64(xxhash.Checksum32([]byte(id.name)))
}

func (s *Server) pollMessages(c *conn, d *decoder) (uint32, []byte) {
	kind, cid := d.consumer()
	sid := d.ident()
	tid := d.ident()
	pid, hasPID := d.optPartition()
	strategy := d.u8()
	if d.err == 0 && (strategy < 1 || strategy > 5) {
		d.fail(CodeInvalidCommand)
	}
	value := d.u64()
	count := d.u32()
	autoCommit := d.u8() != 0
	if d.err != 0 {
		return d.err, nil
	}
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	_, t, code := s.resolveTopic(sid, tid)
	if code != CodeOK {
		return code, nil
	}
	if kind == 2 {
		return CodeConsumerGroupIDNotFound, nil
	}
	if !hasPID {
		pid = 0
	}
	p := t.partition(pid)
	if p == nil {
		return CodePartitionNotFound, nil
	}
	current := p.currentOffset()
	key := consumerKey(cid)

	var msgs []storedMessage
	if count > 0 {
		switch strategy {
		case 1: // offset
			if value <= current {
				msgs = p.from(value, count)
			}
		case 2: // timestamp
			msgs = p.fromTimestamp(value, count)
		case 3: // first
			msgs = p.from(p.first, count)
		case 4: // last
			n := min(uint64(count), current+1)
			msgs = p.from(1+current-n, count)
		case 5: // next
			start := p.first
			if o, ok := p.offsets[key]; ok {
				start = o + 1
			}
			if start <= current {
				msgs = p.from(start, count)
			}
		}
		if autoCommit && len(msgs) > 0 {
			p.offsets[key] = msgs[len(msgs)-1].offset()
		}
	}

	size := 16
	for _, m := range msgs {
		size += len(m)
	}
	e := encoder{b: make([]byte, 0, size)}
	e.u32(p.id)
	e.u64(current)
	e.u32(uint32(len(msgs)))
	for _, m := range msgs {
		e.b = append(e.b, m...)
	}
	return CodeOK, e.b
}

func (s *Server) storeOffset(c *conn, d *decoder) (uint32, []byte) {
	kind, cid := d.consumer()
	sid := d.ident()
	tid := d.ident()
	pid, hasPID := d.optPartition()
	offset := d.u64()
	if d.err != 0 {
		return d.err, nil
	}
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	_, t, code := s.resolveTopic(sid, tid)
	if code != CodeOK {
		return code, nil
	}
	if kind == 2 {
		return CodeConsumerGroupIDNotFound, nil
	}
	if !hasPID {
		pid = 0
	}
	p := t.partition(pid)
	if p == nil {
		return CodePartitionNotFound, nil
	}
	if (p.messagesCount() == 0 && p.currentOffset() == 0) || offset > p.currentOffset() {
		return CodeInvalidOffset, nil
	}
	p.offsets[consumerKey(cid)] = offset
	return CodeOK, nil
}

func (s *Server) getOffset(c *conn, d *decoder) (uint32, []byte) {
	kind, cid := d.consumer()
	sid := d.ident()
	tid := d.ident()
	pid, hasPID := d.optPartition()
	if d.err != 0 {
		return d.err, nil
	}
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	_, t, code := s.resolveTopic(sid, tid)
	if code != CodeOK || kind == 2 {
		return CodeOK, nil
	}
	if !hasPID {
		pid = 0
	}
	p := t.partition(pid)
	if p == nil {
		return CodeOK, nil
	}
	stored, ok := p.offsets[consumerKey(cid)]
	if !ok {
		return CodeOK, nil
	}
	var e encoder
	e.u32(p.id)
	e.u64(p.currentOffset())
	e.u64(stored)
	return CodeOK, e.b
}

func (s *Server) deleteOffset(c *conn, d *decoder) (uint32, []byte) {
	kind, cid := d.consumer()
	sid := d.ident()
	tid := d.ident()
	pid, hasPID := d.optPartition()
	if d.err != 0 {
		return d.err, nil
	}
	if !c.authed {
		return CodeUnauthenticated, nil
	}
	_, t, code := s.resolveTopic(sid, tid)
	if code != CodeOK {
		return code, nil
	}
	if kind == 2 {
		return CodeConsumerGroupIDNotFound, nil
	}
	if !hasPID {
		pid = 0
	}
	p := t.partition(pid)
	if p == nil {
		return CodePartitionNotFound, nil
	}
	key := consumerKey(cid)
	if _, ok := p.offsets[key]; !ok {
		return CodeConsumerOffsetNotFound, nil
	}
	delete(p.offsets, key)
	return CodeOK, nil
}
