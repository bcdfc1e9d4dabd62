package iggyinput

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/iggy"
	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
)

// The suite runs against the in-process test server in each dialect
// (TestMain runs the test binary again for 0.9), or, unchanged, against a
// real Iggy server when IGGY_TCP_ADDRESS is set (IGGY_USERNAME and
// IGGY_PASSWORD, default iggy/iggy); tests that inject faults skip only
// then.

// testVersion is the dialect of this run's test server.
var testVersion = iggytest.SuiteVersion()

func TestMain(m *testing.M) { iggytest.MainEveryDialect(m) }

// env is the server a test reads from, and a topic of its own there.
type env struct {
	t          *testing.T
	addr       string
	user, pass string
	srv        *iggytest.Server // nil: a real server
	cl         *iggy.Conn
	stream     string
}

var seq atomic.Int64

// newEnv starts a server (or picks the real one) and creates a stream with
// topic "t" of the given partitions.
func newEnv(t *testing.T, partitions uint32) *env {
	t.Helper()
	e := &env{t: t}
	if addr := os.Getenv("IGGY_TCP_ADDRESS"); addr != "" {
		e.addr, e.user, e.pass = addr, envOr("IGGY_USERNAME", "iggy"), envOr("IGGY_PASSWORD", "iggy")
	} else {
		srv, err := iggytest.Start(iggytest.Options{Version: testVersion})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Close() })
		e.srv, e.addr, e.user, e.pass = srv, srv.Addr(), iggytest.DefaultUsername, iggytest.DefaultPassword
	}
	e.cl = e.dial()
	e.stream = fmt.Sprintf("in-%d-%d", time.Now().UnixNano()%1e9, seq.Add(1))
	ctx := ctxT(t, 20*time.Second)
	if err := e.cl.CreateStream(ctx, e.stream); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.dial().DeleteStream(context.Background(), e.sid()) })
	if err := e.cl.CreateTopic(ctx, e.sid(), iggy.TopicSpec{Name: "t", Partitions: partitions}); err != nil {
		t.Fatal(err)
	}
	return e
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func (e *env) dial() *iggy.Conn {
	e.t.Helper()
	c, err := iggy.Dial(ctxT(e.t, 20*time.Second), iggy.Options{Addr: e.addr, Credentials: iggy.Credentials{Username: e.user, Password: e.pass}})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = c.Close() })
	return c
}

func (e *env) sid() iggy.Identifier { id, _ := iggy.NameID(e.stream); return id }
func (e *env) tid() iggy.Identifier { id, _ := iggy.NameID("t"); return id }

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// send writes n messages "p<partition>-<i>" to partition p, each with a
// string header "fluss_change_type" and an int64 header "n".
func (e *env) send(p uint32, from, n int) {
	e.t.Helper()
	b := &iggy.Batch{Stream: e.sid(), Topic: e.tid(), Partitioning: iggy.PartitionID(p), OriginTimestamp: uint64(time.Now().UnixMicro())}
	for i := from; i < from+n; i++ {
		h := header(nil, "fluss_change_type", iggy.HeaderString, []byte("+I"))
		h = header(h, "n", iggy.HeaderInt64, binary.LittleEndian.AppendUint64(nil, uint64(i)))
		b.Messages = append(b.Messages, iggy.Message{Payload: fmt.Appendf(nil, "p%d-%d", p, i), UserHeaders: h})
	}
	if _, err := e.cl.Send(ctxT(e.t, 20*time.Second), b); err != nil {
		e.t.Fatal(err)
	}
}

func header(b []byte, key string, kind iggy.HeaderKind, v []byte) []byte {
	b = append(binary.LittleEndian.AppendUint32(append(b, byte(iggy.HeaderString)), uint32(len(key))), key...)
	return append(binary.LittleEndian.AppendUint32(append(b, byte(kind)), uint32(len(v))), v...)
}

// newTestInput parses the input's YAML (address and credentials added).
func (e *env) newTestInput(yaml string) *input {
	e.t.Helper()
	conf, err := Spec().ParseYAML(fmt.Sprintf("address: %s\nusername: %s\npassword: %s\nstream: %s\ntopic: t\n%s",
		e.addr, e.user, e.pass, e.stream, yaml), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	c, err := parseConfig(conf)
	if err != nil {
		e.t.Fatal(err)
	}
	in := newInput(c, service.MockResources())
	if err := in.Connect(ctxT(e.t, 20*time.Second)); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = in.Close(context.Background()) })
	return in
}

// read is one batch read: its payloads and its ack.
type read struct {
	payloads []string
	ack      service.AckFunc
}

// readN reads batches until n messages came, within the deadline.
func readN(t *testing.T, in *input, n int) []read {
	t.Helper()
	var out []read
	got := 0
	ctx := ctxT(t, 30*time.Second)
	for got < n {
		b, ack, err := in.ReadBatch(ctx)
		if err == service.ErrNotConnected {
			if err := in.Connect(ctx); err != nil {
				t.Logf("reconnect: %v", err)
				time.Sleep(50 * time.Millisecond)
			}
			continue
		}
		if err != nil {
			t.Fatalf("after %d of %d messages: %v", got, n, err)
		}
		r := read{ack: ack}
		for _, m := range b {
			p, _ := m.AsBytes()
			r.payloads = append(r.payloads, string(p))
		}
		got += len(b)
		out = append(out, r)
	}
	return out
}

// noMore checks that nothing more is read within d.
func noMore(t *testing.T, in *input, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if b, _, err := in.ReadBatch(ctx); err == nil {
		t.Errorf("read %d more messages, first %q", len(b), payload(b[0]))
	}
}

func payload(m *service.Message) string { p, _ := m.AsBytes(); return string(p) }

func ackAll(t *testing.T, rs []read) {
	t.Helper()
	for _, r := range rs {
		if err := r.ack(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
}

func payloads(rs []read) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.payloads...)
	}
	return out
}

// stored reads what consumer stored for a partition (-1: nothing).
func (e *env) stored(c iggy.Consumer, p uint32) int64 {
	e.t.Helper()
	o, ok, err := e.cl.GetOffset(ctxT(e.t, 10*time.Second), c, e.sid(), e.tid(), p)
	if err != nil {
		e.t.Fatal(err)
	}
	if !ok {
		return -1
	}
	return int64(o)
}

func hasPrefixCount(ps []string, prefix string) int {
	n := 0
	for _, p := range ps {
		if strings.HasPrefix(p, prefix) {
			n++
		}
	}
	return n
}
