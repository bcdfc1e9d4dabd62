package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/internal/e2e"
)

// The changes of the ordering test: orderRounds upserts of each of
// orderKeys keys, round by round (50,000 changes; the changelog has an +I
// per key and a -U/+U pair per later upsert), in a table of orderBuckets
// buckets. A key changes every ~50 offsets of its bucket, so every batch of
// a bucket holds changes of the keys of the batch before it: two batches of
// a bucket in flight at once can reorder a key. (With 1,000 keys, a change
// every ~250 offsets, a reorder needed a batch and the third after it in
// flight together; the input hands out the buckets' batches in turn, and
// one CI run with ordering: none saw none.)
const (
	orderBuckets = 4
	orderKeys    = 100
	orderRounds  = 500
)

// orderingConfig is a changelog pipeline built to reorder: four processing
// threads, a random pause of 0-2 ms per batch, eight batches in flight in
// the output, small batches, every change kept in one topic keyed by id.
const orderingConfig = `input:
  fluss:
    bootstrap_servers: [ "${FLUSS_BOOTSTRAP}" ]
    database: ${FLUSS_DATABASE}
    table: ${FLUSS_TABLE}
    start_offset: earliest
    end_at: latest
    max_batch_rows: 100
    ordering: %s
    checkpoint_cache: checkpoints
pipeline:
  threads: 4
  processors:
    - sleep:
        duration: '${! if batch_index() == 0 { "%%dus".format(random_int(seed: timestamp_unix_nano(), max: 2000)) } else { "0s" } }'
output:
  iggy:
    address: ${IGGY_TCP_ADDRESS}
    username: ${IGGY_USERNAME}
    password: ${IGGY_PASSWORD}
    stream: ${IGGY_STREAM}
    topic: changes
    create_stream: true
    create_topic: true
    partitions: 4
    partitioning: messages_key
    key: ${! json("id") }
    message_id: '${! @fluss_message_id }'
    headers:
      include_patterns: [ "^fluss_(bucket|offset)$" ]
    max_in_flight: 8
`

// testOrdering: with ordering: bucket, a parallel pipeline delivers every
// change of a primary-key table, and the changes of each key reach Iggy in
// changelog order; with ordering: none the same pipeline reorders them
// (so the check can fail).
func (f *fixture) testOrdering(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	tb := &table{name: "ordered"}
	rows := filepath.Join(t.TempDir(), "upserts.jsonl")
	if err := writeUpserts(rows); err != nil {
		t.Fatal(err)
	}
	if err := f.writeTable(ctx, tb, []string{"--columns", "id INT NOT NULL, round INT", "--primary-key", "id", "--buckets", strconv.Itoa(orderBuckets)},
		[][]string{{"upsert", "--file", rows}}, nil); err != nil {
		t.Fatal(err)
	}
	want := orderKeys + 2*orderKeys*(orderRounds-1)
	if len(tb.scan) != want {
		t.Fatalf("the Java scan has %d changelog rows, want %d", len(tb.scan), want)
	}
	for _, mode := range []string{"bucket", "none"} {
		inversions := f.runOrdering(t, tb, mode, want)
		switch {
		case mode == "bucket" && inversions > 0:
			t.Errorf("ordering: bucket: %d changes reached Iggy before an earlier change of their key", inversions)
		case mode == "none" && inversions == 0:
			t.Errorf("ordering: none kept every key in order: the test pipeline does not reorder, so it proves nothing")
		}
		t.Logf("ordering: %s: %d changes before an earlier change of their key", mode, inversions)
	}
}

// writeUpserts writes the upserts of the ordering test as JSON lines.
func writeUpserts(path string) error {
	var b []byte
	for round := range orderRounds {
		for id := range orderKeys {
			b = fmt.Appendf(b, "{\"id\":%d,\"round\":%d}\n", id, round)
		}
	}
	return os.WriteFile(path, b, 0o644)
}

// runOrdering runs the ordering pipeline over tb to its end and returns how
// many changes arrived after a later change of the same key.
func (f *fixture) runOrdering(t *testing.T, tb *table, mode string, want int) int {
	cfg := filepath.Join(t.TempDir(), "ordering.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(orderingConfig, mode)), 0o644); err != nil {
		t.Fatal(err)
	}
	stream := f.newStream(t, "e2e_order_"+mode)
	start := time.Now()
	p := f.startPipeline(t, cfg, tb.name, stream, t.TempDir())
	if err := p.Wait(5 * time.Minute); err != nil {
		t.Fatalf("ordering: %s: the pipeline did not end cleanly: %v\n%s", mode, err, p.Tail(30))
	}
	msgs, err := f.iggy.reader.Messages(stream, "changes")
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != want {
		t.Fatalf("ordering: %s: %d messages in Iggy, want %d", mode, len(msgs), want)
	}
	t.Logf("ordering: %s: %d changes in %s", mode, len(msgs), time.Since(start).Round(time.Millisecond))
	return keyInversions(t, tb, msgs)
}

// keyInversions checks that every message is a change of the table, once,
// and counts the messages whose offset is below the last one seen for
// their key in the same Iggy partition (a key's changes share a bucket, so
// their offsets give the changelog order).
func keyInversions(t *testing.T, tb *table, msgs []e2e.Message) int {
	pr := newProblems()
	seen := map[bkey]bool{}
	last := map[string]int64{}
	inversions := 0
	for _, m := range msgs {
		bucket, _ := headerInt(m.Headers, "fluss_bucket")
		offset, _ := headerInt(m.Headers, "fluss_offset")
		k := bkey{int32(bucket), offset}
		r, ok := tb.scan[k]
		if !ok || seen[k] {
			pr.add("unknown or repeated", "partition %d offset %d: bucket %d offset %d", m.Partition, m.Offset, bucket, offset)
			continue
		}
		seen[k] = true
		var row struct {
			ID json.Number `json:"id"`
		}
		if err := json.Unmarshal(m.Payload, &row); err != nil || row.ID.String() != fmt.Sprint(r.row["id"]) {
			pr.add("payload", "bucket %d offset %d: %.200s, want id %v", bucket, offset, m.Payload, r.row["id"])
			continue
		}
		key := fmt.Sprintf("%d/%s", m.Partition, row.ID)
		if prev, ok := last[key]; ok && offset < prev {
			inversions++
		}
		last[key] = max(last[key], offset)
	}
	pr.report(t, "ordering")
	return inversions
}
