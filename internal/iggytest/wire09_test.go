package iggytest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// The 0.9 wire, with frames built by hand from the protocol facts
// (consensus/header.rs, batch.rs, requests/*, server dispatch.rs).

// quiet asserts that nothing arrives on c within d.
func quiet(t *testing.T, c net.Conn, d time.Duration) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(d))
	var b [1]byte
	n, err := c.Read(b[:])
	if n > 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("expected no answer, got %d bytes, %v", n, err)
	}
}

func u32at(b []byte, off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }
func u64at(b []byte, off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }

func TestWire09Login(t *testing.T) {
	s := startT(t, Options{Version: Version09})
	c := dialT(t, s)
	// Ping works before a login; reads do not; replicated requests evict.
	if err := c.ping(); err != nil {
		t.Fatalf("ping: %v", err)
	}
	if _, _, err := c.call09(opNonReplicated, uint32(CmdGetStreams), nil); !isStatus(err, CodeUnauthenticated) {
		t.Fatalf("get streams before login = %v", err)
	}
	c.session = 1
	if _, err := c.meta09(opCreateStream, []byte{1, 'x'}); err != evictedErr(EvictNoSession) {
		t.Fatalf("create stream before login = %v", err)
	}
	c.session = 0
	// The 0.8 login codes, a wrong protocol, bad credentials, a body without
	// the version prefix.
	if _, _, err := c.call09(opNonReplicated, uint32(CmdLoginUser), loginPayload("iggy", "iggy")); err != evictedErr(EvictMalformedLogin) {
		t.Fatalf("0.8 login code = %v", err)
	}
	hdr, _, err := c.call09(opRegister, 0, loginBody09(PackProtocol(0, 12, 0), "iggy", "iggy"))
	if err != evictedErr(EvictIncompatibleProtocol) || u32at(hdr, 144) != Protocol09 || u32at(hdr, 148) != Protocol09 ||
		u32at(hdr, 48) != headerSize09 || hdr[60] != command09Eviction {
		t.Fatalf("login with protocol 0.12.0 = %v, header %x", err, hdr[128:160])
	}
	if _, _, err := c.call09(opRegister, 0, loginBody09(Protocol09, "iggy", "wrong")); err != evictedErr(EvictInvalidCredentials) {
		t.Fatalf("wrong password = %v", err)
	}
	if _, _, err := c.call09(opRegister, 0, []byte{1, 2}); err != evictedErr(EvictMalformedLogin) {
		t.Fatalf("malformed login = %v", err)
	}
	// A login: reply to request 0, operation Register, result section, user
	// id, session, protocol, server version.
	hdr, body, err := c.call09(opRegister, 0, loginBody09(Protocol09|3, "iggy", "iggy"))
	if err != nil || hdr[60] != command09Reply || u64at(hdr, 200) != 0 || hdr[208] != opRegister {
		t.Fatalf("login = %v, header %x", err, hdr)
	}
	p, err := stripResult(body)
	if err != nil || u32at(p, 0) != 0 || u64at(p, 4) == 0 || u32at(p, 12) != Protocol09 || string(p[17:]) != "0.9.0" {
		t.Fatalf("login reply %x, %v", body, err)
	}
	if !bytes.Equal(hdr[160:176], c.id[:]) || u64at(hdr, 176) != u64at(p, 4) {
		t.Fatalf("login reply client %x op %d", hdr[160:176], u64at(hdr, 176))
	}
	// Counted as the 0.8 logins; a body that is no username/password login
	// counts as a token login.
	if s.RequestCount(CmdLoginUser) != 4 || s.RequestCount(CmdLoginWithPersonalAccessToken) != 1 {
		t.Fatalf("logins counted: %d, %d", s.RequestCount(CmdLoginUser), s.RequestCount(CmdLoginWithPersonalAccessToken))
	}
}

func TestWire09Framing(t *testing.T) {
	s := startT(t, Options{Version: Version09})
	c := dialT(t, s)
	// A 0.8 frame gets no answer: the server waits for 256 bytes.
	if _, err := c.c.Write(requestFrame(CmdPing, nil)); err != nil {
		t.Fatal(err)
	}
	quiet(t, c.c, 300*time.Millisecond)

	c = dialT(t, s)
	// Invalid headers are dropped without an answer; the connection stays.
	bad := request09Frame(u128{}, opNonReplicated, uint32(CmdPing), 1, 0, nil, false) // client 0
	reg := request09Frame(c.id, opRegister, 0, 3, 0, loginBody09(Protocol09, "iggy", "iggy"), false)
	noSession := request09Frame(c.id, opCreateStream, 0, 1, 0, []byte{1, 'x'}, false)
	for _, f := range [][]byte{bad, reg, noSession} {
		if _, err := c.c.Write(f); err != nil {
			t.Fatal(err)
		}
	}
	quiet(t, c.c, 200*time.Millisecond)
	if err := c.ping(); err != nil {
		t.Fatalf("ping after dropped requests: %v", err)
	}
	// A request checksum that does not match its body: status 4.
	f := request09Frame(c.id, opNonReplicated, uint32(CmdPing), 1, 0, []byte("x"), true)
	f[150] ^= 1
	_ = c.c.SetDeadline(time.Now().Add(5 * time.Second))
	_, _ = c.c.Write(f)
	if hdr, _, err := readFrame09(c.c); err != nil || u32at(hdr, 216) != CodeInvalidFormat {
		t.Fatalf("bad request checksum: %v %x", err, hdr)
	}
	// A command byte that is no command closes the connection.
	f = request09Frame(c.id, opNonReplicated, uint32(CmdPing), 1, 0, nil, false)
	f[60] = 99
	_, _ = c.c.Write(f)
	if _, err := io.ReadAll(c.c); err != nil {
		t.Fatalf("after an invalid command byte: %v", err)
	}
}

// The 0.8 front end reads a 256-byte 0.9 header as 8-byte 0.8 headers: each
// group with length 0 is answered InvalidCommand, then the size field (256
// at offset 48) reads as a length and the server waits for the payload.
func TestWire08AnswersVSRFrame(t *testing.T) {
	s := startT(t, Options{})
	c := dialT(t, s)
	ping := request09Frame(u128{9}, opNonReplicated, uint32(CmdPing), 1, 0, nil, false)
	if _, err := c.c.Write(ping); err != nil {
		t.Fatal(err)
	}
	_ = c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := make([]byte, 48)
	if _, err := io.ReadFull(c.c, got); err != nil {
		t.Fatal(err)
	}
	want := bytes.Repeat([]byte{3, 0, 0, 0, 0, 0, 0, 0}, 6)
	if !bytes.Equal(got, want) {
		t.Fatalf("answers %x, want %x", got, want)
	}
	quiet(t, c.c, 300*time.Millisecond)
}

func TestWire09Version010(t *testing.T) {
	s := startT(t, Options{Version: Version010})
	c := dialT(t, s)
	if err := c.ping(); err != nil {
		t.Fatalf("ping: %v", err)
	}
	for _, p := range []uint32{Protocol09, Protocol010} {
		hdr, _, err := c.call09(opRegister, 0, loginBody09(p, "iggy", "iggy"))
		if err != evictedErr(EvictIncompatibleProtocol) || u32at(hdr, 144) != Protocol010 || u32at(hdr, 148) != Protocol010 {
			t.Fatalf("login with protocol %x = %v, window %x", p, err, hdr[144:152])
		}
	}
}

// topicOptions09 builds an options block from key/kind/value triples.
func optionsBlock(entries ...option) []byte { return encodeOptions(entries) }

func TestWire09Metadata(t *testing.T) {
	s := startT(t, Options{Version: Version09})
	c := loginT(t, s)
	// Create a stream: result section, then the stream with an empty
	// options block.
	hdr, body, err := c.call09(opCreateStream, 0, []byte{1, 's'})
	if err != nil || u64at(hdr, 200) != 1 || hdr[208] != opCreateStream {
		t.Fatalf("create stream: %v %x", err, hdr[200:220])
	}
	if p, err := stripResult(body); err != nil || u32at(p, 0) != 0 || p[32] != 1 || p[33] != 's' || u32at(p, 34) != 0 {
		t.Fatalf("create stream reply %x, %v", body, err)
	}
	// The same request again (same number, same bytes) is a replay: the
	// cached reply, nothing created.
	c.next--
	hdr2, body2, err := c.call09(opCreateStream, 0, []byte{1, 's'})
	if err != nil || !bytes.Equal(hdr, hdr2) || !bytes.Equal(body, body2) {
		t.Fatalf("replay: %v", err)
	}
	// Refusals: a committed one in the result section, a pre-consensus one
	// as a status.
	if _, err := c.meta09(opCreateStream, []byte{1, 's'}); !isStatus(err, CodeStreamNameAlreadyExists) {
		t.Fatalf("duplicate stream = %v", err)
	}
	if _, err := c.meta09(opDeleteStream, nameIdent("nope")); !isStatus(err, CodeStreamIDNotFound) {
		t.Fatalf("delete missing stream = %v", err)
	}
	if _, err := c.meta09(opCreateStream, append([]byte{1, 'x'}, optionsBlock(option{key: "k", kind: HeaderString, value: []byte("v")})...)); !isStatus(err, CodeUnsupportedOptionKey) {
		t.Fatalf("stream option = %v", err)
	}
	topic := func(name string, partitions uint32, opts ...option) []byte {
		e := encoder{b: nameIdent("s")}
		e.u32(partitions)
		e.name(name)
		return append(e.b, optionsBlock(opts...)...)
	}
	if _, err := c.meta09(opCreateTopic, topic("t", 1001)); !isStatus(err, CodeTooManyPartitions) {
		t.Fatalf("1001 partitions = %v", err)
	}
	if _, err := c.meta09(opCreateTopic, topic("t", 1, option{key: "color", kind: HeaderString, value: []byte("red")})); !isStatus(err, CodeUnsupportedOptionKey) {
		t.Fatalf("unknown topic option = %v", err)
	}
	if _, err := c.meta09(opCreateTopic, topic("t", 1, option{key: optToSave, kind: HeaderUint32, value: le32(0)})); !isStatus(err, CodeInvalidOptionValue) {
		t.Fatalf("messages_required_to_save 0 = %v", err)
	}
	// The release knows durability, not the pre-release enforce_fsync.
	if _, err := c.meta09(opCreateTopic, topic("t", 1, option{key: "enforce_fsync", kind: HeaderBool, value: []byte{1}})); !isStatus(err, CodeUnsupportedOptionKey) {
		t.Fatalf("enforce_fsync = %v", err)
	}
	for _, v := range []option{{key: optDurability, kind: HeaderString, value: []byte("fast")}, {key: optDurability, kind: HeaderBool, value: []byte{1}}} {
		if _, err := c.meta09(opCreateTopic, topic("t", 1, v)); !isStatus(err, CodeInvalidOptionValue) {
			t.Fatalf("durability %q = %v", v.value, err)
		}
	}
	// A topic with options; its reply carries operation 64.
	c.next++
	hdr, body, err = c.call09(opCreateTopic, 0, topic("t", 2,
		option{key: optCompression, kind: HeaderString, value: []byte("gzip")},
		option{key: optToSave, kind: HeaderString, value: []byte("2")}))
	if err != nil || hdr[208] != opCreateTopicAssign {
		t.Fatalf("create topic: %v, operation %d", err, hdr[208])
	}
	p, err := stripResult(body)
	if err != nil {
		t.Fatal(err)
	}
	checkTopic09(t, p, 2)
	if info, ok := s.Topic("s", "t"); !ok || info.Partitions != 2 || info.Compression != 2 {
		t.Fatalf("topic = %+v", info)
	}
	// A request number reused for other arguments is dropped unanswered.
	if _, err := c.c.Write(request09Frame(c.id, opDeleteStream, 0, 1, c.session, nameIdent("s"), true)); err != nil {
		t.Fatal(err)
	}
	quiet(t, c.c, 200*time.Millisecond)
	// Once five newer replies are kept, request 1 reads as applied: 59.
	c.next += 5
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		if err := c.createStream(name); err != nil {
			t.Fatal(err)
		}
	}
	c.next = 1
	if _, err := c.meta09(opCreateStream, []byte{1, 's'}); !isStatus(err, CodeRequestAlreadyApplied) {
		t.Fatalf("old request number = %v", err)
	}
}

// checkTopic09 reads a 0.9 topic record and its partitions: gzip, the
// explicit block with the two options set, the derived block with the
// other six.
func checkTopic09(t *testing.T, p []byte, partitions uint32) {
	t.Helper()
	if u32at(p, 12) != partitions || u64at(p, 16) != unlimited || p[24] != 2 || u64at(p, 25) != unlimited {
		t.Fatalf("topic header %x", p[:50])
	}
	pos := 49 + 1 + int(p[49])
	explicit, _ := parseOptions(p[pos+4 : pos+4+int(u32at(p, pos))])
	pos += 4 + int(u32at(p, pos))
	derived, _ := parseOptions(p[pos+4 : pos+4+int(u32at(p, pos))])
	pos += 4 + int(u32at(p, pos))
	if len(explicit) != 2 || explicit[0].key != optCompression || explicit[1].key != optToSave ||
		explicit[1].kind != HeaderUint32 || u32at(explicit[1].value, 0) != 2 || len(derived) != 7 ||
		derived[1].key != optDurability || string(derived[1].value) != durabilityReplicated {
		t.Fatalf("options: explicit %+v derived %+v", explicit, derived)
	}
	if len(p)-pos != 40*int(partitions) {
		t.Fatalf("%d bytes of partitions", len(p)-pos)
	}
}

func TestWire09Send(t *testing.T) {
	s := startT(t, Options{Version: Version09})
	c := loginT(t, s)
	setupT(t, c, 2)
	part1 := []byte{2, 4, 1, 0, 0, 0}
	hdrs := []byte{2, 1, 0, 0, 0, 'k', 2, 1, 0, 0, 0, 'v'}
	b := batch09(1_000_000, []msg09{{id: u128{1, 2, 3}, payload: []byte("a")},
		{payload: []byte("bb"), headers: hdrs, tsDelta: 500}})
	for base := uint64(0); base < 4; base += 2 {
		hdr, body, err := c.call09(opSendMessages, 0, sendBody09("s", "t", part1, b))
		want := append(binary.LittleEndian.AppendUint32(nil, 1), 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0)
		if err != nil || u64at(hdr, 200) != c.next-1 || hdr[208] != opSendMessages ||
			!bytes.Equal(body, binary.LittleEndian.AppendUint64(want, base)) {
			t.Fatalf("send: %v, body %x", err, body)
		}
	}
	ms := s.PartitionMessages("s", "t", 1)
	if len(ms) != 4 || ms[0].ID != [16]byte{1, 2, 3} || ms[1].ID != [16]byte{} || ms[0].Timestamp == 0 ||
		ms[1].Timestamp != ms[0].Timestamp || ms[1].Offset != 1 || ms[3].Offset != 3 {
		t.Fatalf("stored %+v", ms)
	}
	m := ms[1]
	frame := b[batchHeaderSize+frameHeaderSize+1:]
	if string(m.Payload) != "bb" || m.OriginTimestamp != 1_000_500 || m.Checksum != Checksum(m.Raw) ||
		!bytes.Equal(m.Raw, frame) || len(m.Headers) != 1 || string(m.HeaderMap()["k"].Value) != "v" {
		t.Fatalf("stored message %+v", m)
	}
	// Batches the server cannot admit are dropped unanswered.
	badFrame := append([]byte(nil), b...)
	badFrame[batchHeaderSize+20] ^= 1 // in the first frame's id
	resealBatch09(badFrame)
	badBatch := append([]byte(nil), b...)
	badBatch[40] ^= 1
	for _, body := range [][]byte{
		sendBody09("s", "t", part1, badFrame),
		sendBody09("s", "t", part1, badBatch),
		append(sendBody09("s", "t", part1, b), 0), // a byte past the batch
	} {
		_, _ = c.c.Write(request09Frame(c.id, opSendMessages, 0, c.next, c.session, body, false))
		quiet(t, c.c, 200*time.Millisecond)
	}
	if n := s.MessageCount("s", "t"); n != 4 {
		t.Fatalf("stored %d messages", n)
	}
	// A target that does not resolve: status 20.
	for _, body := range [][]byte{sendBody09("x", "t", part1, b), sendBody09("s", "t", []byte{2, 4, 9, 0, 0, 0}, b)} {
		if _, _, err := c.call09(opSendMessages, 0, body); !isStatus(err, CodeResourceNotFound) {
			t.Fatalf("send to a missing target = %v", err)
		}
	}
	checkPoll09(t, c)
}

// TestWire09DuplicateSend: a send that repeats the request number of a
// stored send of its client is answered as a released 0.9.0 server does,
// status 0 with an empty body, and not stored; a send with a new number
// and a send from another login are stored.
func TestWire09DuplicateSend(t *testing.T) {
	s := startT(t, Options{Version: Version09})
	c := loginT(t, s)
	setupT(t, c, 1)
	body := sendBody09("s", "t", []byte{2, 4, 0, 0, 0, 0}, batch09(1, []msg09{{payload: []byte("a")}}))
	send := func(req uint64) []byte {
		t.Helper()
		if _, err := c.c.Write(request09Frame(c.id, opSendMessages, 0, req, c.session, body, false)); err != nil {
			t.Fatal(err)
		}
		hdr, rb, err := readFrame09(c.c)
		if err != nil || u64at(hdr, 200) != req || binary.LittleEndian.Uint32(hdr[216:]) != 0 {
			t.Fatalf("send %d: %v, header %x", req, err, hdr[200:220])
		}
		return rb
	}
	n := c.next
	for i, tc := range []struct {
		req    uint64
		stored int
	}{{n, 1}, {n, 1}, {n - 1, 1}, {n + 1, 2}} {
		rb := send(tc.req)
		if got := s.MessageCount("s", "t"); got != tc.stored || (len(rb) == 0) != (i == 1 || i == 2) {
			t.Fatalf("send %d (request %d): %d stored, reply %x", i, tc.req, got, rb)
		}
	}
	if s.DuplicateSendCount() != 2 {
		t.Fatalf("%d duplicates counted", s.DuplicateSendCount())
	}
	c2 := loginT(t, s) // a new client id: a table entry of its own
	c2.next = n
	if _, _, err := c2.call09(opSendMessages, 0, body); err != nil || s.MessageCount("s", "t") != 3 {
		t.Fatalf("another client's send: %v, %d stored", err, s.MessageCount("s", "t"))
	}
}

// checkPoll09 polls offsets 1-2 of partition 1 (two stored batches of two):
// two batch records of one message each, their headers rewritten.
func checkPoll09(t *testing.T, c *tclient) {
	t.Helper()
	e := encoder{b: []byte{1, 1, 4, 0, 0, 0, 0}}
	e.b = append(append(e.b, nameIdent("s")...), nameIdent("t")...)
	e.u8(1)
	e.u32(1)
	e.u8(1)
	e.u64(1)
	e.u32(2)
	e.u8(0)
	_, body, err := c.call09(opNonReplicated, uint32(CmdPollMessages), e.b)
	if err != nil || u32at(body, 0) != 1 || u64at(body, 4) != 3 || u32at(body, 12) != 2 {
		t.Fatalf("poll: %v %x", err, body[:min(16, len(body))])
	}
	recs := body[16:]
	for i, base := range []uint64{0, 2} {
		n := int(u64at(recs, 32))
		if _, ok := verifyBatch09(recs[:n], 1); !ok || u64at(recs, 8) != base || u64at(recs, 24) != 1_000_000 {
			t.Fatalf("record %d: %x", i, recs[:batchHeaderSize])
		}
		recs = recs[n:]
	}
	if got, err := c.poll("s", "t", 1, 0, 10); err != nil || len(got) != 4 || got[3] != "bb" {
		t.Fatalf("poll all = %q, %v", got, err)
	}
}

func TestWire09ConsumerOffsets(t *testing.T) {
	s := startT(t, Options{Version: Version09})
	c := loginT(t, s)
	setupT(t, c, 1)
	if err := c.send("s", "t", 0, "a", "b"); err != nil {
		t.Fatal(err)
	}
	target := func(hasPID bool) []byte {
		b := append(append([]byte{1, 1, 4, 7, 0, 0, 0}, nameIdent("s")...), nameIdent("t")...)
		return append(b, b2u(hasPID), 0, 0, 0, 0)
	}
	offset := func(hasPID bool, o uint64) []byte {
		return append(binary.LittleEndian.AppendUint64(target(hasPID), o), 1)
	}
	if _, body, err := c.call09(opStoreConsumerOff, 0, offset(true, 1)); err != nil || !bytes.Equal(body, []byte{0, 0, 0, 0}) {
		t.Fatalf("store offset: %v %x", err, body)
	}
	if _, _, err := c.call09(opStoreConsumerOff, 0, offset(true, 5)); !isStatus(err, CodeInvalidOffset) {
		t.Fatalf("offset past the end = %v", err)
	}
	if _, _, err := c.call09(opStoreConsumerOff, 0, offset(false, 1)); !isStatus(err, CodeResourceNotFound) {
		t.Fatalf("no partition = %v", err)
	}
	if _, body, err := c.call09(opNonReplicated, uint32(CmdGetConsumerOffset), target(false)); err != nil ||
		len(body) != 20 || u64at(body, 4) != 1 || u64at(body, 12) != 1 {
		t.Fatalf("get offset: %v %x", err, body)
	}
	if o, ok := s.ConsumerOffset("s", "t", 0, 7); !ok || o != 1 {
		t.Fatalf("stored offset %d %v", o, ok)
	}
	del := append(target(true), 1)
	if _, _, err := c.call09(opDeleteConsumerOff, 0, del); err != nil {
		t.Fatalf("delete offset: %v", err)
	}
	if _, _, err := c.call09(opDeleteConsumerOff, 0, del); !isStatus(err, CodeConsumerOffsetNotFound) {
		t.Fatalf("delete again = %v", err)
	}
}

// serveBytes09 runs the 0.9 frame loop over in-memory buffers, on a
// connection with a session when bound.
func serveBytes09(s *Server, in []byte, bound bool) []byte {
	var out bytes.Buffer
	c := s.newConn(bytes.NewReader(in), &out, nil)
	c.clientID, c.addr = 1, "127.0.0.1:1"
	if bound {
		s.mu.Lock()
		s.bind09(c, reqHeader{raw: make([]byte, headerSize09), client: u128{5}}, s.users[0])
		s.mu.Unlock()
	}
	s.serveFrames(c)
	return out.Bytes()
}

// groupSeed09 joins group "g" of s/t, reads its assignment, polls
// partition 0 as a member, stores the group's offset there and reads the
// group.
func groupSeed09(id u128) []byte {
	g := append(st(), nameIdent("g")...)
	member := append([]byte{2}, nameIdent("g")...)
	poll := append(append(member, st()...), 1, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 1)
	store := append(append(member, st()...), 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)
	b := request09Frame(id, opJoinGroup, 0, 2, 1, g, true)
	b = append(b, request09Frame(id, opNonReplicated, uint32(CmdSyncConsumerGroup), 2, 1, g, false)...)
	b = append(b, request09Frame(id, opNonReplicated, uint32(CmdPollMessages), 2, 1, poll, false)...)
	b = append(b, request09Frame(id, opStoreConsumerOff, 0, 3, 1, store, false)...)
	return append(b, request09Frame(id, opNonReplicated, uint32(CmdGetConsumerGroup), 3, 1, g, false)...)
}

// FuzzFrames09 feeds arbitrary bytes to the 0.9 request loop of a server
// with a stream, a topic and messages; it must never panic, and every frame
// it writes must be a well-formed reply (an error with an empty body) or
// eviction.
func FuzzFrames09(f *testing.F) {
	id := u128{5}
	seed := [][]byte{
		request09Frame(id, opNonReplicated, uint32(CmdPing), 1, 0, nil, false),
		request09Frame(id, opRegister, 0, 0, 0, loginBody09(Protocol09, "iggy", "iggy"), true),
		request09Frame(id, opSendMessages, 0, 1, 1, sendBody09("s", "t", []byte{1, 0}, batch09(9, []msg09{{payload: []byte("x")}})), false),
		request09Frame(id, opCreateTopic, 0, 1, 1, append(nameIdent("s"), 2, 0, 0, 0, 1, 'u'), true),
		request09Frame(id, opNonReplicated, uint32(CmdPollMessages), 1, 1, append(append(append([]byte{1, 1, 4, 0, 0, 0, 0}, nameIdent("s")...), nameIdent("t")...), 1, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 1), false),
		request09Frame(id, opNonReplicated, uint32(CmdGetTopic), 1, 1, append(nameIdent("s"), nameIdent("t")...), false),
		requestFrame(CmdPing, nil),
		request09Frame(id, opCreateGroup, 0, 1, 1, append(st(), 1, 'h'), true),
		groupSeed09(id),
	}
	for _, b := range seed {
		f.Add(b, true)
		f.Add(b, false)
	}
	f.Fuzz(func(t *testing.T, in []byte, bound bool) {
		s, err := newServer(Options{Version: Version09, MaxFrameSize: 1 << 20, MaxMessagesPerPartition: 8, Flush09: true})
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
		serveBytes09(s, seed[2], true)
		for out := serveBytes09(s, in, bound); len(out) > 0; {
			if len(out) < headerSize09 {
				t.Fatalf("truncated frame %x", out)
			}
			n := int(u32at(out, 48))
			if n < headerSize09 || n > len(out) || out[60] != command09Reply && out[60] != command09Eviction ||
				u32at(out, 216) != 0 && n != headerSize09 {
				t.Fatalf("bad frame %x", out[:min(len(out), 256)])
			}
			out = out[n:]
		}
		for _, m := range s.Messages("s", "t") {
			if m.Checksum != Checksum(m.Raw) {
				t.Fatalf("bad checksum at offset %d", m.Offset)
			}
		}
	})
}
