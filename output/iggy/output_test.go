package iggyoutput_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/OneOfOne/xxhash"
	iggcon "github.com/apache/iggy/foreign/go/contracts"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/iggy"
	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
	"github.com/fluss-iggy/fluss-iggy/internal/testnet"
	iggyoutput "github.com/fluss-iggy/fluss-iggy/output/iggy"
)

func TestPartitioningBalanced(t *testing.T) {
	e := newEnv(t)
	stream := e.stream()
	e.createTopic(stream, "t", 3)
	out := e.output(fmt.Sprintf("stream: %s\ntopic: t", stream))
	mustConnect(t, out)

	var want []string
	for b := range 3 {
		var batch service.MessageBatch
		for i := range 4 {
			p := fmt.Sprintf("b%d-m%d", b, i)
			want = append(want, p)
			batch = append(batch, msg(p))
		}
		if err := out.WriteBatch(ctxT(t, 10*time.Second), batch); err != nil {
			t.Fatalf("WriteBatch %d: %v", b, err)
		}
	}
	got := e.pollAll(stream, "t")
	// The server picks the next partition for each request, so three
	// batches land on three partitions, each batch whole and in order.
	for p, msgs := range got {
		if len(msgs) != 4 {
			t.Errorf("partition %d holds %d messages, want one batch of 4: %v", p, len(msgs), payloads(msgs))
			continue
		}
		prefix := string(msgs[0].Payload[:2])
		for i, m := range msgs {
			if string(m.Payload) != fmt.Sprintf("%s-m%d", prefix, i) {
				t.Errorf("partition %d: %v is not one batch in order", p, payloads(msgs))
				break
			}
		}
	}
	slices.Sort(want)
	if g := sortedPayloads(got); !slices.Equal(g, want) {
		t.Errorf("stored %v, want %v", g, want)
	}
}

func TestPartitioningPartitionID(t *testing.T) {
	e := newEnv(t)
	stream := e.stream()
	e.createTopic(stream, "t", 3)
	out := e.output(fmt.Sprintf("stream: %s\ntopic: t\npartitioning: partition_id\npartition: '${! @p }'", stream))
	mustConnect(t, out)

	var batch service.MessageBatch
	want := map[uint32][]string{}
	for i := range 12 {
		p := uint32((i * 7) % 3)
		payload := fmt.Sprintf("m%02d", i)
		batch = append(batch, msg(payload, "p", int64(p)))
		want[p] = append(want[p], payload)
	}
	if err := out.WriteBatch(ctxT(t, 10*time.Second), batch); err != nil {
		t.Fatalf("WriteBatch: %v", err)
	}
	got := e.pollAll(stream, "t")
	for p := range uint32(3) {
		if g := payloads(got[p]); !slices.Equal(g, want[p]) {
			t.Errorf("partition %d: got %v, want %v", p, g, want[p])
		}
	}
}

func TestPartitioningMessagesKey(t *testing.T) {
	e := newEnv(t)
	stream := e.stream()
	const parts = 4
	e.createTopic(stream, "t", parts)
	out := e.output(fmt.Sprintf("stream: %s\ntopic: t\npartitioning: messages_key\nkey: '${! @k }'", stream))
	mustConnect(t, out)

	keys := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}
	var batch service.MessageBatch
	want := map[uint32][]string{}
	for i := range 32 {
		k := keys[i%len(keys)]
		payload := fmt.Sprintf("%s-%02d", k, i)
		batch = append(batch, msg(payload, "k", k))
		// Iggy's rule: xxHash32 of the key (seed 0) modulo the partitions.
		p := xxhash.Checksum32([]byte(k)) % parts
		want[p] = append(want[p], payload)
	}
	if err := out.WriteBatch(ctxT(t, 10*time.Second), batch); err != nil {
		t.Fatalf("WriteBatch: %v", err)
	}
	got := e.pollAll(stream, "t")
	for p := range uint32(parts) {
		// Within a partition the order of a key's messages is kept; the
		// output sends one request per key, so compare per key.
		for _, k := range keys {
			var g, w []string
			for _, s := range payloads(got[p]) {
				if strings.HasPrefix(s, k+"-") {
					g = append(g, s)
				}
			}
			for _, s := range want[p] {
				if strings.HasPrefix(s, k+"-") {
					w = append(w, s)
				}
			}
			if !slices.Equal(g, w) {
				t.Errorf("partition %d key %s: got %v, want %v", p, k, g, w)
			}
		}
	}
}

// TestCreateTopicConcurrently: four batches sent at once over four
// connections to a stream and topic that do not exist yet all land: a
// connection whose create meets a topic another one just made sends again
// instead of failing its messages.
func TestCreateTopicConcurrently(t *testing.T) {
	e := newEnv(t)
	stream := e.stream()
	out := e.output(fmt.Sprintf("stream: %s\ntopic: t\ncreate_stream: true\ncreate_topic: true\npartitions: 2\nmax_in_flight: 4", stream))
	mustConnect(t, out)
	var want []string
	errs := make(chan error, 4)
	for b := range 4 {
		var batch service.MessageBatch
		for i := range 10 {
			p := fmt.Sprintf("b%d-%d", b, i)
			batch = append(batch, msg(p))
			want = append(want, p)
		}
		go func() { errs <- out.WriteBatch(ctxT(t, 10*time.Second), batch) }()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Errorf("WriteBatch: %v", err)
		}
	}
	slices.Sort(want)
	if got := sortedPayloads(e.pollAll(stream, "t")); !slices.Equal(got, want) {
		t.Errorf("the topic holds %d messages, want the %d sent", len(got), len(want))
	}
}

func TestCreateStreamAndTopic(t *testing.T) {
	e := newEnv(t)
	stream := e.stream()
	out := e.output(fmt.Sprintf(`
stream: %s
topic: '${! @table }'
create_stream: true
create_topic: true
partitions: 3
message_expiry: 72h
max_topic_size: 1GiB
`, stream))
	mustConnect(t, out)
	batch := service.MessageBatch{msg("a1", "table", "a"), msg("b1", "table", "b"), msg("a2", "table", "a")}
	if err := out.WriteBatch(ctxT(t, 10*time.Second), batch); err != nil {
		t.Fatalf("WriteBatch: %v", err)
	}
	cl := e.client()
	td, err := cl.GetTopic(ctxT(t, 10*time.Second), ident(t, stream), ident(t, "a"))
	if err != nil || td == nil {
		t.Fatalf("topic a was not created: %v", err)
	}
	if td.Partitions != 3 {
		t.Errorf("topic a has %d partitions, want 3", td.Partitions)
	}
	if td.MessageExpiry != uint64(72*time.Hour/time.Microsecond) {
		t.Errorf("topic a expiry %d µs, want 72h", td.MessageExpiry)
	}
	if td.MaxTopicSize != 1<<30 {
		t.Errorf("topic a max size %d, want 1 GiB", td.MaxTopicSize)
	}
	if g := sortedPayloads(e.pollAll(stream, "a")); !slices.Equal(g, []string{"a1", "a2"}) {
		t.Errorf("topic a holds %v", g)
	}
	if g := sortedPayloads(e.pollAll(stream, "b")); !slices.Equal(g, []string{"b1"}) {
		t.Errorf("topic b holds %v", g)
	}

	// A stream given by numeric id is never created.
	numeric := e.output("stream: '4000000'\ntopic: t\ncreate_stream: true\ncreate_topic: true")
	mustConnect(t, numeric)
	errs := batchErrors(t, numeric.WriteBatch(ctxT(t, 10*time.Second), service.MessageBatch{msg("x")}))
	if err := errs[0]; err == nil || !strings.Contains(err.Error(), "create_stream only creates entities given by name") {
		t.Errorf("numeric stream: %v", err)
	}

	// The topic now exists: a second output writes without creating.
	out2 := e.output(fmt.Sprintf("stream: %s\ntopic: a", stream))
	mustConnect(t, out2)
	if err := out2.WriteBatch(ctxT(t, 10*time.Second), service.MessageBatch{msg("a3")}); err != nil {
		t.Fatalf("WriteBatch to the created topic: %v", err)
	}
}

// TestLargeGroupSplit sends a group bigger than one request may carry: it
// goes in several requests, in order.
func TestLargeGroupSplit(t *testing.T) {
	e := newEnv(t)
	stream := e.stream()
	e.createTopic(stream, "t", 1)
	out := e.output(fmt.Sprintf("stream: %s\ntopic: t", stream))
	mustConnect(t, out)
	var batch service.MessageBatch
	for i := range 3 {
		batch = append(batch, msg(strings.Repeat(fmt.Sprint(i), 9_000_000)))
	}
	batch = append(batch, msg("small"))
	before := 0
	if e.srv != nil {
		before = e.srv.RequestCount(iggytest.CmdSendMessages)
	}
	if err := out.WriteBatch(ctxT(t, 30*time.Second), batch); err != nil {
		t.Fatal(err)
	}
	if e.srv != nil {
		if n := e.srv.RequestCount(iggytest.CmdSendMessages) - before; n != 3 {
			t.Errorf("%d requests, want 3 (16 MiB each at most)", n)
		}
	}
	got := e.poll(stream, "t", 0)
	if len(got) != 4 {
		t.Fatalf("stored %d messages, want 4", len(got))
	}
	for i := range 3 {
		if len(got[i].Payload) != 9_000_000 || got[i].Payload[0] != byte('0'+i) {
			t.Errorf("message %d out of order or cut", i)
		}
	}
	if string(got[3].Payload) != "small" {
		t.Errorf("last message %.10q", got[3].Payload)
	}
}

func TestMissingStreamOrTopicNacked(t *testing.T) {
	e := newEnv(t)
	stream := e.stream()
	e.createTopic(stream, "exists", 1)
	missingStream := stream + "-missing"

	out := e.output("stream: '${! @s }'\ntopic: '${! @t }'")
	mustConnect(t, out)
	batch := service.MessageBatch{
		msg("ok1", "s", stream, "t", "exists"),
		msg("no-topic", "s", stream, "t", "nope"),
		msg("no-stream", "s", missingStream, "t", "exists"),
		msg("ok2", "s", stream, "t", "exists"),
	}
	errs := batchErrors(t, out.WriteBatch(ctxT(t, 10*time.Second), batch))
	if len(errs) != 2 {
		t.Fatalf("want messages 1 and 2 nacked, got %v", errs)
	}
	if err := errs[1]; err == nil || !strings.Contains(err.Error(), "the topic does not exist and create_topic is off") {
		t.Errorf("message 1: %v", err)
	}
	if err := errs[2]; err == nil || !strings.Contains(err.Error(), "the stream does not exist and create_stream is off") {
		t.Errorf("message 2: %v", err)
	}
	if g := payloads(e.poll(stream, "exists", 0)); !slices.Equal(g, []string{"ok1", "ok2"}) {
		t.Errorf("stored %v, want [ok1 ok2]", g)
	}
	if n := e.partitionCount(stream, "nope"); n != -1 {
		t.Errorf("topic nope was created")
	}
}

func TestHeaderAndIDRoundTrip(t *testing.T) {
	e := newEnv(t)
	stream := e.stream()
	e.createTopic(stream, "t", 2)
	out := e.output(fmt.Sprintf(`
stream: %s
topic: t
partitioning: partition_id
partition: '${! @fluss_bucket }'
message_id: '${! @id.or("") }'
headers:
  include_prefixes: [ fluss_, h_ ]
`, stream))
	mustConnect(t, out)

	type sent struct {
		payload string
		id      string
		meta    []any
		part    uint32
	}
	cases := []sent{
		{"uuid", "01234567-89ab-cdef-0123-456789abcdef", []any{
			"fluss_bucket", int64(1), "fluss_offset", int64(42), "fluss_table", "orders",
			"h_bool", true, "h_f64", 2.5, "h_f32", float32(1.25), "h_i32", int32(-7), "h_u8", uint8(200),
			"h_raw", []byte{0, 1, 2}, "ignored", "x",
		}, 1},
		{"decimal", "340282366920938463463374607431768211455", []any{"fluss_bucket", int64(0)}, 0},
		{"hex", "0x1", []any{"fluss_bucket", int64(0), "h_str", "v"}, 0},
	}
	var batch service.MessageBatch
	for _, c := range cases {
		m := msg(c.payload, c.meta...)
		m.MetaSetMut("id", c.id)
		batch = append(batch, m)
	}
	server := msg("server-id", "fluss_bucket", int64(1))
	batch = append(batch, server)
	if err := out.WriteBatch(ctxT(t, 10*time.Second), batch); err != nil {
		t.Fatalf("WriteBatch: %v", err)
	}

	got := e.pollAll(stream, "t")
	find := func(payload string) (iggy.PolledMessage, uint32) {
		for p, msgs := range got {
			for _, m := range msgs {
				if string(m.Payload) == payload {
					return m, p
				}
			}
		}
		t.Fatalf("message %q not stored", payload)
		return iggy.PolledMessage{}, 0
	}
	type hdr struct {
		kind iggcon.HeaderKind
		val  []byte
	}
	le := func(size int, v uint64) []byte {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint64(b, v)
		return b[:size]
	}
	wantHeaders := map[string]map[string]hdr{
		"uuid": {
			"fluss_bucket": {iggcon.Int64, le(8, 1)},
			"fluss_offset": {iggcon.Int64, le(8, 42)},
			"fluss_table":  {iggcon.String, []byte("orders")},
			"h_bool":       {iggcon.Bool, []byte{1}},
			"h_f64":        {iggcon.Double, le(8, math.Float64bits(2.5))},
			"h_f32":        {iggcon.Float, le(4, uint64(math.Float32bits(1.25)))},
			"h_i32":        {iggcon.Int32, le(4, uint64(uint32(0xfffffff9)))},
			"h_u8":         {iggcon.Uint8, []byte{200}},
			"h_raw":        {iggcon.Raw, []byte{0, 1, 2}},
		},
		"decimal": {"fluss_bucket": {iggcon.Int64, le(8, 0)}},
		"hex":     {"fluss_bucket": {iggcon.Int64, le(8, 0)}, "h_str": {iggcon.String, []byte("v")}},
	}
	for _, c := range cases {
		m, p := find(c.payload)
		if p != c.part {
			t.Errorf("%s: partition %d, want %d", c.payload, p, c.part)
		}
		wantID, _ := iggyoutput.ParseMessageID(c.id)
		if m.ID != wantID {
			t.Errorf("%s: id %x, want %x", c.payload, m.ID, wantID)
		}
		hs, err := iggcon.DeserializeHeaders(m.UserHeaders)
		if err != nil {
			t.Fatalf("%s: headers do not parse: %v", c.payload, err)
		}
		gotH := map[string]hdr{}
		var keys []string
		for _, h := range hs {
			if h.Key.Kind != iggcon.String {
				t.Errorf("%s: header key kind %d", c.payload, h.Key.Kind)
			}
			gotH[string(h.Key.Value)] = hdr{h.Value.Kind, h.Value.Value}
			keys = append(keys, string(h.Key.Value))
		}
		if !slices.IsSorted(keys) {
			t.Errorf("%s: headers not in key order: %v", c.payload, keys)
		}
		want := wantHeaders[c.payload]
		if len(gotH) != len(want) {
			t.Errorf("%s: headers %v, want %v", c.payload, keys, want)
		}
		for k, w := range want {
			g, ok := gotH[k]
			if !ok || g.kind != w.kind || !bytes.Equal(g.val, w.val) {
				t.Errorf("%s: header %s = %v, want %v", c.payload, k, g, w)
			}
		}
	}
	if m, _ := find("server-id"); m.ID == [16]byte{} {
		t.Errorf("server-id: the server did not assign an id")
	}
	if m, _ := find("uuid"); iggyoutput.FormatMessageID(m.ID) != "01234567-89ab-cdef-0123-456789abcdef" {
		t.Errorf("uuid id reads back as %s", iggyoutput.FormatMessageID(m.ID))
	}
}

// TestBadInputsNacked sends one batch in which each bad message breaks one
// rule: each is nacked with that rule, the good ones are stored.
func TestBadInputsNacked(t *testing.T) {
	e := newEnv(t)
	stream := e.stream()
	e.createTopic(stream, "t", 2)
	out := e.output(fmt.Sprintf(`
stream: %s
topic: '${! @topic.or("t") }'
partitioning: partition_id
partition: '${! @p.or(0) }'
message_id: '${! @id.or("") }'
headers:
  include_patterns: [ '^h' ]
`, stream))
	mustConnect(t, out)

	long := strings.Repeat("k", 256)
	var manyHeaders []any
	for i := range 500 {
		manyHeaders = append(manyHeaders, fmt.Sprintf("h%04d", i), strings.Repeat("v", 200))
	}
	type tc struct {
		m    *service.Message
		want string // "" = delivered
	}
	cases := []tc{
		{msg("good-0"), ""},
		{msg(""), "payload is empty"},
		{msg(strings.Repeat("x", 10_000_001)), "payload is 10000001 bytes"},
		{msg("good-1", "h1", "v"), ""},
		{msg("key", "h"+long[1:], "v"), "Iggy header keys must be 1 to 255 bytes"},
		{msg("value", "hv", long), "Iggy header values must be 1 to 255 bytes"},
		{msg("empty-value", "hv", ""), "Iggy header values must be 1 to 255 bytes"},
		{msg("too-many", manyHeaders...), "Iggy accepts at most 100000 bytes of user headers"},
		{msg("bad-id", "id", "not-an-id"), "message_id"},
		{msg("bad-partition", "p", "minus-one"), "is not a partition id"},
		{msg("no-partition", "p", int64(9)), "partition 9"},
		{msg("bad-topic", "topic", long), "names must be 1 to 255 bytes"},
		{msg("good-2", "p", int64(1), "h2", int64(5)), ""},
		{msg(strings.Repeat("y", 10_000_000)), ""},
	}
	var batch service.MessageBatch
	for _, c := range cases {
		batch = append(batch, c.m)
	}
	errs := batchErrors(t, out.WriteBatch(ctxT(t, 30*time.Second), batch))
	for i, c := range cases {
		err := errs[i]
		switch {
		case c.want == "" && err != nil:
			t.Errorf("message %d: nacked: %v", i, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("message %d: want an error containing %q, got %v", i, c.want, err)
		}
	}
	got := e.pollAll(stream, "t")
	var names []string
	for _, msgs := range got {
		for _, m := range msgs {
			if len(m.Payload) > 100 {
				names = append(names, fmt.Sprintf("big-%d", len(m.Payload)))
			} else {
				names = append(names, string(m.Payload))
			}
		}
	}
	slices.Sort(names)
	if want := []string{"big-10000000", "good-0", "good-1", "good-2"}; !slices.Equal(names, want) {
		t.Errorf("stored %v, want %v", names, want)
	}
}

func TestMessagesKeyTooLong(t *testing.T) {
	e := newEnv(t)
	stream := e.stream()
	e.createTopic(stream, "t", 1)
	out := e.output(fmt.Sprintf("stream: %s\ntopic: t\npartitioning: messages_key\nkey: '${! @k.or(\"\") }'", stream))
	mustConnect(t, out)
	batch := service.MessageBatch{msg("ok", "k", "a"), msg("long", "k", strings.Repeat("k", 256)), msg("empty")}
	errs := batchErrors(t, out.WriteBatch(ctxT(t, 10*time.Second), batch))
	for _, i := range []int{1, 2} {
		if err := errs[i]; err == nil || !strings.Contains(err.Error(), "Iggy message keys must be 1 to 255 bytes") {
			t.Errorf("message %d: %v", i, err)
		}
	}
	if errs[0] != nil {
		t.Errorf("message 0 nacked: %v", errs[0])
	}
	if g := payloads(e.poll(stream, "t", 0)); !slices.Equal(g, []string{"ok"}) {
		t.Errorf("stored %v", g)
	}
}

func TestPersonalAccessToken(t *testing.T) {
	e := newEnv(t)
	stream := e.stream()
	e.createTopic(stream, "t", 1)
	cl := e.client()
	name := fmt.Sprintf("fi-%d", time.Now().UnixNano()%1e8)
	tok, err := cl.CreatePersonalAccessToken(ctxT(t, 10*time.Second), name)
	if err != nil {
		t.Fatalf("creating a personal access token: %v", err)
	}

	out := e.output(fmt.Sprintf("stream: %s\ntopic: t\npersonal_access_token: %q", stream, tok))
	mustConnect(t, out)
	if err := out.WriteBatch(ctxT(t, 10*time.Second), service.MessageBatch{msg("via-token")}); err != nil {
		t.Fatalf("WriteBatch: %v", err)
	}
	if g := payloads(e.poll(stream, "t", 0)); !slices.Equal(g, []string{"via-token"}) {
		t.Errorf("stored %v", g)
	}

	bad := e.output(fmt.Sprintf("stream: %s\ntopic: t\npersonal_access_token: wrong-token", stream))
	err = bad.Connect(ctxT(t, 15*time.Second))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("the Iggy server at %s refused the login with a personal access token", e.addr)) {
		t.Errorf("Connect with a wrong token: %v", err)
	}
	wrong := e.output(fmt.Sprintf("stream: %s\ntopic: t\nusername: %s\npassword: wrong", stream, e.user))
	err = wrong.Connect(ctxT(t, 15*time.Second))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("the Iggy server at %s refused the login as %q", e.addr, e.user)) {
		t.Errorf("Connect with a wrong password: %v", err)
	}
}

// TestServerDownAtStart: Connect against an address nobody listens on
// returns an error quickly, and against a server that accepts but never
// answers it returns by the timeout, saying it is not an Iggy server.
func TestServerDownAtStart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := ln.Addr().String()
	_ = ln.Close()

	out, err := newOutput(fmt.Sprintf("address: %s\nusername: iggy\npassword: iggy\nstream: s\ntopic: t\ntimeout: 2s", deadAddr))
	if err != nil {
		t.Fatal(err)
	}
	down := out
	defer func() { _ = down.Close(context.Background()) }() // it leaves the stuck report
	for range 3 {
		start := time.Now()
		err := out.Connect(ctxT(t, time.Minute))
		if err == nil || !strings.Contains(err.Error(), "connecting to Iggy at "+deadAddr) {
			t.Fatalf("Connect: want a connection error, got %v", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("Connect took %v", d)
		}
	}

	// A server that accepts connections but never answers: the version
	// probe is abandoned at the timeout.
	silent := testnet.Silent(t)
	out, err = newOutput(fmt.Sprintf("address: %s\nusername: iggy\npassword: iggy\nstream: s\ntopic: t\ntimeout: 500ms", silent))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = out.Connect(ctxT(t, time.Minute))
	if err == nil || !strings.Contains(err.Error(), "is not an Iggy server (no reply to ping within 500ms)") {
		t.Fatalf("Connect to a silent server: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Connect to a silent server took %v", d)
	}
	if err := out.Close(ctxT(t, 2*time.Second)); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// TestServerComesUpLater: the server is down when the output connects, the
// pipeline keeps retrying, and the message is delivered once it is up.
func TestServerComesUpLater(t *testing.T) {
	e := newEnv(t)
	srv := e.needFaults()
	e.createTopic("later", "t", 1)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	out := e.output("stream: later\ntopic: t\ntimeout: 1s")
	start := time.Now()
	if err := out.Connect(ctxT(t, time.Minute)); err == nil {
		t.Fatal("Connect succeeded with the server down")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Connect with the server down took %v", d)
	}

	produce, run := pipeline(t, e.outputYAML("stream: later\ntopic: t\ntimeout: 1s"))
	defer run()
	done := make(chan error, 1)
	go func() { done <- produce(context.Background(), service.MessageBatch{msg("after-start")}) }()
	time.Sleep(1500 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("the message was acknowledged while the server was down: %v", err)
	default:
	}
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("produce: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("not delivered 20s after the server came up")
	}
	if g := payloads(e.poll("later", "t", 0)); !slices.Equal(g, []string{"after-start"}) {
		t.Errorf("stored %v", g)
	}
}

// TestStalledRequestTimesOut: a request the server never answers is given up
// after timeout, the connection closed, and the batch goes through on a new
// connection once the server answers again.
func TestStalledRequestTimesOut(t *testing.T) {
	e := newEnv(t)
	srv := e.needFaults()
	e.createTopic("stall", "t", 1)
	out := e.output("stream: stall\ntopic: t\ntimeout: 400ms")
	mustConnect(t, out)

	h := srv.Stall(iggytest.CmdSendMessages)
	start := time.Now()
	err := out.WriteBatch(ctxT(t, time.Minute), service.MessageBatch{msg("m")})
	if !errors.Is(err, service.ErrNotConnected) {
		t.Fatalf("WriteBatch on a stalled server: want ErrNotConnected, got %v", err)
	}
	if d := time.Since(start); d < 400*time.Millisecond || d > 2*time.Second {
		t.Errorf("WriteBatch returned after %v, want about 400ms", d)
	}
	h.Release()
	mustConnect(t, out)
	if err := out.WriteBatch(ctxT(t, 10*time.Second), service.MessageBatch{msg("m")}); err != nil {
		t.Fatalf("WriteBatch after the stall: %v", err)
	}
	// The stalled request was abandoned with its connection: at most the
	// retry (plus, at worst, the stalled one if the server handled it).
	if g := payloads(e.poll("stall", "t", 0)); len(g) < 1 || len(g) > 2 {
		t.Errorf("stored %v", g)
	}
}

// TestCloseDuringStalledRequest: Close returns by its deadline while a
// request hangs, and the hung WriteBatch returns too.
func TestCloseDuringStalledRequest(t *testing.T) {
	e := newEnv(t)
	srv := e.needFaults()
	e.createTopic("close", "t", 1)
	out := e.output("stream: close\ntopic: t\ntimeout: 1m")
	mustConnect(t, out)

	h := srv.Stall(iggytest.CmdSendMessages)
	defer h.Release()
	writeDone := make(chan error, 1)
	go func() { writeDone <- out.WriteBatch(context.Background(), service.MessageBatch{msg("m")}) }()
	if err := h.WaitFired(ctxT(t, 10*time.Second), 1); err != nil {
		t.Fatalf("the request never reached the server: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_ = out.Close(ctx)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %v with a 500ms deadline", d)
	}
	select {
	case err := <-writeDone:
		if err == nil {
			t.Error("the hung WriteBatch reported success")
		}
	case <-time.After(2 * time.Second):
		t.Error("the hung WriteBatch did not return after Close")
	}
	if err := out.WriteBatch(ctxT(t, time.Second), service.MessageBatch{msg("m")}); err == nil {
		t.Error("WriteBatch after Close succeeded")
	}
}

// TestConnectionDroppedMidBatch: the server drops the connection instead of
// answering a send; WriteBatch reports ErrNotConnected and the batch goes
// through after Connect.
func TestConnectionDroppedMidBatch(t *testing.T) {
	e := newEnv(t)
	srv := e.needFaults()
	e.createTopic("drop", "t", 1)
	out := e.output("stream: drop\ntopic: t")
	mustConnect(t, out)
	if err := out.WriteBatch(ctxT(t, 10*time.Second), service.MessageBatch{msg("1")}); err != nil {
		t.Fatal(err)
	}
	srv.DropAfter(iggytest.CmdSendMessages, 0)
	if err := out.WriteBatch(ctxT(t, 10*time.Second), service.MessageBatch{msg("2")}); !errors.Is(err, service.ErrNotConnected) {
		t.Fatalf("want ErrNotConnected, got %v", err)
	}
	mustConnect(t, out)
	if err := out.WriteBatch(ctxT(t, 10*time.Second), service.MessageBatch{msg("2")}); err != nil {
		t.Fatal(err)
	}
	// A server error is not a connection failure: the message is nacked
	// and the connection stays.
	h := srv.FailWith(iggytest.CmdSendMessages, iggytest.CodeUnauthorized)
	err := out.WriteBatch(ctxT(t, 10*time.Second), service.MessageBatch{msg("3")})
	h.Release()
	if errs := batchErrors(t, err); errs[0] == nil || !strings.Contains(errs[0].Error(), "unauthorized") {
		t.Fatalf("want the server error, got %v", err)
	}
	if err := out.WriteBatch(ctxT(t, 10*time.Second), service.MessageBatch{msg("3")}); err != nil {
		t.Fatal(err)
	}
	if g := payloads(e.poll("drop", "t", 0)); !slices.Equal(g, []string{"1", "2", "3"}) {
		t.Errorf("stored %v", g)
	}
}

// TestTLS: the output talks to a TLS server with a CA file, an inline CA or
// without verification, and a certificate it cannot verify fails Connect
// quickly with a clear error.
func TestTLS(t *testing.T) {
	if _, _, _, ok := realServer(); ok {
		t.Skip("needs the in-process test server with TLS on (IGGY_TCP_ADDRESS points at a real server)")
	}
	certPEM, tlsConf := selfSigned(t)
	e := newEnvOpts(t, iggytest.Options{TLSConfig: tlsConf})
	caFile := t.TempDir() + "/ca.pem"
	writeFile(t, caFile, certPEM)

	// The client in e.client() speaks plain TCP, so set up through the
	// server's helpers.
	if _, err := e.srv.CreateStream("tls"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.srv.CreateTopic("tls", "t", 1); err != nil {
		t.Fatal(err)
	}
	for i, tlsYAML := range []string{
		"tls: {enabled: true, root_cas_file: " + caFile + "}",
		"tls: {enabled: true, skip_cert_verify: true}",
		"tls: {enabled: true, root_cas: " + strconv.Quote(string(certPEM)) + "}",
	} {
		out := e.output("stream: tls\ntopic: t\n" + tlsYAML)
		mustConnect(t, out)
		if err := out.WriteBatch(ctxT(t, 10*time.Second), service.MessageBatch{msg(fmt.Sprint(i))}); err != nil {
			t.Fatalf("%s: %v", tlsYAML, err)
		}
	}
	out := e.output("stream: tls\ntopic: t\ntimeout: 2s\ntls: {enabled: true}")
	start := time.Now()
	err := out.Connect(ctxT(t, time.Minute))
	if err == nil || !strings.Contains(err.Error(), "TLS handshake with Iggy") {
		t.Errorf("Connect with an unverifiable certificate: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Connect took %v", d)
	}
	plain := e.output("stream: tls\ntopic: t\ntimeout: 1s")
	if err := plain.Connect(ctxT(t, time.Minute)); err == nil {
		t.Error("Connect without TLS to a TLS server succeeded")
	}
	if n := len(e.srv.Messages("tls", "t")); n != 3 {
		t.Errorf("stored %d messages, want 3", n)
	}
}
