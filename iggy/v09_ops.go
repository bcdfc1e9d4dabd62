package iggy

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Header kinds used in option blocks: option blocks are user-header TLVs.
const (
	v09KindString = uint8(HeaderString)
	v09KindUint64 = uint8(HeaderUint64)
)

// login registers a new session: operation Register, request 0, session 0,
// a fresh client id, and a body of [protocol u32][client name][client
// version] then [username][password] or [token], then an empty client
// context (u32 0). Names are [len u8][bytes].
func (v *v09) login(w *wire, c Credentials) (ServerInfo, error) {
	if err := v09CheckCredentials(c); err != nil {
		return ServerInfo{}, err
	}
	v.client, v.session, v.next = v09NewClientID(), 0, 1
	v.groups = nil // assignments belong to the session
	n := v09HeaderBytes + 4 + 2 + len(clientName) + len(v09ClientVersion) + 2 + len(c.Username) + len(c.Password) + 1 + len(c.Token) + 4
	b := v.appendHeader(w.buf(n), v09OpRegister, 0, 0)
	b = v09le.AppendUint32(b, v09Protocol)
	b = v09AppendName(b, clientName)
	b = v09AppendName(b, v09ClientVersion)
	if c.Token != "" {
		b = v09AppendName(b, c.Token)
	} else {
		b = v09AppendName(b, c.Username)
		b = v09AppendName(b, c.Password)
	}
	b = v09le.AppendUint32(b, 0)
	p, err := v.metadata(w, v09Seal(b, true), v09RetryTransient)
	var ev *v09Evicted
	if errors.As(err, &ev) {
		return ServerInfo{}, ev.loginError(w.addr)
	}
	if CodeOf(err) == CodeInvalidFormat {
		// Our login body is well formed for protocol 0.11.0 (credentials
		// checked above), so a server that cannot decode it most likely
		// speaks another protocol version: server-0.9.0-edge.5 answered a
		// protocol 0.12.2 login so, before any version check.
		return ServerInfo{}, &UnsupportedServerError{Addr: w.addr, Server: "most likely a protocol other than " +
			v09FormatProtocol(v09Protocol) + ": it refused a protocol " + v09FormatProtocol(v09Protocol) +
			" login as InvalidFormat (status 4), as Iggy servers of other protocol versions (0.10 and later, or pre-releases) answer a login body they cannot decode"}
	}
	if err != nil {
		return ServerInfo{}, err
	}
	info, session, err := v09DecodeLogin(p)
	if err != nil {
		return ServerInfo{}, fmt.Errorf("iggy at %s: login reply: %w", w.addr, err)
	}
	v.session = session
	return info, nil
}

// v09CheckCredentials refuses credentials the login frame cannot carry.
func v09CheckCredentials(c Credentials) error {
	switch {
	case c.Token != "":
		if len(c.Token) > 255 {
			return errors.New("personal access tokens longer than 255 bytes cannot be sent")
		}
	case len(c.Username) == 0 || len(c.Username) > 255:
		return fmt.Errorf("usernames must be 1 to 255 bytes, got %d", len(c.Username))
	case len(c.Password) > 255:
		return errors.New("passwords longer than 255 bytes cannot be sent")
	}
	return nil
}

// v09DecodeLogin reads a login reply's payload (after its result section):
// [user id u32][session u64][server protocol u32][len u8]server version.
func v09DecodeLogin(p []byte) (ServerInfo, uint64, error) {
	if len(p) < 17 {
		return ServerInfo{}, 0, fmt.Errorf("%d bytes, at least 17 expected", len(p))
	}
	n := int(p[16])
	if n == 0 || len(p) < 17+n {
		return ServerInfo{}, 0, fmt.Errorf("a server version of %d bytes in %d bytes", n, len(p)-17)
	}
	session := v09le.Uint64(p[4:])
	if session == 0 {
		return ServerInfo{}, 0, errors.New("session 0")
	}
	return ServerInfo{
		Version:  Version09,
		Protocol: v09FormatProtocol(v09le.Uint32(p[12:])),
		Server:   string(p[17 : 17+n]),
		UserID:   v09le.Uint32(p),
	}, session, nil
}

// ping sends a NonReplicated ping (code 1, empty body).
func (v *v09) ping(w *wire) error {
	b := v.appendHeader(w.buf(v09HeaderBytes), v09OpNonReplicated, v09CodePing, v.next)
	_, err := v.exchange(w, v09Seal(b, false), false)
	return err
}

// getTopic reads a topic (code 300, body [stream][topic]). The server
// answers an empty body when the stream or topic does not exist.
// streamExists reads a stream (code 200, a read): a missing one is an
// empty body or a not-found status.
func (v *v09) streamExists(w *wire, stream Identifier) (bool, error) {
	if err := checkIDs(stream, stream); err != nil {
		return false, err
	}
	b := v.appendHeader(w.buf(v09HeaderBytes+stream.wireLen()), v09OpNonReplicated, v09CodeGetStream, v.next)
	body, err := v.exchange(w, v09Seal(stream.appendTo(b), false), false)
	if IsNotFound(err) {
		return false, nil
	}
	return len(body) > 0, err
}

func (v *v09) getTopic(w *wire, stream, topic Identifier) (*Topic, error) {
	if err := checkIDs(stream, topic); err != nil {
		return nil, err
	}
	b := v.appendHeader(w.buf(v09HeaderBytes+stream.wireLen()+topic.wireLen()), v09OpNonReplicated, v09CodeGetTopic, v.next)
	b = topic.appendTo(stream.appendTo(b))
	body, err := v.exchange(w, v09Seal(b, false), false)
	switch {
	case IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	case len(body) == 0:
		return nil, nil
	}
	t, err := v09DecodeTopic(body)
	if err != nil {
		return nil, fmt.Errorf("iggy at %s: topic reply: %w", w.addr, err)
	}
	return t, nil
}

// v09DecodeTopic reads a topic reply: [id u32][created u64][partitions u32]
// [expiry u64][compression u8][max size u64][size u64][messages u64]
// [len u8]name, the explicit and the derived option blocks (each u32-length
// prefixed), then 40 bytes per partition (iggy_binary_protocol 0.11.0
// responses/streams/get_stream.rs TopicHeader, responses/topics/get_topic.rs).
// Durability comes from the option blocks, the explicit one first.
func v09DecodeTopic(b []byte) (*Topic, error) {
	const fixed = 49
	if len(b) < fixed+1 {
		return nil, fmt.Errorf("%d bytes, at least %d expected", len(b), fixed+1)
	}
	n := int(b[fixed])
	pos := fixed + 1 + n
	if n == 0 || len(b) < pos {
		return nil, fmt.Errorf("a name of %d bytes in %d bytes", n, len(b)-fixed-1)
	}
	t := &Topic{
		ID:            v09le.Uint32(b),
		Name:          string(b[fixed+1 : fixed+1+n]),
		Partitions:    v09le.Uint32(b[12:]),
		MessageExpiry: v09le.Uint64(b[16:]),
		MaxTopicSize:  v09le.Uint64(b[25:]),
	}
	for i := 0; i < 2; i++ { // explicit, then derived options
		if len(b)-pos < 4 || uint64(v09le.Uint32(b[pos:])) > uint64(len(b)-pos-4) {
			return nil, fmt.Errorf("option block %d runs past the %d-byte reply", i+1, len(b))
		}
		block := b[pos+4 : pos+4+int(v09le.Uint32(b[pos:]))]
		pos += 4 + len(block)
		v, err := v09FindOption(block, v09OptDurability)
		if err != nil {
			return nil, fmt.Errorf("option block %d: %w", i+1, err)
		}
		if t.Durability == "" {
			t.Durability = strings.ToLower(v)
		}
	}
	if uint64(t.Partitions)*40 > uint64(len(b)-pos) {
		return nil, fmt.Errorf("%d partitions in %d bytes", t.Partitions, len(b)-pos)
	}
	return t, nil
}

// v09FindOption returns the String value of key in an options block
// (pairs of [kind u8][len u32][bytes] entries, a String key then its
// value), or "" when the block does not have it.
func v09FindOption(block []byte, key string) (string, error) {
	entry := func(pos int) (kind uint8, v []byte, next int, err error) {
		if len(block)-pos < 5 || uint64(v09le.Uint32(block[pos+1:])) > uint64(len(block)-pos-5) {
			return 0, nil, 0, fmt.Errorf("an option entry at byte %d runs past the %d-byte block", pos, len(block))
		}
		next = pos + 5 + int(v09le.Uint32(block[pos+1:]))
		return block[pos], block[pos+5 : next], next, nil
	}
	for pos := 0; pos < len(block); {
		kk, k, next, err := entry(pos)
		if err != nil {
			return "", err
		}
		vk, v, next, err := entry(next)
		if err != nil {
			return "", err
		}
		if kk == v09KindString && vk == v09KindString && string(k) == key {
			return string(v), nil
		}
		pos = next
	}
	return "", nil
}

// createStream creates a stream (operation 128, body [len u8]name and no
// options).
func (v *v09) createStream(w *wire, name string) error {
	if err := v09CheckName("stream", name); err != nil {
		return err
	}
	b, err := v.startMetadata(w, v09OpCreateStream, 1+len(name))
	if err != nil {
		return err
	}
	_, err = v.metadata(w, v09Seal(v09AppendName(b, name), true), v09RetryTransient)
	return err
}

// createTopic creates a topic (operation 132, body [stream][partitions u32]
// [len u8]name[options]). The options go as the released 0.11.0 SDK sends
// them (iggy_common 0.11.0 TopicCreateOptions::to_wire): sorted by key, both
// durability policies always (consumer_offset_durability replicated,
// durability as t asks), then max_topic_size and message_expiry as Uint64
// when set (0, the server's default, is left out). A server that refuses
// the durability keys as unknown (4041) is a pre-release 0.9 server
// (server-0.9.0-edge.5 had enforce_fsync instead): the topic is created
// there without them, and its reply reports no durability.
func (v *v09) createTopic(w *wire, stream Identifier, t TopicSpec) error {
	if err := checkIDs(stream); err != nil {
		return err
	}
	if err := v09CheckName("topic", t.Name); err != nil {
		return err
	}
	err := v.sendCreateTopic(w, stream, t, true)
	if CodeOf(err) == CodeUnsupportedOptionKey {
		err = v.sendCreateTopic(w, stream, t, false)
	}
	return err
}

// Topic option keys (iggy_common 0.11.0 types/options topic_option_keys),
// in the order they are sent.
const (
	v09OptOffsetDurability = "consumer_offset_durability"
	v09OptDurability       = "durability"
	v09OptMaxTopicSize     = "max_topic_size"
	v09OptMessageExpiry    = "message_expiry"
)

// sendCreateTopic sends one CreateTopic request, with the durability
// options or without them.
func (v *v09) sendCreateTopic(w *wire, stream Identifier, t TopicSpec, durability bool) error {
	const option = 1 + 4 + 1 + 4 // kinds and lengths of a key and its value
	n := stream.wireLen() + 4 + 1 + len(t.Name) + 4*option + 2*8 + len(v09OptMaxTopicSize) + len(v09OptMessageExpiry) +
		len(v09OptOffsetDurability) + len(v09OptDurability) + 2*len("replicated")
	b, err := v.startMetadata(w, v09OpCreateTopic, n)
	if err != nil {
		return err
	}
	b = stream.appendTo(b)
	b = v09le.AppendUint32(b, t.Partitions)
	b = v09AppendName(b, t.Name)
	if durability {
		b = v09AppendOption(b, v09OptOffsetDurability, v09KindString, []byte(DurabilityReplicated.String()))
		b = v09AppendOption(b, v09OptDurability, v09KindString, []byte(t.Durability.String()))
	}
	if t.MaxTopicSize != 0 {
		b = v09AppendOption(b, v09OptMaxTopicSize, v09KindUint64, v09le.AppendUint64(nil, t.MaxTopicSize))
	}
	if t.MessageExpiry != 0 {
		b = v09AppendOption(b, v09OptMessageExpiry, v09KindUint64, v09le.AppendUint64(nil, t.MessageExpiry))
	}
	_, err = v.metadata(w, v09Seal(b, true), v09RetryTransient)
	return err
}

// deleteStream deletes a stream (operation 130, body [stream]).
func (v *v09) deleteStream(w *wire, stream Identifier) error {
	if err := checkIDs(stream); err != nil {
		return err
	}
	b, err := v.startMetadata(w, v09OpDeleteStream, stream.wireLen())
	if err != nil {
		return err
	}
	_, err = v.metadata(w, v09Seal(stream.appendTo(b), true), v09RetryTransient)
	return err
}

// createToken creates a personal access token that never expires
// (operation 146, body [len u8]name[expiry u64 = MaxUint64]); the reply's
// payload is [len u8]token. Only status 58 is retried: the server refuses a
// replayed token creation, as it cannot show the raw token twice.
func (v *v09) createToken(w *wire, name string) (string, error) {
	if err := v09CheckName("personal access token", name); err != nil {
		return "", err
	}
	b, err := v.startMetadata(w, v09OpCreateToken, 1+len(name)+8)
	if err != nil {
		return "", err
	}
	b = v09le.AppendUint64(v09AppendName(b, name), math.MaxUint64)
	p, err := v.metadata(w, v09Seal(b, true), v09RetryNotAccepted)
	if err != nil {
		return "", err
	}
	tok, err := v09DecodeToken(p)
	if err != nil {
		return "", fmt.Errorf("iggy at %s: token reply: %w", w.addr, err)
	}
	return tok, nil
}

// v09DecodeToken reads [len u8]token.
func v09DecodeToken(p []byte) (string, error) {
	if len(p) == 0 || p[0] == 0 || len(p) < 1+int(p[0]) {
		return "", fmt.Errorf("no token in %d bytes", len(p))
	}
	return string(p[1 : 1+int(p[0])]), nil
}

// flush asks to save a partition's unsaved messages (code 102, body
// [stream][topic][partition u32][fsync u8]). Iggy 0.9 servers know the
// command but always refuse it with FeatureUnavailable (5): they have no
// flush on demand and save by their own settings.
func (v *v09) flush(w *wire, stream, topic Identifier, partition uint32, fsync bool) error {
	if err := checkIDs(stream, topic); err != nil {
		return err
	}
	b := v.appendHeader(w.buf(v09HeaderBytes+stream.wireLen()+topic.wireLen()+5), v09OpNonReplicated, v09CodeFlush, v.next)
	b = v09le.AppendUint32(topic.appendTo(stream.appendTo(b)), partition)
	b = append(b, v09Bool(fsync))
	_, err := v.exchange(w, v09Seal(b, false), false)
	if CodeOf(err) == CodeFeatureUnavailable {
		return fmt.Errorf("iggy 0.9 servers do not flush on request (they save unsaved messages by their own [system.partition] settings): %w", err)
	}
	return err
}

// startMetadata starts a replicated metadata request of operation op with
// room for n body bytes; it takes the next request number.
func (v *v09) startMetadata(w *wire, op uint8, n int) ([]byte, error) {
	if v.session == 0 {
		return nil, errV09NoSession
	}
	return v.appendHeader(w.buf(v09HeaderBytes+n), op, 0, v.claim()), nil
}

// v09AppendName appends [len u8]s; callers check that s fits.
func v09AppendName(b []byte, s string) []byte {
	return append(append(b, byte(len(s))), s...)
}

// v09AppendOption appends one option: a String key and a value of kind,
// each [kind u8][len u32][bytes].
func v09AppendOption(b []byte, key string, kind uint8, value []byte) []byte {
	b = append(b, v09KindString)
	b = append(v09le.AppendUint32(b, uint32(len(key))), key...)
	b = append(b, kind)
	return append(v09le.AppendUint32(b, uint32(len(value))), value...)
}

// v09Bool is a wire boolean.
func v09Bool(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// v09CheckName refuses a name the [len u8] prefix cannot carry.
func v09CheckName(what, name string) error {
	if len(name) == 0 || len(name) > 255 {
		return fmt.Errorf("%s name %q: names must be 1 to 255 bytes", what, name)
	}
	return nil
}
