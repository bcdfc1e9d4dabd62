package sst

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// dumpTable prints a table's entries the way `sst_dump --command=scan
// --output_hex` does: 'KEY' seq:N, type:T => VALUE (hex in capitals).
func dumpTable(t *Table) (string, error) {
	var b strings.Builder
	it := t.Iter()
	for it.Next() {
		fmt.Fprintf(&b, "'%X' seq:%d, type:%d => %X\n", it.Key(), it.Seq(), uint8(it.Kind()), it.Value())
	}
	return b.String(), it.Err()
}

// dumpMerged prints merged rows the way `ldb scan --hex` does: 0xKEY : 0xVALUE.
func dumpMerged(it Iterator) (string, error) {
	var b strings.Builder
	for it.Next() {
		fmt.Fprintf(&b, "0x%X : 0x%X\n", it.Key(), it.Value())
	}
	return b.String(), it.Err()
}

// openFile opens path as a table named after it; the file closes with the test.
func openFile(t *testing.T, path string) *Table {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	tb, err := Open(f, st.Size(), path)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// readGzip returns the contents of a gzipped testdata file.
func readGzip(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// requireTool returns the path of a RocksDB tool; without it the test skips,
// except in CI (CI=true), where it fails.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s not on PATH (apt-get install rocksdb-tools)", name)
		}
		t.Skipf("%s not on PATH (apt-get install rocksdb-tools)", name)
	}
	return p
}

// dumpedTables lists the testdata SST files that have a committed dump.
func dumpedTables(t *testing.T) []string {
	t.Helper()
	a, _ := filepath.Glob("testdata/tables/*.sst_dump.txt.gz")
	b, _ := filepath.Glob("testdata/kv1/shared/*.sst_dump.txt.gz")
	dumps := append(a, b...)
	if len(dumps) < 10 {
		t.Fatalf("testdata: %d dumps", len(dumps))
	}
	var out []string
	for _, d := range dumps {
		p := strings.TrimSuffix(d, ".sst_dump.txt.gz")
		if _, err := os.Stat(p); err != nil {
			p += ".sst"
		}
		out = append(out, p)
	}
	return out
}

// diff reports the first differing line of two dumps.
func diff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) && i < len(w); i++ {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d:\n got  %s\n want %s", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("got %d lines, want %d", len(g), len(w))
}
