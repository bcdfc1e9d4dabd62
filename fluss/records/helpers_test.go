package records

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// testSchema mirrors how Fluss maps its types to Arrow (protocol reference §4.2).
func testSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: false},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "i16", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "bytes", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "bin4", Type: &arrow.FixedSizeBinaryType{ByteWidth: 4}, Nullable: true},
		{Name: "dec", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
		{Name: "bigdec", Type: &arrow.Decimal128Type{Precision: 38, Scale: 10}, Nullable: true},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "t", Type: arrow.FixedWidthTypes.Time32ms, Nullable: true},
		{Name: "t6", Type: arrow.FixedWidthTypes.Time64us, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
		{Name: "ts9", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}, Nullable: true},
		{Name: "arr", Type: arrow.ListOfField(arrow.Field{Name: "element", Type: arrow.PrimitiveTypes.Int32, Nullable: true}), Nullable: true},
		{Name: "m", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64), Nullable: true},
		{Name: "row", Type: arrow.StructOf(
			arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
			arrow.Field{Name: "y", Type: arrow.BinaryTypes.String, Nullable: true},
		), Nullable: true},
	}, nil)
}

// buildRecord fills a record of schema s with n pseudo-random rows (about
// one value in seven null); id is first+row.
func buildRecord(t testing.TB, mem memory.Allocator, s *arrow.Schema, n int, first int64, seed uint64) arrow.RecordBatch {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	b := array.NewRecordBuilder(mem, s)
	defer b.Release()
	for row := 0; row < n; row++ {
		for i, f := range s.Fields() {
			fb := b.Field(i)
			if f.Nullable && r.IntN(7) == 0 {
				fb.AppendNull()
				continue
			}
			appendValue(t, fb, f.Name, first+int64(row), r)
		}
	}
	return b.NewRecordBatch()
}

func appendValue(t testing.TB, fb array.Builder, name string, id int64, r *rand.Rand) {
	switch fb := fb.(type) {
	case *array.Int64Builder:
		if name == "id" {
			fb.Append(id)
		} else {
			fb.Append(r.Int64() - 1<<62)
		}
	case *array.BooleanBuilder:
		fb.Append(r.IntN(2) == 0)
	case *array.Int8Builder:
		fb.Append(int8(r.IntN(256) - 128))
	case *array.Int16Builder:
		fb.Append(int16(r.IntN(65536) - 32768))
	case *array.Int32Builder:
		fb.Append(r.Int32() - 1<<30)
	case *array.Float32Builder:
		fb.Append(r.Float32() * 1000)
	case *array.Float64Builder:
		fb.Append(r.NormFloat64())
	case *array.StringBuilder:
		fb.Append(fmt.Sprintf("v%d-%s", id, string(make([]byte, r.IntN(5)))+"é✓"))
	case *array.BinaryBuilder:
		buf := make([]byte, r.IntN(20))
		for i := range buf {
			buf[i] = byte(r.IntN(256))
		}
		fb.Append(buf)
	case *array.FixedSizeBinaryBuilder:
		fb.Append([]byte{byte(id), 1, 2, byte(r.IntN(256))})
	case *array.Decimal128Builder:
		fb.Append(decimal128.FromI64(r.Int64N(1e9) - 5e8))
	case *array.Date32Builder:
		fb.Append(arrow.Date32(r.Int32N(40000) - 10000))
	case *array.Time32Builder:
		fb.Append(arrow.Time32(r.Int32N(86400000)))
	case *array.Time64Builder:
		fb.Append(arrow.Time64(r.Int64N(86400000) * 1000))
	case *array.TimestampBuilder:
		fb.Append(arrow.Timestamp(r.Int64N(1 << 50)))
	case *array.ListBuilder:
		fb.Append(true)
		vb := fb.ValueBuilder().(*array.Int32Builder)
		for k := r.IntN(4); k > 0; k-- {
			if r.IntN(5) == 0 {
				vb.AppendNull()
			} else {
				vb.Append(r.Int32())
			}
		}
	case *array.MapBuilder:
		fb.Append(true)
		kb := fb.KeyBuilder().(*array.StringBuilder)
		ib := fb.ItemBuilder().(*array.Int64Builder)
		for k := r.IntN(3); k > 0; k-- {
			kb.Append(fmt.Sprintf("k%d", k))
			ib.Append(r.Int64())
		}
	case *array.StructBuilder:
		fb.Append(true)
		fb.FieldBuilder(0).(*array.Int32Builder).Append(r.Int32())
		if r.IntN(3) == 0 {
			fb.FieldBuilder(1).(*array.StringBuilder).AppendNull()
		} else {
			fb.FieldBuilder(1).(*array.StringBuilder).Append("y")
		}
	default:
		t.Fatalf("no test value for %T", fb)
	}
}

func randomChangeTypes(n int, seed uint64) []ChangeType {
	r := rand.New(rand.NewPCG(seed, 9))
	out := make([]ChangeType, n)
	for i := range out {
		out[i] = ChangeType(1 + r.IntN(4))
	}
	return out
}

func fixedLookup(s *arrow.Schema) SchemaLookup {
	return func(int16) (*arrow.Schema, error) { return s, nil }
}

// mustEncode encodes rec as a fixture batch at baseOffset.
func mustEncode(t testing.TB, rec arrow.RecordBatch, c Compression, base int64, cts []ChangeType, mem memory.Allocator) []byte {
	t.Helper()
	b, err := EncodeLogBatch(rec, LogBatchOptions{
		SchemaID: 1, Compression: c, ChangeTypes: cts, BaseOffset: base,
		CommitTimestamp: 1700000000000 + base, Allocator: mem,
	})
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return b
}

func requireRecordsEqual(t testing.TB, want, got arrow.RecordBatch) {
	t.Helper()
	if !want.Schema().Equal(got.Schema()) {
		t.Fatalf("schema differs:\nwant %v\ngot  %v", want.Schema(), got.Schema())
	}
	if !array.RecordEqual(want, got) {
		for i := 0; i < int(want.NumCols()); i++ {
			if !array.Equal(want.Column(i), got.Column(i)) {
				t.Fatalf("column %s differs:\nwant %v\ngot  %v", want.ColumnName(i), want.Column(i), got.Column(i))
			}
		}
		t.Fatalf("records differ")
	}
}

// sameRecords reports whether two records have the same schema and values,
// exactly, but with NaN equal to NaN (the all-types seeds hold NaNs).
func sameRecords(want, got arrow.RecordBatch) bool {
	return want.Schema().Equal(got.Schema()) &&
		array.RecordApproxEqual(want, got, array.WithAbsTolerance(0), array.WithNaNsEqual(true))
}
