package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/fluss/jsonrow"
	"github.com/fluss-iggy/fluss-iggy/internal/e2e"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
)

func TestMain(m *testing.M) {
	code := flusstest.Run(m)
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// built is the fluss-iggy binary every test of the package runs, built once.
var built struct {
	once      sync.Once
	dir, path string
	err       error
}

// sharedBinary returns $FLUSS_IGGY_BIN, or the binary built from the
// working tree on the first call (into a directory TestMain removes).
func sharedBinary(ctx context.Context, root string) (string, error) {
	built.once.Do(func() {
		if built.path = os.Getenv("FLUSS_IGGY_BIN"); built.path != "" {
			return
		}
		if built.dir, built.err = os.MkdirTemp("", "fluss-iggy-e2e-"); built.err == nil {
			built.path, built.err = e2e.BuildBinary(ctx, root, built.dir)
		}
	})
	return built.path, built.err
}

const (
	pkInserts  = 10_000 // keys 0..9,999
	pkUpdates  = 5_000  // keys 0..4,999 again, other values
	pkDeletes  = 5_000  // keys 5,000..9,999
	partitions = 4      // `partitions:` of the example configs
	// stallTimeout is how long the tests wait for the next message to
	// arrive in Iggy before they give up on a pipeline.
	stallTimeout = 3 * time.Minute
	// maxDupsPerKill bounds the rows one SIGKILL may deliver again: those
	// Iggy stored but whose position was not yet in the checkpoint file
	// (the output's batch in flight, and acknowledged batches waiting for
	// the next coalesced bbolt write). Measured on 2 cores: 0 to 2,048 per
	// kill against Iggy 0.9 (up to two input batches of 1,024), up to 6,267
	// against the in-process server; the bound leaves room for a slow
	// machine.
	maxDupsPerKill = 10_000
)

// Settings from the environment, read by readSettings (see doc.go).
var (
	// logRows is the size of the log table (FLUSS_E2E_LOG_ROWS).
	logRows = 100_000
	// kills is how many times testSigkill kills the pipeline
	// (FLUSS_E2E_KILLS).
	kills = 3
	// throttle is the pause testSigkill's pipelines make per batch
	// (FLUSS_E2E_THROTTLE, a duration; "" none).
	throttle string
)

func readSettings(t *testing.T) {
	atLeast := func(name string, min int, v *int) {
		s := os.Getenv(name)
		if s == "" {
			return
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < min {
			t.Fatalf("%s=%q: want a whole number of at least %d", name, s, min)
		}
		*v = n
	}
	atLeast("FLUSS_E2E_LOG_ROWS", 1000, &logRows)
	atLeast("FLUSS_E2E_KILLS", 0, &kills)
	if s := os.Getenv("FLUSS_E2E_THROTTLE"); s != "" {
		if d, err := time.ParseDuration(s); err != nil || d < 0 {
			t.Fatalf("FLUSS_E2E_THROTTLE=%q: want a duration such as 20ms", s)
		}
		throttle = s
	}
}

// throttleSet is the --set that makes a pipeline sleep for throttle once
// per batch (a sleep processor sleeps per message: the first of each
// batch sleeps, the others not at all); nil without a throttle.
func throttleSet() []string {
	if throttle == "" {
		return nil
	}
	return []string{fmt.Sprintf(`pipeline.processors.-.sleep.duration='${! if batch_index() == 0 { "%s" } else { "0s" } }'`, throttle)}
}

// The columns of the log table: every family of types, nested ones included.
const logColumns = "id BIGINT, name STRING, amount DECIMAL(10,2), big DECIMAL(38,6), ts TIMESTAMP(3), " +
	"ts_ltz TIMESTAMP_LTZ(6), d DOUBLE, f FLOAT, day DATE, t TIME, flag BOOLEAN, tiny TINYINT, " +
	"tags ARRAY<STRING>, attrs MAP<STRING, INT>, raw BYTES, pos ROW<x INT, y STRING>"

const pkColumns = "id INT NOT NULL, name STRING, balance DECIMAL(12,2), updated TIMESTAMP(3), scores ARRAY<INT>"

// scanRow is one line of the Java tool's scan.
type scanRow struct {
	Bucket     int32           `json:"bucket"`
	Offset     int64           `json:"offset"`
	ChangeType string          `json:"change_type"`
	Row        json.RawMessage `json:"row"`
	row        map[string]any  // Row decoded with json.Number
	// want is the payload the pipeline should deliver for this row, as
	// Benthos serialises it (keys sorted, compact, no HTML escaping), with
	// the mapping's additions except ingested_at. Comparing bytes is the
	// fast path; on a mismatch the payload is decoded and compared as JSON.
	want []byte
}

type bkey struct {
	bucket int32
	offset int64
}

// table is a Fluss table the Java tool wrote, with its scan.
type table struct {
	name string
	id   int64
	scan map[bkey]*scanRow
}

// fixture is what every subtest shares.
type fixture struct {
	root, bin, bootstrap string
	// javaEnv, when set, is the Java tool's environment for the tables
	// (instead of FLUSS_BOOTSTRAP=bootstrap).
	javaEnv []string
	db      string
	log, pk table
	iggy    *iggyTarget
	start   time.Time
}

// iggyTarget is the Iggy server the pipelines write to.
type iggyTarget struct {
	addr, user, pass string
	srv              *iggytest.Server // nil for a real server
	reader           e2e.Reader
	client           *e2e.ClientReader // nil for the test server
}

func (g *iggyTarget) total(stream, topic string) (uint64, error) {
	if g.srv != nil {
		return uint64(g.srv.MessageCount(stream, topic)), nil
	}
	c, err := g.reader.Counts(stream, topic)
	return e2e.TotalCount(c), err
}

func TestEndToEnd(t *testing.T) {
	readSettings(t)
	f := setup(t)
	t.Run("log_table", f.testLogTable)
	t.Run("pk_changelog", f.testPKChangelog)
	t.Run("log_table_sigkill", f.testSigkill)
	t.Run("pk_ordering", f.testOrdering)
	t.Run("shard_rescale", f.testShardRescale)
	t.Run("round_trip", f.testRoundTrip)
}

// runTool runs scripts/fluss-java.sh; unlike flusstest.RunJava it may run
// in a goroutine.
func runTool(ctx context.Context, root, bootstrap string, args ...string) (string, error) {
	return runToolEnv(ctx, root, []string{flusstest.EnvBootstrap + "=" + bootstrap}, args...)
}

// runToolEnv is runTool with the tool's extra environment entries (which
// name the cluster).
func runToolEnv(ctx context.Context, root string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(root, "scripts", "fluss-java.sh")}, args...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		tail := errb.String()
		if len(tail) > 4000 {
			tail = tail[len(tail)-4000:]
		}
		return "", fmt.Errorf("fluss-java.sh %s: %w\n%s", strings.Join(args, " "), err, tail)
	}
	return out.String(), nil
}

func setup(t *testing.T) *fixture {
	f := &fixture{start: time.Now()}
	f.bootstrap = flusstest.Require(t)
	root, err := flusstest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	f.root = root
	f.iggy = startIggy(t)
	// Ten minutes per 100,000 rows of the log table.
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(max(1, logRows/100_000))*10*time.Minute)
	defer cancel()

	f.db = flusstest.UniqueName("e2e")
	f.log.name = "orders"
	f.pk.name = "customers"
	if _, err := runTool(ctx, root, f.bootstrap, "create-database", f.db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = runTool(context.Background(), root, f.bootstrap, "drop-database", f.db, "--if-exists", "--cascade")
	})

	// The binary, the log table and the primary-key table in parallel.
	var wg sync.WaitGroup
	errs := make([]error, 3)
	took := make([]time.Duration, 3)
	wg.Add(3)
	go func() {
		defer wg.Done()
		start := time.Now()
		defer func() { took[0] = time.Since(start) }()
		f.bin, errs[0] = sharedBinary(ctx, root)
	}()
	go func() {
		defer wg.Done()
		start := time.Now()
		defer func() { took[1] = time.Since(start) }()
		errs[1] = f.writeTable(ctx, &f.log, []string{"--columns", logColumns, "--buckets", "4"},
			[][]string{{"append", "--rows", strconv.Itoa(logRows), "--seed", "7"}}, f.logExtra())
	}()
	go func() {
		defer wg.Done()
		start := time.Now()
		defer func() { took[2] = time.Since(start) }()
		errs[2] = f.writeTable(ctx, &f.pk, []string{"--columns", pkColumns, "--primary-key", "id", "--buckets", "3"},
			[][]string{
				{"upsert", "--rows", strconv.Itoa(pkInserts), "--seed", "1"},
				{"upsert", "--rows", strconv.Itoa(pkUpdates), "--seed", "2"},
				{"delete", "--rows", strconv.Itoa(pkDeletes), "--start", strconv.Itoa(pkInserts - pkDeletes)},
			}, nil)
	}()
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("setup: binary %s in %s; %s.%s (%d rows) written and scanned in %s; %s.%s (%d changes) in %s",
		f.bin, took[0].Round(time.Millisecond), f.db, f.log.name, len(f.log.scan), took[1].Round(time.Millisecond),
		f.db, f.pk.name, pkInserts+pkUpdates+pkDeletes, took[2].Round(time.Millisecond))
	if len(f.log.scan) != logRows {
		t.Fatalf("the Java scan of %s.%s has %d rows, want %d", f.db, f.log.name, len(f.log.scan), logRows)
	}
	wantPK := pkInserts + 2*pkUpdates + pkDeletes // +I, -U/+U pairs, -D
	if len(f.pk.scan) != wantPK {
		t.Fatalf("the Java scan of %s.%s has %d changelog rows, want %d", f.db, f.pk.name, len(f.pk.scan), wantPK)
	}
	return f
}

// tool runs the Java tool against the fixture's cluster.
func (f *fixture) tool(ctx context.Context, args ...string) (string, error) {
	if f.javaEnv != nil {
		return runToolEnv(ctx, f.root, f.javaEnv, args...)
	}
	return runTool(ctx, f.root, f.bootstrap, args...)
}

// writeTable creates a table, runs the write commands and scans it.
// extra is added to each row's expected payload (nil: nothing).
func (f *fixture) writeTable(ctx context.Context, tb *table, createArgs []string, writes [][]string, extra map[string]any) error {
	if err := f.createTable(ctx, tb, createArgs, writes); err != nil {
		return err
	}
	return f.scanTable(ctx, tb, extra)
}

// createTable creates a table and runs the write commands.
func (f *fixture) createTable(ctx context.Context, tb *table, createArgs []string, writes [][]string) error {
	path := f.db + "." + tb.name
	out, err := f.tool(ctx, append([]string{"create-table", path}, createArgs...)...)
	if err != nil {
		return err
	}
	var created struct {
		TableID *int64 `json:"table_id"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &created); err != nil || created.TableID == nil {
		return fmt.Errorf("create-table %s printed %q: %v", path, out, err)
	}
	tb.id = *created.TableID
	for _, w := range writes {
		if _, err := f.tool(ctx, append([]string{w[0], path}, w[1:]...)...); err != nil {
			return err
		}
	}
	return nil
}

// scanTable reads the table's rows with the Java tool into tb.scan.
// extra is added to each row's expected payload (nil: nothing).
func (f *fixture) scanTable(ctx context.Context, tb *table, extra map[string]any) error {
	path := f.db + "." + tb.name
	out, err := f.tool(ctx, "scan", path)
	if err != nil {
		return err
	}
	tb.scan = map[bkey]*scanRow{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		r := &scanRow{}
		if err := json.Unmarshal(sc.Bytes(), r); err != nil {
			return fmt.Errorf("scan of %s: line %q: %w", path, sc.Text(), err)
		}
		if r.row, err = decodeObject(r.Row); err != nil {
			return fmt.Errorf("scan of %s: row at bucket %d offset %d: %w", path, r.Bucket, r.Offset, err)
		}
		want := r.row
		if extra != nil {
			want = make(map[string]any, len(r.row)+len(extra))
			maps.Copy(want, r.row)
			maps.Copy(want, extra)
		}
		if r.want, err = compactJSON(want); err != nil {
			return fmt.Errorf("scan of %s: row at bucket %d offset %d: %w", path, r.Bucket, r.Offset, err)
		}
		tb.scan[bkey{r.Bucket, r.Offset}] = r
	}
	return sc.Err()
}

// compactJSON serialises v as the iggy output serialises a message a
// mapping produced: keys sorted, compact, strings in the canonical form of
// docs/json-mapping.md (jsonrow.AnyWriter; unlike encoding/json it escapes
// neither <>& nor U+2028/U+2029).
func compactJSON(v any) ([]byte, error) {
	var w jsonrow.AnyWriter
	return w.Append(nil, v)
}

// slowCompares counts payloads that differed from the expected bytes (and
// were compared as JSON values).
var slowCompares atomic.Int64

// samePayload reports whether a payload holds the expected row: the same
// bytes (fast path) or, failing that, the same JSON value.
func samePayload(payload []byte, r *scanRow, extra map[string]any) bool {
	if bytes.Equal(payload, r.want) {
		return true
	}
	slowCompares.Add(1)
	got, err := decodeObject(payload)
	if err != nil {
		return false
	}
	for k, v := range extra {
		if got[k] != v {
			return false
		}
		delete(got, k)
	}
	return reflect.DeepEqual(got, r.row)
}

// cutIngestedAt removes `,"ingested_at":"…"` from a payload serialised by
// Benthos and returns the rest and the value.
func cutIngestedAt(p []byte) ([]byte, string, bool) {
	const key = `,"ingested_at":"`
	i := bytes.Index(p, []byte(key))
	if i < 0 {
		return p, "", false
	}
	j := bytes.IndexByte(p[i+len(key):], '"')
	if j < 0 {
		return p, "", false
	}
	v := string(p[i+len(key) : i+len(key)+j])
	out := make([]byte, 0, len(p))
	out = append(out, p[:i]...)
	out = append(out, p[i+len(key)+j+1:]...)
	return out, v, true
}

func decodeObject(b []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// startIggy gives the tests the real server at IGGY_TCP_ADDRESS, or an
// in-process test server.
func startIggy(t *testing.T) *iggyTarget {
	if addr := os.Getenv("IGGY_TCP_ADDRESS"); addr != "" {
		g := &iggyTarget{addr: addr, user: envOr("IGGY_USERNAME", "iggy"), pass: envOr("IGGY_PASSWORD", "iggy")}
		r, err := e2e.NewClientReader(g.addr, g.user, g.pass)
		if err != nil {
			t.Fatalf("IGGY_TCP_ADDRESS=%s: %v", addr, err)
		}
		t.Cleanup(func() { _ = r.Close() })
		g.reader, g.client = r, r
		info := r.Info()
		server := info.Server
		if server == "" {
			server = "version not told"
		}
		t.Logf("Iggy: the real server at %s, Iggy %s (%s), read back with package iggy", addr, info.Version, server)
		return g
	}
	srv, err := iggytest.Start(iggytest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	t.Logf("Iggy: the in-process test server at %s", srv.Addr())
	return &iggyTarget{addr: srv.Addr(), user: iggytest.DefaultUsername, pass: iggytest.DefaultPassword,
		srv: srv, reader: e2e.ServerReader{Srv: srv}}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// newStream returns a fresh stream name, deleted at the end on a real server.
func (f *fixture) newStream(t *testing.T, prefix string) string {
	s := flusstest.UniqueName(prefix)
	if f.iggy.client != nil {
		t.Cleanup(func() {
			if err := f.iggy.client.DeleteStream(s); err != nil {
				t.Logf("deleting stream %q: %v", s, err)
			}
		})
	}
	return s
}

// startPipeline runs `fluss-iggy run -r config/resources/bbolt.yaml
// config/<config>` (or config, when it is an absolute path) with the environment pointing at the test cluster, the
// table, the Iggy target, the stream and the state directory.
func (f *fixture) startPipeline(t *testing.T, config, tableName, stream, stateDir string, set ...string) *e2e.Proc {
	env := []string{
		"FLUSS_BOOTSTRAP=" + f.bootstrap,
		"FLUSS_DATABASE=" + f.db,
		"FLUSS_TABLE=" + tableName,
		"IGGY_TCP_ADDRESS=" + f.iggy.addr,
		"IGGY_USERNAME=" + f.iggy.user,
		"IGGY_PASSWORD=" + f.iggy.pass,
		"IGGY_STREAM=" + stream,
		"FLUSS_IGGY_HTTP_ADDRESS=127.0.0.1:0",
		"FLUSS_IGGY_STATE_DIR=" + stateDir,
	}
	args := []string{"run"}
	if extra := os.Getenv("FLUSS_E2E_SET"); extra != "" {
		set = append(set, strings.Split(extra, ",")...)
	}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	if !filepath.IsAbs(config) {
		config = filepath.Join(f.root, "config", config)
	}
	args = append(args, "-r", filepath.Join(f.root, "config", "resources", "bbolt.yaml"), config)
	return f.startProcess(t, config, env, args)
}

// startProcess starts the binary with env and args; when the test ends it
// is killed if still running, and its last lines are logged if the test
// failed (what names it there).
func (f *fixture) startProcess(t *testing.T, what string, env, args []string) *e2e.Proc {
	p, err := e2e.Start(f.bin, env, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !p.Exited() {
			p.Kill()
		}
		if t.Failed() {
			t.Logf("output of %s (pid %d), last lines:\n%s", what, p.Pid(), p.Tail(30))
		}
	})
	return p
}

// waitRows waits until a topic holds at least want messages, failing the
// test (with the process output) when the process exits or no message
// arrives for stallTimeout.
func (f *fixture) waitRows(t *testing.T, p *e2e.Proc, stream, topic string, want uint64) {
	t.Helper()
	var n uint64
	err := waitProgress(20*time.Millisecond, func() (uint64, bool, error) {
		var err error
		if n, err = f.iggy.total(stream, topic); err != nil || n >= want {
			return n, err == nil, err
		}
		if p.Exited() {
			return n, false, fmt.Errorf("the pipeline exited (%v) with %d of %d messages in Iggy", p.Err(), n, want)
		}
		return n, false, nil
	})
	if err != nil {
		t.Fatalf("waiting for %d messages in stream %q topic %q: %v (have %d)\n%s", want, stream, topic, err, n, p.Tail(30))
	}
}

// waitProgress polls cond every interval until it returns true or an
// error, or until the count it returns has not grown for stallTimeout.
func waitProgress(interval time.Duration, cond func() (n uint64, done bool, err error)) error {
	var last uint64
	since := time.Now()
	return e2e.WaitFor(24*time.Hour, interval, func() (bool, error) {
		n, done, err := cond()
		if err != nil || done {
			return done, err
		}
		if n > last {
			last, since = n, time.Now()
		} else if time.Since(since) > stallTimeout {
			return false, fmt.Errorf("no new message in Iggy for %s (%d there)", stallTimeout, n)
		}
		return false, nil
	})
}

// problems collects check failures, keeping a few examples per kind.
type problems struct {
	count    map[string]int
	examples map[string][]string
}

func newProblems() *problems {
	return &problems{count: map[string]int{}, examples: map[string][]string{}}
}

func (p *problems) add(kind, format string, args ...any) {
	p.count[kind]++
	if len(p.examples[kind]) < 3 {
		p.examples[kind] = append(p.examples[kind], fmt.Sprintf(format, args...))
	}
}

func (p *problems) report(t *testing.T, what string) {
	t.Helper()
	if len(p.count) == 0 {
		return
	}
	kinds := make([]string, 0, len(p.count))
	for k := range p.count {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var b strings.Builder
	for _, k := range kinds {
		fmt.Fprintf(&b, "\n  %s: %d message(s), e.g.\n    %s", k, p.count[k], strings.Join(p.examples[k], "\n    "))
	}
	t.Errorf("%s:%s", what, b.String())
}

// decodeID splits a deterministic message id (little-endian u128 wire
// bytes) into table id, partition id + 1, bucket and offset.
// The first slot holds table id + 1, so that no record's id is 0.
func decodeID(id [16]byte) (tableID, part1 uint32, bucket uint16, offset uint64) {
	lo := binary.LittleEndian.Uint64(id[0:8])
	hi := binary.LittleEndian.Uint64(id[8:16])
	return uint32(hi>>32) - 1, uint32(hi), uint16(lo >> 48), lo & (1<<48 - 1)
}

func headerInt(h map[string]iggytest.HeaderField, k string) (int64, bool) {
	f, ok := h[k]
	if !ok || f.Kind != iggytest.HeaderInt64 || len(f.Value) != 8 {
		return 0, false
	}
	return int64(binary.LittleEndian.Uint64(f.Value)), true
}

func headerString(h map[string]iggytest.HeaderField, k string) (string, bool) {
	f, ok := h[k]
	if !ok || f.Kind != iggytest.HeaderString {
		return "", false
	}
	return string(f.Value), true
}

func headerKeys(h map[string]iggytest.HeaderField) string {
	ks := make([]string, 0, len(h))
	for k := range h {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}

// checkMessage checks what every pipeline's message shares: the id names a
// row of the table's scan, which it returns.
func checkID(pr *problems, m e2e.Message, tb *table) *scanRow {
	tid, part1, bucket, off := decodeID(m.ID)
	if int64(tid) != tb.id || part1 != 0 {
		pr.add("id names another table", "partition %d offset %d: id %s: table id %d partition+1 %d, want table %d",
			m.Partition, m.Offset, e2e.IDHex(m.ID), tid, part1, tb.id)
		return nil
	}
	r := tb.scan[bkey{int32(bucket), int64(off)}]
	if r == nil {
		pr.add("id names no row", "partition %d offset %d: id %s: no row at bucket %d offset %d",
			m.Partition, m.Offset, e2e.IDHex(m.ID), bucket, off)
	}
	return r
}

// checkFlussHeaders checks fluss_bucket, fluss_offset and fluss_timestamp.
func (f *fixture) checkFlussHeaders(pr *problems, m e2e.Message, r *scanRow) {
	if b, ok := headerInt(m.Headers, "fluss_bucket"); !ok || b != int64(r.Bucket) {
		pr.add("fluss_bucket header", "id %s: fluss_bucket %d (%v), want %d", e2e.IDHex(m.ID), b, ok, r.Bucket)
	}
	if o, ok := headerInt(m.Headers, "fluss_offset"); !ok || o != r.Offset {
		pr.add("fluss_offset header", "id %s: fluss_offset %d (%v), want %d", e2e.IDHex(m.ID), o, ok, r.Offset)
	}
	ts, ok := headerInt(m.Headers, "fluss_timestamp")
	if lo, hi := f.start.Add(-time.Minute).UnixMilli(), time.Now().Add(time.Minute).UnixMilli(); !ok || ts < lo || ts > hi {
		pr.add("fluss_timestamp header", "id %s: fluss_timestamp %d (%v), want a commit time during the test", e2e.IDHex(m.ID), ts, ok)
	}
}

// logResult is what checkLog found.
type logResult struct {
	distinct int
	// inversions counts rows that arrived after a later row of their
	// bucket in the same Iggy partition (and run).
	inversions int
	// dupsByRun counts the messages whose id arrived before, by the run
	// (0 = before the first kill, k = after the k-th restart) that sent
	// them again.
	dupsByRun []int
}

// checkLog checks the messages config/fluss_to_iggy.yaml delivered from the
// log table. cuts[k][p] is the message count of partition p when the k-th
// kill's process was gone (nil without kills).
func (f *fixture) checkLog(t *testing.T, msgs []e2e.Message, cuts []map[uint32]uint64) logResult {
	t.Helper()
	pr := newProblems()
	res := logResult{dupsByRun: make([]int, len(cuts)+1)}
	seen := make(map[[16]byte]bool, logRows)
	// A log table's rows carry no change type (they are all appends).
	wantHeaders := "fluss_bucket,fluss_database,fluss_message_id,fluss_offset,fluss_schema_id,fluss_table,fluss_table_id,fluss_timestamp"
	extra := f.logExtra()
	// Per Iggy partition and Fluss bucket, the offsets of one run arrive in order.
	type pb struct {
		part   uint32
		bucket int32
		run    int
	}
	last := map[pb]int64{}
	for _, m := range msgs {
		run := 0
		for _, c := range cuts {
			if m.Offset >= c[m.Partition] {
				run++
			}
		}
		if seen[m.ID] {
			res.dupsByRun[run]++
			continue
		}
		seen[m.ID] = true
		r := checkID(pr, m, &f.log)
		if r == nil {
			continue
		}
		// Every key of this table is one row, so order does not matter
		// here; count inversions for the log.
		k := pb{m.Partition, r.Bucket, run}
		if prev, ok := last[k]; ok && r.Offset <= prev {
			res.inversions++
		}
		last[k] = r.Offset
		// Partition: the key is the row's id, hashed as Iggy does.
		idNum, _ := r.row["id"].(json.Number)
		if want := iggytest.PartitionForKey([]byte(idNum.String()), partitions); m.Partition != want {
			pr.add("partition", "row id %s: partition %d, want %d", idNum, m.Partition, want)
		}
		// Headers.
		if m.HeadersErr != nil || headerKeys(m.Headers) != wantHeaders {
			pr.add("header set", "id %s: headers %s (%v), want %s", e2e.IDHex(m.ID), headerKeys(m.Headers), m.HeadersErr, wantHeaders)
		}
		f.checkFlussHeaders(pr, m, r)
		if v, _ := headerString(m.Headers, "fluss_database"); v != f.db {
			pr.add("fluss_database header", "id %s: %q", e2e.IDHex(m.ID), v)
		}
		if v, _ := headerString(m.Headers, "fluss_table"); v != f.log.name {
			pr.add("fluss_table header", "id %s: %q", e2e.IDHex(m.ID), v)
		}
		if v, ok := headerInt(m.Headers, "fluss_table_id"); !ok || v != f.log.id {
			pr.add("fluss_table_id header", "id %s: %d", e2e.IDHex(m.ID), v)
		}
		if v, ok := headerInt(m.Headers, "fluss_schema_id"); !ok || v < 0 {
			pr.add("fluss_schema_id header", "id %s: %d", e2e.IDHex(m.ID), v)
		}
		// Payload: the row plus what the mapping adds.
		rest, at, ok := cutIngestedAt(m.Payload)
		if !ok {
			pr.add("payload ingested_at", "id %s: no ingested_at in %.300s", e2e.IDHex(m.ID), m.Payload)
		} else if _, err := time.Parse(time.RFC3339Nano, at); err != nil {
			pr.add("payload ingested_at", "id %s: %v", e2e.IDHex(m.ID), err)
		}
		if !samePayload(rest, r, extra) {
			pr.add("payload row", "bucket %d offset %d:\n      got  %.400s\n      want %.400s", r.Bucket, r.Offset, rest, r.want)
		}
	}
	res.distinct = len(seen)
	for k := range f.log.scan {
		if !seen[idFor(f.log.id, k)] {
			pr.add("missing", "bucket %d offset %d never arrived", k.bucket, k.offset)
		}
	}
	pr.report(t, "log table messages in Iggy")
	return res
}

// logExtra is what config/fluss_to_iggy.yaml's mapping adds to every row
// (besides ingested_at).
func (f *fixture) logExtra() map[string]any {
	return map[string]any{"source": fmt.Sprintf("fluss:%s.%s", f.db, f.log.name)}
}

// idFor is the deterministic id the example configs give a row of a table
// without partitions.
func idFor(tableID int64, k bkey) [16]byte {
	var id [16]byte
	binary.LittleEndian.PutUint64(id[0:8], uint64(k.bucket)<<48|uint64(k.offset))
	binary.LittleEndian.PutUint64(id[8:16], uint64(tableID+1)<<32)
	return id
}

// testLogTable runs config/fluss_to_iggy.yaml as shipped (streaming), waits
// until every row is in Iggy, stops it with SIGTERM and checks everything.
func (f *fixture) testLogTable(t *testing.T) {
	stream := f.newStream(t, "e2e_log")
	start := time.Now()
	p := f.startPipeline(t, "fluss_to_iggy.yaml", f.log.name, stream, t.TempDir())
	f.waitRows(t, p, stream, f.log.name, uint64(logRows))
	took := time.Since(start)
	// Anything sent twice would show up now.
	time.Sleep(300 * time.Millisecond)
	stopping := time.Now()
	if err := p.Stop(30 * time.Second); err != nil {
		t.Errorf("the pipeline did not stop cleanly on SIGTERM: %v\n%s", err, p.Tail(20))
	}
	stopped := time.Now()
	t.Logf("SIGTERM: the process exited after %s", stopped.Sub(stopping).Round(time.Millisecond))
	msgs, err := f.iggy.reader.Messages(stream, f.log.name)
	if err != nil {
		t.Fatal(err)
	}
	res := f.checkLog(t, msgs, nil)
	if len(msgs) != logRows || res.distinct != logRows {
		t.Errorf("%d messages in Iggy, %d distinct ids; want %d of each (no duplicates without a crash)", len(msgs), res.distinct, logRows)
	}
	t.Logf("%d rows of %s.%s in Iggy stream %q after %s (%.0f rows/s including start-up), peak RSS %.1f MB; "+
		"%d arrived after a later row of their bucket (pipeline threads > 1); checked in %s (%d payloads not byte-identical)",
		logRows, f.db, f.log.name, stream, took.Round(time.Millisecond), float64(logRows)/took.Seconds(), float64(p.PeakRSSKB())/1024,
		res.inversions, time.Since(stopped).Round(time.Millisecond), slowCompares.Load())
}

// testPKChangelog runs config/pk_changelog_to_iggy.yaml with end_at: latest
// and checks both topics.
func (f *fixture) testPKChangelog(t *testing.T) {
	stream := f.newStream(t, "e2e_pk")
	start := time.Now()
	p := f.startPipeline(t, "pk_changelog_to_iggy.yaml", f.pk.name, stream, t.TempDir(), "input.fluss.end_at=latest")
	if err := p.Wait(3 * time.Minute); err != nil {
		t.Fatalf("the pipeline with end_at: latest did not end cleanly: %v\n%s", err, p.Tail(30))
	}
	took := time.Since(start)
	upserts, err := f.iggy.reader.Messages(stream, f.pk.name)
	if err != nil {
		t.Fatal(err)
	}
	deletes, err := f.iggy.reader.Messages(stream, f.pk.name+"_deletes")
	if err != nil {
		t.Fatal(err)
	}
	pr := newProblems()
	seen := map[[16]byte]bool{}
	counts := map[string]int{}
	check := func(msgs []e2e.Message, topic string) {
		last := map[[2]int64]int64{}
		for _, m := range msgs {
			if seen[m.ID] {
				pr.add("duplicate", "topic %s partition %d offset %d: id %s again", topic, m.Partition, m.Offset, e2e.IDHex(m.ID))
				continue
			}
			seen[m.ID] = true
			r := checkID(pr, m, &f.pk)
			if r == nil {
				continue
			}
			counts[r.ChangeType]++
			k := [2]int64{int64(m.Partition), int64(r.Bucket)}
			if prev, ok := last[k]; ok && r.Offset <= prev {
				pr.add("order", "topic %s partition %d: bucket %d offset %d after %d", topic, m.Partition, r.Bucket, r.Offset, prev)
			}
			last[k] = r.Offset
			wantTopic := f.pk.name
			if r.ChangeType == "-D" {
				wantTopic += "_deletes"
			}
			if r.ChangeType == "-U" {
				pr.add("-U delivered", "bucket %d offset %d reached topic %s", r.Bucket, r.Offset, topic)
			} else if topic != wantTopic {
				pr.add("routing", "bucket %d offset %d (%s) in topic %s, want %s", r.Bucket, r.Offset, r.ChangeType, topic, wantTopic)
			}
			if want := iggytest.PartitionForKey([]byte(strconv.Itoa(int(r.Bucket))), partitions); m.Partition != want {
				pr.add("partition", "bucket %d: partition %d, want %d", r.Bucket, m.Partition, want)
			}
			if m.HeadersErr != nil || headerKeys(m.Headers) != "change_type,fluss_bucket,fluss_offset,fluss_timestamp" {
				pr.add("header set", "id %s: headers %s (%v)", e2e.IDHex(m.ID), headerKeys(m.Headers), m.HeadersErr)
			}
			if ct, _ := headerString(m.Headers, "change_type"); ct != r.ChangeType {
				pr.add("change_type header", "bucket %d offset %d: %q, want %q", r.Bucket, r.Offset, ct, r.ChangeType)
			}
			f.checkFlussHeaders(pr, m, r)
			if !samePayload(m.Payload, r, nil) {
				pr.add("payload row", "bucket %d offset %d:\n      got  %.400s\n      want %.400s", r.Bucket, r.Offset, m.Payload, r.want)
			}
		}
	}
	check(upserts, f.pk.name)
	check(deletes, f.pk.name+"_deletes")
	for k, r := range f.pk.scan {
		if r.ChangeType != "-U" && !seen[idFor(f.pk.id, k)] {
			pr.add("missing", "bucket %d offset %d (%s) never arrived", k.bucket, k.offset, r.ChangeType)
		}
	}
	pr.report(t, "primary-key changelog messages in Iggy")
	if pr.count["order"] > 0 {
		t.Errorf("a changelog must keep each bucket's order in Iggy; Benthos runs processors on several threads by default, " +
			"which reorders batches: config/pk_changelog_to_iggy.yaml needs `pipeline: {threads: 1}`")
	}
	want := map[string]int{"+I": pkInserts, "+U": pkUpdates, "-D": pkDeletes}
	if !reflect.DeepEqual(counts, want) {
		t.Errorf("change types delivered: %v, want %v", counts, want)
	}
	t.Logf("changelog of %s.%s: %d upserts and %d deletes in Iggy after %s (process ended by itself), peak RSS %.1f MB",
		f.db, f.pk.name, len(upserts), len(deletes), took.Round(time.Millisecond), float64(p.PeakRSSKB())/1024)
}

// killMoments draws when testSigkill kills: n message counts of the
// topic, in order, between a twentieth and nine tenths of the table, at
// least a tenth of the table apart (less when many kills need it: at most
// half the range divided among them).
func killMoments(rng *rand.Rand, rows, n int) []uint64 {
	lo, span := rows/20, rows*17/20
	if n == 0 {
		return nil
	}
	gap := min(rows/10, span/(2*n))
	free := span - (n-1)*gap
	u := make([]int, n)
	for i := range u {
		u[i] = rng.IntN(free)
	}
	sort.Ints(u)
	at := make([]uint64, n)
	for i, v := range u {
		at[i] = uint64(lo + v + i*gap)
	}
	return at
}

// testSigkill runs the log pipeline again into a fresh stream, killing it
// with SIGKILL `kills` times at random moments and restarting it on the
// same bbolt file; with a throttle, every pipeline sleeps per batch.
func (f *fixture) testSigkill(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("FLUSS_E2E_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	at := killMoments(rng, logRows, kills)
	t.Logf("FLUSS_E2E_SEED=%d: %d rows, %d kills (when the topic holds %v messages), throttle %q per batch",
		seed, logRows, kills, at, throttle)
	f.runKilled(t, rng, "e2e_kill", at, throttleSet())
}

// killedRun is what runKilled saw.
type killedRun struct {
	// msgs are the messages in Iggy at the end, cuts[k][p] the message
	// count of partition p when the (k+1)-th kill's process was gone.
	msgs []e2e.Message
	cuts []map[uint32]uint64
	res  logResult
}

// runKilled runs config/fluss_to_iggy.yaml over f.log into a fresh stream
// (named from prefix) with the --set overrides set, kills it with SIGKILL
// when the topic holds at[k] messages (plus a random moment of up to 20 ms
// drawn from rng), restarting it each time on the same bbolt file, waits
// until every row of f.log.scan arrived and checks them (checkLog: every
// row, payloads, headers; duplicates per kill at most maxDupsPerKill).
func (f *fixture) runKilled(t *testing.T, rng *rand.Rand, prefix string, at []uint64, set []string) killedRun {
	t.Helper()
	kills := len(at)
	stream := f.newStream(t, prefix)
	state := t.TempDir()
	topic := f.log.name
	want := len(f.log.scan)
	rows := uint64(want)
	var cuts []map[uint32]uint64
	midStream := 0
	start := time.Now()
	p := f.startPipeline(t, "fluss_to_iggy.yaml", topic, stream, state, set...)
	for k, threshold := range at {
		before, err := f.iggy.total(stream, topic)
		if err != nil {
			t.Fatal(err)
		}
		// Wait for the threshold (and for this run to have sent something),
		// plus a random extra moment of up to 20 ms.
		err = waitProgress(time.Millisecond, func() (uint64, bool, error) {
			n, err := f.iggy.total(stream, topic)
			if p.Exited() {
				return n, false, fmt.Errorf("the pipeline exited by itself: %v", p.Err())
			}
			// (A run that finds nothing left to send is killed all the same.)
			return n, n >= threshold && (n > before || n >= rows), err
		})
		if err != nil {
			t.Fatalf("kill %d: waiting for %d messages: %v\n%s", k+1, threshold, err, p.Tail(30))
		}
		time.Sleep(time.Duration(rng.IntN(20_000)) * time.Microsecond)
		p.Kill()
		// Let the server finish requests that arrived before the kill.
		var counts map[uint32]uint64
		prev := uint64(0)
		for i := 0; i < 50; i++ {
			if counts, err = f.iggy.reader.Counts(stream, topic); err != nil {
				t.Fatal(err)
			}
			if n := e2e.TotalCount(counts); n == prev && i > 0 {
				break
			} else {
				prev = n
			}
			time.Sleep(50 * time.Millisecond)
		}
		cuts = append(cuts, counts)
		n := e2e.TotalCount(counts)
		where := "mid-stream"
		if n < rows {
			midStream++
		} else {
			where = "after the topic held as many messages as the table has rows"
		}
		t.Logf("kill %d: SIGKILL at %d messages in Iggy (%s), %s after start", k+1, n, where, time.Since(start).Round(time.Millisecond))
		p = f.startPipeline(t, "fluss_to_iggy.yaml", topic, stream, state, set...)
	}
	// After the last restart: wait until every row is there. The messages
	// are read again only when more arrived.
	var msgs []e2e.Message
	var readAt uint64
	err := waitProgress(100*time.Millisecond, func() (uint64, bool, error) {
		if p.Exited() {
			return 0, false, fmt.Errorf("the pipeline exited by itself: %v", p.Err())
		}
		n, err := f.iggy.total(stream, topic)
		if err != nil || n < rows || n == readAt {
			return n, false, err
		}
		if msgs, err = f.iggy.reader.Messages(stream, topic); err != nil {
			return n, false, err
		}
		readAt = uint64(len(msgs))
		distinct := map[[16]byte]struct{}{}
		for _, m := range msgs {
			distinct[m.ID] = struct{}{}
		}
		return n, len(distinct) >= want, nil
	})
	if err != nil {
		t.Fatalf("after %d kills not every row arrived: %v\n%s", kills, err, p.Tail(30))
	}
	took := time.Since(start)
	time.Sleep(300 * time.Millisecond)
	if err := p.Stop(30 * time.Second); err != nil {
		t.Errorf("the last run did not stop cleanly on SIGTERM: %v", err)
	}
	if msgs, err = f.iggy.reader.Messages(stream, topic); err != nil {
		t.Fatal(err)
	}
	res := f.checkLog(t, msgs, cuts)
	total := 0
	for _, d := range res.dupsByRun {
		total += d
	}
	t.Logf("%d kills (%d mid-stream): %d messages for %d rows in %s; duplicates: %d in all, %d before the first kill, per kill %v",
		kills, midStream, len(msgs), res.distinct, took.Round(time.Millisecond), total, res.dupsByRun[0], res.dupsByRun[1:])
	if res.distinct != want {
		t.Errorf("%d distinct rows in Iggy, want %d", res.distinct, want)
	}
	for k, d := range res.dupsByRun[1:] {
		if d > maxDupsPerKill {
			t.Errorf("kill %d caused %d duplicates, more than the bound of %d", k+1, d, maxDupsPerKill)
		}
	}
	return killedRun{msgs: msgs, cuts: cuts, res: res}
}
