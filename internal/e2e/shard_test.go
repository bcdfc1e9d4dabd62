package e2e_test

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/internal/cachetest"
	"github.com/fluss-iggy/fluss-iggy/internal/e2e"
)

// testShardRescale reads the log table with Redis checkpoints as
// Kubernetes runs it (deploy/kubernetes), changing the layout on the way:
// one unsharded process (config/fluss_to_iggy.yaml), then three processes
// of config/sharded.yaml whose shard index comes from a StatefulSet pod name
// (fluss-iggy-0..2), then two (the StatefulSet scaled to 2), then one
// unsharded process again, each layout stopped (gracefully) when a further
// share of the rows arrived. Every bucket must resume where the previous
// layout left it: every row arrives, none twice.
func (f *fixture) testShardRescale(t *testing.T) {
	redis := cachetest.StartRedis(t, cachetest.RedisOptions{})
	stream := f.newStream(t, "e2e_shards")
	topic := f.log.name
	rows := uint64(len(f.log.scan))
	// Slow enough that no layout reads everything before it is stopped.
	slow := fmt.Sprintf(`pipeline.processors.-.sleep.duration='${! if batch_index() == 0 { "%s" } else { "0s" } }'`, "30ms")
	for i, step := range []struct {
		shards int // 0: no shard
		until  uint64
	}{{0, rows / 5}, {3, rows * 2 / 5}, {2, rows * 3 / 5}, {0, rows}} {
		ps := make([]*e2e.Proc, max(step.shards, 1))
		for j := range ps {
			ps[j] = f.startSharded(t, topic, stream, redis.URL(), fmt.Sprintf("fluss-iggy-%d", j), step.shards, slow)
		}
		f.waitRowsOf(t, ps, stream, topic, step.until)
		for j, p := range ps {
			if err := p.Stop(30 * time.Second); err != nil {
				t.Fatalf("stopping shard %d of %d: %v\n%s", j, step.shards, err, p.Tail(30))
			}
		}
		n, err := f.iggy.total(stream, topic)
		if err != nil {
			t.Fatal(err)
		}
		if n >= rows && step.until < rows {
			t.Fatalf("step %d (%d shards) delivered all %d rows before it was stopped: nothing left to resume", i+1, step.shards, rows)
		}
		t.Logf("step %d: %d shard(s) stopped with %d of %d rows in Iggy", i+1, step.shards, n, rows)
	}
	f.checkOnce(t, stream, topic)
}

// startSharded runs config/sharded.yaml with Redis checkpoints as shard
// pod of count, or config/fluss_to_iggy.yaml (count 0).
func (f *fixture) startSharded(t *testing.T, table, stream, redisURL, pod string, count int, set ...string) *e2e.Proc {
	env := []string{
		"FLUSS_BOOTSTRAP=" + f.bootstrap, "FLUSS_DATABASE=" + f.db, "FLUSS_TABLE=" + table,
		"IGGY_TCP_ADDRESS=" + f.iggy.addr, "IGGY_USERNAME=" + f.iggy.user, "IGGY_PASSWORD=" + f.iggy.pass,
		"IGGY_STREAM=" + stream, "FLUSS_IGGY_HTTP_ADDRESS=127.0.0.1:0", "REDIS_URL=" + redisURL,
		"SHARD_INDEX=" + pod, "SHARD_COUNT=" + strconv.Itoa(count),
	}
	args := []string{"run"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	config := "sharded.yaml"
	if count == 0 {
		config = "fluss_to_iggy.yaml"
	}
	args = append(args, "-r", filepath.Join(f.root, "config", "resources", "redis.yaml"), filepath.Join(f.root, "config", config))
	return f.startProcess(t, fmt.Sprintf("%s (%d shards)", pod, count), env, args)
}

// waitRowsOf waits until the topic holds want messages while every process
// of ps runs.
func (f *fixture) waitRowsOf(t *testing.T, ps []*e2e.Proc, stream, topic string, want uint64) {
	t.Helper()
	var n uint64
	err := waitProgress(20*time.Millisecond, func() (uint64, bool, error) {
		var err error
		if n, err = f.iggy.total(stream, topic); err != nil || n >= want {
			return n, err == nil, err
		}
		for i, p := range ps {
			if p.Exited() {
				return n, false, fmt.Errorf("shard %d exited (%v):\n%s", i, p.Err(), p.Tail(30))
			}
		}
		return n, false, nil
	})
	if err != nil {
		t.Fatalf("waiting for %d messages in stream %q topic %q: %v (have %d)", want, stream, topic, err, n)
	}
}

// checkOnce reads the topic back: every row of the log table's scan, each
// exactly once.
func (f *fixture) checkOnce(t *testing.T, stream, topic string) {
	t.Helper()
	msgs, err := f.iggy.reader.Messages(stream, topic)
	if err != nil {
		t.Fatal(err)
	}
	pr := newProblems()
	seen := make(map[[16]byte]bool, len(msgs))
	dups := 0
	for _, m := range msgs {
		if seen[m.ID] {
			dups++
			continue
		}
		seen[m.ID] = true
		checkID(pr, m, &f.log)
	}
	pr.report(t, "sharded run")
	if missing := len(f.log.scan) - len(seen); missing != 0 || dups != 0 {
		t.Fatalf("%d messages for %d rows: %d rows missing, %d delivered twice", len(msgs), len(f.log.scan), missing, dups)
	}
	t.Logf("%d rows, each delivered once across the layouts", len(seen))
}
