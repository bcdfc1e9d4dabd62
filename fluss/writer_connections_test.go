package fluss_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/records"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

// writeConns counts, per server address, the connections that carried a
// write request (ProduceLog or PutKv).
type writeConns struct {
	mu     sync.Mutex
	byAddr map[string]map[*watchedConn]bool
}

func (w *writeConns) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &watchedConn{Conn: c, w: w, addr: addr}, nil
}

// counts returns how many connections to each address carried writes.
func (w *writeConns) counts() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int{}
	for addr, conns := range w.byAddr {
		out[addr] = len(conns)
	}
	return out
}

// watchedConn parses the request frames written to it (length, api key,
// ...) and reports the first write request to its writeConns.
type watchedConn struct {
	net.Conn
	w    *writeConns
	addr string

	mu  sync.Mutex
	out []byte
}

func (c *watchedConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.out = eachRequest(append(c.out, p...), func(key uint16, _ uint32) {
		if key == apiProduceLog || key == apiPutKV {
			c.w.mu.Lock()
			if c.w.byAddr[c.addr] == nil {
				c.w.byAddr[c.addr] = map[*watchedConn]bool{}
			}
			c.w.byAddr[c.addr][c] = true
			c.w.mu.Unlock()
		}
	})
	c.mu.Unlock()
	return c.Conn.Write(p)
}

// TestWriterConnections: a writer with one connection per tablet server
// sends every write over that one; with 4, a table of 4 buckets is written
// over 4 connections (bucket b on connection b mod 4, whichever servers
// lead them), and every row arrives once.
func TestWriterConnections(t *testing.T) {
	t.Parallel()
	c := cmpClient(t)
	db := cmpDatabase(t, c)
	table := db + ".lanes"
	flusstest.RunJava(t, "create-table", table, "--columns", "id BIGINT, name STRING", "--buckets", "4", "--primary-key", "id")
	path, _ := fluss.ParseTablePath(table)
	waitTable(t, c, path)

	const rows = 400
	for i, n := range []int{1, 4} {
		wc := &writeConns{byAddr: map[string]map[*watchedConn]bool{}}
		fc, err := fluss.NewClient(cmpCtx(t, time.Minute), fluss.Bootstrap(flusstest.Require(t)), fluss.Dialer(wc.dial))
		if err != nil {
			t.Fatal(err)
		}
		info, err := fc.RefreshTable(cmpCtx(t, time.Minute), path)
		if err != nil {
			t.Fatal(err)
		}
		w, err := fc.NewWriter(info, fluss.WriteConnections(n))
		if err != nil {
			t.Fatal(err)
		}
		for r := 0; r < 4; r++ {
			rec := idRecord(w.Schema(), int64(i*rows+r*rows/4), rows/4)
			err := w.Write(cmpCtx(t, time.Minute), rec, nil)
			rec.Release()
			if err != nil {
				t.Fatalf("connections %d, write %d: %v", n, r, err)
			}
		}
		fc.Close()
		total := 0
		for addr, k := range wc.counts() {
			total += k
			if n == 1 && k != 1 {
				t.Errorf("connections 1: %d connections to %s carried writes", k, addr)
			}
		}
		if n == 4 && total != 4 {
			t.Errorf("connections 4 over 4 buckets: %d connections carried writes (%v), want 4", total, wc.counts())
		}
		t.Logf("connections %d: %v carried writes", n, wc.counts())
	}
	if _, err := c.NewWriter(waitTable(t, c, path), fluss.WriteConnections(0)); err == nil {
		t.Error("WriteConnections(0): no error")
	}
	seen := map[int64]int{}
	readAll(t, c, table, func(b *fluss.ScanBatch) {
		ids := b.Record.Column(0).(*array.Int64)
		for i := 0; i < b.NumRows(); i++ {
			if b.ChangeType(i) == records.Insert {
				seen[ids.Value(i)]++
			}
		}
	})
	for id := int64(0); id < 2*rows; id++ {
		if seen[id] != 1 {
			t.Errorf("id %d inserted %d times", id, seen[id])
		}
	}
}
