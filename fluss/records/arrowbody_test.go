package records

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// freshArrowBody is the Arrow message as ipc.GetRecordBatchPayload writes
// it with new codecs: what appendArrowBody wrote before its writers were
// pooled.
func freshArrowBody(t *testing.T, rec arrow.RecordBatch, c Compression) []byte {
	t.Helper()
	var opts []ipc.Option
	switch c {
	case CompressionLZ4Frame:
		opts = append(opts, ipc.WithLZ4())
	case CompressionZSTD:
		opts = append(opts, ipc.WithZstd())
	}
	p, err := ipc.GetRecordBatchPayload(rec, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	w := appendWriter{}
	if _, err := p.WritePayload(&w); err != nil {
		t.Fatal(err)
	}
	return w.b
}

// TestArrowBodyPooled checks that the pooled writers write, for records of
// two schemas in turn, sizes from 1 to 3,000 rows and every codec, the
// bytes fresh codecs write, that those decode back to the records, and that
// they leave no buffer of the caller's allocator behind.
func TestArrowBodyPooled(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	full := testSchema()
	narrow := arrow.NewSchema(full.Fields()[:8], nil)
	for _, c := range allCompressions {
		for k, n := range []int{1, 3000, 17, 3000, 500} {
			for _, s := range []*arrow.Schema{full, narrow} {
				rec := buildRecord(t, mem, s, n, int64(k*n), uint64(k))
				got, err := appendArrowBody([]byte("prefix"), rec, &LogBatchOptions{Compression: c, Allocator: mem})
				if err != nil {
					t.Fatalf("%v, %d rows: %v", c, n, err)
				}
				if !bytes.HasPrefix(got, []byte("prefix")) {
					t.Fatalf("%v, %d rows: the prefix is lost", c, n)
				}
				if want := freshArrowBody(t, rec, c); !bytes.Equal(got[6:], want) {
					t.Errorf("%v, %d rows of %d columns: %d bytes differ from fresh codecs' %d", c, n, s.NumFields(), len(got)-6, len(want))
				}
				batch, err := AppendLogBatch(nil, rec, LogBatchOptions{Compression: c, Allocator: mem})
				if err != nil {
					t.Fatal(err)
				}
				decodeEqual(t, s, batch, rec)
				rec.Release()
			}
		}
	}
}

// decodeEqual decodes the log batch and requires it to hold rec.
func decodeEqual(t *testing.T, s *arrow.Schema, batch []byte, rec arrow.RecordBatch) {
	t.Helper()
	d, err := NewDecoder(fixedLookup(s))
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.Decode(batch, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Release()
	if len(res.Batches) != 1 {
		t.Fatalf("%d batches decoded, want 1", len(res.Batches))
	}
	requireRecordsEqual(t, rec, res.Batches[0].Record)
}
