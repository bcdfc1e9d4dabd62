package flussinput

import (
	"context"
	"regexp"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

func TestProgressFormatting(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -4200: "-4,200"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
	if got := timeLeft(1000, 0); got != "time left unknown" {
		t.Errorf("timeLeft without a rate: %q", got)
	}
	if got := timeLeft(90_000, 1000); got != "about 1m30s left" {
		t.Errorf("timeLeft: %q", got)
	}
	p := &progress{start: map[bucketKey]int64{kb0: 10}, end: map[bucketKey]int64{kb0: 110}, total: 100}
	for pos, want := range map[int64]int64{5: 0, 10: 0, 60: 50, 110: 100, 500: 100} {
		if got := p.done(map[bucketKey][2]int64{kb0: {pos, pos}}); got != want {
			t.Errorf("done at %d: %d, want %d", pos, got, want)
		}
	}
}

// A bounded run logs its progress while it reads (rows done of rows to
// read, rate, time left) and the total at the end. The consumer holds the
// first batches until the lines it expects have been logged.
func TestIntegrationBoundedRunLogsProgress(t *testing.T) {
	boot, c := cluster(t)
	table := createTable(t, c, "progress", tableSpec{columns: "id BIGINT, name STRING", buckets: 1})
	java(t, "append", table, "--rows", "500")
	defer func(d time.Duration) { progressInterval = d }(progressInterval)
	progressInterval = 20 * time.Millisecond

	path := testDB.name + "." + table
	line := regexp.MustCompile(`^Read ([0-9,]+) of 500 rows of table ` + regexp.QuoteMeta(path) + ` \([0-9.]+%\), [0-9,]+ rows/s, (about [0-9hms.]+ left|time left unknown)$`)
	doneOf := func(l string) int64 {
		m := line.FindStringSubmatch(l)
		if m == nil {
			return -1
		}
		n, _ := strconv.ParseInt(regexp.MustCompile(`,`).ReplaceAllString(m[1], ""), 10, 64)
		return n
	}
	logs := newLogCapture()
	var col collector
	consume := col.consume(t)
	var calls atomic.Int32
	runStream(t, streamRun{
		input: inputYAML(boot, table, "end_at: latest\nmax_batch_rows: 100\n"), logs: logs,
		consume: func(ctx context.Context, b service.MessageBatch) error {
			switch calls.Add(1) {
			case 1: // nothing acknowledged yet
				logs.waitFor(t, time.Minute, "of progress before any ack", func(l string) bool { return doneOf(l) == 0 })
			case 2: // the first batch is acknowledged
				logs.waitFor(t, time.Minute, "of progress after the first ack", func(l string) bool { return doneOf(l) > 0 })
			}
			return consume(ctx, b)
		},
	})
	if n := col.count(); n != 500 {
		t.Fatalf("%d rows delivered", n)
	}
	start := regexp.MustCompile(`^Reading Fluss table ` + regexp.QuoteMeta(path) + ` \(id [0-9]+, log table\) from 1 bucket\(s\), 500 rows up to their end offsets \(end_at: latest\)$`)
	if len(logs.matching(start.MatchString)) != 1 {
		t.Errorf("no start line saying the rows to read")
	}
	end := regexp.MustCompile(`^Read all 500 rows of table ` + regexp.QuoteMeta(path) + ` in [0-9.]+m?s \([0-9,]+ rows/s\)$`)
	for _, l := range logs.matching(func(l string) bool { return doneOf(l) >= 0 || end.MatchString(l) || start.MatchString(l) }) {
		t.Log(l)
	}
	if len(logs.matching(end.MatchString)) != 1 {
		t.Errorf("no final line; progress lines: %q", logs.matching(func(l string) bool { return doneOf(l) >= 0 || end.MatchString(l) }))
	}
}
