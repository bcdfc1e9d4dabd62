package flusscmd_test

import (
	"bytes"
	"context"
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
	if err != nil || !strings.HasPrefix(out, `{"rows":`) {
		t.Errorf("scan --count-only = %q, %v", out, err)
	}
	_, _, err = run(t, "scan", "--bootstrap", addr, "--columns", "id,bogus_col", table)
	if err == nil || !strings.Contains(err.Error(), "bogus_col") {
		t.Errorf("scan of an unknown column: err = %v, want one naming bogus_col", err)
	}
}

func head(s string) string {
	lines := strings.SplitN(s, "\n", 6)
	if len(lines) > 5 {
		lines = append(lines[:5], "...")
	}
	return strings.Join(lines, "\n")
}
