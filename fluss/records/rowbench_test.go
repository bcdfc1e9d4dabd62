package records

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// rowBenchSchema has the shape of bench/benchtable's table: ten columns,
// the commonest types, three strings. (benchtable imports this package
// through fluss, so its Schema cannot be used here.)
var rowBenchSchema = types.MustSchema([]types.Column{
	types.NewColumn("id", types.BigInt().NotNull()),
	types.NewColumn("ts", types.Timestamp(3)),
	types.NewColumn("user_name", types.String()),
	types.NewColumn("category", types.String()),
	types.NewColumn("price", types.Decimal(12, 2)),
	types.NewColumn("quantity", types.Int()),
	types.NewColumn("score", types.Double()),
	types.NewColumn("active", types.Boolean()),
	types.NewColumn("day", types.Date()),
	types.NewColumn("note", types.String()),
})

// benchRow is one generated row of rowBenchSchema; note is null when empty.
type benchRow struct {
	id, ts, price   int64
	user, cat, note string
	qty, day        int32
	score           float64
	active          bool
}

func genBenchRow(i int64) benchRow {
	r := benchRow{id: i, ts: 1_700_000_000_000 + i*37, price: i * 7919 % 1_000_000,
		user: fmt.Sprintf("user_%06d", i*7%100_000), cat: []string{"books", "games", "garden", "music"}[i%4],
		qty: int32(i % 50), day: int32(19_000 + i%365), score: float64(i%1000) / 7, active: i%3 == 0}
	if i%10 != 0 {
		r.note = fmt.Sprintf("note %d about item %d, some words", i, i*31)
	}
	return r
}

// compactedBenchRow appends r as a CompactedRow.
func compactedBenchRow(dst []byte, r benchRow) []byte {
	var null byte
	if r.note == "" {
		null = 1 << 1 // field 9: bit 1 of the second bitmap byte
	}
	dst = append(dst, 0, null)
	dst = binary.AppendUvarint(dst, uint64(r.id))
	dst = binary.AppendUvarint(dst, uint64(r.ts))
	for _, s := range []string{r.user, r.cat} {
		dst = append(binary.AppendUvarint(dst, uint64(len(s))), s...)
	}
	dst = binary.AppendUvarint(dst, uint64(r.price))
	dst = binary.AppendUvarint(dst, uint64(uint32(r.qty)))
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(r.score))
	dst = append(dst, map[bool]byte{false: 0, true: 1}[r.active])
	dst = binary.AppendUvarint(dst, uint64(uint32(r.day)))
	if r.note != "" {
		dst = append(binary.AppendUvarint(dst, uint64(len(r.note))), r.note...)
	}
	return dst
}

// compactedBenchBatch is a COMPACTED append-only batch of rows [first,
// first+n).
func compactedBenchBatch(first int64, n int) []byte {
	b := make([]byte, HeaderSize)
	var row []byte
	for i := first; i < first+int64(n); i++ {
		row = compactedBenchRow(row[:0], genBenchRow(i))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(row)+1))
		b = append(append(b, byte(AppendOnly)), row...)
	}
	h := Header{BaseOffset: first, Length: int32(len(b) - LogOverhead), SchemaID: 1,
		Attributes: attrAppendOnly, WriterID: -1, BatchSequence: -1, RecordCount: int32(n),
		LastOffsetDelta: int32(n - 1)}
	putHeader(b, &h)
	binary.LittleEndian.PutUint32(b[offCRC:], crc32c(b[offSchemaID:]))
	return b
}

// arrowBenchRecord is rows [first, first+n) as an Arrow record.
func arrowBenchRecord(t testing.TB, as *arrow.Schema, first int64, n int) arrow.RecordBatch {
	bld := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer bld.Release()
	for i := first; i < first+int64(n); i++ {
		r := genBenchRow(i)
		bld.Field(0).(*array.Int64Builder).Append(r.id)
		bld.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(r.ts))
		bld.Field(2).(*array.StringBuilder).Append(r.user)
		bld.Field(3).(*array.StringBuilder).Append(r.cat)
		bld.Field(4).(*array.Decimal128Builder).Append(decimal128.FromI64(r.price))
		bld.Field(5).(*array.Int32Builder).Append(r.qty)
		bld.Field(6).(*array.Float64Builder).Append(r.score)
		bld.Field(7).(*array.BooleanBuilder).Append(r.active)
		bld.Field(8).(*array.Date32Builder).Append(arrow.Date32(r.day))
		if r.note == "" {
			bld.Field(9).AppendNull()
		} else {
			bld.Field(9).(*array.StringBuilder).Append(r.note)
		}
	}
	return bld.NewRecordBatch()
}

// BenchmarkDecodeRowFormat decodes the same 65,536 rows of the benchmark
// table's shape from ARROW (ZSTD, as Fluss writes by default; NONE) and
// COMPACTED batches of 4,096 rows, the offline twin of bench/scan's
// ScanRowFormat: ns/row of COMPACTED over ns/row of ARROW-ZSTD is the
// decode part of its CPU ratio.
func BenchmarkDecodeRowFormat(b *testing.B) {
	as, err := types.ArrowSchemaOfRow(types.RowOf(rowBenchFields()...))
	if err != nil {
		b.Fatal(err)
	}
	const batches, rows = 16, 4096
	wires := map[string][]byte{}
	for k := int64(0); k < batches; k++ {
		first := k * rows
		wires["COMPACTED"] = append(wires["COMPACTED"], compactedBenchBatch(first, rows)...)
		rec := arrowBenchRecord(b, as, first, rows)
		for _, c := range []Compression{CompressionZSTD, CompressionNone} {
			name := "ARROW-" + c.String()
			wires[name] = mustEncodeAt(b, wires[name], rec, c, first)
		}
		rec.Release()
	}
	for _, name := range []string{"ARROW-ZSTD", "ARROW-NONE", "COMPACTED"} {
		format := LogFormatArrow
		if name == "COMPACTED" {
			format = LogFormatCompacted
		}
		b.Run(name, func(b *testing.B) {
			d, err := NewDecoder(fixedLookup(as), WithLogFormat(format,
				func(int16) (*types.Schema, error) { return rowBenchSchema, nil }))
			if err != nil {
				b.Fatal(err)
			}
			wire := wires[name]
			b.SetBytes(int64(len(wire)))
			b.ReportAllocs()
			for b.Loop() {
				res, err := d.Decode(wire, 0)
				if err != nil {
					b.Fatal(err)
				}
				res.Release()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batches*rows), "ns/row")
		})
	}
}

func rowBenchFields() []types.Field {
	var fs []types.Field
	for _, c := range rowBenchSchema.Columns {
		fs = append(fs, types.NewField(c.Name, c.Type))
	}
	return fs
}

func mustEncodeAt(t testing.TB, dst []byte, rec arrow.RecordBatch, c Compression, base int64) []byte {
	out, err := AppendLogBatch(dst, rec, LogBatchOptions{SchemaID: 1, Compression: c, BaseOffset: base})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
