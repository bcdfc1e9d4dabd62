package flussinput

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

// TestIntegrationSnapshotAfterLogExpired: once the changelog below a KV
// snapshot has expired (table.log.ttl), start_offset: earliest can no longer
// rebuild the table's contents, and start_offset: snapshot still does.
func TestIntegrationSnapshotAfterLogExpired(t *testing.T) {
	cl := flusstest.StartCluster(t, flusstest.Options{Conf: map[string]string{
		"log.segment.file-size":             "1kb",
		"remote.log.task-interval-duration": "1s",
		"kv.snapshot.interval":              "2s",
	}})
	db := flusstest.UniqueName("ttl")
	table := db + ".kv"
	cl.RunJava(t, "create-database", db)
	cl.RunJava(t, "create-table", table, "--columns", "id BIGINT, name STRING, amount DOUBLE", "--primary-key", "id",
		"--buckets", "2", "--property", "table.log.ttl=30s", "--property", "table.log.tiered.local-segments=1")
	cl.RunJava(t, "upsert", table, "--rows", "400", "--seed", "1", "--flush-every", "10")
	// Updates of the last keys only: the first keys live in the oldest segments alone.
	cl.RunJava(t, "upsert", table, "--rows", "100", "--start", "300", "--seed", "2", "--flush-every", "10")
	// The whole changelog, read before any of it expires.
	want := replayJava(t, scanRows(t, cl.RunJava(t, "scan", table)))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := fluss.NewClient(ctx, fluss.Bootstrap(cl.Bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	info, err := c.Table(ctx, fluss.NewTablePath(db, "kv"))
	if err != nil {
		t.Fatal(err)
	}
	waitExpired(ctx, t, c, info)

	// The log keeps expiring while it is read: a position that falls out
	// of it moves on to the earliest offset instead of stopping the read.
	read := func(start string) state {
		var got []*service.Message
		runStream(t, streamRun{input: fmt.Sprintf(`fluss:
  bootstrap_servers: [ %q ]
  database: %s
  table: kv
  checkpoint_cache: offs
  start_offset: %s
  end_at: latest
  on_unresumable_offset: earliest
`, cl.Bootstrap, db, start), consume: func(_ context.Context, b service.MessageBatch) error {
			got = append(got, b...)
			return nil
		}})
		s := state{}
		for _, m := range got {
			s.apply(t, rowOf(t, m))
		}
		return s
	}
	if fromLog := read("earliest"); fromLog.equal(want) {
		t.Fatalf("start_offset: earliest still rebuilds the %d keys: the log did not expire", len(want))
	} else {
		t.Logf("start_offset: earliest gives %d keys of %d", len(fromLog), len(want))
	}
	read("snapshot").diff(t, want)
}

// waitExpired waits until every bucket's earliest offset is above 0 (its
// oldest changes expired) and a KV snapshot covers its changelog.
func waitExpired(ctx context.Context, t *testing.T, c *fluss.Client, info *fluss.TableInfo) {
	t.Helper()
	for {
		earliest, err := c.ListOffsets(ctx, info, fluss.NoPartition, nil, fluss.EarliestOffset())
		if err != nil {
			t.Fatal(err)
		}
		latest, err := c.ListOffsets(ctx, info, fluss.NoPartition, nil, fluss.LatestOffset())
		if err != nil {
			t.Fatal(err)
		}
		snaps, err := c.LatestKVSnapshots(ctx, info, fluss.PartitionInfo{ID: fluss.NoPartition})
		if err != nil {
			t.Fatal(err)
		}
		done := len(snaps) == int(info.NumBuckets)
		for _, s := range snaps {
			b := s.Bucket.Bucket
			done = done && earliest[b] > 0 && s.SnapshotID != fluss.NoSnapshot && s.LogOffset == latest[b]
		}
		if done {
			t.Logf("expired: earliest offsets %v, latest %v", earliest, latest)
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the log never expired: earliest offsets %v, latest %v, snapshots %v", earliest, latest, snaps)
		case <-time.After(time.Second):
		}
	}
}
