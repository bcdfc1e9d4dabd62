package compat_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/internal/e2e"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
)

// bin is the fluss-iggy binary under test.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fluss-iggy-compat-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if bin = os.Getenv("FLUSS_IGGY_BIN"); bin == "" {
		bin, err = build(dir)
	}
	code := 1
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = flusstest.Run(m)
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func build(dir string) (string, error) {
	root, err := flusstest.RepoRoot()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	return e2e.BuildBinary(ctx, root, dir)
}

// scalarColumns holds every scalar type (the scalar part of the Java tool's
// --all-types): what Fluss 0.7 writes and reads.
const scalarColumns = "id BIGINT NOT NULL, c_boolean BOOLEAN, c_tinyint TINYINT, c_smallint SMALLINT, " +
	"c_int INT, c_bigint BIGINT, c_float FLOAT, c_double DOUBLE, c_decimal_5_2 DECIMAL(5, 2), " +
	"c_decimal_18_6 DECIMAL(18, 6), c_decimal_38_0 DECIMAL(38, 0), c_decimal_38_18 DECIMAL(38, 18), " +
	"c_char CHAR(8), c_string STRING, c_binary BINARY(4), c_bytes BYTES, c_date DATE, " +
	"c_time_0 TIME(0), c_time_3 TIME(3), c_time_6 TIME(6), c_time_9 TIME(9), " +
	"c_ts_0 TIMESTAMP(0), c_ts_3 TIMESTAMP(3), c_ts_6 TIMESTAMP(6), c_ts_7 TIMESTAMP(7), c_ts_9 TIMESTAMP(9), " +
	"c_ltz_0 TIMESTAMP_LTZ(0), c_ltz_3 TIMESTAMP_LTZ(3), c_ltz_6 TIMESTAMP_LTZ(6), c_ltz_7 TIMESTAMP_LTZ(7), " +
	"c_ltz_9 TIMESTAMP_LTZ(9), c_int_not_null INT NOT NULL, c_string_not_null STRING NOT NULL"

// nestedColumns need Fluss 0.9: the 0.7 client has no ARRAY/MAP/ROW rows.
const nestedColumns = "c_array_int ARRAY<INT>, c_array_ts ARRAY<TIMESTAMP(9)>, c_map_string_int MAP<STRING, INT>, " +
	"c_row ROW<a INT, b STRING, c DOUBLE>"

// columns returns the columns the release under test can write.
func columns(t *testing.T) string {
	v := flusstest.Version(t)
	if flusstest.AtLeast(v, 0, 9) {
		return scalarColumns + ", " + nestedColumns
	}
	t.Logf("Fluss %s: scalar types only (ARRAY, MAP and ROW need 0.9)", v)
	return scalarColumns
}

// java runs the Java fixture tool, with the client of the release under
// test, against the cluster.
func java(t *testing.T, args ...string) string {
	t.Helper()
	return flusstest.RunJava(t, args...)
}

// newDatabase creates a database for one test and drops it afterwards.
func newDatabase(t *testing.T, prefix string) string {
	t.Helper()
	db := flusstest.UniqueName(prefix)
	java(t, "create-database", db)
	t.Cleanup(func() { java(t, "drop-database", db, "--if-exists", "--cascade") })
	return db
}

// ours runs `fluss-iggy fluss COMMAND --bootstrap ADDR ARGS...` and returns
// its stdout.
func ours(t *testing.T, command string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"fluss", command, "--bootstrap", flusstest.Require(t)}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("fluss-iggy fluss %s %s: %v\n%s", command, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// same fails the test when fluss-iggy's output differs from the Java tool's,
// naming the first line that differs.
func same(t *testing.T, what, java, got string) {
	t.Helper()
	if got == java {
		return
	}
	jl, gl := strings.Split(java, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(jl), len(gl)); i++ {
		var j, g string
		if i < len(jl) {
			j = jl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if j != g {
			t.Errorf("%s: fluss-iggy's output differs from the Java client's at line %d of %d/%d:\njava: %s\nours: %s",
				what, i+1, len(jl), len(gl), j, g)
			return
		}
	}
}

// scanLine is a line of the Java tool's scan.
type scanLine struct {
	Partition  *string         `json:"partition"`
	Bucket     int32           `json:"bucket"`
	Offset     int64           `json:"offset"`
	ChangeType string          `json:"change_type"`
	Row        json.RawMessage `json:"row"`
}

func parseScan(t *testing.T, out string) []scanLine {
	t.Helper()
	var rows []scanLine
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		var r scanLine
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("scan line %q: %v", l, err)
		}
		rows = append(rows, r)
	}
	return rows
}

func changeTypes(rows []scanLine) map[string]int {
	n := map[string]int{}
	for _, r := range rows {
		n[r.ChangeType]++
	}
	return n
}

// TestScanMatchesJava: fluss-iggy's scan and offsets of a log table and of a
// partitioned primary-key table's changelog equal the Java client's.
func TestScanMatchesJava(t *testing.T) {
	db := newDatabase(t, "compat")
	cols := columns(t)

	t.Run("log", func(t *testing.T) {
		table := db + ".events"
		java(t, "create-table", table, "--columns", cols, "--buckets", "3", "--bucket-key", "id")
		java(t, "append", table, "--rows", "600", "--seed", "3", "--flush-every", "100")
		want := java(t, "scan", table)
		if n := changeTypes(parseScan(t, want)); n["+A"] != 600 || len(n) != 1 {
			t.Fatalf("the Java scan has %v, want 600 +A", n)
		}
		same(t, "scan", want, ours(t, "scan", table))
		same(t, "scan --columns", java(t, "scan", table, "--columns", "c_string,id,c_ts_9"),
			ours(t, "scan", table, "--columns", "c_string,id,c_ts_9"))
		same(t, "offsets", java(t, "list-offsets", table), ours(t, "offsets", table))
	})

	t.Run("primary_key", func(t *testing.T) {
		table := db + ".customers"
		java(t, "create-table", table, "--columns", cols+", region STRING NOT NULL", "--primary-key", "id,region",
			"--partition-key", "region", "--partitions", "eu,us", "--buckets", "2")
		java(t, "upsert", table, "--rows", "300", "--seed", "4", "--flush-every", "100")
		java(t, "upsert", table, "--rows", "100", "--seed", "5", "--start", "150")
		java(t, "delete", table, "--rows", "50", "--start", "200")
		want := java(t, "scan", table)
		if n := changeTypes(parseScan(t, want)); n["+I"] != 300 || n["-U"] != 100 || n["+U"] != 100 || n["-D"] != 50 {
			t.Fatalf("the Java scan has %v, want 300 +I, 100 -U, 100 +U, 50 -D", n)
		}
		same(t, "scan", want, ours(t, "scan", table))
		same(t, "scan --partition", java(t, "scan", table, "--partition", "us"), ours(t, "scan", table, "--partition", "us"))
		same(t, "offsets", java(t, "list-offsets", table), ours(t, "offsets", table))
	})
}

// TestPipelineDeliversChangelog: a fluss -> iggy pipeline with end_at:
// latest delivers every change of a partitioned primary-key table once, as
// the Java client reads it: the row as the payload, the change type and the
// row's place (partition, bucket, offset) as headers.
func TestPipelineDeliversChangelog(t *testing.T) {
	addr := flusstest.Require(t)
	db := newDatabase(t, "compat_pipe")
	table := db + ".customers"
	java(t, "create-table", table, "--columns", columns(t)+", region STRING NOT NULL", "--primary-key", "id,region",
		"--partition-key", "region", "--partitions", "eu,us", "--buckets", "2")
	java(t, "upsert", table, "--rows", "200", "--seed", "6", "--flush-every", "50")
	java(t, "upsert", table, "--rows", "60", "--seed", "7", "--start", "100")
	java(t, "delete", table, "--rows", "30", "--start", "170")
	want := map[string]scanLine{}
	for _, r := range parseScan(t, java(t, "scan", table)) {
		want[place(strconv.Quote(*r.Partition), r.Bucket, r.Offset)] = r
	}
	if len(want) != 200+2*60+30 {
		t.Fatalf("the Java scan has %d changes, want %d", len(want), 200+2*60+30)
	}

	srv, err := iggytest.Start(iggytest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	config := filepath.Join(t.TempDir(), "pipeline.yaml")
	yaml := fmt.Sprintf(`
http: { enabled: false }
input:
  fluss:
    bootstrap_servers: [ %q ]
    database: %s
    table: customers
    start_offset: earliest
    end_at: latest
    checkpoint_cache: checkpoints
output:
  iggy:
    address: %s
    username: %s
    password: %s
    stream: compat
    topic: customers
    create_stream: true
    create_topic: true
    partitions: 2
    headers:
      include_patterns: [ "^fluss_(partition|bucket|offset|change_type)$" ]
`, addr, db, srv.Addr(), iggytest.DefaultUsername, iggytest.DefaultPassword)
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	root, err := flusstest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	p, err := e2e.Start(bin, []string{"FLUSS_IGGY_STATE_DIR=" + t.TempDir()},
		"run", "-r", filepath.Join(root, "config", "resources", "bbolt.yaml"), config)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(3 * time.Minute); err != nil {
		t.Fatalf("pipeline: %v\n%s", err, p.Tail(30))
	}
	t.Logf("pipeline ended by itself after %s", p.Elapsed().Round(time.Millisecond))

	msgs, err := e2e.ServerReader{Srv: srv}.Messages("compat", "customers")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	bad := 0
	for _, m := range msgs {
		h := m.Headers
		// HeaderValue quotes strings and prints int64 in decimal, as place does.
		key := e2e.HeaderValue(h["fluss_partition"]) + "/" + e2e.HeaderValue(h["fluss_bucket"]) + "/" + e2e.HeaderValue(h["fluss_offset"])
		r, ok := want[key]
		switch {
		case !ok:
			t.Errorf("message at Iggy partition %d offset %d names no change of the Java scan: %s", m.Partition, m.Offset, key)
		case seen[key]:
			t.Errorf("change %s delivered twice", key)
		case !bytes.Equal(m.Payload, r.Row):
			t.Errorf("change %s: payload differs from the Java scan's row:\njava: %s\nours: %s", key, r.Row, m.Payload)
		case e2e.HeaderValue(h["fluss_change_type"]) != strconv.Quote(r.ChangeType):
			t.Errorf("change %s: fluss_change_type %s, want %q", key, e2e.HeaderValue(h["fluss_change_type"]), r.ChangeType)
		default:
			seen[key] = true
			continue
		}
		if bad++; bad >= 10 {
			t.Fatal("too many differences")
		}
	}
	if len(seen) != len(want) {
		t.Errorf("%d of the %d changes arrived intact (%d messages)", len(seen), len(want), len(msgs))
	}
}

// place names a change by partition (quoted), bucket and offset.
func place(partition string, bucket int32, offset int64) string {
	return fmt.Sprintf("%s/%d/%d", partition, bucket, offset)
}
