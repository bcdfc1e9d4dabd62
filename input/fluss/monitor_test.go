package flussinput

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/fluss"
)

// A streaming run logs where each bucket starts and why, a progress line
// while rows move (none once idle at lag 0), and one line when it caught
// up; a second run resumes each bucket from the checkpoint.
func TestIntegrationStartProgressAndCaughtUpLines(t *testing.T) {
	boot, c := cluster(t)
	table := createTable(t, c, "lines", tableSpec{columns: "id BIGINT, name STRING", buckets: 2})
	java(t, "append", table, "--rows", "200")
	first := latestOffsets(t, c, table, fluss.NoPartition)
	defer func(d time.Duration) { streamProgressInterval = d }(streamProgressInterval)
	streamProgressInterval = 50 * time.Millisecond
	cache, _ := fileCache(t)
	path := regexp.QuoteMeta(testDB.name + "." + table)
	progress := regexp.MustCompile(`^Table ` + path + `: ([0-9,]+) rows delivered in the last [0-9.]+m?s \([0-9,]+ rows/s\), lag ([0-9,]+) rows$`)
	caught := regexp.MustCompile(`^Caught up with table ` + path + `: every bucket's committed offset reached its high watermark \(2 bucket\(s\), ([0-9,]+) rows delivered in [0-9.]+m?s\)$`)

	run := func(want int64) *logCapture {
		logs := newLogCapture()
		var n atomic.Int64
		var idleSince time.Time
		runStream(t, streamRun{
			input: inputYAML(boot, table, "max_batch_rows: 20\n"), cache: cache, logs: logs,
			consume: func(_ context.Context, b service.MessageBatch) error {
				time.Sleep(20 * time.Millisecond) // several progress lines
				n.Add(int64(len(b)))
				return nil
			},
			until: func() bool {
				if n.Load() < want || len(logs.matching(caught.MatchString)) == 0 {
					return false
				}
				if idleSince.IsZero() {
					idleSince = time.Now()
				}
				return time.Since(idleSince) > 10*streamProgressInterval
			},
		})
		if n.Load() != want {
			t.Errorf("%d rows delivered, want %d", n.Load(), want)
		}
		return logs
	}

	logs := run(200)
	for b := range int32(2) {
		want := fmt.Sprintf("Starting table %s.%s bucket %d at offset 0 (start_offset: earliest)", testDB.name, table, b)
		if len(logs.matching(func(l string) bool { return l == want })) != 1 {
			t.Errorf("no line %q", want)
		}
	}
	lines := logs.matching(progress.MatchString)
	var moved int64
	for _, l := range lines {
		m := progress.FindStringSubmatch(l)
		moved += parseThousands(t, m[1])
		if m[1] == "0" && m[2] == "0" {
			t.Errorf("a progress line with nothing to say: %q", l)
		}
	}
	if len(lines) < 2 || moved == 0 || moved > 200 {
		t.Errorf("progress lines: %q", lines)
	}
	got := logs.matching(caught.MatchString)
	if len(got) != 1 || caught.FindStringSubmatch(got[0])[1] != "200" {
		t.Errorf("caught-up lines: %q", got)
	}
	// Idle at lag 0 after catching up: no more progress lines.
	all := logs.matching(func(string) bool { return true })
	for i, l := range all {
		if caught.MatchString(l) {
			for _, later := range all[i+1:] {
				if m := progress.FindStringSubmatch(later); m != nil && m[1] == "0" {
					t.Errorf("progress line while idle: %q", later)
				}
			}
		}
	}

	java(t, "append", table, "--rows", "30")
	logs = run(30)
	for b, off := range first {
		want := fmt.Sprintf("Resuming table %s.%s bucket %d at offset %s (checkpoint)", testDB.name, table, b, thousands(off))
		if len(logs.matching(func(l string) bool { return l == want })) != 1 {
			t.Errorf("no line %q in %q", want, logs.matching(func(l string) bool { return strings.Contains(l, "table") }))
		}
	}
	if got := logs.matching(caught.MatchString); len(got) != 1 || caught.FindStringSubmatch(got[0])[1] != "30" {
		t.Errorf("caught-up lines of the second run: %q", got)
	}
}

func parseThousands(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(strings.ReplaceAll(s, ",", ""), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// readyStatus is Benthos's /ready answer.
type readyStatus struct {
	code  int
	input string // the input's connection error
}

func getReady(t *testing.T, mux *http.ServeMux) readyStatus {
	t.Helper()
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ready", nil))
	if rec.Code == http.StatusNotFound {
		return readyStatus{code: rec.Code} // the stream is not built yet
	}
	var body struct {
		Statuses []struct {
			Path  string `json:"path"`
			Error string `json:"error"`
		} `json:"statuses"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("/ready answered %d %q: %v", rec.Code, rec.Body.String(), err)
	}
	r := readyStatus{code: rec.Code}
	for _, s := range body.Statuses {
		if strings.Contains(s.Path, "input") {
			r.input = s.Error
		}
	}
	return r
}

// An output that stops acknowledging stalls the input once stall_timeout
// passes with lag: /ready answers 503 naming the stall, the gauge is 1 and
// a warning says so; when the output acknowledges again /ready answers 200,
// the gauge is 0 and every row arrives once. At lag 0 nothing stalls.
func TestIntegrationStallReadiness(t *testing.T) {
	boot, c := cluster(t)
	table := createTable(t, c, "stall", tableSpec{columns: "id BIGINT, name STRING", buckets: 1})
	java(t, "append", table, "--rows", "100")
	path := testDB.name + "." + table

	// checkpoint_limit 1: the second read waits for the first batch's ack
	// inside ReadBatch (see stallWatch).
	extra := "checkpoint_limit: 1\nmax_batch_rows: 10\nstall_timeout: 1s\nshard: { index: 0, count: 1 }\n"
	b, m := metricsStream(t, inputYAML(boot, table, extra))
	logs := newLogCapture()
	b.SetLogger(slog.New(logs))
	mux := http.NewServeMux()
	b.SetHTTPMux(mux)
	release := make(chan struct{})
	var n, calls atomic.Int64
	_ = b.AddBatchConsumerFunc(func(ctx context.Context, mb service.MessageBatch) error {
		if calls.Add(1) == 1 {
			select {
			case <-release:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		n.Add(int64(len(mb)))
		return nil
	})
	s, errc, cancel := startStream(t, b)
	defer cancel()
	defer func() {
		close(release)
		if err := s.StopWithin(30 * time.Second); err != nil {
			cancel()
		}
		<-errc
	}()
	stalled := func() int64 { v, _ := m.get(metricStalled, "root.input"); return v }
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; logs:\n%s", what, strings.Join(logs.matching(func(string) bool { return true }), "\n"))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	waitUntil("/ready 200 before the stall", func() bool { return getReady(t, mux).code == http.StatusOK })
	if v, _ := m.get(metricShardCount, "root.input"); v != 1 {
		t.Errorf("%s = %d, want 1", metricShardCount, v)
	}
	warning := regexp.MustCompile(`^Table ` + regexp.QuoteMeta(path) + ` is stalled: no rows acknowledged for [0-9.]+m?s \(since [0-9TZ:-]+\) with 100 rows of lag; /ready answers 503 until rows move again \(stall_timeout: 1s\)$`)
	logs.waitFor(t, 30*time.Second, "of the stall", warning.MatchString)
	var r readyStatus
	defer func() { t.Logf("last /ready: %d %q", r.code, r.input) }()
	waitUntil("/ready 503 with the reason", func() bool {
		r = getReady(t, mux)
		return r.code == http.StatusServiceUnavailable && strings.Contains(r.input, "table "+path+" is stalled")
	})
	t.Logf("/ready while stalled: %d %q", r.code, r.input)
	if v := stalled(); v != 1 {
		t.Errorf("%s = %d while stalled", metricStalled, v)
	}

	release <- struct{}{} // the output acknowledges again
	waitUntil("every row", func() bool { return n.Load() >= 100 })
	logs.waitFor(t, 30*time.Second, "of the recovery", func(l string) bool {
		return strings.HasPrefix(l, "Table "+path+" is moving again after ")
	})
	waitUntil("/ready 200 and the gauge 0", func() bool { return getReady(t, mux).code == http.StatusOK && stalled() == 0 })

	// Idle at lag 0 for three times stall_timeout: never stalled.
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if r := getReady(t, mux); r.code != http.StatusOK || stalled() != 0 {
			t.Fatalf("at lag 0: /ready %d %q, %s %d", r.code, r.input, metricStalled, stalled())
		}
	}
	if got := logs.matching(warning.MatchString); len(got) != 1 {
		t.Errorf("stall warnings: %q", got)
	}
	if n.Load() != 100 {
		t.Errorf("%d rows delivered, want 100", n.Load())
	}
}

// metricsStream returns a stream builder whose metrics go to the returned
// testMetrics, with a memory cache offs and the input input.
func metricsStream(t *testing.T, input string) (*service.StreamBuilder, *testMetrics) {
	t.Helper()
	m := &testMetrics{values: map[string]int64{}}
	env := service.NewEnvironment()
	if err := env.RegisterMetricsExporter("test_metrics", service.NewConfigSpec(), func(*service.ParsedConfig, *service.Logger) (service.MetricsExporter, error) {
		return m, nil
	}); err != nil {
		t.Fatal(err)
	}
	b := env.NewStreamBuilder()
	if err := b.SetMetricsYAML("test_metrics: {}"); err != nil {
		t.Fatal(err)
	}
	if err := b.AddCacheYAML("label: offs\nmemory: {}\n"); err != nil {
		t.Fatal(err)
	}
	if err := b.AddInputYAML(input); err != nil {
		t.Fatal(err)
	}
	return b, m
}

// startStream builds and runs a stream for at most two minutes: cancel
// ends it, errc receives what Run returned.
func startStream(t *testing.T, b *service.StreamBuilder) (*service.Stream, chan error, context.CancelFunc) {
	t.Helper()
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	errc := make(chan error, 1)
	go func() { errc <- s.Run(ctx) }()
	return s, errc, cancel
}
