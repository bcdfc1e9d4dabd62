package records

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// allTypesTypes is the type lookup of the all-types seeds.
func allTypesTypes(t testing.TB) TypeLookup {
	t.Helper()
	cols, err := types.ParseColumns(allTypesColumns)
	if err != nil {
		t.Fatal(err)
	}
	s, err := types.NewSchema(cols)
	if err != nil {
		t.Fatal(err)
	}
	return func(int16) (*types.Schema, error) { return s, nil }
}

// seedFormat is the log format of a seed file, by its name.
func seedFormat(name string) LogFormat {
	switch {
	case strings.Contains(name, "-compacted"):
		return LogFormatCompacted
	case strings.Contains(name, "-indexed"):
		return LogFormatIndexed
	}
	return LogFormatArrow
}

func readSeed(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decodeSeed decodes a cluster seed of the all-types schema.
func decodeSeed(t *testing.T, mem memory.Allocator, name string, opts ...Option) Result {
	t.Helper()
	opts = append([]Option{WithAllocator(mem), WithLogFormat(seedFormat(name), allTypesTypes(t))}, opts...)
	d, err := NewDecoder(fixedLookup(allTypesSchema(t)), opts...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.Decode(readSeed(t, name), 0)
	if err != nil {
		res.Release()
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// rowAt is one decoded row: its batch and index.
type rowAt struct {
	b *Batch
	i int
}

func rowsByOffset(res Result) map[int64]rowAt {
	m := map[int64]rowAt{}
	for _, b := range res.Batches {
		for i := 0; i < b.NumRows(); i++ {
			m[b.Offset(i)] = rowAt{b, i}
		}
	}
	return m
}

// TestRowFormatSeedsMatchArrow: the same rows, written by the Java client
// to ARROW, COMPACTED and INDEXED tables, decode to equal Arrow values and
// change types, with and without a local projection.
func TestRowFormatSeedsMatchArrow(t *testing.T) {
	pairs := [][2]string{
		{"cluster-log-none.bin", "cluster-log-compacted.bin"},
		{"cluster-log-none.bin", "cluster-log-indexed.bin"},
		{"cluster-pk-changelog.bin", "cluster-pk-changelog-compacted.bin"},
	}
	for _, proj := range [][]int{nil, {56, 13, 0, 54, 9}} {
		for _, p := range pairs {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			var opts []Option
			if proj != nil {
				opts = append(opts, WithProjection(proj))
			}
			want, got := decodeSeed(t, mem, p[0], opts...), decodeSeed(t, mem, p[1], opts...)
			compareRows(t, p[1], rowsByOffset(want), rowsByOffset(got))
			want.Release()
			got.Release()
			mem.AssertSize(t, 0)
		}
	}
}

func compareRows(t *testing.T, name string, want, got map[int64]rowAt) {
	t.Helper()
	n := 0
	for off, g := range got {
		w, ok := want[off]
		if !ok {
			continue
		}
		n++
		if !g.b.Record.Schema().Equal(w.b.Record.Schema()) {
			t.Fatalf("%s: schema %v, ARROW %v", name, g.b.Record.Schema(), w.b.Record.Schema())
		}
		if g.b.ChangeType(g.i) != w.b.ChangeType(w.i) {
			t.Errorf("%s offset %d: change type %s, ARROW %s", name, off, g.b.ChangeType(g.i), w.b.ChangeType(w.i))
		}
		for c := 0; c < int(w.b.Record.NumCols()); c++ {
			wc, gc := w.b.Record.Column(c), g.b.Record.Column(c)
			// Exact, but NaN equals NaN.
			if !array.SliceApproxEqual(wc, int64(w.i), int64(w.i+1), gc, int64(g.i), int64(g.i+1),
				array.WithAbsTolerance(0), array.WithNaNsEqual(true)) {
				t.Errorf("%s offset %d column %s:\nARROW %s\ngot   %s", name, off, w.b.Record.ColumnName(c),
					sliceString(wc, w.i), sliceString(gc, g.i))
			}
		}
	}
	if n < 15 {
		t.Errorf("%s: only %d rows in common with the ARROW seed", name, n)
	}
}

func sliceString(a arrow.Array, i int) string {
	s := array.NewSlice(a, int64(i), int64(i+1))
	defer s.Release()
	return s.String()
}

// TestRowFormatFetchOffset: rows below the fetch offset are dropped, the
// offsets and change types of the rest kept.
func TestRowFormatFetchOffset(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d, err := NewDecoder(fixedLookup(allTypesSchema(t)), WithAllocator(mem), WithLogFormat(LogFormatCompacted, allTypesTypes(t)))
	if err != nil {
		t.Fatal(err)
	}
	data := readSeed(t, "cluster-pk-changelog-compacted.bin")
	full, err := d.Decode(data, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer full.Release()
	all := rowsByOffset(full)
	for _, from := range []int64{1, 7, 31} {
		res, err := d.Decode(data, from)
		if err != nil {
			t.Fatal(err)
		}
		got := rowsByOffset(res)
		if len(res.Batches) == 0 || res.Batches[0].FirstOffset != from {
			t.Errorf("fetch from %d: first batch starts at %d", from, res.Batches[0].FirstOffset)
		}
		for off := range all {
			if _, ok := got[off]; ok != (off >= from) {
				t.Errorf("fetch from %d: offset %d returned: %v", from, off, ok)
			}
		}
		compareRows(t, "from offset", all, got)
		res.Release()
	}
}

// TestRowFormatOptions: the option checks of NewDecoder.
func TestRowFormatOptions(t *testing.T) {
	lookup := fixedLookup(testSchema())
	typesOK := func(int16) (*types.Schema, error) { return nil, errors.New("unused") }
	for _, tc := range []struct {
		name string
		opts []Option
		want string
	}{
		{"no type lookup", []Option{WithLogFormat(LogFormatIndexed, nil)}, "needs a type lookup"},
		{"unknown format", []Option{WithLogFormat("PARQUET", typesOK)}, "unknown log format"},
		{"pushed down", []Option{WithLogFormat(LogFormatCompacted, typesOK), WithProjection([]int{1}), WithProjectionPushedDown(true)}, "cannot project"},
	} {
		if _, err := NewDecoder(lookup, tc.opts...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	for in, want := range map[string]LogFormat{"": LogFormatArrow, "arrow": LogFormatArrow, "Compacted": LogFormatCompacted, "INDEXED": LogFormatIndexed} {
		if got, err := ParseLogFormat(in); err != nil || got != want {
			t.Errorf("ParseLogFormat(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseLogFormat("json"); err == nil {
		t.Error("ParseLogFormat(json) did not fail")
	}
}
