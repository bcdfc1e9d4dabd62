package e2e_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

// TestDemoTableForReadmeExamples runs `make demo-table`'s script
// (scripts/demo.sh --table-only) into a fresh database, then README's
// terminal examples on what it made: the log table has the rows the
// example pipeline reads, and the primary-key table <database>.customers,
// which README's `fluss snapshots` and `fluss scan --snapshot` examples
// read, holds its 100 keys (before, nothing created it: the examples
// failed with "table does not exist").
func TestDemoTableForReadmeExamples(t *testing.T) {
	bootstrap := flusstest.Require(t)
	root, err := flusstest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := sharedBinary(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	db := flusstest.UniqueName("demo")
	t.Cleanup(func() {
		_, _ = runTool(context.Background(), root, bootstrap, "drop-database", db, "--if-exists", "--cascade")
	})
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "scripts", "demo.sh"), "--table-only")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "FLUSS_BOOTSTRAP="+bootstrap, "FLUSS_DATABASE="+db, "FLUSS_TABLE=orders")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("demo.sh --table-only: %v\n%s", err, out)
	}
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.CommandContext(ctx, bin, append([]string{"fluss"}, args...)...).Output()
		if err != nil {
			t.Fatalf("fluss-iggy fluss %s: %v", strings.Join(args, " "), err)
		}
		return string(out)
	}
	if n := strings.Count(run("scan", "--bootstrap", bootstrap, db+".orders"), "\n"); n != 1000 {
		t.Errorf("%s.orders: %d rows, want 1000", db, n)
	}
	if n := strings.Count(run("scan", "--snapshot", "--bootstrap", bootstrap, db+".customers"), "\n"); n != 100 {
		t.Errorf("fluss scan --snapshot %s.customers: %d keys, want 100", db, n)
	}
	if n := strings.Count(run("snapshots", "--bootstrap", bootstrap, db+".customers"), "\n"); n != 3 {
		t.Errorf("fluss snapshots %s.customers: %d lines, want one per bucket (3)", db, n)
	}
}
