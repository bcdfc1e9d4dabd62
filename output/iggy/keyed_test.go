package iggyoutput_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/OneOfOne/xxhash"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/iggy"
	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
	iggyoutput "github.com/fluss-iggy/fluss-iggy/output/iggy"
)

// keyedOutput is the output config of the messages_key tests.
func keyedOutput(stream, topic string) string {
	return fmt.Sprintf("stream: %s\ntopic: %s\npartitioning: messages_key\nkey: '${! @k }'", stream, topic)
}

// keyedTopic makes a topic "t" with the given partitions in a new stream
// and a connected messages_key output for it.
func keyedTopic(t *testing.T, partitions uint32) (*env, string, *iggyoutput.Output) {
	t.Helper()
	e := newEnv(t)
	stream := e.stream()
	e.createTopic(stream, "t", partitions)
	out := e.output(keyedOutput(stream, "t"))
	mustConnect(t, out)
	return e, stream, out
}

// partitionOf returns the partition every message of the topic was stored
// in, by payload.
func partitionOf(byPart map[uint32][]iggy.PolledMessage) map[string]uint32 {
	out := map[string]uint32{}
	for p, msgs := range byPart {
		for _, m := range msgs {
			out[string(m.Payload)] = p
		}
	}
	return out
}

// TestMessagesKeyPlacementMatchesIggy sends the same keys once through the
// output, which picks the partition itself and sends one request per
// partition, and once with Iggy's own messages_key
// partitioning (one request per key): every key must land on the same
// partition both ways. Against a real server this checks the output's
// choice against Iggy's; the order within a partition is the batch order.
func TestMessagesKeyPlacementMatchesIggy(t *testing.T) {
	e := newEnv(t)
	stream := e.stream()
	const parts = 5
	e.createTopic(stream, "ours", parts)
	e.createTopic(stream, "iggys", parts)
	out := e.output(keyedOutput(stream, "ours"))
	mustConnect(t, out)

	var batch service.MessageBatch
	var keys []string
	for i := range 200 {
		k := fmt.Sprintf("key-%d", i*7919%1000)
		keys = append(keys, k)
		batch = append(batch, msg(fmt.Sprintf("%s/%03d", k, i), "k", k))
	}
	sendsBefore := 0
	if e.srv != nil {
		sendsBefore = e.srv.RequestCount(iggytest.CmdSendMessages)
	}
	if err := out.WriteBatch(ctxT(t, 10*time.Second), batch); err != nil {
		t.Fatalf("WriteBatch: %v", err)
	}
	if e.srv != nil {
		if n := e.srv.RequestCount(iggytest.CmdSendMessages) - sendsBefore; n > parts {
			t.Errorf("200 messages with 200 keys took %d send requests, want at most one per partition (%d)", n, parts)
		}
	}

	cl := e.client()
	for i, k := range keys {
		key, err := iggy.MessagesKey([]byte(k))
		if err != nil {
			t.Fatal(err)
		}
		b := iggy.Batch{Stream: ident(t, stream), Topic: ident(t, "iggys"), Partitioning: key,
			Messages: []iggy.Message{{Payload: []byte(fmt.Sprintf("%s/%03d", k, i))}}}
		if _, err := cl.Send(ctxT(t, 10*time.Second), &b); err != nil {
			t.Fatalf("send of key %s with Iggy's messages_key: %v", k, err)
		}
	}

	ours, iggys := e.pollAll(stream, "ours"), e.pollAll(stream, "iggys")
	got, want := partitionOf(ours), partitionOf(iggys)
	if len(got) != len(batch) || len(want) != len(batch) {
		t.Fatalf("stored %d messages through the output and %d with Iggy's messages_key, want %d each", len(got), len(want), len(batch))
	}
	for payload, p := range want {
		if got[payload] != p {
			t.Errorf("%s: the output stored it in partition %d, Iggy's messages_key in %d", payload, got[payload], p)
		}
	}
	for p, msgs := range ours {
		ps := payloads(msgs)
		sorted := slices.Clone(ps)
		slices.SortFunc(sorted, func(a, b string) int {
			return strings.Compare(a[strings.IndexByte(a, '/'):], b[strings.IndexByte(b, '/'):])
		})
		if !slices.Equal(ps, sorted) {
			t.Errorf("partition %d is not in batch order: %v", p, ps)
		}
	}
}

// TestMessagesKeyCreatesTopic: with create_topic, four batches sent at once
// over four connections meet no topic; one connection creates it while the
// others wait, and then every batch goes to the partitions the output picks,
// where Iggy's rule puts the keys. No keyed message reaches the server for it
// to place (a 0.8.0 server panicked when one came while the topic was being
// created), and the topic is created once.
func TestMessagesKeyCreatesTopic(t *testing.T) {
	e := newEnv(t)
	stream := e.stream()
	out := e.output(keyedOutput(stream, "t") + "\ncreate_stream: true\ncreate_topic: true\npartitions: 3\nmax_in_flight: 4")
	mustConnect(t, out)
	want := map[string]uint32{}
	batches := make([]service.MessageBatch, 4)
	for round := range batches {
		for i := range 12 {
			k := fmt.Sprintf("k%d", i)
			p := fmt.Sprintf("r%d-%s", round, k)
			batches[round] = append(batches[round], msg(p, "k", k))
			want[p] = xxhash.Checksum32([]byte(k)) % 3
		}
	}
	errs := make(chan error, len(batches))
	for _, b := range batches {
		go func() { errs <- out.WriteBatch(ctxT(t, 10*time.Second), b) }()
	}
	for range batches {
		if err := <-errs; err != nil {
			t.Fatalf("WriteBatch: %v", err)
		}
	}
	got := partitionOf(e.pollAll(stream, "t"))
	if len(got) != len(want) {
		t.Fatalf("stored %d messages, want %d", len(got), len(want))
	}
	for p, part := range want {
		if got[p] != part {
			t.Errorf("%s in partition %d, want %d", p, got[p], part)
		}
	}
	if e.srv != nil {
		if n := e.srv.KeyedSendCount(); n != 0 {
			t.Errorf("%d sends left the partition to the server, want 0", n)
		}
		if n := e.srv.RequestCount(iggytest.CmdCreateTopic); n != 1 {
			t.Errorf("%d CreateTopic requests, want 1", n)
		}
	}
}

// TestMessagesKeyNoPartitions: a topic without partitions cannot take keyed
// messages; each is nacked with the reason and nothing is sent (Iggy 0.8.0
// itself fails on such a send).
func TestMessagesKeyNoPartitions(t *testing.T) {
	e, _, out := keyedTopic(t, 0)
	sendsBefore := 0
	if e.srv != nil {
		sendsBefore = e.srv.RequestCount(iggytest.CmdSendMessages)
	}
	batch := service.MessageBatch{msg("a", "k", "x"), msg("b", "k", "y")}
	errs := batchErrors(t, out.WriteBatch(ctxT(t, 10*time.Second), batch))
	for i := range batch {
		if err := errs[i]; err == nil || !strings.Contains(err.Error(), "has no partitions") {
			t.Errorf("message %d: want a no-partitions error, got %v", i, err)
		}
	}
	if e.srv != nil {
		if n := e.srv.RequestCount(iggytest.CmdSendMessages) - sendsBefore; n != 0 {
			t.Errorf("%d send requests reached the server", n)
		}
	}
}

// TestMessagesKeyPartitionsRemoved: when partitions are deleted after the
// output read the count, messages for a partition that is gone are nacked
// with the reason, the count is read again, and the next attempt puts them
// where Iggy's rule says for the new count.
func TestMessagesKeyPartitionsRemoved(t *testing.T) {
	e, stream, out := keyedTopic(t, 4)
	// Keys for each partition of 4.
	byPart := map[uint32]string{}
	for i := 0; len(byPart) < 4; i++ {
		k := fmt.Sprintf("k%d", i)
		if _, ok := byPart[xxhash.Checksum32([]byte(k))%4]; !ok {
			byPart[xxhash.Checksum32([]byte(k))%4] = k
		}
	}
	if err := out.WriteBatch(ctxT(t, 10*time.Second), service.MessageBatch{msg("first", "k", byPart[0])}); err != nil {
		t.Fatalf("first WriteBatch: %v", err)
	}
	if err := e.needFaults().DeletePartitions(stream, "t", 2); err != nil {
		t.Fatalf("deleting 2 partitions: %v", err)
	}
	batch := service.MessageBatch{msg("p3", "k", byPart[3]), msg("p0", "k", byPart[0])}
	errs := batchErrors(t, out.WriteBatch(ctxT(t, 10*time.Second), batch))
	if err := errs[0]; err == nil || !strings.Contains(err.Error(), "fewer partitions") {
		t.Errorf("message for deleted partition 3: want a fewer-partitions error, got %v", err)
	}
	if errs[1] != nil {
		t.Errorf("message for partition 0 nacked: %v", errs[1])
	}
	if err := out.WriteBatch(ctxT(t, 10*time.Second), service.MessageBatch{msg("p3", "k", byPart[3])}); err != nil {
		t.Fatalf("WriteBatch after the count changed: %v", err)
	}
	got := partitionOf(e.pollAll(stream, "t"))
	if want := xxhash.Checksum32([]byte(byPart[3])) % 2; got["p3"] != want {
		t.Errorf("p3 in partition %d, want %d of 2", got["p3"], want)
	}
	if _, ok := got["first"]; !ok || got["p0"] != 0 {
		t.Errorf("stored %v", got)
	}
}
