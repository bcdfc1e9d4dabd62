package jsonrow

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// mixed10 is a 10-column table of common types (the shape of the scan benchmark).
const mixed10 = "id BIGINT NOT NULL, name STRING, score DOUBLE, qty INT, price DECIMAL(12, 2), " +
	"ts TIMESTAMP_LTZ(3), ok BOOLEAN, day DATE, payload BYTES, tags ARRAY<STRING>"

func mixed10Rows(n int) [][]any {
	rows := make([][]any, n)
	for i := range rows {
		v := int64(i)
		rows[i] = []any{
			v, fmt.Sprintf("user-%d \"quoted\" é", i), float64(i) * 0.37, v % 1000, fmt.Sprintf("%d.%02d", i, i%100),
			1700000000000 + v*997, i%3 == 0, 19000 + v%365, []byte(fmt.Sprintf("payload-%08d", i)), []any{"a", "bb", fmt.Sprint(i)},
		}
		if i%10 == 9 {
			rows[i][1], rows[i][4], rows[i][9] = nil, nil, nil
		}
	}
	return rows
}

// benchBatch is the record batch of n rows of a benchmark table and its
// encoder; the batch is released (and the allocator checked) when b ends.
func benchBatch(b *testing.B, columns string, rowsOf func(int) [][]any, n int) (arrow.RecordBatch, *Encoder, int) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	cols, err := types.ParseColumns(columns)
	if err != nil {
		b.Fatal(err)
	}
	s := types.MustSchema(cols)
	rec := buildRecord(b, mem, s, rowsOf(n))
	b.Cleanup(func() {
		rec.Release()
		mem.AssertSize(b, 0)
	})
	enc, err := NewSchemaEncoder(s)
	if err != nil {
		b.Fatal(err)
	}
	return rec, enc, len(cols)
}

func benchmarkEncode(b *testing.B, columns string, rowsOf func(int) [][]any) {
	const n = 4096
	rec, enc, _ := benchBatch(b, columns, rowsOf, n)
	buf := make([]byte, 0, 1<<20)
	var bytes int64
	b.ReportAllocs()
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		if err := enc.Bind(rec); err != nil {
			b.Fatal(err)
		}
		for i := 0; i < n; i++ {
			buf = enc.AppendRow(buf[:0], i)
			bytes += int64(len(buf))
		}
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(n*b.N)/sec, "rows/s")
	b.ReportMetric(float64(bytes)/sec/1e6, "MB/s")
	b.ReportMetric(float64(bytes)/float64(n*b.N), "B/row")
}

// BenchmarkEncode encodes 4096-row batches of a 10-column mixed table; one
// op = Bind + 4096 rows (allocs/op are Bind's, per batch, none per row).
func BenchmarkEncode(b *testing.B) { benchmarkEncode(b, mixed10, mixed10Rows) }

// BenchmarkEncodeBenchTable does the same for bench/benchtable's table.
func BenchmarkEncodeBenchTable(b *testing.B) { benchmarkEncode(b, benchTable, benchTableRows) }

// BenchmarkEncodeAllTypes does the same for a 30-column table of every type.
func BenchmarkEncodeAllTypes(b *testing.B) { benchmarkEncode(b, allTypes, allTypesRows) }

// benchTable is the shape of bench/benchtable's table (make bench).
const benchTable = "id BIGINT NOT NULL, ts TIMESTAMP(3), user_name STRING, category STRING, price DECIMAL(12, 2), " +
	"quantity INT, score DOUBLE, active BOOLEAN, day DATE, note STRING"

func benchTableRows(n int) [][]any {
	rows := make([][]any, n)
	for i := range rows {
		v := int64(i)
		var qty any = v % 1000
		if i%7 == 0 {
			qty = nil
		}
		rows[i] = []any{v, 1700000000000 + v*997, fmt.Sprintf("user_%08d", i), []string{"garden", "books", "toys"}[i%3],
			fmt.Sprintf("%d.%02d", i%100000, i%100), qty, float64(i%10000) * 0.37, i%2 == 0, 19000 + v%365,
			fmt.Sprintf("a note of some forty characters, row %d", i)}
	}
	return rows
}

// BenchmarkValuesRow builds 4096-row batches as structured rows
// (Values.Row); one op = Bind + 4096 rows.
func BenchmarkValuesRow(b *testing.B) {
	b.Run("bench_table", func(b *testing.B) { benchmarkValuesRow(b, benchTable, benchTableRows) })
	b.Run("mixed10", func(b *testing.B) { benchmarkValuesRow(b, mixed10, mixed10Rows) })
}

func benchmarkValuesRow(b *testing.B, columns string, rowsOf func(int) [][]any) {
	const n = 4096
	rec, enc, ncols := benchBatch(b, columns, rowsOf, n)
	v := NewValues(enc)
	b.ReportAllocs()
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		if err := v.Bind(rec); err != nil {
			b.Fatal(err)
		}
		for i := 0; i < n; i++ {
			if len(v.Row(i)) != ncols {
				b.Fatal("row misses columns")
			}
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(n*b.N), "ns/row")
	b.ReportMetric(float64(testing.AllocsPerRun(1, func() {
		for i := 0; i < n; i++ {
			v.Row(i)
		}
	}))/n, "allocs/row")
}

// BenchmarkDecode reads 4096 JSON rows (the Encoder's output of each
// benchmark table) back into a record batch; one op = 4096 AppendJSON +
// NewRecord.
func BenchmarkDecode(b *testing.B) {
	b.Run("bench_table", func(b *testing.B) { benchmarkDecode(b, benchTable, benchTableRows) })
	b.Run("mixed10", func(b *testing.B) { benchmarkDecode(b, mixed10, mixed10Rows) })
	b.Run("all_types", func(b *testing.B) { benchmarkDecode(b, allTypes, allTypesRows) })
}

func benchmarkDecode(b *testing.B, columns string, rowsOf func(int) [][]any) {
	const n = 4096
	rec, enc, _ := benchBatch(b, columns, rowsOf, n)
	if err := enc.Bind(rec); err != nil {
		b.Fatal(err)
	}
	lines := make([][]byte, n)
	var bytes int64
	for i := range lines {
		lines[i] = enc.AppendRow(nil, i)
		bytes += int64(len(lines[i]))
	}
	cols, err := types.ParseColumns(columns)
	if err != nil {
		b.Fatal(err)
	}
	rb := newTestBuilder(b, types.MustSchema(cols))
	b.ReportAllocs()
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		for _, line := range lines {
			if err := rb.AppendJSON(line); err != nil {
				b.Fatal(err)
			}
		}
		rb.NewRecord().Release()
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(n*b.N)/sec, "rows/s")
	b.ReportMetric(float64(bytes*int64(b.N))/sec/1e6, "MB/s")
}
