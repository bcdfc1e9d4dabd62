package records

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// TestRowLogEncoderMatchesJava: every batch the Java client wrote to the
// all-types COMPACTED and INDEXED logs (and a primary-key table's
// COMPACTED changelog, with its change types), decoded, then encoded again
// with the same header fields: the same header and every record byte for
// byte (whole batches CRC included), but for the slots of null array
// elements Java leaves dirty, in a few rows.
func TestRowLogEncoderMatchesJava(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	typ := allTypesTypes(t)
	s, _ := typ(1)
	for _, seed := range []string{"cluster-log-compacted.bin", "cluster-log-indexed.bin", "cluster-pk-changelog-compacted.bin"} {
		format := seedFormat(seed)
		enc, err := NewRowLogEncoder(s, format)
		if err != nil {
			t.Fatal(err)
		}
		d, err := NewDecoder(fixedLookup(enc.Schema()), WithAllocator(mem), WithLogFormat(format, typ))
		if err != nil {
			t.Fatal(err)
		}
		exact, dirty, empties := 0, 0, 0
		it := NewBatchIterator(readSeed(t, seed))
		for it.Next() {
			raw := it.Batch()
			b, err := d.DecodeBatch(raw, 0)
			if err != nil {
				t.Fatal(err)
			}
			if b == nil { // an empty batch (a changelog's delete of a missing key)
				b = &Batch{Record: emptyRecord(enc.Schema())}
				if !raw.AppendOnly() {
					b.ChangeTypes = []ChangeType{}
				}
				empties++
			}
			got, err := enc.AppendLogBatch(nil, b.Record, LogBatchOptions{
				SchemaID: raw.SchemaID, ChangeTypes: b.ChangeTypes, BaseOffset: raw.BaseOffset,
				CommitTimestamp: raw.CommitTimestamp, Writer: &WriterState{raw.WriterID, raw.BatchSequence},
			})
			n := b.NumRows()
			if err == nil && !bytes.Equal(got, raw.Bytes) {
				var k int
				k, err = sameBatchButDirtySlots(t, mem, typ, format, got, raw)
				dirty += k
				n -= k
			}
			exact += n
			b.Release()
			if err != nil {
				t.Fatalf("%s: batch at offset %d: %v", seed, raw.BaseOffset, err)
			}
		}
		if exact < 30 || dirty > exact/4 {
			t.Fatalf("%s: %d rows byte for byte, %d with dirty null slots", seed, exact, dirty)
		}
		t.Logf("%s: %d rows byte for byte, %d but for dirty null slots, %d empty batches", seed, exact, dirty, empties)
	}
}

func emptyRecord(s *arrow.Schema) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, s)
	defer b.Release()
	return b.NewRecordBatch()
}

// sameBatchButDirtySlots checks that got has raw's header but for the CRC
// and raw's records but for the slots of null array elements, and returns
// how many records differ in those.
func sameBatchButDirtySlots(t *testing.T, mem memory.Allocator, typ TypeLookup, format LogFormat, got []byte, raw *RawBatch) (int, error) {
	g := NewBatchIterator(got)
	if !g.Next() {
		return 0, fmt.Errorf("encoded batch does not parse: %v", g.Err())
	}
	h, w := g.Batch().Header, raw.Header
	h.CRC, w.CRC = 0, 0
	if h != w {
		return 0, fmt.Errorf("header\n%+v, Java wrote\n%+v", h, w)
	}
	gr, wr := seedRows(t, g.Batch()), seedRows(t, raw)
	if len(gr) != len(wr) {
		return 0, fmt.Errorf("%d records, Java wrote %d", len(gr), len(wr))
	}
	dirty := 0
	for i := range gr {
		same, ok := sameBytesButDirtySlots(gr[i], wr[i])
		if !ok || !same && !sameValues(t, mem, typ, format, gr[i], wr[i]) {
			return 0, fmt.Errorf("record %d:\n%x\nJava wrote\n%x", i, gr[i], wr[i])
		}
		if !same {
			dirty++
		}
	}
	return dirty, nil
}

// logRoundTrip encodes rec as a batch of format (with change types when
// cts is not nil) and decodes it: the rows and change types must be rec's
// and cts.
func logRoundTrip(t *testing.T, mem memory.Allocator, s *types.Schema, format LogFormat, rec arrow.RecordBatch, cts []ChangeType) {
	t.Helper()
	enc, err := NewRowLogEncoder(s, format)
	if err != nil {
		t.Fatal(err)
	}
	batch, err := enc.AppendLogBatch(nil, rec, LogBatchOptions{SchemaID: 1, ChangeTypes: cts, BaseOffset: 40})
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDecoder(fixedLookup(enc.Schema()), WithAllocator(mem), WithLogFormat(format, schemaLookup(s)))
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.Decode(batch, 0)
	defer res.Release()
	if err != nil {
		t.Fatalf("%s batch: %v", format, err)
	}
	if rec.NumRows() == 0 {
		if len(res.Batches) != 0 {
			t.Fatalf("an empty batch decoded to %d batches", len(res.Batches))
		}
		return
	}
	if len(res.Batches) != 1 || res.Batches[0].FirstOffset != 40 {
		t.Fatalf("%s batch decoded to %d batches", format, len(res.Batches))
	}
	b := res.Batches[0]
	if got := b.ChangeTypes; fmt.Sprint(got) != fmt.Sprint(cts) {
		t.Fatalf("change types %v, want %v", got, cts)
	}
	requireSameRecords(t, rec, b.Record)
}

// TestRowLogEncoderRoundTrip: the random schemas and rows of
// TestRowEncoderRoundTrip as INDEXED and COMPACTED log batches (append-only
// and with change types), and as INDEXED KV values.
func TestRowLogEncoderRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(3, 4))
	schemas := []*types.Schema{mustSchema(t, everyNestedColumns()), mustSchema(t, allTypesColumnsOf(t))}
	for i := 0; i < 40; i++ {
		schemas = append(schemas, randomSchema(t, r, 1+r.IntN(8)))
	}
	for i, s := range schemas {
		rec := randomRecord(t, mem, s, 50, r)
		cts := randomChangeTypes(50, uint64(i))
		for _, format := range []LogFormat{LogFormatIndexed, LogFormatCompacted} {
			t.Run(fmt.Sprint(i, format), func(t *testing.T) {
				logRoundTrip(t, mem, s, format, rec, nil)
				logRoundTrip(t, mem, s, format, rec, cts)
			})
		}
		t.Run(fmt.Sprint(i, "kv"), func(t *testing.T) { kvRoundTripFormat(t, mem, s, LogFormatIndexed, rec) })
		rec.Release()
	}
}

func allTypesColumnsOf(t testing.TB) []types.Column {
	cols, err := types.ParseColumns(allTypesColumns)
	if err != nil {
		t.Fatal(err)
	}
	return cols
}

// TestRowLogEncoderErrors: values a row format cannot hold are refused
// with the column, element and row, and leave dst as it was.
func TestRowLogEncoderErrors(t *testing.T) {
	s := mustSchema(t, mustColumns(t, "id BIGINT NOT NULL, c CHAR(2), a ARRAY<INT NOT NULL>, r ROW<x INT NOT NULL>, d DECIMAL(10, 0)"))
	as, _ := s.ArrowSchema()
	build := func(fill func(b *array.RecordBuilder)) arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, as)
		defer b.Release()
		b.Field(0).(*array.Int64Builder).Append(7)
		fill(b)
		return b.NewRecordBatch()
	}
	nulls := func(b *array.RecordBuilder, skip int) {
		for c := 1; c < 5; c++ {
			if c != skip {
				b.Field(c).AppendNull()
			}
		}
	}
	cases := []struct {
		name, format, want string
		fill               func(b *array.RecordBuilder)
	}{
		{"char", "INDEXED", `INDEXED row 0: column "c": CHAR(2) value of 3 bytes`, func(b *array.RecordBuilder) {
			nulls(b, 1)
			b.Field(1).(*array.StringBuilder).Append("é1")
		}},
		{"element", "COMPACTED", `COMPACTED row 0: column "a": element 1: null in a NOT NULL element`, func(b *array.RecordBuilder) {
			nulls(b, 2)
			lb := b.Field(2).(*array.ListBuilder)
			lb.Append(true)
			lb.ValueBuilder().(*array.Int32Builder).AppendValues([]int32{1, 0}, []bool{true, false})
		}},
		{"field", "INDEXED", `INDEXED row 0: column "r": field "x": null in a NOT NULL field`, func(b *array.RecordBuilder) {
			nulls(b, 3)
			sb := b.Field(3).(*array.StructBuilder)
			sb.Append(true)
			sb.FieldBuilder(0).AppendNull()
		}},
		{"decimal", "COMPACTED", `COMPACTED row 0: column "d": DECIMAL of precision <= 18 with unscaled value 18446744073709551616, beyond a long`, func(b *array.RecordBuilder) {
			nulls(b, 4)
			b.Field(4).(*array.Decimal128Builder).Append(decimal128.New(1, 0))
		}},
	}
	for _, c := range cases {
		rec := build(c.fill)
		enc, err := NewRowLogEncoder(s, LogFormat(c.format))
		if err != nil {
			t.Fatal(err)
		}
		dst := []byte("kept")
		out, err := enc.AppendLogBatch(dst, rec, LogBatchOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) || string(out) != "kept" {
			t.Errorf("%s: %q, %v; want %q", c.name, out, err, c.want)
		}
		rec.Release()
	}
	if _, err := NewRowLogEncoder(s, LogFormatArrow); err == nil {
		t.Error("ARROW accepted as a row format")
	}
}
