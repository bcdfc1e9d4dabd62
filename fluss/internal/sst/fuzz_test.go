package sst

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// addSeeds adds the committed SST files to a fuzz corpus.
func addSeeds(f *testing.F) {
	paths, _ := filepath.Glob("testdata/tables/*.sst")
	more, _ := filepath.Glob("testdata/kv1/shared/*-*-*-*-????????????")
	for _, p := range append(paths, more...) {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, false)
	}
}

// drain reads a table and the merge of it, stopping after a bounded number
// of entries; errors are fine, panics and hangs are not.
func drain(t *Table) {
	it := t.Iter()
	for n := 0; n < 1<<16 && it.Next(); n++ {
		_ = it.Key()
	}
	m := Merge(t, t)
	for n := 0; n < 1<<16 && m.Next(); n++ {
		_ = m.Value()
	}
}

// FuzzSSTOpen opens and reads arbitrary files; with checksums skipped the
// mutations reach the block parsers and decompressors behind the CRCs.
func FuzzSSTOpen(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, verify bool) {
		tb, err := open(bytes.NewReader(data), int64(len(data)), "fuzz", !verify)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		drain(tb)
	})
}

// FuzzSSTBlock parses arbitrary block contents as data, index and
// properties blocks, and as compressed blocks of every type.
func FuzzSSTBlock(f *testing.F) {
	f.Add([]byte{0, 3, 2, 'a', 'b', 'c', 'x', 'y', 0, 0, 0, 0, 1, 0, 0, 0}, byte(0))
	f.Add([]byte{0, 1, 0, 'k', 10, 20, 1, 1, 'l', 4, 0, 0, 0, 0, 1, 0, 0, 0}, byte(4))
	f.Fuzz(func(t *testing.T, data []byte, typ byte) {
		if out, err := decompress(typ, data); err == nil && len(out) > maxBlockLen {
			t.Fatalf("decompressed %d bytes", len(out))
		}
		ents, err := entries(data)
		if err != nil {
			return
		}
		var it blockIter
		it.reset(ents, false)
		for {
			if _, ok, err := it.next(); !ok || err != nil {
				break
			}
		}
		var x indexIter
		x.reset(ents, typ&1 == 1)
		for {
			if _, ok, err := x.next(); !ok || err != nil {
				break
			}
		}
		_, _ = parseProperties(data)
		_, _ = parseMetaindex(data)
	})
}
