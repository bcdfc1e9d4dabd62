package flussoutput

import (
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/bench/benchtable"
	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/jsonrow"
	"github.com/fluss-iggy/fluss-iggy/fluss/records"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// benchLines is n rows of bench/benchtable's table as JSON lines (what
// bench/flussout writes), one message each.
func benchLines(b *testing.B, n int) service.MessageBatch {
	s := benchtable.Schema()
	as, err := s.ArrowSchema()
	if err != nil {
		b.Fatal(err)
	}
	enc, err := jsonrow.NewSchemaEncoder(s)
	if err != nil {
		b.Fatal(err)
	}
	rec := benchtable.Batch(as, 0, n)
	defer rec.Release()
	if err := enc.Bind(rec); err != nil {
		b.Fatal(err)
	}
	batch := make(service.MessageBatch, n)
	for i := range batch {
		batch[i] = service.NewMessage(enc.AppendRow(nil, i))
	}
	return batch
}

// benchOutput is an output with the default configuration, not connected,
// and the row factory of the bench table (a primary-key one keyed by id with
// primaryKey).
func benchOutput(b *testing.B, primaryKey bool) (*Output, *rowFactory, *fluss.TableInfo) {
	pc, err := Spec().ParseYAML("bootstrap_servers: [ localhost:1 ]\ndatabase: d\ntable: t\n", service.NewEnvironment())
	if err != nil {
		b.Fatal(err)
	}
	o, err := NewFromConfig(pc, service.MockResources())
	if err != nil {
		b.Fatal(err)
	}
	s := benchtable.Schema()
	if primaryKey {
		if s, err = types.NewSchema(s.Columns, "id"); err != nil {
			b.Fatal(err)
		}
	}
	info := &fluss.TableInfo{Schema: s, NumBuckets: 1, SchemaID: 1}
	if primaryKey {
		info.PrimaryKey = []string{"id"}
	}
	as, err := s.ArrowSchema()
	if err != nil {
		b.Fatal(err)
	}
	f, err := newRowFactory(info, as, false)
	if err != nil {
		b.Fatal(err)
	}
	return o, f, info
}

// BenchmarkWriteBatchCPU is the client side of WriteBatch without the
// network: 4,096 bench-table JSON messages turned into rows (buildRows,
// the default change_type) and encoded as the Writer encodes them, a ZSTD
// Arrow log batch (log) or a KV batch of compacted keys and rows (pk).
func BenchmarkWriteBatchCPU(b *testing.B) {
	const n = 4096
	batch := benchLines(b, n)
	fail := func(i int, err error) { b.Fatalf("message %d: %v", i, err) }
	b.Run("log", func(b *testing.B) {
		o, f, _ := benchOutput(b, false)
		b.ReportAllocs()
		for it := 0; it < b.N; it++ {
			rb, _ := f.get()
			o.buildRows(batch, false, rb, fail)
			rec := rb.NewRecord()
			if _, err := records.EncodeLogBatch(rec, records.LogBatchOptions{SchemaID: 1, Compression: records.CompressionZSTD}); err != nil {
				b.Fatal(err)
			}
			rec.Release()
			f.put(rb)
		}
		b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(n*b.N), "ns/row")
	})
	b.Run("pk", func(b *testing.B) {
		o, f, _ := benchOutput(b, true)
		enc, err := records.NewKVEncoder(benchPKSchema(b), []int{0}, records.LogFormatCompacted)
		if err != nil {
			b.Fatal(err)
		}
		kb := records.NewKVBatchBuilder(1, nil)
		b.ReportAllocs()
		for it := 0; it < b.N; it++ {
			rb, _ := f.get()
			o.buildRows(batch, true, rb, fail)
			rec := rb.NewRecord()
			kb.Reset()
			for i := 0; i < n; i++ {
				if err := kb.AppendRow(enc, rec, i, false); err != nil {
					b.Fatal(err)
				}
			}
			kb.Build()
			rec.Release()
			f.put(rb)
		}
		b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(n*b.N), "ns/row")
	})
}

func benchPKSchema(b *testing.B) *types.Schema {
	s, err := types.NewSchema(benchtable.Schema().Columns, "id")
	if err != nil {
		b.Fatal(err)
	}
	return s
}
