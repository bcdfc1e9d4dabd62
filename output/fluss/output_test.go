package flussoutput

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
	"github.com/fluss-iggy/fluss-iggy/internal/stop"
)

// TestMain stops the shared Fluss cluster the tests may have started.
func TestMain(m *testing.M) { flusstest.Main(m) }

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// testDatabase creates a database with the Java tool, dropped at the end.
func testDatabase(t *testing.T) string {
	t.Helper()
	db := flusstest.UniqueName("fout")
	flusstest.RunJava(t, "create-database", db)
	t.Cleanup(func() { flusstest.RunJava(t, "drop-database", db, "--if-exists", "--cascade") })
	return db
}

// startOutput builds the output from YAML (bootstrap_servers added) and
// connects it.
func startOutput(t *testing.T, yaml string) *Output {
	t.Helper()
	yaml = fmt.Sprintf("bootstrap_servers: [%q]\n%s", flusstest.Require(t), yaml)
	pc, err := Spec().ParseYAML(yaml, service.NewEnvironment())
	if err != nil {
		t.Fatal(err)
	}
	o, err := NewFromConfig(pc, service.MockResources())
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Connect(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = o.Close(context.Background()) })
	return o
}

// messages makes one message per line, with fluss_change_type from types
// (none where the entry is empty).
func messages(lines []string, types []string) service.MessageBatch {
	var b service.MessageBatch
	for i, l := range lines {
		m := service.NewMessage([]byte(l))
		if i < len(types) && types[i] != "" {
			m.MetaSetMut("fluss_change_type", types[i])
		}
		b = append(b, m)
	}
	return b
}

// scanRows is the rows of the Java tool's scan or state output, sorted.
func scanRows(t *testing.T, out string) []string {
	t.Helper()
	var rows []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var l struct {
			Row json.RawMessage `json:"row"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		rows = append(rows, string(l.Row))
	}
	sort.Strings(rows)
	return rows
}

func sameRows(t *testing.T, what string, want, got []string) {
	t.Helper()
	if slices.Equal(want, got) {
		return
	}
	t.Errorf("%s: %d rows, want %d", what, len(got), len(want))
	for i := 0; i < len(want) || i < len(got); i++ {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			t.Errorf("first difference at sorted row %d:\n want %s\n got  %s", i, w, g)
			return
		}
	}
}

// TestOutputAllTypes: the canonical JSON rows the Java tool generates for a
// table of every type, written by the output in three batches, are what
// the Java tool then scans from the table, value for value.
func TestOutputAllTypes(t *testing.T) {
	t.Parallel()
	db := testDatabase(t)
	table := db + ".all"
	flusstest.RunJava(t, "create-table", table, "--all-types", "--buckets", "3")
	lines := strings.Split(strings.TrimSpace(flusstest.RunJava(t, "generate", table, "--rows", "300", "--seed", "17")), "\n")
	o := startOutput(t, fmt.Sprintf("database: %s\ntable: all\n", db))
	ctx := testCtx(t)
	for i := 0; i < len(lines); i += 100 {
		if err := o.WriteBatch(ctx, messages(lines[i:i+100], nil)); err != nil {
			t.Fatal(err)
		}
	}
	want := slices.Clone(lines)
	sort.Strings(want)
	sameRows(t, table, want, scanRows(t, flusstest.RunJava(t, "scan", table)))
}

// TestOutputPrimaryKeyChanges: inserts, updates (-U skipped, even when it is
// not a row), and deletes of a key-only row, by fluss_change_type, into a
// partitioned primary-key table whose partitions the output creates; the
// Java tool's state of the table is the expected rows.
func TestOutputPrimaryKeyChanges(t *testing.T) {
	t.Parallel()
	db := testDatabase(t)
	table := db + ".pk"
	flusstest.RunJava(t, "create-table", table, "--columns", "id INT NOT NULL, region STRING NOT NULL, amount DECIMAL(10, 2), at TIMESTAMP(3)",
		"--primary-key", "id,region", "--partition-key", "region", "--buckets", "2")
	o := startOutput(t, fmt.Sprintf("database: %s\ntable: pk\ncreate_partitions: true\n", db))

	row := func(id int, region, amount string) string {
		return fmt.Sprintf(`{"id":%d,"region":%q,"amount":%q,"at":"2026-12-05T10:00:%02d.5"}`, id, region, amount, id%60)
	}
	want := map[string]string{}
	var lines, types []string
	add := func(ct, line, key string) {
		lines, types = append(lines, line), append(types, ct)
		switch ct {
		case "-D":
			delete(want, key)
		case "-U":
		default: // as the Java tool prints it: TIMESTAMP(3) with 3 digits
			want[key] = strings.Replace(line, `.5"}`, `.500"}`, 1)
		}
	}
	for id := 0; id < 40; id++ {
		region := []string{"us", "eu"}[id%2]
		key := fmt.Sprint(id, region)
		add("+I", row(id, region, fmt.Sprintf("%d.25", id)), key)
		if id%3 == 0 {
			add("-U", `not a row`, key)
			add("+U", row(id, region, fmt.Sprintf("%d.75", id)), key)
		}
		if id%7 == 0 {
			add("-D", fmt.Sprintf(`{"id":%d,"region":%q}`, id, region), key)
		}
	}
	if err := o.WriteBatch(testCtx(t), messages(lines, types)); err != nil {
		t.Fatal(err)
	}
	var exp []string
	for _, l := range want {
		exp = append(exp, l)
	}
	sort.Strings(exp)
	sameRows(t, table+" state", exp, scanRows(t, flusstest.RunJava(t, "state", table)))
}

// TestOutputRejectsBadMessages: messages that cannot be rows fail alone,
// each error naming the column or the change type; the others are written.
func TestOutputRejectsBadMessages(t *testing.T) {
	t.Parallel()
	db := testDatabase(t)
	table := db + ".log"
	flusstest.RunJava(t, "create-table", table, "--columns", "id BIGINT NOT NULL, name STRING, price DECIMAL(5, 2)")
	o := startOutput(t, fmt.Sprintf("database: %s\ntable: log\n", db))
	batch := messages([]string{
		`{"id":1,"name":"a","price":"1.50"}`,
		`{"id":"two","name":"b"}`,
		`{"id":3,"nmae":"c"}`,
		`{"id":4,"price":"1.234"}`,
		`{"name":"no id"}`,
		`{"id":6,"name":"deleted?"}`,
		`{"id":7,"name":"g","price":999.99}`,
	}, []string{"", "", "", "", "", "-D", "+A"})
	idx := batch.Index()
	err := o.WriteBatch(testCtx(t), batch)
	var be *service.BatchError
	if !errors.As(err, &be) {
		t.Fatalf("WriteBatch: %v, want a BatchError", err)
	}
	failed := map[int]string{}
	be.WalkMessagesIndexedBy(idx, func(i int, _ *service.Message, err error) bool {
		if err != nil {
			failed[i] = err.Error()
		}
		return true
	})
	for i, want := range map[int]string{1: `"id"`, 2: `"nmae"`, 3: `"price"`, 4: `"id"`, 5: "-D"} {
		if !strings.Contains(failed[i], want) {
			t.Errorf("message %d: error %q does not name %s", i, failed[i], want)
		}
	}
	if len(failed) != 5 {
		t.Errorf("failed messages %v, want 1 to 5", failed)
	}
	want := []string{`{"id":1,"name":"a","price":"1.50"}`, `{"id":7,"name":"g","price":"999.99"}`}
	sameRows(t, table, want, scanRows(t, flusstest.RunJava(t, "scan", table)))
}

// TestOutputStopsOnMissingTable: without wait_for_table a missing table
// stops the pipeline at once (the binary exits 1 with the reason) instead
// of a retry loop that logs forever.
func TestOutputStopsOnMissingTable(t *testing.T) {
	db := testDatabase(t)
	yaml := fmt.Sprintf("bootstrap_servers: [%q]\ndatabase: %s\ntable: nowhere\n", flusstest.Require(t), db)
	pc, err := Spec().ParseYAML(yaml, service.NewEnvironment())
	if err != nil {
		t.Fatal(err)
	}
	o, err := NewFromConfig(pc, service.MockResources())
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close(context.Background())
	stop.Reset()
	err = o.Connect(testCtx(t))
	if err == nil || stop.Err() == nil || !strings.Contains(stop.Err().Error(), "nowhere") || !strings.Contains(stop.Err().Error(), "wait_for_table") {
		t.Fatalf("Connect: %v; the pipeline stopped with: %v", err, stop.Err())
	}
}
