package iggyoutput_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	iggyoutput "github.com/fluss-iggy/fluss-iggy/output/iggy"

	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
)

// TestAckAfterSurvivesCrash: the test server keeps messages unsaved until
// 1,000 are waiting, as Iggy does with messages_required_to_save, and a
// crash (the model of a SIGKILL) loses them. The output creates the topic.
// What ack_after: send acknowledged is lost; what flush and fsync
// acknowledged survives: on Iggy 0.8 because the output flushed every
// partition the batch wrote to, on Iggy 0.9 because the output created the
// topic with durability persisted, so the server saved every message
// before answering its send.
func TestAckAfterSurvivesCrash(t *testing.T) {
	for _, mode := range []string{"send", "flush", "fsync"} {
		for name, part := range map[string]string{"balanced": "partitioning: balanced", "key": "partitioning: messages_key\nkey: '${! @k }'"} {
			t.Run(mode+"/"+name, func(t *testing.T) {
				e := newEnvOpts(t, iggytest.Options{MessagesRequiredToSave: 1000})
				srv := e.needFaults()
				out := e.output(fmt.Sprintf("stream: dur\ntopic: t\ncreate_stream: true\ncreate_topic: true\npartitions: 3\nack_after: %s\n%s", mode, part))
				mustConnect(t, out)
				writeBatches(t, out, 10, 10)
				if err := srv.Crash(); err != nil {
					t.Fatal(err)
				}
				if err := srv.Resume(); err != nil {
					t.Fatal(err)
				}
				n := len(srv.Messages("dur", "t"))
				switch {
				case mode == "send" && n == 100:
					t.Errorf("ack_after: send: all 100 acknowledged messages survived a crash with 1,000 required to save; the test cannot tell the modes apart")
				case mode != "send" && n != 100:
					t.Errorf("ack_after: %s: %d of 100 acknowledged messages survived the crash", mode, n)
				}
				t.Logf("ack_after: %s: %d of 100 acknowledged messages survived", mode, n)
			})
		}
	}
}

// TestAckAfterWarnsOnReplicatedTopic: on Iggy 0.9, an existing topic with
// the default durability (replicated) cannot give what ack_after: fsync
// asks; the output says so once (not once per batch), naming the topic,
// and delivers the batches. True to the warning, a crash loses messages.
func TestAckAfterWarnsOnReplicatedTopic(t *testing.T) {
	if _, _, _, ok := realServer(); ok {
		t.Skip("crashes an in-process Iggy 0.9 test server (IGGY_TCP_ADDRESS points at a real server)")
	}
	srv := startWithTopic(t, iggytest.Options{Version: iggytest.Version09, MessagesRequiredToSave: 1000})
	out, logs := newLoggedOutput(t, fmt.Sprintf("address: %s\nusername: iggy\npassword: iggy\nstream: s\ntopic: t\nack_after: fsync", srv.Addr()))
	mustConnect(t, out)
	writeBatches(t, out, 5, 10)
	if n := strings.Count(logs.String(), `ack_after: fsync cannot be honoured for topic \"t\" of stream \"s\": its durability is \"replicated\"`); n != 1 {
		t.Fatalf("%d warnings in:\n%s", n, logs)
	}
	if err := srv.Crash(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Messages("s", "t")); n == 50 {
		t.Fatal("all 50 messages survived: the warning's claim is not shown")
	}
}

// writeBatches writes n batches of size messages with keys 0..size-1.
func writeBatches(t *testing.T, out *iggyoutput.Output, n, size int) {
	t.Helper()
	for b := range n {
		var batch service.MessageBatch
		for i := range size {
			batch = append(batch, msg(fmt.Sprintf("%d-%d", b, i), "k", fmt.Sprint(i)))
		}
		if err := out.WriteBatch(ctxT(t, 10*time.Second), batch); err != nil {
			t.Fatalf("batch %d: %v", b, err)
		}
	}
}
