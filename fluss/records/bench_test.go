package records

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// benchSchema is the benchmark's 10 mixed-type columns.
func benchSchema() *arrow.Schema {
	full := testSchema()
	var fields []arrow.Field
	for _, name := range []string{"id", "b", "i32", "f64", "s", "bytes", "dec", "d", "ts", "ts9"} {
		i := full.FieldIndices(name)[0]
		fields = append(fields, full.Field(i))
	}
	return arrow.NewSchema(fields, nil)
}

// BenchmarkDecode decodes one fetch response of 16 batches of 4096 rows.
// MB/s is over the wire bytes; raw-MB/s over the decoded Arrow bytes.
func BenchmarkDecode(b *testing.B) {
	s := benchSchema()
	const batches, rows = 16, 4096
	for _, c := range allCompressions {
		var wire []byte
		var rawBytes int64
		for k := 0; k < batches; k++ {
			rec := buildRecord(b, memory.DefaultAllocator, s, rows, int64(k*rows), uint64(k))
			for _, col := range rec.Columns() {
				for _, buf := range col.Data().Buffers() {
					if buf != nil {
						rawBytes += int64(buf.Len())
					}
				}
			}
			wire = append(wire, mustEncode(b, rec, c, int64(k*rows), nil, memory.DefaultAllocator)...)
			rec.Release()
		}
		for _, variant := range []string{"", "/project-2-of-10", "/owned"} {
			name := c.String() + variant
			opts := []Option{}
			switch variant {
			case "/project-2-of-10":
				opts = append(opts, WithProjection([]int{0, 4}))
			case "/owned": // what the scanner uses
				opts = append(opts, WithOwnedBuffers(true))
			}
			b.Run(name, func(b *testing.B) {
				d, err := NewDecoder(fixedLookup(s), opts...)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(wire)))
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					res, err := d.Decode(wire, 0)
					if err != nil {
						b.Fatal(err)
					}
					res.Release()
				}
				sec := b.Elapsed().Seconds()
				b.ReportMetric(float64(batches*rows*b.N)/sec, "rows/s")
				b.ReportMetric(float64(rawBytes*int64(b.N))/sec/1e6, "raw-MB/s")
			})
		}
	}
}

// BenchmarkEncode encodes one 4096-row batch.
func BenchmarkEncode(b *testing.B) {
	s := benchSchema()
	rec := buildRecord(b, memory.DefaultAllocator, s, 4096, 0, 1)
	defer rec.Release()
	for _, c := range allCompressions {
		b.Run(c.String(), func(b *testing.B) {
			var n int
			for i := 0; i < b.N; i++ {
				out, err := EncodeLogBatch(rec, LogBatchOptions{SchemaID: 1, Compression: c})
				if err != nil {
					b.Fatal(err)
				}
				n = len(out)
			}
			b.SetBytes(int64(n))
		})
	}
}
