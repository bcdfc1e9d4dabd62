package fluss

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// benchRecord builds n rows of a 10-column table of mixed types.
func benchRecord(b *testing.B, n int) (*types.Schema, *arrow.Schema, arrow.RecordBatch) {
	b.Helper()
	s := types.MustSchema([]types.Column{
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
	as, err := s.ArrowSchema()
	if err != nil {
		b.Fatal(err)
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer rb.Release()
	for i := 0; i < n; i++ {
		rb.Field(0).(*array.Int64Builder).Append(int64(i))
		rb.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(1735689600000 + int64(i)*37))
		rb.Field(2).(*array.StringBuilder).Append("user_abcdefgh")
		rb.Field(3).(*array.StringBuilder).Append("garden")
		rb.Field(4).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(i * 7919 % 10000000)))
		rb.Field(5).(*array.Int32Builder).Append(int32(i % 1000))
		rb.Field(6).(*array.Float64Builder).Append(float64(i) * 0.37)
		rb.Field(7).(*array.BooleanBuilder).Append(i%2 == 0)
		rb.Field(8).(*array.Date32Builder).Append(arrow.Date32(19000 + i%2000))
		rb.Field(9).(*array.StringBuilder).Append("some note text of about forty characters")
	}
	return s, as, rb.NewRecordBatch()
}

// BenchmarkBuildJSON measures turning rows into messages (per row).
func BenchmarkBuildJSON(b *testing.B) {
	const n = 1024
	s, as, rec := benchRecord(b, n)
	defer rec.Release()
	mb, err := newMessageBuilder(tableMeta{database: "db", table: "t", tableID: 9}, s, as, false)
	if err != nil {
		b.Fatal(err)
	}
	bc := &batchContext{key: kb0, schemaID: 1, timestamp: 1735689600000}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += n {
		if _, err := mb.build(bc, rec, nil, 1000, 0, n); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildArrow measures turning a record batch into one IPC message
// (per row).
func BenchmarkBuildArrow(b *testing.B) {
	const n = 1024
	s, as, rec := benchRecord(b, n)
	defer rec.Release()
	mb, err := newMessageBuilder(tableMeta{database: "db", table: "t", tableID: 9}, s, as, true)
	if err != nil {
		b.Fatal(err)
	}
	bc := &batchContext{key: kb0, schemaID: 1, timestamp: 1735689600000}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += n {
		if _, err := mb.build(bc, rec, nil, 1000, 0, n); err != nil {
			b.Fatal(err)
		}
	}
}
