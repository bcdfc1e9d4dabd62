package iggy

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"testing"
	"time"
)

// t09Dial connects to the real server at addr with the 0.9 dialect alone
// (no Dial, no Conn): probe, then login as iggy/iggy unless c says.
func t09Dial(t *testing.T, addr string, c Credentials) (*v09, *wire) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
	w := &wire{nc: nc, addr: addr}
	if is08, err := probeV09(w); is08 || err != nil {
		t.Fatalf("probe: 0.8 %v, %v", is08, err)
	}
	v := newV09()
	info, err := v.login(w, c)
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	t.Logf("logged in: %+v", info)
	return v, w
}

// TestV09RealServer runs the dialect against an Iggy 0.9 server at
// IGGY09_TCP_ADDRESS (root user iggy/iggy); skipped when unset.
func TestV09RealServer(t *testing.T) {
	addr := os.Getenv("IGGY09_TCP_ADDRESS")
	if addr == "" {
		t.Skip("IGGY09_TCP_ADDRESS is not set")
	}
	v, w := t09Dial(t, addr, Credentials{Username: "iggy", Password: "iggy"})
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	must("ping", v.ping(w))
	name := fmt.Sprintf("v09-test-%d", time.Now().UnixNano())
	stream := mustName(t, name)
	topic := mustName(t, "events")
	top, err := v.getTopic(w, stream, topic)
	if top != nil || err != nil {
		t.Fatalf("topic of a missing stream: %+v %v", top, err)
	}
	must("create stream", v.createStream(w, name))
	if err := v.createStream(w, name); CodeOf(err) != CodeStreamNameAlreadyExists {
		t.Fatalf("creating it again: %v", err)
	}
	must("create topic", v.createTopic(w, stream, TopicSpec{Name: "events", Partitions: 3}))
	must("create topic with options", v.createTopic(w, stream, TopicSpec{Name: "opts", Partitions: 1,
		MessageExpiry: 3_600_000_000, MaxTopicSize: 1 << 30}))
	top, err = v.getTopic(w, stream, topic)
	if err != nil || top == nil || top.Name != "events" || top.Partitions != 3 {
		t.Fatalf("get topic: %+v %v", top, err)
	}
	t.Logf("topic %+v", *top)
	opts, err := v.getTopic(w, stream, mustName(t, "opts"))
	if err != nil || opts == nil || opts.MessageExpiry != 3_600_000_000 || opts.MaxTopicSize != 1<<30 {
		t.Fatalf("topic with options: %+v %v", opts, err)
	}
	t09RealSendPoll(t, v, w, stream, topic)
	tok, err := v.createToken(w, "tok"+name[len(name)-8:])
	if err != nil || tok == "" {
		t.Fatalf("token: %q %v", tok, err)
	}
	tv, tw := t09Dial(t, addr, Credentials{Token: tok})
	must("ping with token session", tv.ping(tw))
	err = v.flush(w, stream, topic, 0, true)
	t.Logf("flush: %v", err)
	if err != nil && CodeOf(err) != CodeFeatureUnavailable {
		t.Fatalf("flush: %v", err)
	}
	must("ping after flush", v.ping(w))
	must("delete stream", v.deleteStream(w, stream))
	if err := v.deleteStream(w, stream); !IsStreamNotFound(err) {
		t.Fatalf("deleting it again: %v", err)
	}
	_, err = v.send(w, &Batch{Stream: stream, Topic: topic, Partitioning: Balanced(), Messages: []Message{{Payload: []byte("x")}}})
	t.Logf("send to a deleted stream: %v", err)
	if CodeOf(err) == 0 {
		t.Fatalf("send to a deleted stream: %v", err)
	}
	must("ping at the end", v.ping(w))
	t09RealNewerProtocol(t, addr)
}

// t09RealNewerProtocol logs in announcing protocol 0.12.0 and expects the
// eviction that tells the accepted window.
func t09RealNewerProtocol(t *testing.T, addr string) {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
	w := &wire{nc: nc, addr: addr}
	v := newV09()
	b := v.appendHeader(nil, v09OpRegister, 0, 0)
	b = v09le.AppendUint32(b, 12<<10)
	for _, s := range []string{"test", "1", "iggy", "iggy"} {
		b = v09AppendName(b, s)
	}
	_, err = v.exchange(w, v09Seal(v09le.AppendUint32(b, 0), true), false)
	var ev *v09Evicted
	if !errors.As(err, &ev) {
		t.Fatalf("login with protocol 0.12.0: %v", err)
	}
	err = ev.loginError(addr)
	t.Logf("login with protocol 0.12.0: %v", err)
	var u *UnsupportedServerError
	if !errors.As(err, &u) || u.Server != "protocol 0.11.0 (Iggy 0.9)" {
		t.Fatalf("login with protocol 0.12.0: %v", err)
	}
}

// t09RealSendPoll sends with each partitioning and reads the messages back.
func t09RealSendPoll(t *testing.T, v *v09, w *wire, stream, topic Identifier) {
	hdrs := []byte{2, 3, 0, 0, 0, 'k', 'e', 'y', 2, 5, 0, 0, 0, 'v', 'a', 'l', 'u', 'e'}
	key, _ := MessagesKey([]byte("customer-7"))
	for _, p := range []Partitioning{Balanced(), PartitionID(1), key} {
		b := &Batch{Stream: stream, Topic: topic, Partitioning: p, OriginTimestamp: uint64(time.Now().UnixMicro())}
		for i := 0; i < 3; i++ {
			b.Messages = append(b.Messages, Message{ID: [16]byte{byte(i + 1), 0xab}, Payload: []byte(fmt.Sprintf("p%d-%d", p.Kind, i)), UserHeaders: hdrs})
		}
		b.Messages[2].ID = [16]byte{}
		b.Messages[1].UserHeaders = nil
		app, err := v.send(w, b)
		if err != nil || len(app) != 1 {
			t.Fatalf("send %d: %+v %v", p.Kind, app, err)
		}
		t.Logf("partitioning %d: appended %+v", p.Kind, app)
		polled, err := v.poll(w, &PollRequest{Stream: stream, Topic: topic, Partition: app[0].Partition, Consumer: 1,
			Strategy: PollOffset, Value: app[0].BaseOffset, Count: 10})
		if err != nil || len(polled.Messages) < 3 {
			t.Fatalf("poll: %+v %v", polled, err)
		}
		for i, m := range polled.Messages[:3] {
			sent := b.Messages[i]
			if m.Offset != app[0].BaseOffset+uint64(i) || string(m.Payload) != string(sent.Payload) ||
				!bytes.Equal(m.UserHeaders, sent.UserHeaders) || m.OriginTimestamp != b.OriginTimestamp || m.Timestamp == 0 {
				t.Errorf("message %d: %+v, sent %+v", i, m, sent)
			}
			if sent.ID != ([16]byte{}) && m.ID != sent.ID || m.ID == ([16]byte{}) {
				t.Errorf("message %d id %x, sent %x", i, m.ID, sent.ID)
			}
		}
	}
	for _, s := range []PollStrategy{PollFirst, PollLast, PollNext, PollTimestamp} {
		polled, err := v.poll(w, &PollRequest{Stream: stream, Topic: topic, Partition: 1, Consumer: 2, Strategy: s, Count: 2, AutoCommit: true})
		if err != nil {
			t.Fatalf("poll strategy %d: %v", s, err)
		}
		t.Logf("strategy %d: %d messages, current offset %d", s, len(polled.Messages), polled.CurrentOffset)
	}
	if _, err := v.poll(w, &PollRequest{Stream: stream, Topic: topic, Partition: 99, Consumer: 1, Strategy: PollFirst, Count: 1}); CodeOf(err) == 0 {
		t.Fatalf("poll of a missing partition: %v", err)
	}
}

// TestV09ProbeReal08 probes an Iggy 0.8 server at IGGY08_TCP_ADDRESS, which
// must be told apart; skipped when unset.
func TestV09ProbeReal08(t *testing.T) {
	addr := os.Getenv("IGGY08_TCP_ADDRESS")
	if addr == "" {
		t.Skip("IGGY08_TCP_ADDRESS is not set")
	}
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	if is08, err := probeV09(&wire{nc: nc, addr: addr}); !is08 || err != nil {
		t.Fatalf("probe of a 0.8 server: 0.8 %v, %v", is08, err)
	}
}
