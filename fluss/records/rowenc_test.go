package records

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// seedRows returns the rows of the records of a row-format batch (without
// their length and change type).
func seedRows(t testing.TB, raw *RawBatch) [][]byte {
	t.Helper()
	var out [][]byte
	b := raw.Bytes
	for pos := raw.RecordsOffset(); pos < len(b); {
		n := int(int32(binary.LittleEndian.Uint32(b[pos:])))
		out = append(out, b[pos+recordOverhead:pos+4+n])
		pos += 4 + n
	}
	return out
}

// sameBytesButDirtySlots reports whether got equals want but for bytes
// got has zero: the slots of null array elements, which Java's
// BinaryArrayWriter leaves holding the previous array's values when it
// reuses its buffer for an array of the same length.
func sameBytesButDirtySlots(got, want []byte) (exact, ok bool) {
	if bytes.Equal(got, want) {
		return true, true
	}
	if len(got) != len(want) {
		return false, false
	}
	for i := range got {
		if got[i] != want[i] && got[i] != 0 {
			return false, false
		}
	}
	return false, true
}

// TestRowEncoderMatchesJava: the all-types rows the Java client wrote to a
// COMPACTED log (CompactedRows, the bytes its KV values hold too), decoded,
// then encoded by RowEncoder: every row the Java one, ARRAY, MAP and ROW
// columns included, byte for byte but for the slots of null array elements
// Java leaves dirty (then both rows decode to the same values).
func TestRowEncoderMatchesJava(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	as := allTypesSchema(t)
	enc, err := NewRowEncoder(as, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	typ := allTypesTypes(t)
	d, err := NewDecoder(fixedLookup(as), WithAllocator(mem), WithLogFormat(LogFormatCompacted, typ))
	if err != nil {
		t.Fatal(err)
	}
	exact, dirty := 0, 0
	for _, seed := range []string{"cluster-log-compacted.bin", "cluster-pk-changelog-compacted.bin"} {
		it := NewBatchIterator(readSeed(t, seed))
		for it.Next() {
			raw := it.Batch()
			b, err := d.DecodeBatch(raw, 0)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range seedRows(t, raw) {
				got, err := enc.AppendValue(nil, b.Record, i)
				if err != nil {
					b.Release()
					t.Fatalf("offset %d: %v", b.Offset(i), err)
				}
				same, ok := sameBytesButDirtySlots(got, want)
				if !ok || !same && !sameValues(t, mem, typ, LogFormatCompacted, got, want) {
					b.Release()
					t.Fatalf("offset %d: encoded\n%x\nJava wrote\n%x", b.Offset(i), got, want)
				}
				if same {
					exact++
				} else {
					dirty++
				}
			}
			b.Release()
		}
	}
	if exact < 80 || dirty > exact/4 {
		t.Fatalf("%d rows byte for byte, %d with dirty null slots", exact, dirty)
	}
	t.Logf("%d rows byte for byte, %d but for dirty null slots", exact, dirty)
}

// sameValues reports whether two rows of format decode (as KV values) to
// the same values.
func sameValues(t testing.TB, mem memory.Allocator, typ TypeLookup, format LogFormat, a, b []byte) bool {
	t.Helper()
	d, err := NewValueDecoder(typ, 1, format, WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	for _, row := range [][]byte{a, b} {
		if err := d.Append(append([]byte{1, 0}, row...)); err != nil {
			t.Fatalf("decode %x: %v", row, err)
		}
	}
	rec, err := d.Flush()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	x, y := rec.NewSlice(0, 1), rec.NewSlice(1, 2)
	defer x.Release()
	defer y.Release()
	return sameRecords(x, y)
}

// schemaLookup is the TypeLookup of one schema.
func schemaLookup(s *types.Schema) TypeLookup {
	return func(int16) (*types.Schema, error) { return s, nil }
}

// kvRoundTrip encodes every row of rec with RowEncoder as a KV value and
// decodes them with a ValueDecoder: the values must be rec's.
func kvRoundTrip(t *testing.T, mem memory.Allocator, s *types.Schema, rec arrow.RecordBatch) {
	t.Helper()
	kvRoundTripFormat(t, mem, s, LogFormatCompacted, rec)
}

// kvRoundTripFormat is kvRoundTrip for values in format: COMPACTED from
// NewRowEncoder (the Arrow types), INDEXED from NewKVEncoder (the Fluss
// types).
func kvRoundTripFormat(t *testing.T, mem memory.Allocator, s *types.Schema, format LogFormat, rec arrow.RecordBatch) {
	t.Helper()
	enc, err := NewRowEncoder(rec.Schema(), []int{0})
	if format != LogFormatCompacted {
		enc, err = NewKVEncoder(s, []int{0}, format)
	}
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewValueDecoder(schemaLookup(s), 1, format, WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	var value []byte
	for i := 0; i < int(rec.NumRows()); i++ {
		if value, err = enc.AppendValue(append(value[:0], 1, 0), rec, i); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		if err := d.Append(value); err != nil {
			t.Fatalf("row %d: %v\n%x", i, err, value)
		}
	}
	got, err := d.Flush()
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	requireSameRecords(t, rec, got)
}

// requireSameRecords fails unless want and got hold the same values (NaN
// equal to NaN), naming the first column and row that differ.
func requireSameRecords(t *testing.T, want, got arrow.RecordBatch) {
	t.Helper()
	if sameRecords(want, got) {
		return
	}
	for c := 0; c < int(want.NumCols()); c++ {
		for i := 0; i < int(want.NumRows()); i++ {
			w, g := array.NewSlice(want.Column(c), int64(i), int64(i+1)), array.NewSlice(got.Column(c), int64(i), int64(i+1))
			same := array.ApproxEqual(w, g, array.WithAbsTolerance(0), array.WithNaNsEqual(true))
			if !same {
				t.Errorf("column %s (%s) row %d:\nwant %v\ngot  %v", want.ColumnName(c), want.Schema().Field(c).Type, i, w, g)
			}
			w.Release()
			g.Release()
			if !same {
				t.FailNow()
			}
		}
	}
	t.Fatalf("records differ:\nwant %v\ngot  %v", want, got)
}

// TestRowEncoderRoundTrip: random values of ARRAY, MAP and ROW of every
// scalar type (nulls among elements, arrays of more than 32 elements,
// inline and out-of-line bytes, compact and wide DECIMAL and TIMESTAMP),
// then of random nested types, encoded as KV values and decoded back.
func TestRowEncoderRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(1, 2))
	schemas := []*types.Schema{mustSchema(t, everyNestedColumns())}
	for i := 0; i < 40; i++ {
		schemas = append(schemas, randomSchema(t, r, 1+r.IntN(8)))
	}
	for i, s := range schemas {
		rec := randomRecord(t, mem, s, 60, r)
		t.Run(fmt.Sprint(i), func(t *testing.T) { kvRoundTrip(t, mem, s, rec) })
		rec.Release()
	}
}

// FuzzRowEncoderRoundTrip builds a random schema of nested types and random
// rows from the fuzzer's seed, encodes them as COMPACTED and INDEXED KV
// values and log batches (with change types or append-only) and decodes
// them back: the values must survive, nothing may leak.
func FuzzRowEncoderRoundTrip(f *testing.F) {
	for seed := uint64(0); seed < 8; seed++ {
		f.Add(seed, uint8(seed*3), uint8(40))
	}
	f.Fuzz(func(t *testing.T, seed uint64, ncols, nrows uint8) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		r := rand.New(rand.NewPCG(seed, uint64(ncols)<<8|uint64(nrows)))
		s := randomSchema(t, r, 1+int(ncols%12))
		n := int(nrows % 80)
		rec := randomRecord(t, mem, s, n, r)
		var cts []ChangeType
		if seed%2 == 0 {
			cts = randomChangeTypes(n, seed)
		}
		for _, format := range []LogFormat{LogFormatCompacted, LogFormatIndexed} {
			kvRoundTripFormat(t, mem, s, format, rec)
			logRoundTrip(t, mem, s, format, rec, cts)
		}
		rec.Release()
		mem.AssertSize(t, 0)
	})
}
