package sst

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTablesMatchCommittedDump compares each table's entries with the
// output of `sst_dump --command=scan --output_hex` committed beside it.
func TestTablesMatchCommittedDump(t *testing.T) {
	for _, p := range dumpedTables(t) {
		got, err := dumpTable(openFile(t, p))
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		want := readGzip(t, strings.TrimSuffix(p, ".sst")+".sst_dump.txt.gz")
		if got != want {
			t.Errorf("%s: differs from sst_dump: %s", p, diff(got, want))
		}
	}
}

var dumpLine = regexp.MustCompile(`(?m)^'.*$`)

// TestTablesMatchSSTDumpLive runs RocksDB's sst_dump on the same files.
func TestTablesMatchSSTDumpLive(t *testing.T) {
	tool := requireTool(t, "sst_dump")
	dir := t.TempDir()
	for _, p := range dumpedTables(t) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(dir, "000001.sst") // sst_dump wants the extension
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(tool, "--file="+tmp, "--command=scan", "--output_hex").CombinedOutput()
		if err != nil {
			t.Fatalf("sst_dump %s: %v\n%s", p, err, out)
		}
		want := strings.Join(dumpLine.FindAllString(string(out), -1), "\n") + "\n"
		got, err := dumpTable(openFile(t, p))
		if err != nil {
			t.Errorf("%s: %v", p, err)
		} else if got != want {
			t.Errorf("%s: differs from live sst_dump: %s", p, diff(got, want))
		}
	}
}

// TestCompressionTypes checks the testdata covers each decompressor: the
// trailer type byte of every data block.
func TestCompressionTypes(t *testing.T) {
	for name, want := range map[string]byte{
		"none": noCompression, "snappy": snappyCompression, "zlib": zlibCompression,
		"zstd": zstdCompression, "kvidx": lz4Compression,
	} {
		tb := openFile(t, "testdata/tables/"+name+".sst")
		var x indexIter
		x.reset(tb.index, tb.props.IndexValueIsDeltaEncoded)
		seen := map[byte]int{}
		for {
			h, ok, err := x.next()
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			b := make([]byte, 1)
			if _, err := tb.r.ReadAt(b, int64(h.offset+h.size)); err != nil {
				t.Fatal(err)
			}
			seen[b[0]]++
		}
		// RocksDB stores a block raw when compressing it does not pay.
		delete(seen, noCompression)
		if want != noCompression && (seen[want] == 0 || len(seen) != 1) || tb.props.NumDataBlocks < 2 {
			t.Errorf("%s: block compression types %v, want %#x; %d blocks", name, seen, want, tb.props.NumDataBlocks)
		}
	}
}

func TestProperties(t *testing.T) {
	tb := openFile(t, "testdata/kv1/shared/91da238c-26d9-4aa6-bd6d-ce1b749c6033")
	p := tb.Properties()
	if tb.FormatVersion() != 5 || p.Comparator != bytewiseComparator || p.Compression != "LZ4" ||
		!p.IndexKeyIsUserKey || !p.IndexValueIsDeltaEncoded || p.NumEntries != 250 ||
		p.NumDeletions != 50 || p.NumDataBlocks != 3 {
		t.Errorf("format %d, properties %+v", tb.FormatVersion(), p)
	}
}

func TestRangeDeletionRejected(t *testing.T) {
	f, err := os.Open("testdata/tables/rangedel.sst")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	_, err = Open(f, st.Size(), "rangedel.sst")
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrUnsupported) || e.Offset < 0 ||
		!strings.Contains(err.Error(), "sst rangedel.sst: block at offset") ||
		!strings.Contains(err.Error(), "range deletions") {
		t.Fatalf("got %v", err)
	}
}
