package iggyoutput_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
)

// TestAckAfterSurvivesCrash: the test server keeps messages unsaved until
// 1,000 are waiting, as Iggy does with messages_required_to_save. After a
// crash, what ack_after: send acknowledged is lost, while flush and fsync
// acknowledged only what the server had saved, so all of it survives. With
// Iggy 0.9, which has no flush on request, flush and fsync are refused at
// connect.
func TestAckAfterSurvivesCrash(t *testing.T) {
	for _, mode := range []string{"send", "flush", "fsync"} {
		for name, part := range map[string]string{"balanced": "partitioning: balanced", "key": "partitioning: messages_key\nkey: '${! @k }'"} {
			t.Run(mode+"/"+name, func(t *testing.T) {
				e := newEnvOpts(t, iggytest.Options{MessagesRequiredToSave: 1000})
				srv := e.needFaults()
				e.createTopic("dur", "t", 3)
				out := e.output(fmt.Sprintf("stream: dur\ntopic: t\nack_after: %s\n%s", mode, part))
				if mode != "send" && testVersion == iggytest.Version09 {
					// Iggy 0.9 refuses FlushUnsavedBuffer: the setting
					// stops the pipeline at connect.
					err := out.Connect(ctxT(t, 10*time.Second))
					if err == nil || !strings.Contains(err.Error(), "Iggy 0.9 servers refuse") {
						t.Fatalf("ack_after: %s against Iggy 0.9: %v", mode, err)
					}
					return
				}
				mustConnect(t, out)
				for b := range 10 {
					var batch service.MessageBatch
					for i := range 10 {
						batch = append(batch, msg(fmt.Sprintf("%d-%d", b, i), "k", fmt.Sprint(i)))
					}
					if err := out.WriteBatch(ctxT(t, 10*time.Second), batch); err != nil {
						t.Fatalf("batch %d: %v", b, err)
					}
				}
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
