package iggytest

import (
	"crypto/rand"
	"slices"
	"time"

	"github.com/OneOfOne/xxhash"
)

// The operations both front ends share. They work on decoded arguments,
// need s.mu held, and answer with the 0.8 error codes; each front end
// checks its own preconditions (in its server's order) and encodes the
// outcome in its own dialect.

// ---- users and tokens -------------------------------------------------------

// checkPassword finds the user a username/password login is for, with the
// checks and codes of server 0.8.0.
func (s *Server) checkPassword(username, password string) (*user, uint32) {
	if len(username) < minUsernameLen || len(username) > maxUsernameLen {
		return nil, CodeInvalidUsername
	}
	if len(password) < minPasswordLen || len(password) > maxPasswordLen {
		return nil, CodeInvalidPassword
	}
	u := s.userByName(username)
	if u == nil {
		return nil, CodeInvalidCredentials
	}
	if u.inactive {
		return nil, CodeUserInactive
	}
	if u.password != password {
		return nil, CodeInvalidCredentials
	}
	return u, CodeOK
}

// checkToken finds the user a personal-access-token login is for.
func (s *Server) checkToken(raw string) (*user, uint32) {
	var t *token
	for _, o := range s.tokens {
		if o.raw == raw {
			t = o
			break
		}
	}
	if t == nil {
		return nil, CodeResourceNotFound
	}
	if !t.expiresAt.IsZero() && !time.Now().Before(t.expiresAt) {
		return nil, CodePersonalAccessTokenExpired
	}
	u := s.userByID(t.userID)
	if u == nil {
		return nil, CodeInvalidCredentials
	}
	if u.inactive {
		return nil, CodeUserInactive
	}
	return u, CodeOK
}

// userTokens returns a user's personal access tokens.
func (s *Server) userTokens(userID uint32) []*token {
	var out []*token
	for _, t := range s.tokens {
		if t.userID == userID {
			out = append(out, t)
		}
	}
	return out
}

// createToken mints a token; expiry is a duration in microseconds (0 or
// u64::MAX: never).
func (s *Server) createToken(userID uint32, name string, expiry uint64) (*token, uint32) {
	for _, t := range s.tokens {
		if t.userID == userID && t.name == name {
			return nil, CodePersonalAccessTokenExists
		}
	}
	t := &token{userID: userID, name: name, raw: randomToken()}
	if expiry != 0 && expiry != unlimited {
		// Cap the duration so it stays a valid time.
		const maxMicros = uint64(100 * 365 * 24 * time.Hour / time.Microsecond)
		t.expiresAt = time.Now().Add(time.Duration(min(expiry, maxMicros)) * time.Microsecond)
	}
	s.tokens = append(s.tokens, t)
	return t, CodeOK
}

// deleteToken removes a user's token by name.
func (s *Server) deleteToken(userID uint32, name string) uint32 {
	for i, t := range s.tokens {
		if t.userID == userID && t.name == name {
			s.tokens = slices.Delete(s.tokens, i, i+1)
			return CodeOK
		}
	}
	return CodeResourceNotFound
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

// sortedConns returns the open connections by client ID.
func (s *Server) sortedConns() []*conn {
	all := make([]*conn, 0, len(s.conns))
	for o := range s.conns {
		all = append(all, o)
	}
	slices.SortFunc(all, func(a, b *conn) int { return int(int64(a.clientID) - int64(b.clientID)) })
	return all
}

// ---- streams, topics, partitions --------------------------------------------

func (s *Server) createStreamOp(name string) (*stream, uint32) {
	if _, ok := s.data.byName[name]; ok {
		return nil, CodeStreamNameAlreadyExists
	}
	return s.data.createStream(name), CodeOK
}

func (s *Server) deleteStreamOp(id ident) uint32 {
	st := s.data.stream(id)
	if st == nil {
		return CodeStreamIDNotFound
	}
	s.data.deleteStream(st)
	return CodeOK
}

func (s *Server) updateStreamOp(id ident, name string) uint32 {
	st := s.data.stream(id)
	if st == nil {
		return CodeStreamIDNotFound
	}
	if other, ok := s.data.byName[name]; ok && other != st.id {
		return CodeStreamNameAlreadyExists
	}
	delete(s.data.byName, st.name)
	st.name = name
	s.data.byName[name] = st.id
	return CodeOK
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

// resolvePartition finds a partition or returns the not-found code of the
// level that missed.
func (s *Server) resolvePartition(sid, tid ident, pid uint32) (*topic, *partition, uint32) {
	_, t, code := s.resolveTopic(sid, tid)
	if code != CodeOK {
		return nil, nil, code
	}
	p := t.partition(pid)
	if p == nil {
		return t, nil, CodePartitionNotFound
	}
	return t, p, CodeOK
}

// createTopicOp creates a topic in st with resolved settings.
func (s *Server) createTopicOp(st *stream, cfg topicConfig, partitions uint32) (*topic, uint32) {
	if _, ok := st.byName[cfg.name]; ok {
		return nil, CodeTopicNameAlreadyExists
	}
	return st.createTopic(cfg, partitions), CodeOK
}

// renameTopicOp gives t a new name in st.
func (s *Server) renameTopicOp(st *stream, t *topic, name string) uint32 {
	if other, ok := st.byName[name]; ok && other != t.id {
		return CodeTopicNameAlreadyExists
	}
	delete(st.byName, t.name)
	t.name = name
	st.byName[name] = t.id
	return CodeOK
}

// changePartitionsOp adds or removes (the newest) n partitions.
// Consumer groups of the topic are assigned again.
func (s *Server) changePartitionsOp(t *topic, n uint32, create bool) uint32 {
	if create {
		t.addPartitions(n)
	} else {
		if int64(n) > int64(len(t.partitions)) {
			return CodeInvalidPartitionsCount
		}
		t.partitions = t.partitions[:len(t.partitions)-int(n)]
	}
	t.rebalanceGroups()
	return CodeOK
}

// flushOp saves a partition's unsaved messages.
func (s *Server) flushOp(sid, tid ident, pid uint32) uint32 {
	_, p, code := s.resolvePartition(sid, tid, pid)
	if code != CodeOK {
		return code
	}
	p.unsaved = 0
	return CodeOK
}

// ---- polling and consumer offsets ---------------------------------------------

// consumerKey is the key the server files a single consumer's offsets
// under: the numeric ID, or the xxHash32 of the name.
func consumerKey(id ident) uint64 {
	if id.numeric {
		return uint64(id.id)
	}
	return uint64(xxhash.Checksum32([]byte(id.name)))
}

// pollSpec is a decoded poll: strategy 1 offset, 2 timestamp, 3 first,
// 4 last, 5 next.
type pollSpec struct {
	strategy   uint8
	value      uint64
	count      uint32
	autoCommit bool
	key        uint64 // consumerKey of the consumer, or the group ID
	// offsets are the stored offsets key is filed in: the partition's
	// (single consumers) when nil, else its groupOffsets.
	offsets map[uint64]uint64
}

// pollOp selects messages and commits the consumer's offset when asked.
func pollOp(p *partition, q pollSpec) []storedMessage {
	if q.count == 0 {
		return nil
	}
	current := p.currentOffset()
	offsets := q.offsets
	if offsets == nil {
		offsets = p.offsets
	}
	var msgs []storedMessage
	switch q.strategy {
	case 1: // offset
		if q.value <= current {
			msgs = p.from(q.value, q.count)
		}
	case 2: // timestamp
		msgs = p.fromTimestamp(q.value, q.count)
	case 3: // first
		msgs = p.from(p.first, q.count)
	case 4: // last
		n := min(uint64(q.count), current+1)
		msgs = p.from(1+current-n, q.count)
	case 5: // next
		start := p.first
		if o, ok := offsets[q.key]; ok {
			start = o + 1
		}
		if start <= current {
			msgs = p.from(start, q.count)
		}
	}
	if q.autoCommit && len(msgs) > 0 {
		offsets[q.key] = msgs[len(msgs)-1].offset
	}
	return msgs
}

// storeOffsetOp stores an offset under key in offsets (of partition p),
// refusing one past the partition's current offset or in an empty
// partition.
func storeOffsetOp(p *partition, offsets map[uint64]uint64, key, offset uint64) uint32 {
	if (p.messagesCount() == 0 && p.currentOffset() == 0) || offset > p.currentOffset() {
		return CodeInvalidOffset
	}
	offsets[key] = offset
	return CodeOK
}

// deleteOffsetOp deletes a stored offset.
func deleteOffsetOp(offsets map[uint64]uint64, key uint64) uint32 {
	if _, ok := offsets[key]; !ok {
		return CodeConsumerOffsetNotFound
	}
	delete(offsets, key)
	return CodeOK
}
