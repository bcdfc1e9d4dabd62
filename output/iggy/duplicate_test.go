package iggyoutput_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
)

// TestEverySendStored writes 20 batches one after another on one
// connection with each partitioning and finds every message stored once.
// A released Iggy 0.9.0 server deduplicates sends by request number and
// answers a send that repeats one with an empty body, storing nothing: a
// client that gave consecutive sends one number lost all but the first
// while reporting them delivered (the 0.9 dialect did so until every send
// took a number of its own).
func TestEverySendStored(t *testing.T) {
	for name, part := range map[string]string{
		"partition": "partitioning: partition_id\npartition: '1'",
		"balanced":  "partitioning: balanced",
		"key":       "partitioning: messages_key\nkey: '${! @k }'",
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			stream, topic := e.stream(), "t"
			e.createTopic(stream, topic, 3)
			out := e.output(fmt.Sprintf("stream: %s\ntopic: %s\nmax_in_flight: 1\n%s", stream, topic, part))
			mustConnect(t, out)
			var want []string
			for b := range 20 {
				var batch service.MessageBatch
				for i := range 5 {
					p := fmt.Sprintf("%d-%d", b, i)
					want = append(want, p)
					batch = append(batch, msg(p, "k", fmt.Sprint(b*5+i)))
				}
				if err := out.WriteBatch(ctxT(t, 10*time.Second), batch); err != nil {
					t.Fatalf("batch %d: %v", b, err)
				}
			}
			var got []string
			for _, ms := range e.pollAll(stream, topic) {
				for _, m := range ms {
					got = append(got, string(m.Payload))
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("stored %d messages, want the %d acknowledged ones once each", len(got), len(want))
			}
			if e.srv != nil && e.srv.DuplicateSendCount() != 0 {
				t.Fatalf("%d sends reused a request number", e.srv.DuplicateSendCount())
			}
		})
	}
}

// TestDuplicateAnswerNotDelivered: a 0.9 server that answers a send as a
// duplicate (status 0, empty body: nothing stored) never has the batch
// counted as delivered. The output reconnects and sends it again, and
// every message is stored once.
func TestDuplicateAnswerNotDelivered(t *testing.T) {
	if _, _, _, ok := realServer(); ok {
		t.Skip("injects a duplicate answer, which only the in-process test server can (IGGY_TCP_ADDRESS points at a real server)")
	}
	srv := startWithTopic(t, iggytest.Options{Version: iggytest.Version09})
	srv.AnswerSendsAsDuplicates(2, 1) // the third send
	out, err := newOutput(fmt.Sprintf("address: %s\nusername: iggy\npassword: iggy\nstream: s\ntopic: t\npartitioning: partition_id\npartition: '0'\ntimeout: 2s", srv.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close(ctxT(t, time.Second))
	mustConnect(t, out)
	for i := range 5 {
		batch := service.MessageBatch{msg(fmt.Sprint(i))}
		err := out.WriteBatch(ctxT(t, 10*time.Second), batch)
		if i != 2 {
			if err != nil {
				t.Fatalf("batch %d: %v", i, err)
			}
			continue
		}
		if !errors.Is(err, service.ErrNotConnected) {
			t.Fatalf("a send answered as a duplicate was acknowledged (%v)", err)
		}
		mustConnect(t, out)
		if err := out.WriteBatch(ctxT(t, 10*time.Second), batch); err != nil {
			t.Fatalf("batch %d again: %v", i, err)
		}
	}
	var got []string
	for _, m := range srv.Messages("s", "t") {
		got = append(got, string(m.Payload))
	}
	if !slices.Equal(got, []string{"0", "1", "3", "2", "4"}) && !slices.Equal(got, []string{"0", "1", "2", "3", "4"}) {
		t.Fatalf("stored %q", got)
	}
	if srv.DuplicateSendCount() != 0 {
		t.Fatalf("%d real duplicates", srv.DuplicateSendCount())
	}
}
