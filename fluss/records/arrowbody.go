package records

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Arrow IPC encoding with reused compressors. ipc.GetRecordBatchPayload
// builds a new codec for every record batch, and a new zstd encoder
// allocates its history and tables (over a megabyte) on its first block:
// for batches of a few thousand rows that cost as much as the compression.
// An ipc.Writer keeps its codecs from one record batch to the next, so
// idle bodyWriters are kept per codec; each writes the messages of one schema
// (the stream's schema message, written first, is dropped) and appends the
// record batch message to the caller's buffer.

// bodyWriter encodes record batches of one schema, codec and allocator.
type bodyWriter struct {
	schema *arrow.Schema
	mem    memory.Allocator
	w      *ipc.Writer
	sink   payloadSink
	last   int // bytes of the last message written
}

// payloadSink is the ipc.Writer's PayloadWriter: it appends record batch
// messages to dst and drops the others (the schema message).
type payloadSink struct {
	dst []byte
}

func (s *payloadSink) Start() error { return nil }
func (s *payloadSink) Close() error { return nil }

func (s *payloadSink) WritePayload(p ipc.Payload) error {
	meta := p.Meta()
	if meta == nil {
		return nil
	}
	kind, err := messageHeaderType(meta.Bytes())
	meta.Release()
	if err != nil {
		return err
	}
	if kind != fbHeaderRecordBatch {
		return nil
	}
	w := appendWriter{b: s.dst}
	_, err = p.WritePayload(&w)
	s.dst = w.b
	return err
}

// maxIdleBodyWriters bounds the idle writers kept per codec: about as many
// as encode at once. A sync.Pool would do without the bound, but it drops
// its items at every other garbage collection, and a write path allocating
// megabytes per batch collects often.
const maxIdleBodyWriters = 8

// bodyWriters holds the idle writers of each Compression.
var bodyWriters = func() (pools [CompressionZSTD + 1]chan *bodyWriter) {
	for i := range pools {
		pools[i] = make(chan *bodyWriter, maxIdleBodyWriters)
	}
	return pools
}()

// getBodyWriter returns a pooled writer of schema's records with codec c
// and temporary buffers from mem, or a new one.
func getBodyWriter(schema *arrow.Schema, c Compression, mem memory.Allocator) *bodyWriter {
	select {
	case bw := <-bodyWriters[c]:
		if sameAllocator(bw.mem, mem) && (bw.schema == schema || bw.schema.Equal(schema)) {
			return bw
		}
	default:
	}
	opts := []ipc.Option{ipc.WithAllocator(mem), ipc.WithSchema(schema)}
	switch c {
	case CompressionLZ4Frame:
		opts = append(opts, ipc.WithLZ4())
	case CompressionZSTD:
		opts = append(opts, ipc.WithZstd())
	}
	bw := &bodyWriter{schema: schema, mem: mem}
	bw.w = ipc.NewWriterWithPayloadWriter(&bw.sink, opts...)
	return bw
}

// sameAllocator tells whether a and b are the same allocator; allocators
// of types that cannot be compared are never the same.
func sameAllocator(a, b memory.Allocator) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta != nil && ta.Comparable() && a == b
}

// appendArrowBody appends rec as one Arrow IPC RecordBatch message whose
// buffers are compressed with opts.Compression.
func appendArrowBody(dst []byte, rec arrow.RecordBatch, opts *LogBatchOptions) ([]byte, error) {
	mem := opts.Allocator
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	c := opts.Compression
	if c < CompressionNone || c > CompressionZSTD {
		return dst, fmt.Errorf("fluss/records: unknown compression %v", c)
	}
	bw := getBodyWriter(rec.Schema(), c, mem)
	// Room for a message an eighth larger than the last one, so that the
	// body is not copied from one doubled buffer to the next.
	bw.sink.dst = slices.Grow(dst, bw.last+bw.last/8)
	err := bw.w.Write(rec)
	out := bw.sink.dst
	bw.sink.dst = nil
	if err != nil {
		// An ipc.Writer keeps its first error: this one is not reused.
		return dst, fmt.Errorf("fluss/records: encode Arrow record batch: %w", err)
	}
	bw.last = len(out) - len(dst)
	select {
	case bodyWriters[c] <- bw:
	default: // enough are idle
	}
	return out, nil
}

// messageHeaderType is the header type of an Arrow IPC Message flatbuffer.
func messageHeaderType(buf []byte) (uint8, error) {
	msg, err := fbRoot(buf)
	if err != nil {
		return 0, err
	}
	return msg.uint8Field(fbMessageHeaderType, 0)
}
