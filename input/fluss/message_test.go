package flussinput

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/redpanda-data/benthos/v4/public/bloblang"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/jsonrow"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
	"github.com/fluss-iggy/fluss-iggy/internal/flussmeta"
)

// testRecord builds rows (id BIGINT, name STRING) with ids from..to-1.
func testRecord(t *testing.T, mem memory.Allocator, from, to int64) (*types.Schema, *arrow.Schema, arrow.RecordBatch) {
	t.Helper()
	s := types.MustSchema([]types.Column{
		types.NewColumn("id", types.BigInt()),
		types.NewColumn("name", types.String()),
	})
	as, err := s.ArrowSchema()
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(mem, as)
	defer b.Release()
	for i := from; i < to; i++ {
		b.Field(0).(*array.Int64Builder).Append(i)
		if i%3 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append("n\"" + string(rune('a'+i%26)))
		}
	}
	return s, as, b.NewRecordBatch()
}

func meta(t *testing.T, m *service.Message, key string) any {
	t.Helper()
	v, ok := m.MetaGetMut(key)
	if !ok {
		t.Fatalf("metadata %s missing", key)
	}
	return v
}

func TestBuildJSONMessages(t *testing.T) {
	s, as, rec := testRecord(t, memory.DefaultAllocator, 0, 5)
	defer rec.Release()
	mb, err := newMessageBuilder(tableMeta{database: "db", table: "t", tableID: 9}, s, as, false)
	if err != nil {
		t.Fatal(err)
	}
	bc := &batchContext{key: bucketKey{partitionID: fluss.NoPartition, bucket: 2}, schemaID: 1, timestamp: 1700000000000}
	msgs, err := mb.build(bc, rec, nil, 100, 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`{"id":1,"name":"n\"b"}`, `{"id":2,"name":"n\"c"}`, `{"id":3,"name":null}`}
	if len(msgs) != len(want) {
		t.Fatalf("%d messages", len(msgs))
	}
	for i, m := range msgs {
		b, _ := m.AsBytes()
		if string(b) != want[i] {
			t.Errorf("message %d: %s, want %s", i, b, want[i])
		}
		if got := meta(t, m, metaOffset); got != int64(101+i) {
			t.Errorf("offset %v", got)
		}
		if meta(t, m, metaBucket) != int64(2) || meta(t, m, metaTableID) != int64(9) || meta(t, m, metaSchemaID) != int64(1) ||
			meta(t, m, metaTimestamp) != int64(1700000000000) ||
			meta(t, m, metaDatabase) != "db" || meta(t, m, metaTable) != "t" {
			t.Errorf("metadata of message %d wrong", i)
		}
		// A log table's rows are all appends: no change type, and the 8
		// keys left fit Go's smallest map.
		if _, ok := m.MetaGetMut(metaChangeType); ok {
			t.Error("fluss_change_type set on a log table's row")
		}
		if n := len(metaOf(t, m)); n != smallMetaKeys {
			t.Errorf("message %d has %d metadata keys, want %d", i, n, smallMetaKeys)
		}
		if got, want := meta(t, m, metaMessageID), flussmeta.FormatMessageID(9, fluss.NoPartition, 2, int64(101+i)); got != want {
			t.Errorf("message %d: fluss_message_id %v, want %s", i, got, want)
		}
		if _, ok := m.MetaGetMut(metaPartition); ok {
			t.Error("fluss_partition set on a table without partitions")
		}
		if _, ok := m.MetaGetMut(metaPartID); ok {
			t.Error("fluss_partition_id set on a table without partitions")
		}
	}
	// Messages share one buffer but must not overlap.
	b0, _ := msgs[0].AsBytes()
	_ = append(b0, "garbage"...)
	if b1, _ := msgs[1].AsBytes(); string(b1) != want[1] {
		t.Errorf("appending to one message changed the next: %s", b1)
	}
}

func TestBuildJSONChangeTypesAndPartition(t *testing.T) {
	s, as, rec := testRecord(t, memory.DefaultAllocator, 0, 4)
	defer rec.Release()
	mb, err := newMessageBuilder(tableMeta{database: "db", table: "t", tableID: 9, pkTable: true}, s, as, false)
	if err != nil {
		t.Fatal(err)
	}
	cts := []fluss.ChangeType{fluss.Insert, fluss.UpdateBefore, fluss.UpdateAfter, fluss.Delete}
	bc := &batchContext{key: bucketKey{partitionID: 5, bucket: 0}, partition: "2026$01"}
	msgs, err := mb.build(bc, rec, cts, 0, 0, 4)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range msgs {
		if got := meta(t, m, metaChangeType); got != cts[i].String() {
			t.Errorf("row %d change type %v", i, got)
		}
		if meta(t, m, metaPartition) != "2026$01" || meta(t, m, metaPartID) != int64(5) {
			t.Errorf("partition metadata wrong")
		}
	}
}

func readIPC(t *testing.T, b []byte) (*arrow.Schema, []arrow.RecordBatch) {
	t.Helper()
	r, err := ipc.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	var recs []arrow.RecordBatch
	for r.Next() {
		rec := r.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	return r.Schema(), recs
}

func TestBuildArrowIPC(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	s, as, rec := testRecord(t, mem, 0, 10)
	defer rec.Release()
	mb, err := newMessageBuilder(tableMeta{database: "db", table: "t", tableID: 9}, s, as, true)
	if err != nil {
		t.Fatal(err)
	}
	mb.mem = mem
	bc := &batchContext{key: bucketKey{partitionID: fluss.NoPartition, bucket: 1}}
	msgs, err := mb.build(bc, rec, nil, 50, 2, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 {
		t.Fatalf("%d messages", len(msgs))
	}
	m := msgs[0]
	if meta(t, m, metaOffset) != int64(52) || meta(t, m, metaLastOffset) != int64(56) {
		t.Error("metadata wrong")
	}
	if _, ok := m.MetaGetMut(metaChangeType); ok {
		t.Error("fluss_change_type set on a log table's message")
	}
	b, _ := m.AsBytes()
	schema, recs := readIPC(t, b)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	if !schema.Equal(as) || len(recs) != 1 || recs[0].NumRows() != 5 {
		t.Fatalf("schema %v, %d records", schema, len(recs))
	}
	ids := recs[0].Column(0).(*array.Int64)
	for i := 0; i < 5; i++ {
		if ids.Value(i) != int64(2+i) {
			t.Errorf("row %d id %d", i, ids.Value(i))
		}
	}
	want := array.NewSlice(rec.Column(1), 2, 7)
	defer want.Release()
	if !array.Equal(recs[0].Column(1), want) {
		t.Error("name column differs")
	}
}

func TestBuildArrowIPCChangeTypeColumn(t *testing.T) {
	s, as, rec := testRecord(t, memory.DefaultAllocator, 0, 3)
	defer rec.Release()
	mb, err := newMessageBuilder(tableMeta{database: "db", table: "t", tableID: 9, pkTable: true}, s, as, true)
	if err != nil {
		t.Fatal(err)
	}
	cts := []fluss.ChangeType{fluss.Insert, fluss.UpdateBefore, fluss.UpdateAfter}
	msgs, err := mb.build(&batchContext{key: kb0}, rec, cts, 0, 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := msgs[0].MetaGetMut(metaChangeType); ok {
		t.Error("fluss_change_type set on a message with mixed change types")
	}
	b, _ := msgs[0].AsBytes()
	schema, recs := readIPC(t, b)
	defer recs[0].Release()
	if schema.NumFields() != 3 || schema.Field(0).Name != changeTypeColumn {
		t.Fatalf("schema %v", schema)
	}
	col := recs[0].Column(0).(*array.String)
	for i, ct := range cts {
		if col.Value(i) != ct.String() {
			t.Errorf("row %d: %s", i, col.Value(i))
		}
	}
	// A uniform slice carries the metadata.
	msgs, _ = mb.build(&batchContext{key: kb0}, rec, cts, 0, 1, 2)
	if meta(t, msgs[0], metaChangeType) != "-U" {
		t.Error("uniform change type not set")
	}
}

// metaOf returns all the metadata of a message.
func metaOf(t *testing.T, m *service.Message) map[string]any {
	t.Helper()
	out := map[string]any{}
	if err := m.MetaWalkMut(func(k string, v any) error {
		out[k] = v
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBuildJSONMetadataExact: each json message carries exactly its row's
// metadata keys with their types, whether built key by key (log tables
// without partitions: 8 keys) or from a per-batch template (9 keys and
// more: primary keys, partitions), across chunks and batches, and a change
// to one message's metadata leaves the others alone.
func TestBuildJSONMetadataExact(t *testing.T) {
	s, as, rec := testRecord(t, memory.DefaultAllocator, 0, 6)
	defer rec.Release()
	for _, tc := range []struct{ pk, partitioned bool }{{false, false}, {false, true}, {true, false}, {true, true}} {
		pk, partitioned := tc.pk, tc.partitioned
		mb, err := newMessageBuilder(tableMeta{database: "db", table: "t", tableID: 9, pkTable: pk}, s, as, false)
		if err != nil {
			t.Fatal(err)
		}
		probe := bucketKey{partitionID: fluss.NoPartition}
		if partitioned {
			probe.partitionID = 1
		}
		if tmpl := mb.jsonTemplate(&batchContext{key: probe}); (tmpl == nil) != (!pk && !partitioned) {
			t.Errorf("pk %v, partitioned %v: template %v", pk, partitioned, tmpl != nil)
		}
		var cts []fluss.ChangeType
		if pk {
			cts = []fluss.ChangeType{fluss.Insert, fluss.UpdateBefore, fluss.UpdateAfter, fluss.Delete, fluss.Insert, fluss.Delete}
		}
		var all []*service.Message
		var wants []map[string]any
		for batch := range 2 {
			key := bucketKey{partitionID: fluss.NoPartition, bucket: int32(batch)}
			if partitioned {
				key.partitionID = int64(5 + batch)
			}
			bc := &batchContext{key: key, schemaID: int16(1 + batch), timestamp: 1700000000000 + int64(batch)}
			if partitioned {
				bc.partition = "p" + string(rune('0'+batch))
			}
			// Two chunks of the same batch, then the next batch.
			for _, r := range [][2]int{{0, 3}, {3, 6}} {
				msgs, err := mb.build(bc, rec, cts, 100*int64(batch+1), r[0], r[1])
				if err != nil {
					t.Fatal(err)
				}
				for i, m := range msgs {
					row := r[0] + i
					want := map[string]any{
						metaDatabase: "db", metaTable: "t", metaTableID: int64(9),
						metaBucket: int64(batch), metaTimestamp: 1700000000000 + int64(batch), metaSchemaID: int64(1 + batch),
						metaOffset:    100*int64(batch+1) + int64(row),
						metaMessageID: flussmeta.FormatMessageID(9, key.partitionID, key.bucket, 100*int64(batch+1)+int64(row)),
					}
					if pk {
						want[metaChangeType] = cts[row].String()
					}
					if partitioned {
						want[metaPartition] = bc.partition
						want[metaPartID] = key.partitionID
					}
					all = append(all, m)
					wants = append(wants, want)
				}
			}
		}
		check := func(when string) {
			t.Helper()
			for i, m := range all {
				if got := metaOf(t, m); !reflect.DeepEqual(got, wants[i]) {
					t.Errorf("pk %v, partitioned %v, %s: message %d metadata\n got %#v\nwant %#v", pk, partitioned, when, i, got, wants[i])
				}
			}
		}
		check("as built")
		all[0].MetaSetMut(metaOffset, "changed")
		all[0].MetaSetMut("extra", int64(1))
		all[0].MetaDelete(metaTable)
		all = all[1:]
		wants = wants[1:]
		check("after changing another message")
	}
}

// TestBuildArrowIPCCompressed: arrow_ipc_compression lz4 and zstd give
// smaller messages that any Arrow reader decodes to the same rows.
func TestBuildArrowIPCCompressed(t *testing.T) {
	s, as, rec := testRecord(t, memory.DefaultAllocator, 0, 2000)
	defer rec.Release()
	sizes := map[string]int{}
	for _, codec := range []string{compressionNone, compressionLZ4, compressionZstd} {
		mb, err := newMessageBuilder(tableMeta{database: "db", table: "t", tableID: 9}, s, as, true)
		if err != nil {
			t.Fatal(err)
		}
		mb.ipcCodec = codec
		bc := &batchContext{key: bucketKey{partitionID: fluss.NoPartition, bucket: 0}}
		msgs, err := mb.build(bc, rec, nil, 0, 0, int(rec.NumRows()))
		if err != nil {
			t.Fatalf("%s: %v", codec, err)
		}
		b, _ := msgs[0].AsBytes()
		sizes[codec] = len(b)
		_, recs := readIPC(t, b)
		if len(recs) != 1 || !array.RecordEqual(recs[0], rec) {
			t.Errorf("%s: the rows read back differ", codec)
		}
		for _, r := range recs {
			r.Release()
		}
	}
	if sizes[compressionLZ4] >= sizes[compressionNone] || sizes[compressionZstd] >= sizes[compressionNone] {
		t.Errorf("compressed messages are not smaller: %v", sizes)
	}
	t.Logf("bytes per message of 2,000 rows: %v", sizes)
}

// Rows handed over as structured values (structuredRows) read in Bloblang
// and serialise exactly like the JSON bytes they replace, with a mapping and
// without: the same values, the canonical forms (decimals, timestamps and
// dates as strings), keys sorted.
func TestBuildStructuredMatchesBytes(t *testing.T) {
	exe, err := bloblang.Parse(`root = this
root.source = "fluss:%s.%s".format(@fluss_database, @fluss_table)
meta iggy_key = this.id.string()`)
	if err != nil {
		t.Fatal(err)
	}
	bc := &batchContext{key: kb0, schemaID: 1, timestamp: 1735689600000}
	s, as, rec := benchRecord(t, 50)
	defer rec.Release()
	s2, as2, rec2 := testRecord(t, memory.DefaultAllocator, 0, 7) // with nulls and escapes
	defer rec2.Release()
	for _, c := range []struct {
		s   *types.Schema
		as  *arrow.Schema
		rec arrow.RecordBatch
	}{{s, as, rec}, {s2, as2, rec2}} {
		build := func(structured bool) service.MessageBatch {
			mb, err := newMessageBuilder(tableMeta{database: "db", table: "t", tableID: 9}, c.s, c.as, false)
			if err != nil {
				t.Fatal(err)
			}
			if structured {
				mb.useStructuredRows()
			}
			msgs, err := mb.build(bc, c.rec, nil, 0, 0, int(c.rec.NumRows()))
			if err != nil {
				t.Fatal(err)
			}
			return msgs
		}
		byBytes, byValues := build(false), build(true)
		bx, vx := byBytes.BloblangExecutor(exe), byValues.BloblangExecutor(exe)
		var w jsonrow.AnyWriter
		for i := range byBytes {
			if byValues[i].HasBytes() || !byValues[i].HasStructured() {
				t.Fatal("structured row has bytes")
			}
			raw, _ := byBytes[i].AsBytes()
			plain, err := w.Append(nil, structured(t, byValues[i]))
			if err != nil || !json.Valid(plain) {
				t.Fatalf("row %d: %s %v", i, plain, err)
			}
			if want, _ := w.Append(nil, structured(t, service.NewMessage(raw))); string(plain) != string(want) {
				t.Fatalf("row %d without a mapping:\n got %s\nwant %s", i, plain, want)
			}
			mb, err := bx.Query(i)
			if err != nil {
				t.Fatal(err)
			}
			mv, err := vx.Query(i)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := mb.AsBytes() // Benthos's encoding/json
			got, err := w.Append(nil, structured(t, mv))
			if err != nil || string(got) != string(want) {
				t.Fatalf("row %d with a mapping:\n got %s (%v)\nwant %s", i, got, err, want)
			}
			k1, _ := mb.MetaGet("iggy_key")
			k2, _ := mv.MetaGet("iggy_key")
			if k1 != k2 || k1 == "" {
				t.Fatalf("row %d: iggy_key %q and %q", i, k1, k2)
			}
		}
	}
}

func structured(t *testing.T, m *service.Message) any {
	t.Helper()
	v, err := m.AsStructured()
	if err != nil {
		t.Fatal(err)
	}
	return v
}
