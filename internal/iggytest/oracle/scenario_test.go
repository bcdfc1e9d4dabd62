package oracle

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/OneOfOne/xxhash"

	"github.com/fluss-iggy/fluss-iggy/iggy"
)

// The oracle scenario's inputs. sdk011/src/main.rs holds the same values:
// change both together.
const (
	scenarioStream     = "oracle-stream"
	scenarioTopic      = "oracle-topic"
	scenarioPartitions = 3
	scenarioExpiry     = 3_600_000_000 // µs
	scenarioMaxSize    = 1 << 30
	scenarioOrigin     = 1_760_000_000_000_000 // every message's origin timestamp, µs
	scenarioKey        = "order-42"
	scenarioConsumer   = 7
	scenarioPollPart   = 1
	scenarioPollCount  = 10
)

// scenarioSend is one send of the scenario.
type scenarioSend struct {
	label   string
	part    iggy.Partitioning
	firstID uint64
	count   int
	want    uint32 // the partition it lands in (Balanced from 0, the key by XXH32 % 3)
}

func scenarioSends() []scenarioSend {
	key, _ := iggy.MessagesKey([]byte(scenarioKey))
	return []scenarioSend{
		{"partition", iggy.PartitionID(scenarioPollPart), 1001, 3, scenarioPollPart},
		{"balanced", iggy.Balanced(), 2001, 2, 0},
		{"key", key, 3001, 2, xxhash.Checksum32([]byte(scenarioKey)) % scenarioPartitions},
	}
}

// messages builds the messages of a send as main.rs does: ids from firstID
// on, payload "<label>-<i>", and five user headers in the SDK's order
// (its BTreeMap sorts keys by kind, then bytes): delta Int32 -5, raw Raw
// ca fe i, seq Uint64 i, source String "fluss", valid Bool true.
func (s scenarioSend) messages() []iggy.Message {
	ms := make([]iggy.Message, s.count)
	for i := range ms {
		var h []byte
		h = appendHeader(h, "delta", iggy.HeaderInt32, le.AppendUint32(nil, uint32(0xfffffffb)))
		h = appendHeader(h, "raw", iggy.HeaderRaw, []byte{0xca, 0xfe, byte(i)})
		h = appendHeader(h, "seq", iggy.HeaderUint64, le.AppendUint64(nil, uint64(i)))
		h = appendHeader(h, "source", iggy.HeaderString, []byte("fluss"))
		h = appendHeader(h, "valid", iggy.HeaderBool, []byte{1})
		ms[i] = iggy.Message{Payload: fmt.Appendf(nil, "%s-%d", s.label, i), UserHeaders: h}
		le.PutUint64(ms[i].ID[:], s.firstID+uint64(i))
	}
	return ms
}

// appendHeader appends one user header with a String key:
// [kind u8][len u32][key][kind u8][len u32][value].
func appendHeader(b []byte, key string, kind iggy.HeaderKind, value []byte) []byte {
	b = append(le.AppendUint32(append(b, byte(iggy.HeaderString)), uint32(len(key))), key...)
	return append(le.AppendUint32(append(b, byte(kind)), uint32(len(value))), value...)
}

// runOurClient runs the scenario through our client (dialect 0.9) against
// addr. It returns what went wrong or came back other than expected,
// going on after each failure as far as the connection allows, so that
// the frames of every step can be compared.
func runOurClient(ctx context.Context, addr string) []string {
	var bad []string
	fail := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	c, err := iggy.Dial(ctx, iggy.Options{
		Addr: addr, Version: iggy.Version09, Timeout: 10 * time.Second,
		Credentials: iggy.Credentials{Username: "iggy", Password: "iggy"},
	})
	if err != nil {
		return []string{fmt.Sprintf("dial and login: %v", err)}
	}
	defer c.Close()
	stream, _ := iggy.NameID(scenarioStream)
	topic, _ := iggy.NameID(scenarioTopic)
	if ok, err := c.StreamExists(ctx, stream); err != nil || ok {
		fail("stream exists before it is created: %v, %v", ok, err)
	}
	if err := c.CreateStream(ctx, scenarioStream); err != nil {
		fail("create stream: %v", err)
	}
	if tp, err := c.GetTopic(ctx, stream, topic); err != nil || tp != nil {
		fail("topic before it is created: %+v, %v", tp, err)
	}
	spec := iggy.TopicSpec{Name: scenarioTopic, Partitions: scenarioPartitions, MessageExpiry: scenarioExpiry, MaxTopicSize: scenarioMaxSize}
	if err := c.CreateTopic(ctx, stream, spec); err != nil {
		fail("create topic: %v", err)
	}
	if tp, err := c.GetTopic(ctx, stream, topic); err != nil || tp == nil || tp.ID != 1 || tp.Name != scenarioTopic ||
		tp.Partitions != scenarioPartitions || tp.MessageExpiry != scenarioExpiry || tp.MaxTopicSize != scenarioMaxSize ||
		tp.Durability != "replicated" {
		fail("get topic: %+v, %v; want topic 1 %s, %d partitions, expiry %d, max size %d, durability replicated (the SDK's default)",
			tp, err, scenarioTopic, scenarioPartitions, scenarioExpiry, scenarioMaxSize)
	}
	for _, s := range scenarioSends() {
		b := &iggy.Batch{Stream: stream, Topic: topic, Partitioning: s.part, OriginTimestamp: scenarioOrigin, Messages: s.messages()}
		app, err := c.Send(ctx, b)
		if err != nil || len(app) != 1 || app[0].Partition != s.want {
			fail("send (%s): %+v, %v; want one receipt for partition %d", s.label, app, err, s.want)
		}
	}
	bad = append(bad, checkPoll(c.Poll(ctx, &iggy.PollRequest{
		Stream: stream, Topic: topic, Partition: scenarioPollPart, Consumer: scenarioConsumer,
		Strategy: iggy.PollOffset, Value: 0, Count: scenarioPollCount,
	}))...)
	return bad
}

// checkPoll compares a poll of the scenario's partition with the messages
// sent there: the "partition" send's, then the "key" send's.
func checkPoll(p *iggy.Polled, err error) []string {
	if err != nil {
		return []string{fmt.Sprintf("poll: %v", err)}
	}
	var want []iggy.Message
	for _, s := range scenarioSends() {
		if s.want == scenarioPollPart {
			want = append(want, s.messages()...)
		}
	}
	if p.Partition != scenarioPollPart || len(p.Messages) != len(want) {
		return []string{fmt.Sprintf("poll: partition %d with %d messages, want partition %d with %d", p.Partition, len(p.Messages), scenarioPollPart, len(want))}
	}
	var bad []string
	for i, m := range p.Messages {
		w := want[i]
		if m.Offset != uint64(i) || m.ID != w.ID || !bytes.Equal(m.Payload, w.Payload) ||
			!bytes.Equal(m.UserHeaders, w.UserHeaders) || m.OriginTimestamp != scenarioOrigin {
			bad = append(bad, fmt.Sprintf("poll: message %d is offset %d id %x %q, origin %d; want offset %d id %x %q, origin %d, and the sent headers",
				i, m.Offset, m.ID, m.Payload, m.OriginTimestamp, i, w.ID, w.Payload, uint64(scenarioOrigin)))
		}
	}
	return bad
}
