package fluss_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/records"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

// The Fluss API keys of the writes whose answers answerDropper loses.
const (
	apiProduceLog = 1014
	apiPutKV      = 1016
)

// answerDropper dials the cluster through connections that lose the answer
// of every every-th write (ProduceLog or PutKv) after the server applied
// it: the connection is cut instead of handing the answer over. A writer
// then cannot know whether its batch was written.
type answerDropper struct {
	every, max int

	mu     sync.Mutex
	writes int
	drops  int
}

func (d *answerDropper) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &droppingConn{Conn: c, d: d, writes: map[uint32]bool{}}, nil
}

// dropped returns how many answers were lost.
func (d *answerDropper) dropped() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.drops
}

// loseNext decides whether the answer of the write just seen is lost.
func (d *answerDropper) loseNext() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.writes++
	if d.drops < d.max && d.writes%d.every == 0 {
		d.drops++
		return true
	}
	return false
}

// droppingConn watches the request frames the client writes (length,
// api key, version, request id) and the answer frames it reads (length,
// type, request id), and cuts the connection before an answer it was told
// to lose.
type droppingConn struct {
	net.Conn
	d *answerDropper

	wmu    sync.Mutex
	out    []byte          // request bytes not yet parsed
	writes map[uint32]bool // request ids whose answers are lost

	in []byte // the answer being handed over
}

func (c *droppingConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	c.out = eachRequest(append(c.out, p...), func(key uint16, id uint32) {
		if (key == apiProduceLog || key == apiPutKV) && c.d.loseNext() {
			c.writes[id] = true
		}
	})
	c.wmu.Unlock()
	return c.Conn.Write(p)
}

// eachRequest calls fn with the api key and request id of every whole
// request frame (length, api key, version, request id, ...) at the start of
// out, and returns the bytes after them.
func eachRequest(out []byte, fn func(key uint16, id uint32)) []byte {
	for len(out) >= 12 {
		n := int(binary.BigEndian.Uint32(out)) + 4
		if len(out) < n {
			break
		}
		fn(binary.BigEndian.Uint16(out[4:]), binary.BigEndian.Uint32(out[8:]))
		out = out[n:]
	}
	return out
}

func (c *droppingConn) Read(p []byte) (int, error) {
	if len(c.in) == 0 {
		var head [4]byte
		if _, err := io.ReadFull(c.Conn, head[:]); err != nil {
			return 0, err
		}
		frame := make([]byte, 4+int(binary.BigEndian.Uint32(head[:])))
		copy(frame, head[:])
		if _, err := io.ReadFull(c.Conn, frame[4:]); err != nil {
			return 0, err
		}
		if len(frame) >= 9 {
			c.wmu.Lock()
			lose := c.writes[binary.BigEndian.Uint32(frame[5:])]
			c.wmu.Unlock()
			if lose {
				c.Conn.Close()
				return 0, io.ErrUnexpectedEOF
			}
		}
		c.in = frame
	}
	n := copy(p, c.in)
	c.in = c.in[n:]
	return n, nil
}

// TestWriterIdempotentResendsLostAnswers: the answers of every third write
// are lost after the servers applied it; the idempotent writer sends those
// batches again and every row is in the table exactly once: the log
// table holds each id once, and the primary-key table's changelog inserts
// each key once (a second write of a key would add an update).
func TestWriterIdempotentResendsLostAnswers(t *testing.T) {
	t.Parallel()
	c := cmpClient(t)
	db := cmpDatabase(t, c)
	for _, kind := range []string{"log", "pk"} {
		t.Run(kind, func(t *testing.T) {
			table := db + ".idem_" + kind
			args := []string{"create-table", table, "--columns", "id BIGINT, name STRING", "--buckets", "3"}
			if kind == "pk" {
				args = append(args, "--primary-key", "id")
			}
			flusstest.RunJava(t, args...)
			path, _ := fluss.ParseTablePath(table)
			waitTable(t, c, path)

			drop := &answerDropper{every: 3, max: 8}
			fc, err := fluss.NewClient(cmpCtx(t, time.Minute), fluss.Bootstrap(flusstest.Require(t)),
				fluss.Dialer(drop.dial), fluss.RetryBackoff(fluss.Backoff{Initial: 20 * time.Millisecond, Max: 200 * time.Millisecond, Multiplier: 2}))
			if err != nil {
				t.Fatal(err)
			}
			defer fc.Close()
			info, err := fc.RefreshTable(cmpCtx(t, time.Minute), path)
			if err != nil {
				t.Fatal(err)
			}
			w, err := fc.NewWriter(info, fluss.WriteIdempotent(true))
			if err != nil {
				t.Fatal(err)
			}
			const nRecords, rows = 24, 50
			ctx := cmpCtx(t, 3*time.Minute)
			for r := 0; r < nRecords; r++ {
				rec := idRecord(w.Schema(), int64(r*rows), rows)
				err := w.Write(ctx, rec, nil)
				rec.Release()
				if err != nil {
					t.Fatalf("write %d (after %d lost answers): %v", r, drop.dropped(), err)
				}
			}
			if drop.dropped() < 4 {
				t.Fatalf("only %d answers were lost: the test did not test resending", drop.dropped())
			}
			seen := map[int64]int{}
			updates := 0
			readAll(t, c, table, func(b *fluss.ScanBatch) {
				ids := b.Record.Column(0).(*array.Int64)
				for i := 0; i < b.NumRows(); i++ {
					if ct := b.ChangeType(i); ct != records.AppendOnly && ct != records.Insert {
						updates++
						continue
					}
					seen[ids.Value(i)]++
				}
			})
			for id := int64(0); id < nRecords*rows; id++ {
				if seen[id] != 1 {
					t.Errorf("id %d is in the table %d times", id, seen[id])
				}
			}
			if len(seen) != nRecords*rows || updates != 0 {
				t.Errorf("%d distinct ids and %d update rows, want %d and 0", len(seen), updates, nRecords*rows)
			}
			t.Logf("%d writes with %d lost answers: %d rows, each once", nRecords, drop.dropped(), len(seen))
		})
	}
}

// TestWriterNotIdempotentDoesNotResend: without idempotence a write whose
// answer was lost fails instead of being sent again (at most once).
func TestWriterNotIdempotentDoesNotResend(t *testing.T) {
	t.Parallel()
	c := cmpClient(t)
	db := cmpDatabase(t, c)
	table := db + ".plain"
	flusstest.RunJava(t, "create-table", table, "--columns", "id BIGINT, name STRING", "--buckets", "1")
	path, _ := fluss.ParseTablePath(table)
	waitTable(t, c, path)
	drop := &answerDropper{every: 1, max: 1}
	fc, err := fluss.NewClient(cmpCtx(t, time.Minute), fluss.Bootstrap(flusstest.Require(t)), fluss.Dialer(drop.dial))
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	info, err := fc.RefreshTable(cmpCtx(t, time.Minute), path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := fc.NewWriter(info)
	if err != nil {
		t.Fatal(err)
	}
	rec := idRecord(w.Schema(), 0, 10)
	defer rec.Release()
	err = w.Write(cmpCtx(t, time.Minute), rec, nil)
	var we *fluss.WriteError
	if !errors.As(err, &we) {
		t.Fatalf("write with a lost answer: %v, want a *WriteError", err)
	}
	n := 0
	readAll(t, c, table, func(b *fluss.ScanBatch) { n += b.NumRows() })
	if n != 10 {
		t.Fatalf("%d rows in the table, want the 10 of the one write", n)
	}
	if _, err := fc.NewWriter(info, fluss.WriteIdempotent(true), fluss.WriteAcks(1)); err == nil {
		t.Fatal("an idempotent writer with acks 1 was accepted")
	}
}

// idRecord returns n rows (id, name) with ids from first.
func idRecord(schema *arrow.Schema, first int64, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := 0; i < n; i++ {
		b.Field(0).(*array.Int64Builder).Append(first + int64(i))
		b.Field(1).(*array.StringBuilder).Append("row")
	}
	return b.NewRecordBatch()
}
