package records

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A batch encoded without a writer and stamped afterwards is the batch
// encoded with that writer, and it still passes the CRC check.
func TestStampLogBatchEqualsEncodedWithWriter(t *testing.T) {
	mem := memory.NewGoAllocator()
	rec := buildRecord(t, mem, testSchema(), 50, 0, 7)
	defer rec.Release()
	ws := WriterState{WriterID: 4242, BatchSequence: 17}
	for _, c := range []Compression{CompressionNone, CompressionZSTD} {
		opts := LogBatchOptions{SchemaID: 1, Compression: c, Allocator: mem}
		plain, err := EncodeLogBatch(rec, opts)
		if err != nil {
			t.Fatal(err)
		}
		opts.Writer = &ws
		want, err := EncodeLogBatch(rec, opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := StampLogBatch(plain, ws); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(plain, want) {
			t.Fatalf("%v: stamped batch differs from the batch encoded with the writer", c)
		}
		it := NewBatchIterator(plain)
		if !it.Next() {
			t.Fatalf("%v: no batch in the stamped bytes: %v", c, it.Err())
		}
		raw := it.Batch()
		if err := raw.CheckCRC(); err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		if raw.WriterID != ws.WriterID || raw.BatchSequence != ws.BatchSequence {
			t.Fatalf("%v: header says writer %d seq %d", c, raw.WriterID, raw.BatchSequence)
		}
	}
}

func TestStampKVBatchEqualsBuiltWithWriter(t *testing.T) {
	mem := memory.NewGoAllocator()
	s := testSchema()
	rec := buildRecord(t, mem, s, 20, 0, 3)
	defer rec.Release()
	enc, err := NewRowEncoder(s, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	ws := WriterState{WriterID: 99, BatchSequence: 5}
	build := func(w *WriterState) []byte {
		kb := NewKVBatchBuilder(1, w)
		for i := 0; i < int(rec.NumRows()); i++ {
			if err := kb.AppendRow(enc, rec, i, i%5 == 0); err != nil {
				t.Fatal(err)
			}
		}
		return append([]byte(nil), kb.Build()...)
	}
	plain, want := build(nil), build(&ws)
	if err := StampKVBatch(plain, ws); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(plain, want) {
		t.Fatal("stamped KV batch differs from the batch built with the writer")
	}
}

func TestStampRefusesShortBatches(t *testing.T) {
	if err := StampLogBatch(make([]byte, 20), WriterState{}); err == nil {
		t.Fatal("a 20-byte log batch was stamped")
	}
	if err := StampKVBatch(make([]byte, 27), WriterState{}); err == nil {
		t.Fatal("a 27-byte KV batch was stamped")
	}
	b := make([]byte, 60)
	b[offMagic] = 9
	if err := StampLogBatch(b, WriterState{}); err == nil {
		t.Fatal("a batch of magic 9 was stamped")
	}
}
