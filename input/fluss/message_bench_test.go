package flussinput

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/redpanda-data/benthos/v4/public/bloblang"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/bench/benchtable"
	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/jsonrow"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// benchRecord builds n rows of the benchmark table (bench/benchtable).
func benchRecord(b testing.TB, n int) (*types.Schema, *arrow.Schema, arrow.RecordBatch) {
	b.Helper()
	s := benchtable.Schema()
	as, err := s.ArrowSchema()
	if err != nil {
		b.Fatal(err)
	}
	return s, as, benchtable.Batch(as, 0, n)
}

// BenchmarkBuildJSON measures turning rows into messages (per row), for a
// table without partitions (9 metadata keys per message) and for a
// partition of a partitioned table (11 keys).
func BenchmarkBuildJSON(b *testing.B) {
	const n = 1024
	s, as, rec := benchRecord(b, n)
	defer rec.Release()
	for _, c := range []struct {
		name string
		bc   *batchContext
	}{
		{"table", &batchContext{key: kb0, schemaID: 1, timestamp: 1735689600000}},
		{"partitioned", &batchContext{key: bucketKey{partitionID: 12, bucket: 0}, partition: "2026", schemaID: 1, timestamp: 1735689600000}},
	} {
		b.Run(c.name, func(b *testing.B) {
			mb, err := newMessageBuilder(tableMeta{database: "db", table: "t", tableID: 9}, s, as, false)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += n {
				if _, err := mb.build(c.bc, rec, nil, 1000, 0, n); err != nil {
					b.Fatal(err)
				}
			}
		})
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

// BenchmarkMessageMeta compares ways of building a message per row with the
// metadata of the json payload, without encoding anything (per row): a log
// table's 8 keys, the most a small Go map holds, a primary-key table's 9
// (with fluss_change_type) and a partitioned one's 11: Benthos keeps
// metadata in a map[string]any, which past 8 keys becomes a hash table
// (more allocations, and a clone of it on every write to a shared copy).
func BenchmarkMessageMeta(b *testing.B) {
	payload := []byte(`{"id":1234567,"note":"abcdefghijklmnopqrstuvwxyz0123456789"}`)
	shared := func(partitioned bool) [][2]any {
		kv := [][2]any{{metaDatabase, "db"}, {metaTable, "t"}, {metaTableID, int64(9)}}
		if partitioned {
			kv = append(kv, [2]any{metaPartition, "2026"}, [2]any{metaPartID, int64(12)})
		}
		return append(kv, [2]any{metaBucket, int64(3)}, [2]any{metaTimestamp, int64(1735689600000)}, [2]any{metaSchemaID, int64(1)})
	}
	for _, c := range []struct {
		name            string
		pk, partitioned bool
	}{{"log_8_keys", false, false}, {"pk_9_keys", true, false}, {"pk_partitioned_11_keys", true, true}} {
		kv := shared(c.partitioned)
		pk := c.pk
		perRow := func(m *service.Message, i int) {
			m.MetaSetMut(metaOffset, int64(1000+i))
			m.MetaSetMut(metaMessageID, "0x0000000a000000000003000000001000")
			if pk {
				m.MetaSetMut(metaChangeType, changeTypeValue(fluss.Insert))
			}
		}
		b.Run(c.name+"/new_and_set", func(b *testing.B) {
			b.ReportAllocs()
			out := make(service.MessageBatch, 1024)
			for i := 0; i < b.N; i++ {
				m := service.NewMessage(payload)
				for _, e := range kv {
					m.MetaSetMut(e[0].(string), e[1])
				}
				perRow(m, i)
				out[i%len(out)] = m
			}
		})
		// template_shared: the template holds the shared keys only;
		// template_copy: also placeholders for the per-row keys (what
		// messageBuilder.jsonTemplate does past 8 keys).
		for _, v := range []struct {
			name         string
			placeholders bool
		}{{"template_shared", false}, {"template_copy", true}} {
			placeholders := v.placeholders
			b.Run(c.name+"/"+v.name, func(b *testing.B) {
				b.ReportAllocs()
				out := make(service.MessageBatch, 1024)
				var tmpl *service.Message
				for i := 0; i < b.N; i++ {
					if i%len(out) == 0 {
						tmpl = service.NewMessage(nil)
						for _, e := range kv {
							tmpl.MetaSetMut(e[0].(string), e[1])
						}
						if placeholders {
							perRow(tmpl, -1000)
						}
					}
					m := tmpl.Copy()
					m.SetBytes(payload)
					perRow(m, i)
					out[i%len(out)] = m
				}
			})
		}
	}
}

// BenchmarkMappingPaths measures, per row, the json pipeline's work from an
// Arrow batch to the payload bytes the iggy output sends, through the
// mapping of config/fluss_to_iggy.yaml: rows as JSON bytes (Benthos parses
// them) or as structured values (jsonrow.Values), serialised by Benthos
// (encoding/json, AsBytes) or by jsonrow.AnyWriter (what the output does for
// a message without bytes); the mutation is the shipped one (its source
// written at config load). "nomap" is the input's bytes alone.
func BenchmarkMappingPaths(b *testing.B) {
	const n = 1024
	s, as, rec := benchRecord(b, n)
	defer rec.Release()
	exe, err := bloblang.Parse(`root = this
root.source = "fluss:%s.%s".format(@fluss_database, @fluss_table)
root.ingested_at = now()
meta iggy_key = this.id.string()`)
	if err != nil {
		b.Fatal(err)
	}
	mut, err := bloblang.Parse(`root.source = "fluss:demo.orders"
root.ingested_at = now()`)
	if err != nil {
		b.Fatal(err)
	}
	bc := &batchContext{key: kb0, schemaID: 1, timestamp: 1735689600000}
	for _, c := range []struct {
		name              string
		structured, mapIt bool
		anyWriter, mutate bool
	}{
		{"structured_mutation_anywriter", true, true, true, true},
		{"nomap_bytes", false, false, false, false},
		{"bytes_map_encodingjson", false, true, false, false},
		{"bytes_map_anywriter", false, true, true, false},
		{"structured_map_encodingjson", true, true, false, false},
		{"structured_map_anywriter", true, true, true, false},
		{"structured_nomap_anywriter", true, false, true, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			mb, err := newMessageBuilder(tableMeta{database: "db", table: "t", tableID: 9}, s, as, false)
			if err != nil {
				b.Fatal(err)
			}
			if c.structured {
				mb.useStructuredRows()
			}
			var w jsonrow.AnyWriter
			var buf []byte
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += n {
				batch, err := mb.build(bc, rec, nil, 1000, 0, n)
				if err != nil {
					b.Fatal(err)
				}
				buf = buf[:0]
				bx := batch.BloblangExecutor(exe)
				if c.mutate {
					bx = batch.BloblangExecutor(mut)
				}
				for j := range batch {
					m := batch[j]
					if c.mutate {
						if m, err = bx.Mutate(j); err != nil {
							b.Fatal(err)
						}
					} else if c.mapIt {
						if m, err = bx.Query(j); err != nil {
							b.Fatal(err)
						}
					}
					if c.anyWriter && !m.HasBytes() {
						v, err := m.AsStructured()
						if err != nil {
							b.Fatal(err)
						}
						if buf, err = w.Append(buf, v); err != nil {
							b.Fatal(err)
						}
						continue
					}
					p, err := m.AsBytes()
					if err != nil {
						b.Fatal(err)
					}
					buf = append(buf, p...)
				}
			}
		})
	}
}
