package iggytest

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"
)

// rawClient talks the wire protocol directly, for frames the SDK never sends.
type rawClient struct {
	t *testing.T
	c net.Conn
}

func dialRaw(t *testing.T, s *Server) *rawClient {
	t.Helper()
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &rawClient{t: t, c: c}
}

func (r *rawClient) frame(b []byte) (uint32, []byte) {
	r.t.Helper()
	_ = r.c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := r.c.Write(b); err != nil {
		r.t.Fatal(err)
	}
	var hdr [8]byte
	if _, err := io.ReadFull(r.c, hdr[:]); err != nil {
		r.t.Fatalf("read response: %v", err)
	}
	body := make([]byte, binary.LittleEndian.Uint32(hdr[4:8]))
	if _, err := io.ReadFull(r.c, body); err != nil {
		r.t.Fatal(err)
	}
	return binary.LittleEndian.Uint32(hdr[0:4]), body
}

func (r *rawClient) req(code Command, payload []byte) (uint32, []byte) {
	r.t.Helper()
	return r.frame(requestFrame(code, payload))
}

func requestFrame(code Command, payload []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(4+len(payload)))
	b = binary.LittleEndian.AppendUint32(b, uint32(code))
	return append(b, payload...)
}

func loginPayload(user, pass string) []byte {
	var e encoder
	e.name(user)
	e.name(pass)
	e.str32("0.8.0")
	e.str32("")
	return e.b
}

func (r *rawClient) login() {
	r.t.Helper()
	if st, _ := r.req(CmdLoginUser, loginPayload(DefaultUsername, DefaultPassword)); st != CodeOK {
		r.t.Fatalf("login status %d", st)
	}
}

func nameIdent(s string) []byte { return append([]byte{2, byte(len(s))}, s...) }

// testMessage is one message of a hand-built SendMessages request.
type testMessage struct {
	payload, headers []byte
	offset           uint64
}

func (m testMessage) bytes() []byte {
	h := make([]byte, messageHeaderSize)
	binary.LittleEndian.PutUint64(h[24:32], m.offset)
	binary.LittleEndian.PutUint32(h[48:52], uint32(len(m.headers)))
	binary.LittleEndian.PutUint32(h[52:56], uint32(len(m.payload)))
	return append(append(h, m.payload...), m.headers...)
}

// sendPayload builds a SendMessages payload the way the SDK does; mutate
// lets a test corrupt the index table before it is appended.
func sendPayload(stream, topic string, partitioning []byte, msgs []testMessage, mutate func(idx []byte)) []byte {
	meta := append(append(nameIdent(stream), nameIdent(topic)...), partitioning...)
	meta = binary.LittleEndian.AppendUint32(meta, uint32(len(msgs)))
	idx := make([]byte, len(msgs)*indexSize)
	var body []byte
	for i, m := range msgs {
		body = append(body, m.bytes()...)
		binary.LittleEndian.PutUint32(idx[i*indexSize+4:], uint32(len(body)))
	}
	if mutate != nil {
		mutate(idx)
	}
	p := binary.LittleEndian.AppendUint32(nil, uint32(len(meta)))
	p = append(p, meta...)
	p = append(p, idx...)
	return append(p, body...)
}

var balanced = []byte{1, 0}

func TestRawFraming(t *testing.T) {
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	r := dialRaw(t, s)

	// A length below 4 and an unknown code are answered with InvalidCommand;
	// the connection stays usable.
	if st, _ := r.frame([]byte{2, 0, 0, 0, 1, 0, 0, 0}); st != CodeInvalidCommand {
		t.Fatalf("short length: status %d", st)
	}
	if st, _ := r.req(Command(999), nil); st != CodeInvalidCommand {
		t.Fatalf("unknown command: status %d", st)
	}
	if st, body := r.req(CmdPing, nil); st != CodeOK || len(body) != 0 {
		t.Fatalf("ping: %d %v", st, body)
	}
	// Unauthenticated commands.
	if st, _ := r.req(CmdGetStreams, nil); st != CodeUnauthenticated {
		t.Fatalf("get streams unauthenticated: %d", st)
	}
	if st, _ := r.req(CmdSendMessages, sendPayload("s", "t", balanced, []testMessage{{payload: []byte("x")}}, nil)); st != CodeUnauthenticated {
		t.Fatalf("send unauthenticated: %d", st)
	}
	// Login validation.
	if st, _ := r.req(CmdLoginUser, loginPayload("ab", "iggy")); st != CodeInvalidUsername {
		t.Fatalf("short username: %d", st)
	}
	if st, _ := r.req(CmdLoginUser, loginPayload("iggy", "ab")); st != CodeInvalidPassword {
		t.Fatalf("short password: %d", st)
	}
	if st, _ := r.req(CmdLoginUser, loginPayload("", "iggy")); st != CodeInvalidFormat {
		t.Fatalf("empty username: %d", st)
	}
	if st, _ := r.req(CmdLoginUser, []byte{4, 'i', 'g'}); st != CodeInvalidCommand {
		t.Fatalf("truncated login: %d", st)
	}
	r.login()
	// A control command over 10 MiB is skipped and refused.
	big := make([]byte, maxControlPayload+1)
	if st, _ := r.req(CmdCreateStream, big); st != CodeInvalidCommand {
		t.Fatalf("oversized control frame: %d", st)
	}
	// Identifiers: numeric must be 4 bytes, kinds 1 or 2.
	if st, _ := r.req(CmdGetStream, []byte{1, 2, 0, 0}); st != CodeInvalidFormat {
		t.Fatalf("2-byte numeric id: %d", st)
	}
	if st, _ := r.req(CmdGetStream, []byte{9, 1, 'a'}); st != CodeInvalidCommand {
		t.Fatalf("unknown id kind: %d", st)
	}
	if st, body := r.req(CmdGetStream, nameIdent("missing")); st != CodeOK || len(body) != 0 {
		t.Fatalf("missing stream: %d %v", st, body)
	}
}

func TestRawSendValidation(t *testing.T) {
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if _, err := s.CreateStream("s"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateTopic("s", "t", 2); err != nil {
		t.Fatal(err)
	}
	r := dialRaw(t, s)
	r.login()
	one := []testMessage{{payload: []byte("hello")}}
	two := []testMessage{{payload: []byte("a")}, {payload: []byte("bb"), headers: []byte{2, 1, 0, 0, 0, 'k', 2, 1, 0, 0, 0, 'v'}}}

	cases := []struct {
		name    string
		payload []byte
		want    uint32
	}{
		{"ok", sendPayload("s", "t", balanced, two, nil), CodeOK},
		{"empty payload is accepted by the server", sendPayload("s", "t", []byte{2, 4, 1, 0, 0, 0}, []testMessage{{}}, nil), CodeOK},
		{"zero messages", sendPayload("s", "t", balanced, nil, nil), CodeInvalidMessagesCount},
		{"index offset", sendPayload("s", "t", balanced, one, func(i []byte) { i[0] = 1 }), CodeNonZeroOffset},
		{"index timestamp", sendPayload("s", "t", balanced, one, func(i []byte) { i[8] = 1 }), CodeNonZeroTimestamp},
		{"index past end", sendPayload("s", "t", balanced, two, func(i []byte) { i[4] = 200 }), CodeMissingIndex},
		{"positions going back", sendPayload("s", "t", balanced, []testMessage{{payload: []byte("a")}, {payload: []byte("b")}, {payload: []byte("c")}},
			func(i []byte) { binary.LittleEndian.PutUint32(i[20:], 64) }), CodeMissingIndex},
		{"last position going back", sendPayload("s", "t", balanced, []testMessage{{payload: []byte("a")}, {payload: []byte("b")}},
			func(i []byte) { binary.LittleEndian.PutUint32(i[20:], 0) }), CodeCannotReadIndexPosition},
		{"offsets going back", sendPayload("s", "t", balanced, []testMessage{{payload: []byte("a"), offset: 5}, {payload: []byte("b")}}, nil), CodeInvalidOffset},
		{"bad partitioning kind", sendPayload("s", "t", []byte{7, 0}, one, nil), CodeInvalidCommand},
		{"partition id of 2 bytes", sendPayload("s", "t", []byte{2, 2, 0, 0}, one, nil), CodeInvalidCommand},
		{"balanced with a value", sendPayload("s", "t", []byte{1, 1, 0}, one, nil), CodeInvalidCommand},
		{"bad stream identifier", append([]byte{2, 0, 0, 0}, 1, 0), CodeInvalidIdentifier},
		{"metadata longer than frame", []byte{255, 0, 0, 0}, CodeInvalidCommand},
		{"missing stream", sendPayload("x", "t", balanced, one, nil), CodeStreamIDNotFound},
		{"missing topic", sendPayload("s", "x", balanced, one, nil), CodeTopicIDNotFound},
		{"missing partition", sendPayload("s", "t", []byte{2, 4, 9, 0, 0, 0}, one, nil), CodePartitionNotFound},
	}
	for _, c := range cases {
		if st, _ := r.req(CmdSendMessages, c.payload); st != c.want {
			t.Errorf("%s: status %d, want %d", c.name, st, c.want)
		}
	}
	// Trailing garbage after the last message's declared size.
	p := sendPayload("s", "t", balanced, one, nil)
	p = append(p, 0xEE)
	if st, _ := r.req(CmdSendMessages, p); st != CodeInvalidMessagesSize {
		t.Errorf("trailing bytes: status %d", st)
	}
	msgs := s.Messages("s", "t")
	if len(msgs) != 3 {
		t.Fatalf("stored %d messages, want 3", len(msgs))
	}
	if h := msgs[1].Headers; string(msgs[1].Payload) != "bb" || len(h) != 1 || string(h[0].Key.Value) != "k" || string(h[0].Value.Value) != "v" {
		t.Fatalf("stored headers = %+v", msgs[1])
	}
	// Every stored message polls back byte for byte.
	var e encoder
	e.u8(1)
	e.b = append(e.b, 1, 4, 0, 0, 0, 0)
	e.b = append(e.b, nameIdent("s")...)
	e.b = append(e.b, nameIdent("t")...)
	e.u8(1)
	e.u32(1)
	e.u8(3)
	e.u64(0)
	e.u32(10)
	e.u8(0)
	st, body := r.req(CmdPollMessages, e.b)
	if st != CodeOK {
		t.Fatalf("poll status %d", st)
	}
	var want []byte
	for _, m := range s.PartitionMessages("s", "t", 1) {
		want = append(want, m.Raw...)
	}
	if binary.LittleEndian.Uint32(body[0:4]) != 1 || binary.LittleEndian.Uint32(body[12:16]) != 1 || !bytes.Equal(body[16:], want) {
		t.Fatalf("poll body %x, want messages %x", body, want)
	}
}

func TestParseUserHeaders(t *testing.T) {
	good := []byte{2, 1, 0, 0, 0, 'k', 3, 1, 0, 0, 0, 1}
	h, err := ParseUserHeaders(good)
	if err != nil || len(h) != 1 || h[0].Value.Kind != HeaderBool {
		t.Fatalf("parse = %+v, %v", h, err)
	}
	for _, bad := range [][]byte{
		{2, 1, 0, 0, 0, 'k'},                        // key without value
		{2, 0, 0, 0, 0, 2, 1, 0, 0, 0, 'v'},         // empty key
		{0, 1, 0, 0, 0, 'k', 2, 1, 0, 0, 0, 'v'},    // kind 0
		{2, 1, 0, 0, 0, 'k', 3, 2, 0, 0, 0, 1, 1},   // bool of 2 bytes
		{2, 1, 0, 0, 0, 'k', 2, 9, 0, 0, 0, 'v'},    // value runs past the end
		{2, 1, 0, 0, 0, 'k', 2, 0, 1, 0, 0, 'v'},    // value over 255 bytes
		{2, 1, 0, 0, 0, 'k', 16, 1, 0, 0, 0, 'v'},   // unknown kind
		{2, 255, 255, 255, 255, 'k', 2, 1, 0, 0, 0}, // huge length
	} {
		if _, err := ParseUserHeaders(bad); err == nil {
			t.Errorf("ParseUserHeaders(%v) succeeded", bad)
		}
	}
}

// memConn runs the frame loop over in-memory buffers, without sockets.
func serveBytes(s *Server, in []byte, authed bool) []byte {
	var out bytes.Buffer
	c := newConn(bytes.NewReader(in), &out, nil)
	c.clientID = 1
	c.addr = "127.0.0.1:1"
	c.authed = authed
	s.serveFrames(c)
	return out.Bytes()
}

// FuzzFrames feeds arbitrary bytes to the request loop of a server that has a
// stream, a topic and messages; the loop must never panic, and every
// response must be well formed.
// st is the identifiers of stream "s" and topic "t".
func st() []byte { return append(nameIdent("s"), nameIdent("t")...) }

// groupSeed08 joins group "g" of s/t, polls as a member without a
// partition, stores the group's offset of partition 0 and reads the group.
func groupSeed08() []byte {
	g := append(st(), nameIdent("g")...)
	member := append([]byte{2}, nameIdent("g")...)
	poll := append(append(member, st()...), 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 1)
	store := append(append(member, st()...), 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	b := requestFrame(CmdJoinConsumerGroup, g)
	b = append(b, requestFrame(CmdPollMessages, poll)...)
	b = append(b, requestFrame(CmdStoreConsumerOffset, store)...)
	return append(b, requestFrame(CmdGetConsumerGroup, g)...)
}

func FuzzFrames(f *testing.F) {
	seed := [][]byte{
		requestFrame(CmdPing, nil),
		requestFrame(CmdLoginUser, loginPayload("iggy", "iggy")),
		requestFrame(CmdSendMessages, sendPayload("s", "t", balanced, []testMessage{{payload: []byte("x")}}, nil)),
		requestFrame(CmdSendMessages, sendPayload("s", "t", []byte{3, 3, 'k', 'e', 'y'}, []testMessage{{payload: []byte("x"), headers: []byte{2, 1, 0, 0, 0, 'k', 2, 1, 0, 0, 0, 'v'}}}, nil)),
		requestFrame(CmdCreateTopic, append(nameIdent("s"), 3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 'u', 'v')),
		requestFrame(CmdPollMessages, append(append(append([]byte{1, 1, 4, 0, 0, 0, 0}, nameIdent("s")...), nameIdent("t")...), 1, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 1)),
		requestFrame(CmdStoreConsumerOffset, append(append(append([]byte{1, 1, 4, 0, 0, 0, 0}, nameIdent("s")...), nameIdent("t")...), 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
		{2, 0, 0, 0, 1, 0, 0, 0},
		requestFrame(CmdCreateConsumerGroup, append(st(), 1, 'h')),
		groupSeed08(),
	}
	for _, b := range seed {
		f.Add(b, true)
		f.Add(b, false)
	}
	f.Fuzz(func(t *testing.T, in []byte, authed bool) {
		s, err := newServer(Options{MaxFrameSize: 1 << 20, MaxMessagesPerPartition: 8})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateStream("s"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateTopic("s", "t", 2); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateConsumerGroup("s", "t", "g"); err != nil {
			t.Fatal(err)
		}
		serveBytes(s, requestFrame(CmdSendMessages,
			sendPayload("s", "t", balanced, []testMessage{{payload: []byte("seed")}}, nil)), true)
		out := serveBytes(s, in, authed)
		for len(out) > 0 {
			if len(out) < 8 {
				t.Fatalf("truncated response header %x", out)
			}
			st, n := binary.LittleEndian.Uint32(out[0:4]), int(binary.LittleEndian.Uint32(out[4:8]))
			if len(out) < 8+n {
				t.Fatalf("truncated response body")
			}
			if st != CodeOK && n != 0 {
				t.Fatalf("error %d with a payload", st)
			}
			out = out[8+n:]
		}
		// Whatever was stored must be readable.
		for _, m := range s.Messages("s", "t") {
			if m.Checksum != Checksum(m.Raw) {
				t.Fatalf("bad checksum at offset %d", m.Offset)
			}
		}
	})
}
