package iggytest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Message is a stored message as the server keeps it.
type Message struct {
	StreamID    uint32
	TopicID     uint32
	PartitionID uint32
	Offset      uint64
	// ID is the message ID as its 16 wire bytes (a little-endian u128, the
	// same bytes as iggcon.MessageID); a 0.8 server fills in a random UUID
	// v4 when the client sent 0, a 0.9 server keeps 0.
	ID       [16]byte
	Checksum uint64
	// Timestamp is set by the server, microseconds since the epoch: one per
	// batch (0.9: the batch's base timestamp).
	Timestamp uint64
	// OriginTimestamp is as sent by the client (0.9: the batch's origin
	// timestamp plus the frame's timestamp delta).
	OriginTimestamp uint64
	Reserved        uint64
	Payload         []byte
	// UserHeaders are the raw user-header bytes as sent.
	UserHeaders []byte
	// Headers are UserHeaders parsed; nil when there are none or they do not
	// parse (then HeadersErr says why).
	Headers    []Header
	HeadersErr error
	// Raw is the whole message as stored and returned by polls: the 0.8
	// message (64-byte header, payload, user headers) or, for a message sent
	// in a 0.9 batch, its frame (48-byte header, payload, user headers).
	// Checksum covers Raw without its first 8 bytes either way.
	Raw []byte
}

// HeaderField is a user-header key or value: its kind (HeaderRaw ...
// HeaderDouble) and bytes.
type HeaderField struct {
	Kind  uint8
	Value []byte
}

// Header is one user header.
type Header struct {
	Key   HeaderField
	Value HeaderField
}

// HeaderMap returns the headers whose key is a string, by key.
func (m Message) HeaderMap() map[string]HeaderField {
	out := make(map[string]HeaderField, len(m.Headers))
	for _, h := range m.Headers {
		if h.Key.Kind == HeaderString {
			out[string(h.Key.Value)] = h.Value
		}
	}
	return out
}

// ParseUserHeaders parses user-header bytes: pairs of [u8 kind][u32 length]
// [bytes] entries (key, then value), each 1-255 bytes, kinds 1-15, fixed-size
// kinds with their sizes, as the server and the SDK read them.
func ParseUserHeaders(b []byte) ([]Header, error) {
	var out []Header
	pos := 0
	field := func() (HeaderField, error) {
		if len(b)-pos < 5 {
			return HeaderField{}, fmt.Errorf("user headers: truncated entry at byte %d", pos)
		}
		kind := b[pos]
		n := binary.LittleEndian.Uint32(b[pos+1 : pos+5])
		if kind < HeaderRaw || kind > HeaderDouble {
			return HeaderField{}, fmt.Errorf("user headers: unknown kind %d at byte %d", kind, pos)
		}
		if n == 0 || n > 255 {
			return HeaderField{}, fmt.Errorf("user headers: length %d outside 1-255 at byte %d", n, pos)
		}
		if want := fixedHeaderSize(kind); want > 0 && int(n) != want {
			return HeaderField{}, fmt.Errorf("user headers: kind %d needs %d bytes, has %d at byte %d", kind, want, n, pos)
		}
		if uint64(len(b)-pos-5) < uint64(n) {
			return HeaderField{}, fmt.Errorf("user headers: entry at byte %d runs past the end", pos)
		}
		v := append([]byte(nil), b[pos+5:pos+5+int(n)]...)
		pos += 5 + int(n)
		return HeaderField{Kind: kind, Value: v}, nil
	}
	for pos < len(b) {
		k, err := field()
		if err != nil {
			return nil, err
		}
		v, err := field()
		if err != nil {
			return nil, err
		}
		out = append(out, Header{Key: k, Value: v})
	}
	return out, nil
}

func fixedHeaderSize(kind uint8) int {
	switch kind {
	case HeaderBool, HeaderInt8, HeaderUint8:
		return 1
	case HeaderInt16, HeaderUint16:
		return 2
	case HeaderInt32, HeaderUint32, HeaderFloat:
		return 4
	case HeaderInt64, HeaderUint64, HeaderDouble:
		return 8
	case HeaderInt128, HeaderUint128:
		return 16
	}
	return 0
}

func decodeMessage(streamID, topicID, partitionID uint32, m storedMessage) Message {
	c := m
	c.raw = append([]byte(nil), m.raw...)
	out := Message{
		StreamID:        streamID,
		TopicID:         topicID,
		PartitionID:     partitionID,
		Checksum:        c.checksum(),
		Offset:          c.offset,
		Timestamp:       c.timestamp,
		OriginTimestamp: c.originTimestamp(),
		Reserved:        c.reserved(),
		Payload:         c.payload(),
		UserHeaders:     c.userHeaders(),
		Raw:             c.raw,
	}
	copy(out.ID[:], c.id())
	if len(out.UserHeaders) > 0 {
		out.Headers, out.HeadersErr = ParseUserHeaders(out.UserHeaders)
	}
	return out
}

// lookup resolves a helper's stream/topic argument: a name, or a decimal ID
// when no entity has that name.
func lookupIdent(s string, byName map[string]uint32) ident {
	if _, ok := byName[s]; ok {
		return ident{name: s}
	}
	if n, err := strconv.ParseUint(s, 10, 32); err == nil {
		return ident{numeric: true, id: uint32(n)}
	}
	return ident{name: s}
}

func (s *Server) findTopicLocked(stream, topicName string) *topic {
	st := s.data.stream(lookupIdent(stream, s.data.byName))
	if st == nil {
		return nil
	}
	return st.topic(lookupIdent(topicName, st.byName))
}

// Messages returns copies of every message kept in a topic, partition by
// partition, each in offset order. It returns nil when the topic does not
// exist.
func (s *Server) Messages(stream, topic string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.findTopicLocked(stream, topic)
	if t == nil {
		return nil
	}
	var out []Message
	for _, p := range t.partitions {
		for _, m := range p.msgs {
			out = append(out, decodeMessage(t.streamID, t.id, p.id, m))
		}
	}
	return out
}

// PartitionMessages returns copies of the messages kept in one partition, in
// offset order (nil when it does not exist).
func (s *Server) PartitionMessages(stream, topic string, partition uint32) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.findTopicLocked(stream, topic)
	if t == nil {
		return nil
	}
	p := t.partition(partition)
	if p == nil {
		return nil
	}
	out := make([]Message, 0, len(p.msgs))
	for _, m := range p.msgs {
		out = append(out, decodeMessage(t.streamID, t.id, p.id, m))
	}
	return out
}

// MessageCount returns how many messages a topic keeps (0 when it does not exist).
func (s *Server) MessageCount(stream, topic string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.findTopicLocked(stream, topic)
	if t == nil {
		return 0
	}
	_, n := t.stats()
	return int(n)
}

// StreamInfo describes a stream.
type StreamInfo struct {
	ID        uint32
	Name      string
	CreatedAt time.Time
	Topics    int
	Messages  uint64
}

// TopicInfo describes a topic with the settings the server resolved
// (MessageExpiry and MaxTopicSize are u64::MAX for "never" / "unlimited").
type TopicInfo struct {
	StreamID          uint32
	ID                uint32
	Name              string
	CreatedAt         time.Time
	Partitions        uint32
	MessageExpiry     uint64 // microseconds
	MaxTopicSize      uint64 // bytes
	Compression       uint8  // 1 none, 2 gzip
	ReplicationFactor uint8
	Messages          uint64
}

func streamInfo(st *stream) StreamInfo {
	_, n := st.stats()
	return StreamInfo{ID: st.id, Name: st.name, CreatedAt: time.UnixMicro(int64(st.createdAt)), Topics: st.topics.len(), Messages: n}
}

// Stream describes a stream, looked up by name (or decimal ID).
func (s *Server) Stream(stream string) (StreamInfo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.data.stream(lookupIdent(stream, s.data.byName))
	if st == nil {
		return StreamInfo{}, false
	}
	return streamInfo(st), true
}

// Streams describes every stream, in ID order.
func (s *Server) Streams() []StreamInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []StreamInfo
	s.data.streams.each(func(_ uint32, st *stream) { out = append(out, streamInfo(st)) })
	return out
}

// Topic describes a topic, looked up by names (or decimal IDs).
func (s *Server) Topic(stream, topic string) (TopicInfo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.findTopicLocked(stream, topic)
	if t == nil {
		return TopicInfo{}, false
	}
	_, n := t.stats()
	return TopicInfo{
		StreamID: t.streamID, ID: t.id, Name: t.name, CreatedAt: time.UnixMicro(int64(t.createdAt)),
		Partitions: uint32(len(t.partitions)), MessageExpiry: t.messageExpiry, MaxTopicSize: t.maxTopicSize,
		Compression: t.compression, ReplicationFactor: t.replicationFactor, Messages: n,
	}, true
}

// AddUser creates a user as an operator would while clients run: logins
// with it work from then on, on either dialect. It gets the next free ID; a
// name already taken is an error.
func (s *Server) AddUser(u User) error {
	if len(u.Username) < minUsernameLen || len(u.Username) > maxUsernameLen ||
		len(u.Password) < minPasswordLen || len(u.Password) > maxPasswordLen {
		return fmt.Errorf("iggytest: user %q: the username must be %d-%d bytes and the password %d-%d", u.Username,
			minUsernameLen, maxUsernameLen, minPasswordLen, maxPasswordLen)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.userByName(u.Username) != nil {
		return fmt.Errorf("iggytest: user %q already exists", u.Username)
	}
	var id uint32
	for _, o := range s.users {
		id = max(id, o.id+1)
	}
	s.users = append(s.users, &user{id: id, username: u.Username, password: u.Password, inactive: u.Inactive})
	return nil
}

// CreateStream creates a stream without a client and returns its ID.
func (s *Server) CreateStream(name string) (uint32, error) {
	if len(name) == 0 || len(name) > 255 {
		return 0, errors.New("iggytest: stream name must be 1-255 bytes")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.data.byName[name]; ok {
		return 0, fmt.Errorf("iggytest: stream %q already exists", name)
	}
	return s.data.createStream(name).id, nil
}

// CreateTopic creates a topic with server-default settings (no expiry,
// unlimited size, no compression) without a client and returns its ID.
func (s *Server) CreateTopic(stream, name string, partitions uint32) (uint32, error) {
	if len(name) == 0 || len(name) > 255 {
		return 0, errors.New("iggytest: topic name must be 1-255 bytes")
	}
	if partitions > maxPartitionsPerCall {
		return 0, fmt.Errorf("iggytest: at most %d partitions", maxPartitionsPerCall)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.data.stream(lookupIdent(stream, s.data.byName))
	if st == nil {
		return 0, fmt.Errorf("iggytest: no stream %q", stream)
	}
	if _, ok := st.byName[name]; ok {
		return 0, fmt.Errorf("iggytest: topic %q already exists in stream %q", name, stream)
	}
	return st.createTopic(defaultTopicConfig(name), partitions).id, nil
}

// ConsumerKey returns the key the server files a named single consumer's
// offsets under (xxHash32 of the name); numeric consumers use their ID.
func ConsumerKey(name string) uint32 { return uint32(consumerKey(ident{name: name})) }

// ConsumerOffset returns the offset stored for a single consumer (its
// numeric ID, or ConsumerKey of its name) on a partition.
func (s *Server) ConsumerOffset(stream, topic string, partition, consumer uint32) (uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.findTopicLocked(stream, topic)
	if t == nil {
		return 0, false
	}
	p := t.partition(partition)
	if p == nil {
		return 0, false
	}
	o, ok := p.offsets[uint64(consumer)]
	return o, ok
}
