package iggy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/OneOfOne/xxhash"
	"github.com/zeebo/xxh3"
)

// The frames in these tests are built from the protocol's offsets written
// out as numbers (core/binary_protocol/src/consensus/header.rs, batch.rs at
// server-0.9.0-edge.5), not from the dialect's constants.

var tle = binary.LittleEndian

// t09Step answers one request frame (header and body) with the bytes to
// write back, or nil to write nothing.
type t09Step func(req []byte) []byte

// t09Serve runs a fake 0.9 server on one end of a pipe that answers one
// request per step, and returns a wire on the other end.
func t09Serve(t *testing.T, steps ...t09Step) *wire {
	t.Helper()
	client, server := net.Pipe()
	t.Cleanup(func() { _ = client.Close(); _ = server.Close() })
	_ = client.SetDeadline(time.Now().Add(5 * time.Second))
	go func() {
		for _, step := range steps {
			req, err := t09ReadFrame(server)
			if err != nil {
				return
			}
			if reply := step(req); reply != nil {
				if _, err := server.Write(reply); err != nil {
					return
				}
			}
		}
	}()
	return &wire{nc: client, addr: "pipe"}
}

// t09ReadFrame reads one 0.9 frame: 256 header bytes, size at 48.
func t09ReadFrame(r io.Reader) ([]byte, error) {
	h := make([]byte, 256)
	if _, err := io.ReadFull(r, h); err != nil {
		return nil, err
	}
	f := make([]byte, tle.Uint32(h[48:]))
	copy(f, h)
	_, err := io.ReadFull(r, f[256:])
	return f, err
}

// t09Reply is a reply to req: command 8 at 60, request echoed at 200,
// operation at 208 (op, or the request's when 0), status at 216.
func t09Reply(req []byte, op uint8, status uint32, body []byte) []byte {
	r := make([]byte, 256+len(body))
	tle.PutUint32(r[48:], uint32(len(r)))
	r[60] = 8
	copy(r[160:176], req[128:144])
	tle.PutUint64(r[200:], tle.Uint64(req[168:]))
	r[208] = req[176]
	if op != 0 {
		r[208] = op
	}
	tle.PutUint32(r[216:], status)
	copy(r[256:], body)
	return r
}

// t09Ok replies with status 0 and body.
func t09Ok(body []byte) t09Step {
	return func(req []byte) []byte { return t09Reply(req, 0, 0, body) }
}

// t09Framed is a result-framed body: [count 0] then payload, or [1][0][code].
func t09Framed(code uint32, payload []byte) []byte {
	if code != 0 {
		return tle.AppendUint32(tle.AppendUint32(tle.AppendUint32(nil, 1), 0), code)
	}
	return append(tle.AppendUint32(nil, 0), payload...)
}

// t09Eviction is an eviction header: command 13, window at 144/148,
// reason at 255.
func t09Eviction(reason uint8, max, min uint32) []byte {
	r := make([]byte, 256)
	tle.PutUint32(r[48:], 256)
	r[60] = 13
	r[128] = 1
	tle.PutUint32(r[144:], max)
	tle.PutUint32(r[148:], min)
	r[255] = reason
	return r
}

// t09LoginReply is a successful login: user 7, session 42, protocol 0.11.0.
func t09LoginReply() t09Step {
	p := tle.AppendUint32(nil, 7)
	p = tle.AppendUint64(p, 42)
	p = tle.AppendUint32(p, 11<<10)
	p = append(append(p, 5), "0.9.0"...)
	return t09Ok(t09Framed(0, p))
}

// t09Capture records the request before answering with next.
func t09Capture(into *[]byte, next t09Step) t09Step {
	return func(req []byte) []byte { *into = req; return next(req) }
}

// t09LoggedIn is a dialect that has logged in with session 42.
func t09LoggedIn() *v09 {
	v := newV09()
	v.session = 42
	return v
}

func TestV09RequestHeader(t *testing.T) {
	v := newV09()
	v.session = 9
	b := v.appendHeader(make([]byte, 0, 300), 2, 300, 5)
	b = append(b, "body"...)
	b = v09Seal(b, true)
	if len(b) != 260 || tle.Uint32(b[48:]) != 260 || b[60] != 5 || b[176] != 2 {
		t.Fatalf("size %d/%d command %d op %d", len(b), tle.Uint32(b[48:]), b[60], b[176])
	}
	if !bytes.Equal(b[128:144], v.client[:]) || tle.Uint64(b[168:]) != 5 || tle.Uint64(b[184:]) != 9 || tle.Uint32(b[196:]) != 300 {
		t.Fatalf("client/request/session/code wrong: % x", b[128:200])
	}
	if tle.Uint64(b[144:]) != xxh3.Hash([]byte("body")) || tle.Uint64(b[152:]) != 0 {
		t.Fatalf("request checksum % x", b[144:160])
	}
	reg := v09Seal(v.appendHeader(nil, 1, 99, 0), false)
	if tle.Uint64(reg[184:]) != 0 || tle.Uint32(reg[196:]) != 0 || tle.Uint64(reg[144:]) != 0 {
		t.Fatal("a register carries session 0, no code and no checksum unless stamped")
	}
	for i, c := range reg {
		if c != 0 && (i < 48 || i >= 52) && i != 60 && i != 176 && (i < 128 || i >= 144) {
			t.Fatalf("byte %d is %d, want 0", i, c)
		}
	}
}

func TestV09Login(t *testing.T) {
	var req []byte
	w := t09Serve(t, t09Capture(&req, t09LoginReply()))
	v := newV09()
	info, err := v.login(w, Credentials{Username: "iggy", Password: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	if info != (ServerInfo{Version: Version09, Protocol: "0.11.0", Server: "0.9.0", UserID: 7}) || v.session != 42 || v.next != 1 {
		t.Fatalf("info %+v session %d next %d", info, v.session, v.next)
	}
	if req[176] != 1 || tle.Uint64(req[168:]) != 0 || tle.Uint64(req[184:]) != 0 || bytes.Equal(req[128:144], make([]byte, 16)) {
		t.Fatal("a login is operation 1, request 0, session 0, with a client id")
	}
	body := req[256:]
	want := tle.AppendUint32(nil, 11<<10) // 0.11.0
	want = append(append(want, 10), "fluss-iggy"...)
	want = append(append(want, byte(len(v09ClientVersion))), v09ClientVersion...)
	want = append(append(want, 4), "iggy"...)
	want = append(append(want, 6), "secret"...)
	want = tle.AppendUint32(want, 0)
	if !bytes.Equal(body, want) {
		t.Fatalf("body\n% x\nwant\n% x", body, want)
	}
	if tle.Uint64(req[144:]) != xxh3.Hash(want) {
		t.Fatal("the login's request checksum is XXH3 of its body")
	}
}

func TestV09LoginToken(t *testing.T) {
	var req []byte
	w := t09Serve(t, t09Capture(&req, t09LoginReply()))
	if _, err := newV09().login(w, Credentials{Token: "tok"}); err != nil {
		t.Fatal(err)
	}
	if tail := req[256+4+1+10+1+len(v09ClientVersion):]; !bytes.Equal(tail, []byte{3, 't', 'o', 'k', 0, 0, 0, 0}) {
		t.Fatalf("token login tail % x", tail)
	}
}

func TestV09LoginRefused(t *testing.T) {
	evict := func(reason uint8, max, min uint32) t09Step {
		return func([]byte) []byte { return t09Eviction(reason, max, min) }
	}
	cases := []struct {
		name  string
		step  t09Step
		check func(error) bool
	}{
		{"credentials", evict(9, 0, 0), func(err error) bool { return IsLoginRejected(err) && CodeOf(err) == 42 }},
		{"token", evict(10, 0, 0), func(err error) bool { return CodeOf(err) == 53 }},
		{"status", func(req []byte) []byte { return t09Reply(req, 0, 41, nil) }, func(err error) bool { return CodeOf(err) == 41 }},
		{"result", t09Ok(t09Framed(42, nil)), func(err error) bool { return CodeOf(err) == 42 }},
		{"protocol", evict(14, 12<<10|3, 12<<10), func(err error) bool {
			var u *UnsupportedServerError
			return errors.As(err, &u) && u.Server == "protocol 0.12.0 to 0.12.3 (Iggy 0.10 or later)" && IsPermanent(err)
		}},
		{"malformed", evict(15, 0, 0), func(err error) bool { return CodeOf(err) == 0 && strings.Contains(err.Error(), "malformed") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := newV09().login(t09Serve(t, c.step), Credentials{Username: "u", Password: "p"})
			if err == nil || !c.check(err) {
				t.Fatalf("got %v (%T)", err, err)
			}
		})
	}
}

// TestV09RequestNumbers follows a session as the released 0.11.0 SDK
// numbers it: replicated operations, metadata and sends alike, take 1, 2,
// 3…; pings and reads carry the number the next one will take; every
// request carries the login's session.
func TestV09RequestNumbers(t *testing.T) {
	var got [][]byte
	rec := func(next t09Step) t09Step {
		return func(req []byte) []byte { got = append(got, req); return next(req) }
	}
	w := t09Serve(t, t09LoginReply(),
		rec(t09Ok(nil)), rec(t09Ok(t09Framed(0, []byte("stream")))),
		rec(t09Ok(tle.AppendUint32(nil, 0))), rec(t09Ok(tle.AppendUint32(nil, 0))),
		rec(func(req []byte) []byte { return t09Reply(req, 64, 0, t09Framed(0, nil)) }),
		rec(t09Ok(nil)), rec(t09Ok(t09Framed(0, nil))))
	v := newV09()
	if _, err := v.login(w, Credentials{Username: "u", Password: "p"}); err != nil {
		t.Fatal(err)
	}
	steps := []func() error{
		func() error { return v.ping(w) },
		func() error { return v.createStream(w, "s") },
		func() error { _, err := v.send(w, t09Batch(PartitionID(0), 1)); return err },
		func() error { _, err := v.send(w, t09Batch(PartitionID(0), 1)); return err },
		func() error { return v.createTopic(w, NumericID(0), TopicSpec{Name: "t", Partitions: 3}) },
		func() error { _, err := v.getTopic(w, NumericID(0), NumericID(0)); return err },
		func() error { return v.deleteStream(w, NumericID(0)) },
	}
	for i, f := range steps {
		if err := f(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	want := []struct {
		op  uint8
		req uint64
	}{{2, 1}, {128, 1}, {160, 2}, {160, 3}, {132, 4}, {2, 5}, {130, 5}}
	for i, r := range got {
		if r[176] != want[i].op || tle.Uint64(r[168:]) != want[i].req || tle.Uint64(r[184:]) != 42 {
			t.Errorf("request %d: op %d number %d session %d, want op %d number %d session 42",
				i, r[176], tle.Uint64(r[168:]), tle.Uint64(r[184:]), want[i].op, want[i].req)
		}
	}
}

// t09Option is one option entry: a String key, a value of kind.
func t09Option(b []byte, key string, kind uint8, value []byte) []byte {
	b = append(tle.AppendUint32(append(b, 2), uint32(len(key))), key...)
	return append(tle.AppendUint32(append(b, kind), uint32(len(value))), value...)
}

// TestV09CreateTopicBody: the options go as the released 0.11.0 SDK's
// TopicCreateOptions::to_wire encodes them, sorted by key with both
// durability policies always, and the request checksum covers the body.
func TestV09CreateTopicBody(t *testing.T) {
	var req []byte
	w := t09Serve(t, t09Capture(&req, func(req []byte) []byte { return t09Reply(req, 64, 0, t09Framed(0, nil)) }))
	spec := TopicSpec{Name: "orders", Partitions: 4, MessageExpiry: 60_000_000, MaxTopicSize: math.MaxUint64, Durability: DurabilityPersisted}
	if err := t09LoggedIn().createTopic(w, NumericID(3), spec); err != nil {
		t.Fatal(err)
	}
	head := []byte{1, 4, 3, 0, 0, 0, 4, 0, 0, 0, 6, 'o', 'r', 'd', 'e', 'r', 's'}
	want := t09Option(append([]byte(nil), head...), "consumer_offset_durability", 2, []byte("replicated"))
	want = t09Option(want, "durability", 2, []byte("persisted"))
	want = t09Option(want, "max_topic_size", 12, tle.AppendUint64(nil, math.MaxUint64))
	want = t09Option(want, "message_expiry", 12, tle.AppendUint64(nil, 60_000_000))
	if !bytes.Equal(req[256:], want) {
		t.Fatalf("body\n% x\nwant\n% x", req[256:], want)
	}
	if tle.Uint64(req[144:]) != xxh3.Hash(want) {
		t.Fatal("request checksum")
	}
	if err := t09LoggedIn().createTopic(t09Serve(t, t09Capture(&req, t09Ok(t09Framed(0, nil)))), NumericID(3), TopicSpec{Name: "t"}); err != nil {
		t.Fatal(err)
	}
	want = t09Option([]byte{1, 4, 3, 0, 0, 0, 0, 0, 0, 0, 1, 't'}, "consumer_offset_durability", 2, []byte("replicated"))
	want = t09Option(want, "durability", 2, []byte("replicated"))
	if !bytes.Equal(req[256:], want) {
		t.Fatalf("server defaults are left out, the durability policies sent: % x", req[256:])
	}
}

// TestV09CreateTopicPreRelease: a server that refuses the durability keys
// as unknown (4041, as server-0.9.0-edge.5 does) gets the topic again,
// with a new request number, without them.
func TestV09CreateTopicPreRelease(t *testing.T) {
	var first, second []byte
	w := t09Serve(t,
		t09Capture(&first, t09Ok(t09Framed(CodeUnsupportedOptionKey, nil))),
		t09Capture(&second, func(req []byte) []byte { return t09Reply(req, 64, 0, t09Framed(0, nil)) }))
	spec := TopicSpec{Name: "t", Partitions: 1, MessageExpiry: 5, Durability: DurabilityPersisted}
	if err := t09LoggedIn().createTopic(w, NumericID(3), spec); err != nil {
		t.Fatal(err)
	}
	want := t09Option([]byte{1, 4, 3, 0, 0, 0, 1, 0, 0, 0, 1, 't'}, "message_expiry", 12, tle.AppendUint64(nil, 5))
	if !bytes.Contains(first[256:], []byte("durability")) || !bytes.Equal(second[256:], want) ||
		tle.Uint64(second[168:]) != tle.Uint64(first[168:])+1 {
		t.Fatalf("first % x\nsecond % x", first[256:], second[256:])
	}
}

func TestV09MetadataErrors(t *testing.T) {
	w := t09Serve(t, t09Ok(t09Framed(1012, nil)), t09Ok(t09Framed(1009, nil)),
		func(req []byte) []byte { return t09Reply(req, 0, 41, []byte("ignored body")) }, t09Ok(nil))
	v := t09LoggedIn()
	if err := v.createStream(w, "s"); CodeOf(err) != 1012 {
		t.Fatalf("existing stream: %v", err)
	}
	if err := v.deleteStream(w, NumericID(1)); !IsStreamNotFound(err) {
		t.Fatalf("missing stream: %v", err)
	}
	if err := v.createStream(w, "s"); CodeOf(err) != 41 {
		t.Fatalf("denied: %v", err)
	}
	if err := v.ping(w); err != nil {
		t.Fatalf("the error reply's body was not read: %v", err)
	}
	if v.next != 4 {
		t.Fatalf("three metadata requests took numbers 1 to 3, next is %d", v.next)
	}
	if err := newV09().createStream(w, "s"); !errors.Is(err, errV09NoSession) {
		t.Fatalf("before login: %v", err)
	}
}

func TestV09TransientRetry(t *testing.T) {
	var first, second []byte
	w := t09Serve(t,
		t09Capture(&first, func(req []byte) []byte { return t09Reply(req, 0, 58, nil) }),
		t09Capture(&second, t09Ok(t09Framed(0, nil))),
		func(req []byte) []byte { return t09Reply(req, 0, 0, t09Framed(57, nil)) },
		t09Ok(t09Framed(0, nil)),
		t09Capture(&first, func(req []byte) []byte { return t09Reply(req, 0, 58, nil) }),
		t09Capture(&second, t09Ok(tle.AppendUint32(nil, 0))),
		func(req []byte) []byte { return t09Reply(req, 0, 57, nil) })
	v := t09LoggedIn()
	if err := v.createStream(w, "s"); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Fatal("a retry sends the same bytes")
	}
	if err := v.deleteStream(w, NumericID(1)); err != nil {
		t.Fatalf("57 in the result section: %v", err)
	}
	if _, err := v.send(w, t09Batch(PartitionID(0), 2)); err != nil {
		t.Fatalf("send after 58: %v", err)
	}
	if !bytes.Equal(first, second) || tle.Uint64(second[168:]) != 3 {
		t.Fatalf("a send refused with 58 goes again as it was, request number included (3): %d then %d", tle.Uint64(first[168:]), tle.Uint64(second[168:]))
	}
	if _, err := v.send(w, t09Batch(PartitionID(0), 2)); CodeOf(err) != 57 {
		t.Fatalf("a send answered 57 is not sent again: %v", err)
	}
}

func TestV09ReplyMismatch(t *testing.T) {
	cases := map[string]t09Step{
		"request": func(req []byte) []byte {
			r := t09Reply(req, 0, 0, nil)
			r[200]++
			return r
		},
		"operation": func(req []byte) []byte { return t09Reply(req, 128, 0, nil) },
		"command": func(req []byte) []byte {
			r := t09Reply(req, 0, 0, nil)
			r[60] = 5
			return r
		},
		"size": func(req []byte) []byte {
			r := t09Reply(req, 0, 0, nil)
			tle.PutUint32(r[48:], 255)
			return r
		},
		"eviction": func([]byte) []byte { return t09Eviction(1, 0, 0) },
	}
	for name, step := range cases {
		t.Run(name, func(t *testing.T) {
			err := t09LoggedIn().ping(t09Serve(t, step))
			if err == nil || CodeOf(err) != 0 {
				t.Fatalf("want a plain error, got %v", err)
			}
		})
	}
}

// t09Batch is a batch of n messages with payloads "m0", "m1"…
func t09Batch(p Partitioning, n int) *Batch {
	b := &Batch{Stream: NumericID(1), Topic: NumericID(2), Partitioning: p, OriginTimestamp: 1_700_000_000_000_000}
	for i := 0; i < n; i++ {
		b.Messages = append(b.Messages, Message{ID: [16]byte{byte(i + 1)}, Payload: []byte{'m', byte('0' + i)}})
	}
	return b
}

// t09Frame is one message frame built from batch.rs: checksum u64 over the
// rest; id u128; offset delta u32; timestamp delta u32; headers length u32;
// payload length u32; reserved u64; payload; headers.
func t09Frame(id [16]byte, index uint32, payload, headers []byte) []byte {
	rest := append([]byte{}, id[:]...)
	rest = tle.AppendUint32(tle.AppendUint32(rest, index), 0)
	rest = tle.AppendUint32(tle.AppendUint32(rest, uint32(len(headers))), uint32(len(payload)))
	rest = append(append(append(rest, make([]byte, 8)...), payload...), headers...)
	return append(tle.AppendUint64(nil, xxh3.Hash(rest)), rest...)
}

func TestV09EncodeSend(t *testing.T) {
	key, _ := MessagesKey([]byte("k1"))
	hdrs := []byte{2, 1, 0, 0, 0, 'a', 2, 1, 0, 0, 0, 'b'}
	b := &Batch{Stream: NumericID(7), Topic: mustName(t, "topic"), Partitioning: key, OriginTimestamp: 123456,
		Messages: []Message{
			{ID: [16]byte{1, 2, 3}, Payload: []byte("one")},
			{ID: [16]byte{9}, Payload: []byte("two"), UserHeaders: hdrs},
			{Payload: []byte("three")},
		}}
	v := t09LoggedIn()
	req, err := v.encodeSend(&wire{}, b, b.Partitioning)
	if err != nil {
		t.Fatal(err)
	}
	if tle.Uint32(req[48:]) != uint32(len(req)) || req[60] != 5 || req[176] != 160 || tle.Uint64(req[168:]) != 1 ||
		tle.Uint64(req[184:]) != 42 || tle.Uint64(req[144:]) != 0 || tle.Uint32(req[196:]) != 0 {
		t.Fatalf("header % x", req[:256])
	}
	meta := []byte{1, 4, 7, 0, 0, 0, 2, 5, 't', 'o', 'p', 'i', 'c', 3, 2, 'k', '1', 3, 0, 0, 0}
	want := append(tle.AppendUint32(nil, uint32(len(meta))), meta...)
	if !bytes.Equal(req[256:256+len(want)], want) {
		t.Fatalf("metadata % x\nwant % x", req[256:256+len(want)], want)
	}
	batch := req[256+len(want):]
	third := [16]byte(batch[256+2*48+3+3+len(hdrs)+8:][:16])
	if third == ([16]byte{}) {
		t.Fatal("a zero id is replaced by a random one")
	}
	frames := append(t09Frame([16]byte{1, 2, 3}, 0, []byte("one"), nil), t09Frame([16]byte{9}, 1, []byte("two"), hdrs)...)
	frames = append(frames, t09Frame(third, 2, []byte("three"), nil)...)
	if !bytes.Equal(batch[256:], frames) {
		t.Fatalf("frames\n% x\nwant\n% x", batch[256:], frames)
	}
	t09CheckBatchHeader(t, batch[:256], 123456, uint64(len(batch)), 3, frames)
}

// t09CheckBatchHeader checks a sent batch header: origin at 24, length at
// 32, checksum at 40, count at 48, the rest zero; the checksum is XXH3 of
// bytes 0..40 and 48..52 and then each frame's checksum.
func t09CheckBatchHeader(t *testing.T, h []byte, origin, length uint64, count uint32, frames []byte) {
	t.Helper()
	sum := make([]byte, 24)
	sum = tle.AppendUint32(tle.AppendUint64(tle.AppendUint64(sum, origin), length), count)
	for p := 0; p < len(frames); {
		sum = append(sum, frames[p:p+8]...)
		p += 48 + int(tle.Uint32(frames[p+32:])) + int(tle.Uint32(frames[p+36:]))
	}
	want := make([]byte, 256)
	tle.PutUint64(want[24:], origin)
	tle.PutUint64(want[32:], length)
	tle.PutUint64(want[40:], xxh3.Hash(sum))
	tle.PutUint32(want[48:], count)
	if !bytes.Equal(h, want) {
		t.Fatalf("batch header\n% x\nwant\n% x", h, want)
	}
}

func mustName(t *testing.T, s string) Identifier {
	t.Helper()
	id, err := NameID(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestV09Route: Balanced and MessagesKey sends go out as partition ids, as
// the released 0.11.0 SDK sends them: the topic's partition count is read
// once (get topic), Balanced walks the partitions from 0, a key goes to
// xxHash32(key) modulo the count; a missing topic is ResourceNotFound
// without a send.
func TestV09Route(t *testing.T) {
	var got [][]byte
	rec := func(next t09Step) t09Step {
		return func(req []byte) []byte { got = append(got, req); return next(req) }
	}
	receipt := t09Ok(tle.AppendUint32(nil, 0))
	gone := func(req []byte) []byte { return t09Reply(req, 0, CodeResourceNotFound, nil) }
	w := t09Serve(t, rec(t09Ok(t09TopicBody(1, "t", 3, "replicated"))), rec(receipt), rec(receipt), rec(receipt),
		rec(receipt), rec(receipt), rec(t09Ok(nil)),
		rec(gone), rec(t09Ok(t09TopicBody(1, "t", 2, "replicated"))), rec(receipt))
	v := t09LoggedIn()
	key, _ := MessagesKey([]byte("order-42"))
	for _, p := range []Partitioning{Balanced(), Balanced(), Balanced(), Balanced(), key} {
		if _, err := v.send(w, t09Batch(p, 1)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := v.send(w, &Batch{Stream: NumericID(1), Topic: NumericID(9), Partitioning: Balanced(), Messages: []Message{{Payload: []byte("x")}}}); CodeOf(err) != CodeResourceNotFound {
		t.Fatalf("a send to a missing topic: %v", err)
	}
	if len(got) != 7 || tle.Uint32(got[0][196:]) != v09CodeGetTopic || tle.Uint32(got[6][196:]) != v09CodeGetTopic {
		t.Fatalf("%d requests; the partition count is read once per topic", len(got))
	}
	// The routed partition is gone (the server answers 20): the next send
	// reads the partition count again.
	if _, err := v.send(w, t09Batch(Balanced(), 1)); CodeOf(err) != CodeResourceNotFound {
		t.Fatalf("a routed send to a missing partition: %v", err)
	}
	if _, err := v.send(w, t09Batch(Balanced(), 1)); err != nil || len(got) != 10 || tle.Uint32(got[8][196:]) != v09CodeGetTopic {
		t.Fatalf("after a missing partition: %v, %d requests", err, len(got))
	}
	want := []uint32{0, 1, 2, 0, xxhash.Checksum32([]byte("order-42")) % 3}
	for i, w := range want {
		req := got[1+i]
		if req[256+4+12] != PartitionByID || tle.Uint32(req[256+4+12+2:]) != w {
			t.Errorf("send %d: partitioning % x, want partition %d", i, req[256+4+12:256+4+12+6], w)
		}
	}
}

func TestV09EncodeSendPartitionings(t *testing.T) {
	for _, c := range []struct {
		p    Partitioning
		want []byte
	}{{Balanced(), []byte{1, 0}}, {PartitionID(5), []byte{2, 4, 5, 0, 0, 0}}} {
		req, err := t09LoggedIn().encodeSend(&wire{}, t09Batch(c.p, 1), c.p)
		if err != nil {
			t.Fatal(err)
		}
		if got := req[256+4+12 : 256+4+12+len(c.want)]; !bytes.Equal(got, c.want) {
			t.Errorf("partitioning % x, want % x", got, c.want)
		}
	}
	bad := t09Batch(Partitioning{Kind: 2}, 1)
	if _, err := t09LoggedIn().encodeSend(&wire{}, bad, bad.Partitioning); err == nil {
		t.Error("a partition id without a value is refused")
	}
	big := t09Batch(Balanced(), 1)
	big.Messages[0].Payload = make([]byte, v09MaxFrameBytes)
	if _, err := t09LoggedIn().encodeSend(&wire{}, big, big.Partitioning); err == nil {
		t.Error("a batch over 64 MiB is refused")
	}
}

func TestV09EncodeSendAllocs(t *testing.T) {
	b := t09Batch(Balanced(), 100)
	b.Messages[3].ID = [16]byte{}
	b.Messages[5].UserHeaders = []byte{2, 1, 0, 0, 0, 'k', 2, 1, 0, 0, 0, 'v'}
	v, w := t09LoggedIn(), &wire{}
	encode := func() {
		req, err := v.encodeSend(w, b, b.Partitioning)
		if err != nil {
			t.Fatal(err)
		}
		w.wbuf = req[:0] // what write does with a sent request
	}
	encode()
	if n := testing.AllocsPerRun(100, encode); n != 0 {
		t.Fatalf("%v allocations per batch of 100", n)
	}
}

func TestV09SendReply(t *testing.T) {
	body := tle.AppendUint32(nil, 2)
	for _, e := range [][3]uint64{{1, 2, 0}, {1, 2, 3}} {
		body = tle.AppendUint32(tle.AppendUint32(tle.AppendUint32(body, uint32(e[0])), uint32(e[1])), uint32(e[2]))
		body = tle.AppendUint64(body, 100+e[2])
	}
	w := t09Serve(t, t09Ok(body), t09Ok(tle.AppendUint32(nil, 0)), t09Ok(nil))
	v := t09LoggedIn()
	app, err := v.send(w, t09Batch(PartitionID(0), 1))
	if err != nil || len(app) != 2 || app[1] != (Appended{Partition: 3, BaseOffset: 103}) || app[0] != (Appended{0, 100}) {
		t.Fatalf("%+v %v", app, err)
	}
	if app, err := v.send(w, t09Batch(PartitionID(0), 1)); err != nil || app != nil {
		t.Fatalf("count 0 is a stored batch without offsets: %+v %v", app, err)
	}
	// An empty body is what a released 0.9.0 server answers a send it
	// took for a duplicate: nothing was stored, so it must not read as
	// success, and it is no *ServerError (the Conn closes and the batch is
	// sent again on a new login).
	_, err = v.send(w, t09Batch(PartitionID(0), 1))
	if !errors.Is(err, errV09DuplicateSend) || CodeOf(err) != 0 || !strings.Contains(err.Error(), "send request 3") {
		t.Fatalf("an empty reply: %v", err)
	}
	for _, bad := range [][]byte{{1}, tle.AppendUint32(nil, 1), append(body, 0), nil} {
		if _, err := v09DecodeSendReply(bad); err == nil {
			t.Errorf("% x decodes", bad)
		}
	}
}

// t09StoredBatch is a batch as a poll returns it: base offset at 8, base
// timestamp at 16, origin at 24, length at 32, count at 48.
func t09StoredBatch(base, stamp, origin uint64, frames ...[]byte) []byte {
	h := make([]byte, 256)
	blob := bytes.Join(frames, nil)
	tle.PutUint64(h[8:], base)
	tle.PutUint64(h[16:], stamp)
	tle.PutUint64(h[24:], origin)
	tle.PutUint64(h[32:], uint64(256+len(blob)))
	tle.PutUint32(h[48:], uint32(len(frames)))
	return append(h, blob...)
}

func TestV09Poll(t *testing.T) {
	f2 := t09Frame([16]byte{2}, 1, []byte("bb"), []byte{2, 1, 0, 0, 0, 'k', 2, 1, 0, 0, 0, 'v'})
	tle.PutUint32(f2[28:], 7) // timestamp delta
	body := tle.AppendUint32(tle.AppendUint64(tle.AppendUint32(nil, 3), 11), 3)
	body = append(body, t09StoredBatch(10, 500, 400, t09Frame([16]byte{1}, 0, []byte("a"), nil), f2)...)
	body = append(body, t09StoredBatch(12, 600, 450, t09Frame([16]byte{3}, 0, []byte("c"), nil))...)
	var req []byte
	w := t09Serve(t, t09Capture(&req, t09Ok(body)))
	v := t09LoggedIn()
	p, err := v.poll(w, &PollRequest{Stream: NumericID(1), Topic: mustName(t, "t"), Partition: 3, Consumer: 9,
		Strategy: PollOffset, Value: 10, Count: 100, AutoCommit: true})
	if err != nil {
		t.Fatal(err)
	}
	wantReq := []byte{1, 1, 4, 9, 0, 0, 0, 1, 4, 1, 0, 0, 0, 2, 1, 't', 1, 3, 0, 0, 0, 1, 10, 0, 0, 0, 0, 0, 0, 0, 100, 0, 0, 0, 1}
	if req[176] != 2 || tle.Uint32(req[196:]) != 100 || !bytes.Equal(req[256:], wantReq) {
		t.Fatalf("request op %d code %d body % x", req[176], tle.Uint32(req[196:]), req[256:])
	}
	if p.Partition != 3 || p.CurrentOffset != 11 || len(p.Messages) != 3 {
		t.Fatalf("%+v", p)
	}
	m := p.Messages[1]
	if m.Offset != 11 || m.Timestamp != 500 || m.OriginTimestamp != 407 || m.ID != ([16]byte{2}) ||
		string(m.Payload) != "bb" || len(m.UserHeaders) != 12 || m.Checksum != tle.Uint64(f2) {
		t.Fatalf("%+v", m)
	}
	if p.Messages[2].Offset != 12 || p.Messages[2].OriginTimestamp != 450 || p.Messages[0].UserHeaders != nil {
		t.Fatalf("%+v", p.Messages)
	}
	rb := w.rbuf[:cap(w.rbuf)] // later reads reuse it: the messages must not live there
	for i := range rb {
		rb[i] = 0xff
	}
	if string(m.Payload) != "bb" || string(p.Messages[0].Payload) != "a" || m.UserHeaders[5] != 'k' {
		t.Fatal("the polled messages alias the connection's read buffer")
	}
}

func TestV09PollErrors(t *testing.T) {
	w := t09Serve(t, func(req []byte) []byte { return t09Reply(req, 0, 3007, nil) })
	_, err := t09LoggedIn().poll(w, &PollRequest{Stream: NumericID(1), Topic: NumericID(1), Strategy: PollFirst, Count: 1})
	if CodeOf(err) != 3007 {
		t.Fatalf("missing partition: %v", err)
	}
	body := tle.AppendUint32(tle.AppendUint64(tle.AppendUint32(nil, 0), 0), 2)
	body = append(body, t09StoredBatch(0, 0, 0, t09Frame([16]byte{1}, 0, []byte("a"), nil))...)
	if _, err := v09DecodePolled(body); err == nil {
		t.Fatal("a count that does not match the batches decodes")
	}
}

// t09TopicBody is a topic reply: id, created, partitions, expiry,
// compression, max size, size, messages, name, two option blocks (the
// explicit one with message_expiry, the derived one with durability as
// given, when given), then 40 bytes per partition.
func t09TopicBody(id uint32, name string, partitions uint32, durability string) []byte {
	b := tle.AppendUint64(tle.AppendUint32(nil, id), 1)
	b = tle.AppendUint64(tle.AppendUint32(b, partitions), 60_000_000)
	b = tle.AppendUint64(append(b, 1), math.MaxUint64)
	b = tle.AppendUint64(tle.AppendUint64(b, 0), 0)
	b = append(append(b, byte(len(name))), name...)
	opt := v09AppendOption(nil, "message_expiry", v09KindUint64, tle.AppendUint64(nil, 5))
	b = append(tle.AppendUint32(b, uint32(len(opt))), opt...)
	var derived []byte
	if durability != "" {
		derived = v09AppendOption(nil, "consumer_offset_durability", v09KindString, []byte("replicated"))
		derived = v09AppendOption(derived, "durability", v09KindString, []byte(durability))
		derived = v09AppendOption(derived, "preallocate_segments", 3, []byte{0})
	}
	b = append(tle.AppendUint32(b, uint32(len(derived))), derived...)
	return append(b, make([]byte, 40*partitions)...)
}

func TestV09GetTopic(t *testing.T) {
	var req []byte
	w := t09Serve(t, t09Capture(&req, t09Ok(t09TopicBody(4, "orders", 3, "persisted"))), t09Ok(nil),
		func(req []byte) []byte { return t09Reply(req, 0, 1009, nil) })
	v := t09LoggedIn()
	top, err := v.getTopic(w, NumericID(1), mustName(t, "orders"))
	if err != nil || *top != (Topic{ID: 4, Name: "orders", Partitions: 3, MessageExpiry: 60_000_000, MaxTopicSize: math.MaxUint64, Durability: "persisted"}) {
		t.Fatalf("%+v %v", top, err)
	}
	// A pre-release server's topic has no durability option.
	if top, err := v09DecodeTopic(t09TopicBody(4, "orders", 3, "")); err != nil || top.Durability != "" {
		t.Fatalf("no durability option: %+v %v", top, err)
	}
	// An option entry running past its block is an error naming the block.
	bad := t09TopicBody(1, "t", 0, "replicated")
	derived := len(t09TopicBody(1, "t", 0, "")) - 4 // where the derived block starts
	tle.PutUint32(bad[derived+4+1:], 200)           // its first key's length
	if _, err := v09DecodeTopic(bad); err == nil || !strings.Contains(err.Error(), "option block 2") {
		t.Fatalf("a bad option entry: %v", err)
	}
	if req[176] != 2 || tle.Uint32(req[196:]) != 300 || !bytes.Equal(req[256:], []byte{1, 4, 1, 0, 0, 0, 2, 6, 'o', 'r', 'd', 'e', 'r', 's'}) {
		t.Fatalf("request % x", req[176:])
	}
	for i := 0; i < 2; i++ {
		if top, err := v.getTopic(w, NumericID(1), NumericID(2)); top != nil || err != nil {
			t.Fatalf("missing topic: %+v %v", top, err)
		}
	}
	if _, err := v09DecodeTopic(t09TopicBody(4, "orders", 3, "replicated")[:120]); err == nil {
		t.Fatal("a reply short of its partitions decodes")
	}
}

func TestV09CreateToken(t *testing.T) {
	var req []byte
	w := t09Serve(t, t09Capture(&req, t09Ok(t09Framed(0, append([]byte{5}, "s3cr3"...)))))
	tok, err := t09LoggedIn().createToken(w, "pat")
	if err != nil || tok != "s3cr3" {
		t.Fatalf("%q %v", tok, err)
	}
	want := tle.AppendUint64([]byte{3, 'p', 'a', 't'}, math.MaxUint64)
	if req[176] != 146 || !bytes.Equal(req[256:], want) {
		t.Fatalf("op %d body % x", req[176], req[256:])
	}
}

func TestV09Flush(t *testing.T) {
	var req []byte
	w := t09Serve(t, t09Capture(&req, func(req []byte) []byte { return t09Reply(req, 0, 5, nil) }), t09Ok(nil))
	v := t09LoggedIn()
	err := v.flush(w, NumericID(1), NumericID(2), 0, true)
	if CodeOf(err) != 5 || !strings.Contains(err.Error(), "do not flush on request") {
		t.Fatalf("%v", err)
	}
	if req[176] != 2 || tle.Uint32(req[196:]) != 102 || !bytes.Equal(req[256:], []byte{1, 4, 1, 0, 0, 0, 1, 4, 2, 0, 0, 0, 0, 0, 0, 0, 1}) {
		t.Fatalf("request % x", req[256:])
	}
	if err := v.flush(w, NumericID(1), NumericID(2), 0, false); err != nil {
		t.Fatal(err)
	}
}

// t09RawServe writes raw bytes back to whatever arrives first, then closes
// when close is set.
func t09RawServe(t *testing.T, answer []byte, close bool) *wire {
	t.Helper()
	client, server := net.Pipe()
	t.Cleanup(func() { _ = client.Close(); _ = server.Close() })
	_ = client.SetDeadline(time.Now().Add(5 * time.Second))
	go func() {
		if _, err := t09ReadFrame(server); err != nil {
			return
		}
		_, _ = server.Write(answer)
		if close {
			_ = server.Close()
		}
	}()
	return &wire{nc: client, addr: "pipe"}
}

func TestV09Probe(t *testing.T) {
	ping := make([]byte, 256)
	tle.PutUint32(ping[48:], 256)
	ping[60], ping[208] = 8, 2
	tle.PutUint64(ping[200:], 1)
	if is08, err := probeV09(t09RawServe(t, ping, false)); is08 || err != nil {
		t.Fatalf("0.9 ping reply: %v %v", is08, err)
	}
	if is08, err := probeV09(t09RawServe(t, bytes.Repeat([]byte{3, 0, 0, 0, 0, 0, 0, 0}, 6), false)); !is08 || err != nil {
		t.Fatalf("0.8 server: %v %v", is08, err)
	}
	var n *NotIggyError
	_, err := probeV09(t09RawServe(t, []byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"), true))
	if !errors.As(err, &n) || !strings.Contains(n.Detail, `"HTTP/1.1 400`) {
		t.Fatalf("HTTP: %v", err)
	}
	if _, err := probeV09(t09RawServe(t, bytes.Repeat([]byte("x"), 300), false)); !errors.As(err, &n) {
		t.Fatalf("garbage: %v", err)
	}
	var u *UnsupportedServerError
	_, err = probeV09(t09RawServe(t, t09Eviction(14, 12<<10|3, 12<<10), false))
	if !errors.As(err, &u) || !strings.Contains(u.Server, "0.12.0 to 0.12.3") {
		t.Fatalf("eviction: %v", err)
	}
}

func TestV09ProbeRequest(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	defer server.Close()
	go func() { _, _ = probeV09(&wire{nc: client, addr: "pipe"}) }()
	req, err := t09ReadFrame(server)
	if err != nil {
		t.Fatal(err)
	}
	if len(req) != 256 || req[60] != 5 || req[176] != 2 || tle.Uint32(req[196:]) != 1 || bytes.Equal(req[128:144], make([]byte, 16)) {
		t.Fatalf("% x", req)
	}
	if !bytes.Equal(req[:48], make([]byte, 48)) {
		t.Fatal("the 0.8 detection relies on the first 48 bytes being zero")
	}
}

func FuzzV09ParseReply(f *testing.F) {
	f.Add(t09Reply(make([]byte, 256), 2, 0, nil), uint64(0), uint8(2))
	f.Add(t09Eviction(14, 1, 1), uint64(0), uint8(2))
	f.Fuzz(func(t *testing.T, h []byte, req uint64, op uint8) {
		n, _, err := v09ParseReply(h, req, op)
		if err == nil && (n < 0 || n > maxReplyBytes) {
			t.Fatalf("body length %d", n)
		}
	})
}

func FuzzV09ClassifyProbe(f *testing.F) {
	f.Add(t09Eviction(14, 12<<10, 12<<10))
	f.Add([]byte("HTTP/1.1 400 Bad Request\r\n"))
	f.Fuzz(func(t *testing.T, h []byte) {
		if len(h) < 256 {
			h = append(h, make([]byte, 256-len(h))...)
		}
		_, _, _ = v09ClassifyProbe(h[:256], "fuzz")
	})
}

func FuzzV09Result(f *testing.F) {
	f.Add(t09Framed(0, []byte("x")))
	f.Add(t09Framed(1012, nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		if p, err := v09Result(b); err == nil && len(p) > len(b) {
			t.Fatal("payload longer than body")
		}
	})
}

func FuzzV09DecodeLogin(f *testing.F) {
	f.Add(t09LoginReply()(make([]byte, 256))[260:])
	f.Fuzz(func(t *testing.T, b []byte) { _, _, _ = v09DecodeLogin(b) })
}

func FuzzV09DecodeTopic(f *testing.F) {
	f.Add(t09TopicBody(1, "t", 2, "persisted"))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = v09DecodeTopic(b) })
}

func FuzzV09DecodeToken(f *testing.F) {
	f.Add([]byte{3, 'a', 'b', 'c'})
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = v09DecodeToken(b) })
}

func FuzzV09DecodeSendReply(f *testing.F) {
	f.Add(append(tle.AppendUint32(nil, 1), make([]byte, 20)...))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = v09DecodeSendReply(b) })
}

func FuzzV09DecodePolled(f *testing.F) {
	body := tle.AppendUint32(tle.AppendUint64(tle.AppendUint32(nil, 0), 1), 2)
	body = append(body, t09StoredBatch(0, 1, 2, t09Frame([16]byte{1}, 0, []byte("a"), nil), t09Frame([16]byte{2}, 1, []byte("b"), []byte("h")))...)
	f.Add(body)
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := v09DecodePolled(b)
		if err != nil {
			return
		}
		for _, m := range p.Messages {
			if len(m.Payload)+len(m.UserHeaders)+48 > len(b) {
				t.Fatal("a message larger than the reply")
			}
		}
	})
}

// BenchmarkV09EncodeSend encodes a batch of 1,000 messages of 200 bytes,
// each with a user header, into the reused request buffer.
func BenchmarkV09EncodeSend(b *testing.B) {
	batch := t09Batch(Balanced(), 1000)
	payload := bytes.Repeat([]byte("x"), 200)
	size := 0
	for i := range batch.Messages {
		batch.Messages[i].Payload = payload
		batch.Messages[i].UserHeaders = []byte{2, 1, 0, 0, 0, 'k', 2, 1, 0, 0, 0, 'v'}
		size += len(payload) + 12
	}
	v, w := t09LoggedIn(), &wire{}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		req, err := v.encodeSend(w, batch, batch.Partitioning)
		if err != nil {
			b.Fatal(err)
		}
		w.wbuf = req[:0]
	}
}
