package pipeline_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/klauspost/compress/zstd"

	"github.com/fluss-iggy/fluss-iggy/fluss/records"
)

// floor decompresses the Arrow buffers of log batches, reusing its decoder
// and output buffer: the least work that turns stored batches into
// uncompressed column data.
type floor struct {
	dec   *zstd.Decoder
	out   []byte
	total int64 // bytes decompressed
}

func newFloor() (*floor, error) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, fmt.Errorf("zstd decoder: %w", err)
	}
	return &floor{dec: dec}, nil
}

// segment decompresses every batch of a segment file and returns its rows.
func (f *floor) segment(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", path, err)
	}
	var rows int64
	it := records.NewBatchIterator(data)
	for it.Next() {
		raw := it.Batch()
		if raw.RecordCount == 0 {
			continue
		}
		body := raw.Bytes[raw.RecordsOffset():]
		if !raw.AppendOnly() {
			body = body[int(raw.RecordCount):]
		}
		if err := f.message(body); err != nil {
			return rows, fmt.Errorf("%s at offset %d: %w", path, raw.BaseOffset, err)
		}
		rows += int64(raw.RecordCount)
	}
	return rows, it.Err()
}

// message decompresses the buffers of one Arrow IPC record batch message
// (continuation, metadata length, flatbuffer metadata, body).
func (f *floor) message(msg []byte) error {
	le := binary.LittleEndian
	if len(msg) < 8 || le.Uint32(msg) != 0xFFFFFFFF {
		return errors.New("no Arrow continuation marker")
	}
	metaLen := int(le.Uint32(msg[4:]))
	if 8+metaLen > len(msg) {
		return errors.New("short Arrow metadata")
	}
	bufs, codec, err := recordBatchBuffers(msg[8 : 8+metaLen])
	if err != nil {
		return err
	}
	body := msg[8+metaLen:]
	for _, b := range bufs {
		if b[1] == 0 {
			continue
		}
		if b[0] < 0 || b[0]+b[1] > int64(len(body)) || b[1] < 8 {
			return fmt.Errorf("buffer %v outside the body of %d bytes", b, len(body))
		}
		src := body[b[0] : b[0]+b[1]]
		n := int64(le.Uint64(src))
		if codec < 0 || n == -1 {
			continue // stored uncompressed: nothing to do
		}
		if codec != 1 {
			return fmt.Errorf("codec %d: only ZSTD (1) is measured", codec)
		}
		if int64(cap(f.out)) < n {
			f.out = make([]byte, 0, n)
		}
		if f.out, err = f.dec.DecodeAll(src[8:], f.out[:0]); err != nil {
			return fmt.Errorf("zstd: %w", err)
		}
		f.total += int64(len(f.out))
	}
	return nil
}

// recordBatchBuffers reads the buffers (offset, length) and the body
// compression codec (-1: none; 0 LZ4_FRAME, 1 ZSTD) of an Arrow Message
// flatbuffer holding a RecordBatch.
func recordBatchBuffers(fb []byte) (bufs [][2]int64, codec int, err error) {
	defer func() {
		if recover() != nil {
			err = errors.New("malformed Arrow metadata")
		}
	}()
	le := binary.LittleEndian
	// field returns the position of a table's field, 0 when absent.
	field := func(table, slot int) int {
		vt := table - int(int32(le.Uint32(fb[table:])))
		at := 4 + 2*slot
		if at >= int(le.Uint16(fb[vt:])) {
			return 0
		}
		if off := int(le.Uint16(fb[vt+at:])); off != 0 {
			return table + off
		}
		return 0
	}
	deref := func(pos int) int { return pos + int(le.Uint32(fb[pos:])) }
	msg := deref(0)
	if t := field(msg, 1); t == 0 || fb[t] != 3 { // header_type RecordBatch
		return nil, 0, errors.New("not a RecordBatch message")
	}
	rb := deref(field(msg, 2))
	codec = -1
	if c := field(rb, 3); c != 0 {
		codec = 0 // LZ4_FRAME unless the codec field says otherwise
		if v := field(deref(c), 0); v != 0 {
			codec = int(fb[v])
		}
	}
	if v := field(rb, 2); v != 0 {
		vec := deref(v)
		n := int(le.Uint32(fb[vec:]))
		for i := 0; i < n; i++ {
			e := vec + 4 + 16*i
			bufs = append(bufs, [2]int64{int64(le.Uint64(fb[e:])), int64(le.Uint64(fb[e+8:]))})
		}
	}
	return bufs, codec, nil
}

// The floor's hand-read metadata finds the buffers arrow-go writes, and
// decompresses what it compressed.
func TestFloorReadsArrowIPC(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer rb.Release()
	for i := 0; i < 5000; i++ {
		rb.Field(0).(*array.Int64Builder).Append(int64(i))
		rb.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("row %d", i%97))
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	message := func(opts ...ipc.Option) []byte {
		var buf bytes.Buffer
		w := ipc.NewWriter(&buf, append([]ipc.Option{ipc.WithSchema(schema)}, opts...)...)
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()[len(schemaMessage(schema)) : buf.Len()-8]
	}
	plain, err := func() ([][2]int64, error) { b, _, err := recordBatchBuffers(message()[8:]); return b, err }()
	if err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, b := range plain {
		want += b[1]
	}
	f, err := newFloor()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.message(message(ipc.WithZstd())); err != nil {
		t.Fatal(err)
	}
	if f.total != want || want == 0 {
		t.Fatalf("decompressed %d bytes, the uncompressed buffers hold %d", f.total, want)
	}
	if err := f.message(message(ipc.WithLZ4())); err == nil {
		t.Fatal("LZ4 accepted")
	}
}
