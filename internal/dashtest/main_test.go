package dashtest

import (
	"path/filepath"
	"testing"

	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

func TestMain(m *testing.M) { flusstest.Main(m) }

// repoPath returns a path inside the repository.
func repoPath(t testing.TB, elem ...string) string {
	t.Helper()
	root, err := flusstest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(append([]string{root}, elem...)...)
}

// dashboardPath is the dashboard the tests check.
func dashboardPath(t testing.TB) string { return repoPath(t, "deploy", "grafana", "fluss-iggy.json") }
