package flusscmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fluss-iggy/fluss-iggy/cmd/fluss-iggy/flusscmd"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

func TestMain(m *testing.M) { flusstest.Main(m) }

// run runs `fluss-iggy fluss ARGS...` and returns stdout, stderr and the error.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	app := &cli.App{
		Name:           "fluss-iggy",
		Commands:       []*cli.Command{flusscmd.Command()},
		Writer:         &out,
		ErrWriter:      &errOut,
		ExitErrHandler: func(*cli.Context, error) {}, // keep the test process alive
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	err := app.RunContext(ctx, append([]string{"fluss-iggy", "fluss"}, args...))
	return out.String(), errOut.String(), err
}

// TestCLIMatchesJavaTool: `fluss-iggy fluss scan` and `offsets` print
// exactly what the Java tool's scan and list-offsets print (the outputs
// compare with cmp) for a partitioned primary-key table, projected or not;
// `tables` lists the table; an unknown column fails naming it.
func TestCLIMatchesJavaTool(t *testing.T) {
	addr := flusstest.Require(t)
	db := flusstest.UniqueName("cli")
	table := db + ".orders"
	flusstest.RunJava(t, "create-database", db)
	t.Cleanup(func() { flusstest.RunJava(t, "drop-database", db, "--if-exists", "--cascade") })
	flusstest.RunJava(t, "create-table", table, "--columns",
		"id BIGINT NOT NULL, region STRING NOT NULL, amount DECIMAL(10, 2), note STRING, at TIMESTAMP_LTZ(3)",
		"--primary-key", "id,region", "--partition-key", "region", "--partitions", "us,eu", "--buckets", "2")
	flusstest.RunJava(t, "upsert", table, "--rows", "200", "--seed", "9", "--flush-every", "50")
	flusstest.RunJava(t, "upsert", table, "--rows", "40", "--seed", "10", "--start", "20")
	flusstest.RunJava(t, "delete", table, "--rows", "10", "--seed", "10", "--start", "100")

	check := func(what, want string, args ...string) {
		t.Helper()
		got, stderr, err := run(t, args...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", what, err, stderr)
		}
		if got != want {
			t.Errorf("%s: output differs from the Java tool's\njava:\n%s\ngo:\n%s", what, head(want), head(got))
		}
	}
	check("scan", flusstest.RunJava(t, "scan", table), "scan", "--bootstrap", addr, table)
	check("scan --columns", flusstest.RunJava(t, "scan", table, "--columns", "note,id"),
		"scan", "--bootstrap", addr, table, "--columns", "note,id") // flags after the table, as in the Java tool
	check("scan --partition", flusstest.RunJava(t, "scan", table, "--partition", "us"),
		"scan", "--partition", "us", table, "--bootstrap", addr)
	check("offsets", flusstest.RunJava(t, "list-offsets", table), "offsets", "--bootstrap", addr, table)

	out, _, err := run(t, "tables", "--bootstrap", addr, db)
	if err != nil || out != table+"\n" {
		t.Errorf("tables %s = %q, %v; want %q", db, out, err, table+"\n")
	}
	out, _, err = run(t, "scan", "--bootstrap", addr, table, "--count-only")
	var count struct {
		Rows int      `json:"rows"`
		CPU  *float64 `json:"cpu_seconds"`
	}
	if err != nil || json.Unmarshal([]byte(out), &count) != nil || count.Rows != strings.Count(flusstest.RunJava(t, "scan", table), "\n") || count.CPU == nil {
		t.Errorf("scan --count-only = %q, %v; want the rows of the Java scan and cpu_seconds", out, err)
	}
	_, _, err = run(t, "scan", "--bootstrap", addr, "--columns", "id,bogus_col", table)
	if err == nil || !strings.Contains(err.Error(), "bogus_col") {
		t.Errorf("scan of an unknown column: err = %v, want one naming bogus_col", err)
	}
}

// fakeLister is a cluster's list of databases and tables.
type fakeLister map[string][]string

func (f fakeLister) ListDatabases(context.Context) ([]string, error) {
	var dbs []string
	for db := range f {
		dbs = append(dbs, db)
	}
	return dbs, nil
}

func (f fakeLister) ListTables(_ context.Context, db string) ([]string, error) {
	ts, ok := f[db]
	if !ok {
		return nil, errors.New("database " + db + " does not exist")
	}
	return ts, nil
}

// TestTablesSaysWhenEmpty: an empty cluster or database prints no lines
// and says so on the note writer (stderr); tables are listed sorted with
// no note.
func TestTablesSaysWhenEmpty(t *testing.T) {
	for _, tc := range []struct {
		lister    fakeLister
		db        string
		out, note string
	}{
		{fakeLister{"fluss": nil}, "", "", "fluss: the cluster has no tables (databases: fluss)\n"},
		{fakeLister{}, "", "", "fluss: the cluster has no databases\n"},
		{fakeLister{"fluss": nil, "shop": nil}, "shop", "", "fluss: database \"shop\" has no tables\n"},
		{fakeLister{"fluss": nil, "shop": {"b", "a"}}, "", "shop.a\nshop.b\n", ""},
	} {
		var out, note bytes.Buffer
		if err := flusscmd.Tables(context.Background(), tc.lister, tc.db, &out, &note); err != nil {
			t.Fatal(err)
		}
		if out.String() != tc.out || note.String() != tc.note {
			t.Errorf("Tables(%v, %q) = %q, note %q; want %q, note %q", tc.lister, tc.db, out.String(), note.String(), tc.out, tc.note)
		}
	}
}

// TestTablesEmptyDatabase: `fluss tables DB` on a real database without
// tables exits 0 with nothing on stdout and the reason on stderr.
func TestTablesEmptyDatabase(t *testing.T) {
	addr := flusstest.Require(t)
	db := flusstest.UniqueName("empty")
	flusstest.RunJava(t, "create-database", db)
	t.Cleanup(func() { flusstest.RunJava(t, "drop-database", db, "--if-exists", "--cascade") })
	out, stderr, err := run(t, "tables", "--bootstrap", addr, db)
	if err != nil || out != "" || stderr != "fluss: database \""+db+"\" has no tables\n" {
		t.Errorf("tables %s = stdout %q, stderr %q, %v; want only the note on stderr", db, out, stderr, err)
	}
}

func head(s string) string {
	lines := strings.SplitN(s, "\n", 6)
	if len(lines) > 5 {
		lines = append(lines[:5], "...")
	}
	return strings.Join(lines, "\n")
}
