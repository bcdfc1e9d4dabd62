package sst

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluss-iggy/fluss-iggy/fluss/internal/kvsnap"
)

// The kv1 snapshots of one bucket, taken between upserts and deletes:
// snap-1 two level-0 files (deletes of keys of the older file), snap-3 four,
// snap-4 a level-1 compaction output (sequence numbers zeroed) and a newer
// level-0 file with tombstones.
var kv1Snapshots = []string{"snap-1", "snap-3", "snap-4"}

// snapshotTables opens the SST files a committed _METADATA names, newest
// first; the stored files are in testdata/kv1/shared under their remote
// names.
func snapshotTables(t *testing.T, snap string) (*kvsnap.Metadata, []*Table) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata/kv1", snap, kvsnap.MetadataFile))
	if err != nil {
		t.Fatal(err)
	}
	m, err := kvsnap.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	var tables []*Table
	for _, f := range m.SSTFiles() {
		tables = append(tables, openFile(t, filepath.Join("testdata/kv1/shared", path.Base(f.Path))))
	}
	return m, tables
}

// TestMergeSnapshotsMatchCommittedScan compares the merge of each
// snapshot's files with `ldb scan --hex` of the restored checkpoint.
func TestMergeSnapshotsMatchCommittedScan(t *testing.T) {
	for _, snap := range kv1Snapshots {
		m, tables := snapshotTables(t, snap)
		got, err := dumpMerged(Merge(tables...))
		if err != nil {
			t.Fatalf("%s: %v", snap, err)
		}
		want := readGzip(t, "testdata/kv1/"+snap+".ldb-scan.txt.gz")
		if got != want {
			t.Errorf("%s: differs from ldb scan: %s", snap, diff(got, want))
		}
		if rows := strings.Count(got, "\n"); int64(rows) != m.RowCount {
			t.Errorf("%s: %d rows, _METADATA row_count %d", snap, rows, m.RowCount)
		}
	}
}

// TestMergeSnapshotsMatchLDBLive rebuilds each checkpoint directory from its
// _METADATA (SST files under their local names, CURRENT and MANIFEST; the
// OPTIONS file is not committed and ldb does not need it) and scans it with
// RocksDB's ldb.
func TestMergeSnapshotsMatchLDBLive(t *testing.T) {
	tool := requireTool(t, "ldb")
	for _, snap := range kv1Snapshots {
		m, tables := snapshotTables(t, snap)
		dir := t.TempDir()
		restore(t, m, snap, dir)
		out, err := exec.Command(tool, "--db="+dir, "scan", "--hex").CombinedOutput()
		if err != nil {
			t.Fatalf("ldb %s: %v\n%s", snap, err, out)
		}
		got, err := dumpMerged(Merge(tables...))
		if err != nil {
			t.Fatalf("%s: %v", snap, err)
		}
		if got != string(out) {
			t.Errorf("%s: differs from live ldb scan: %s", snap, diff(got, string(out)))
		}
	}
}

// restore copies a snapshot's committed files into dir under their local names.
func restore(t *testing.T, m *kvsnap.Metadata, snap, dir string) {
	t.Helper()
	copyTo := func(src, name string) {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range m.SharedFiles {
		copyTo(filepath.Join("testdata/kv1/shared", path.Base(f.Path)), f.LocalPath)
	}
	for _, f := range m.PrivateFiles {
		if !strings.HasPrefix(f.LocalPath, "OPTIONS-") {
			copyTo(filepath.Join("testdata/kv1", snap, path.Base(f.Path)), f.LocalPath)
		}
	}
}
