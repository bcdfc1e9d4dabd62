package flussinput

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	_ "github.com/redpanda-data/benthos/v4/public/components/io"
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

// TestMain gives the integration tests a Fluss cluster (started on first
// use, or the one FLUSS_BOOTSTRAP names) and stops it afterwards. Started
// by cli() (lint_test.go), the test binary is the Benthos CLI instead.
func TestMain(m *testing.M) {
	runCLIIfAsked()
	flusstest.Main(m)
}

// Shared database of the package's integration tests.
var testDB struct {
	once sync.Once
	name string
	err  error
}

// cluster returns the bootstrap address and a client of the test cluster,
// and makes sure the package's database exists.
func cluster(t *testing.T) (string, *fluss.Client) {
	t.Helper()
	boot := flusstest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := fluss.NewClient(ctx, fluss.Bootstrap(boot))
	if err != nil {
		t.Fatalf("connecting to %s: %v", boot, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	testDB.once.Do(func() {
		testDB.name = flusstest.UniqueName("input")
		testDB.err = c.CreateDatabase(ctx, testDB.name, nil, true)
	})
	if testDB.err != nil {
		t.Fatalf("creating database: %v", testDB.err)
	}
	return boot, c
}

// tableSpec describes a table to create.
type tableSpec struct {
	columns    string // "id BIGINT, name STRING"
	primaryKey []string
	partition  []string
	buckets    int32
	bucketKeys []string // hash rows to buckets by these columns (none: the writer's sticky bucket)
	partitions []string // partition values to create (single partition key)
}

// createTable creates a table in the test database with the Go client and
// returns its name.
func createTable(t *testing.T, c *fluss.Client, prefix string, spec tableSpec) string {
	t.Helper()
	cols, err := types.ParseColumns(spec.columns)
	if err != nil {
		t.Fatal(err)
	}
	schema, err := types.NewSchema(cols, spec.primaryKey...)
	if err != nil {
		t.Fatal(err)
	}
	desc := &types.TableDescriptor{Schema: *schema, BucketCount: spec.buckets, BucketKeys: spec.bucketKeys, PartitionKeys: spec.partition, Properties: map[string]string{}}
	// Under load the coordinator has been seen to miss a table creation
	// (its buckets never get a leader); such a table is replaced.
	for attempt := 1; ; attempt++ {
		name := flusstest.UniqueName(prefix)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		path := fluss.NewTablePath(testDB.name, name)
		if err := c.CreateTable(ctx, path, desc, false); err != nil {
			cancel()
			t.Fatalf("creating table %s: %v", path, err)
		}
		for _, p := range spec.partitions {
			if err := c.CreatePartition(ctx, path, map[string]string{spec.partition[0]: p}, false); err != nil {
				cancel()
				t.Fatalf("creating partition %s of %s: %v", p, path, err)
			}
		}
		err := waitLeaders(ctx, c, path)
		cancel()
		if err == nil {
			return name
		}
		if attempt == 3 {
			t.Fatalf("table %s: buckets without leaders: %v", path, err)
		}
		t.Logf("table %s: buckets without leaders (%v); creating another one", path, err)
	}
}

// waitLeaders waits until every bucket of a table has a leader.
func waitLeaders(ctx context.Context, c *fluss.Client, path fluss.TablePath) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute) // a loaded 2-core machine can take this long
	defer cancel()
	for {
		info, err := c.RefreshTable(ctx, path)
		if err == nil {
			pids := []int64{fluss.NoPartition}
			if info.IsPartitioned() {
				pids = nil
				ps, perr := c.Partitions(ctx, info)
				err = perr
				for _, p := range ps {
					pids = append(pids, p.ID)
				}
			}
			for _, pid := range pids {
				if err == nil {
					_, err = c.ListOffsets(ctx, info, pid, nil, fluss.LatestOffset())
				}
			}
			if err == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// java runs the Java fixture tool on a table of the test database.
func java(t *testing.T, cmd, table string, args ...string) string {
	t.Helper()
	return flusstest.RunJava(t, append([]string{cmd, testDB.name + "." + table}, args...)...)
}

// row is one delivered row in the Java tool's scan format.
type row struct {
	Partition  *string         `json:"partition"`
	Bucket     int64           `json:"bucket"`
	Offset     int64           `json:"offset"`
	ChangeType string          `json:"change_type"`
	Row        json.RawMessage `json:"row"`
}

func (r row) key() string {
	p := "-"
	if r.Partition != nil {
		p = *r.Partition
	}
	return fmt.Sprintf("%s/%d/%d", p, r.Bucket, r.Offset)
}

func (r row) line() string {
	b, _ := json.Marshal(r)
	return string(b)
}

// javaScan returns the Java tool's scan of a table, by key.
func javaScan(t *testing.T, table string, args ...string) map[string]row {
	t.Helper()
	return scanRows(t, java(t, "scan", table, args...))
}

// scanRows parses the Java tool's scan output, by key.
func scanRows(t *testing.T, out string) map[string]row {
	t.Helper()
	rows := map[string]row{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var r row
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("java scan line %q: %v", sc.Text(), err)
		}
		r.Row = compact(t, r.Row)
		rows[r.key()] = r
	}
	return rows
}

func compact(t *testing.T, raw json.RawMessage) json.RawMessage {
	t.Helper()
	// The Java tool already prints canonical JSON without whitespace; keep
	// the bytes as they are so that the comparison is byte for byte.
	return json.RawMessage(strings.TrimSpace(string(raw)))
}

// rowOf converts a JSON message into the scan format.
func rowOf(t *testing.T, m *service.Message) row {
	t.Helper()
	var r row
	if p, ok := m.MetaGetMut(metaPartition); ok {
		s := p.(string)
		r.Partition = &s
	}
	r.Bucket = meta(t, m, metaBucket).(int64)
	r.Offset = meta(t, m, metaOffset).(int64)
	// A log table's rows carry no change type; the Java tool prints +A.
	r.ChangeType = fluss.AppendOnly.String()
	if ct, ok := m.MetaGetMut(metaChangeType); ok {
		r.ChangeType = ct.(string)
	}
	b, err := m.AsBytes()
	if err != nil {
		t.Fatal(err)
	}
	r.Row = json.RawMessage(slices.Clone(b))
	return r
}

// collector gathers delivered rows.
type collector struct {
	mu      sync.Mutex
	rows    []row
	batches []service.MessageBatch
	keep    bool // keep the batches (arrow tests)
}

func (c *collector) consume(t *testing.T) service.MessageBatchHandlerFunc {
	return func(_ context.Context, b service.MessageBatch) error {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.keep {
			c.batches = append(c.batches, b)
			return nil
		}
		for _, m := range b {
			c.rows = append(c.rows, rowOf(t, m))
		}
		return nil
	}
}

func (c *collector) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keep {
		n := 0
		for _, b := range c.batches {
			n += len(b)
		}
		return n
	}
	return len(c.rows)
}

func (c *collector) snapshot() []row {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.rows)
}

// inputYAML renders the input config for a table of the test database.
func inputYAML(boot, table, extra string) string {
	return fmt.Sprintf(`fluss:
  bootstrap_servers: [ %q ]
  database: %s
  table: %s
  checkpoint_cache: offs
  fetch_max_wait: 100ms
%s`, boot, testDB.name, table, indent(extra))
}

// streamRun runs a stream from inputYAML into consume. With until nil it
// waits for the input to end (end_at: latest); otherwise it stops the
// stream gracefully once until returns true.
type streamRun struct {
	input   string
	cache   string // cache resource YAML (label offs); default memory
	consume service.MessageBatchHandlerFunc
	until   func() bool
	timeout time.Duration
	logs    *logCapture // receives the stream's logs instead of stderr
}

func runStream(t *testing.T, r streamRun) {
	t.Helper()
	b := service.NewStreamBuilder()
	if err := b.SetLoggerYAML("level: " + logLevel()); err != nil {
		t.Fatal(err)
	}
	if r.logs != nil {
		b.SetLogger(slog.New(r.logs))
	}
	cache := r.cache
	if cache == "" {
		cache = "label: offs\nmemory: {}\n"
	}
	if err := b.AddCacheYAML(cache); err != nil {
		t.Fatal(err)
	}
	if err := b.AddInputYAML(r.input); err != nil {
		t.Fatal(err)
	}
	if err := b.AddBatchConsumerFunc(r.consume); err != nil {
		t.Fatal(err)
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	timeout := r.timeout
	if timeout == 0 {
		timeout = 3 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- s.Run(ctx) }()
	if r.until != nil {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
	wait:
		for !r.until() {
			select {
			case err := <-errc:
				t.Fatalf("stream ended early: %v", err)
			case <-ctx.Done():
				break wait
			case <-tick.C:
			}
		}
		if err := s.StopWithin(30 * time.Second); err != nil {
			t.Fatalf("stopping the stream: %v", err)
		}
	}
	if err := <-errc; err != nil && r.until == nil {
		t.Fatalf("stream: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("stream timed out after %s", timeout)
	}
}

func logLevel() string {
	if l := os.Getenv("FLUSS_INPUT_TEST_LOG"); l != "" {
		return l
	}
	return "warn"
}

// fileCache returns a file cache resource YAML in a fresh directory.
func fileCache(t *testing.T) (yaml, dir string) {
	dir = t.TempDir()
	return "label: offs\nfile:\n  directory: " + dir + "\n", dir
}

// readFileCheckpoint reads a checkpoint written by the file cache.
func readFileCheckpoint(t *testing.T, dir, key string) *checkpointValue {
	t.Helper()
	b, err := os.ReadFile(dir + "/" + key)
	if err != nil {
		t.Fatalf("reading checkpoint: %v", err)
	}
	v, err := parseCheckpoint(key, b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// compareRows checks got against the Java scan want, row for row.
func compareRows(t *testing.T, got []row, want map[string]row) {
	t.Helper()
	seen := map[string]int{}
	for _, r := range got {
		seen[r.key()]++
		w, ok := want[r.key()]
		if !ok {
			t.Errorf("unexpected row %s", r.line())
			continue
		}
		if r.line() != w.line() {
			t.Errorf("row %s differs:\n got  %s\n want %s", r.key(), r.line(), w.line())
		}
	}
	for k, n := range seen {
		if n > 1 {
			t.Errorf("row %s delivered %d times", k, n)
		}
	}
	var missing []string
	for k := range want {
		if seen[k] == 0 {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%d of %d rows missing, e.g. %v", len(missing), len(want), missing[:min(5, len(missing))])
	}
}

// idsOf returns the "id" values of rows.
func idsOf(t *testing.T, rows []row) []int64 {
	t.Helper()
	var ids []int64
	for _, r := range rows {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(r.Row, &m); err != nil {
			t.Fatal(err)
		}
		id, err := strconv.ParseInt(string(m["id"]), 10, 64)
		if err != nil {
			t.Fatalf("row %s: id: %v", r.Row, err)
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// offsets lists the earliest and latest offsets of a table's buckets.
func latestOffsets(t *testing.T, c *fluss.Client, table string, partitionID int64) map[int32]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	info, err := c.RefreshTable(ctx, fluss.NewTablePath(testDB.name, table))
	if err != nil {
		t.Fatal(err)
	}
	offs, err := c.ListOffsets(ctx, info, partitionID, nil, fluss.LatestOffset())
	if err != nil {
		t.Fatal(err)
	}
	return offs
}

// logCapture is a slog handler that keeps the messages of info level and
// above, and lets a test wait for one.
type logCapture struct {
	mu      sync.Mutex
	lines   []string
	changed chan struct{} // closed (and replaced) when a line arrives
}

func newLogCapture() *logCapture { return &logCapture{changed: make(chan struct{})} }

func (l *logCapture) Enabled(_ context.Context, lvl slog.Level) bool { return lvl >= slog.LevelInfo }

func (l *logCapture) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, r.Message)
	close(l.changed)
	l.changed = make(chan struct{})
	return nil
}

func (l *logCapture) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logCapture) WithGroup(string) slog.Handler      { return l }

// matching returns the lines match accepts.
func (l *logCapture) matching(match func(string) bool) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		if match(line) {
			out = append(out, line)
		}
	}
	return out
}

// waitFor blocks until a line match accepts has been logged and returns it;
// it fails the test after timeout.
func (l *logCapture) waitFor(t *testing.T, timeout time.Duration, what string, match func(string) bool) string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		l.mu.Lock()
		changed := l.changed
		for _, line := range l.lines {
			if match(line) {
				l.mu.Unlock()
				return line
			}
		}
		l.mu.Unlock()
		select {
		case <-changed:
		case <-deadline:
			t.Errorf("no log line %s within %v; logged:\n%s", what, timeout, strings.Join(l.matching(func(string) bool { return true }), "\n"))
			return ""
		}
	}
}
