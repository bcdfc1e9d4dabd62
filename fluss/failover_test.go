package fluss_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/cmd/fluss-iggy/flusscmd"
	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/jsonrow"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

// TestScannerLeaderFailover: 3 tablet servers, replication factor 3. While
// our writer appends to every bucket and our scanner reads them, the leader
// of bucket 0 is killed (SIGKILL). Every offset must be read exactly once,
// in order per bucket: the rows read across the failover, rendered as scan
// lines, equal the Java tool's scan of the final table. The writer is
// idempotent: a write whose answer the failover lost is sent again (to the
// new leader too), and every acknowledged row is in the table exactly once.
func TestScannerLeaderFailover(t *testing.T) {
	if testing.Short() && !flusstest.InCI() {
		t.Skip("starts its own 3-server cluster; skipped with -short outside CI")
	}
	cl := flusstest.StartCluster(t, flusstest.Options{Tablets: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := fluss.NewClient(ctx, fluss.Bootstrap(cl.Bootstrap), fluss.RequestTimeout(10*time.Second),
		fluss.DialTimeout(3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	db := flusstest.UniqueName("failover")
	if err := c.CreateDatabase(ctx, db, nil, false); err != nil {
		t.Fatal(err)
	}
	path := fluss.NewTablePath(db, "events")
	schema := types.MustSchema([]types.Column{
		types.NewColumn("id", types.BigInt().NotNull()),
		types.NewColumn("bucket", types.Int()),
		types.NewColumn("note", types.String()),
	})
	desc := &types.TableDescriptor{Schema: *schema, BucketCount: 3, Properties: map[string]string{
		types.PropReplicationFactor: "3",
	}}
	if err := c.CreateTable(ctx, path, desc, false); err != nil {
		t.Fatal(err)
	}
	info := waitTable(t, c, path)

	w, err := c.NewWriter(info, fluss.WriteTimeout(10*time.Second), fluss.WriteIdempotent(true))
	if err != nil {
		t.Fatal(err)
	}
	var (
		wmu      sync.Mutex
		written  int
		writeErr []error
		acked    = map[int64]bool{} // first id of each acknowledged write
	)
	var nextID int64
	appendOne := func(bucket int32) {
		rec := failoverBatch(w.Schema(), nextID, bucket, 25)
		defer rec.Release()
		nextID += 25
		_, err := w.Append(ctx, fluss.NoPartition, bucket, rec)
		wmu.Lock()
		defer wmu.Unlock()
		if err != nil {
			writeErr = append(writeErr, err)
			return
		}
		written += 25
		acked[rec.Column(0).(*array.Int64).Value(0)] = true
	}
	for i := 0; i < 12; i++ {
		appendOne(int32(i % 3))
	}

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s, err := c.NewScanner(info, fluss.ScanAllocator(mem), fluss.FetchMaxWait(200*time.Millisecond),
		fluss.FetchMaxBucketBytes(4<<10))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.SubscribeBuckets(ctx, fluss.NoPartition, nil, fluss.EarliestOffset()); err != nil {
		t.Fatal(err)
	}
	enc, err := jsonrow.NewEncoder(s.Schema().RowType(), s.ArrowSchema())
	if err != nil {
		t.Fatal(err)
	}
	lines := map[int32][]string{}
	next := map[int32]int64{}
	seen := map[int64]int{} // times each id was read
	var line []byte
	poll := func(d time.Duration) {
		pctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		bs, err := s.Poll(pctx)
		defer func() {
			for _, b := range bs {
				b.Release()
			}
		}()
		if err != nil && pctx.Err() == nil {
			t.Fatalf("poll: %v", err)
		}
		for _, b := range bs {
			bk := b.Bucket.Bucket
			if b.FirstOffset != next[bk] {
				t.Fatalf("bucket %d: batch at offset %d, expected %d (an offset read twice or skipped)", bk, b.FirstOffset, next[bk])
			}
			next[bk] = b.FirstOffset + int64(b.NumRows())
			if err := enc.Bind(b.Record); err != nil {
				t.Fatal(err)
			}
			ids := b.Record.Column(0).(*array.Int64)
			for i := 0; i < b.NumRows(); i++ {
				seen[ids.Value(i)]++
				line = flusscmd.AppendLine(line[:0], b, i, enc)
				lines[bk] = append(lines[bk], string(line))
			}
		}
	}
	// Read part of every bucket before the failover; the rest of bucket 0
	// must come from its new leader.
	for deadline := time.Now().Add(time.Minute); (next[0] < 25 || next[0]+next[1]+next[2] < 150) && time.Now().Before(deadline); {
		poll(time.Second)
	}

	// Keep writing while the leader of bucket 0 dies.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			appendOne(int32(i % 3))
			time.Sleep(50 * time.Millisecond)
		}
	}()
	loc, ok := c.Location(info.Bucket(fluss.NoPartition, 0))
	if !ok || loc.Leader < 0 {
		t.Fatalf("no leader known for bucket 0: %+v", loc)
	}
	time.Sleep(time.Second)
	t.Logf("killing tablet server %d, leader of bucket 0", loc.Leader)
	if err := cl.KillTabletServer(int(loc.Leader)); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	// Read on through the failover until bucket 0 moved to a new leader
	// and some rows were read from it.
	before := next[0]
	for time.Since(killed) < 2*time.Minute {
		poll(time.Second)
		if l, ok := c.Location(info.Bucket(fluss.NoPartition, 0)); ok && l.Leader >= 0 && l.Leader != loc.Leader && next[0] > before+50 {
			break
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("failover: bucket 0 read up to offset %d (was %d at the kill) after %s; %d rows written, %d write errors",
		next[0], before, time.Since(killed).Round(time.Millisecond), written, len(writeErr))
	if next[0] <= before {
		t.Fatalf("no row of bucket 0 read after its leader died")
	}

	// Drain to the end offsets, then compare with the Java tool.
	end, err := c.ListOffsets(ctx, info, fluss.NoPartition, nil, fluss.LatestOffset())
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		if next[0] >= end[0] && next[1] >= end[1] && next[2] >= end[2] {
			break
		}
		poll(time.Second)
	}
	var got strings.Builder
	for b := int32(0); b < 3; b++ {
		if next[b] != end[b] {
			t.Errorf("bucket %d: read up to %d, end offset %d", b, next[b], end[b])
		}
		for _, l := range lines[b] {
			got.WriteString(l)
			got.WriteByte('\n')
		}
	}
	want := cl.RunJava(t, "scan", path.String())
	sameLines(t, "failover", want, got.String())
	st := s.Stats()
	t.Logf("scanner: %d fetches, %d batches, %d rows", st.Fetches, st.Batches, st.Rows)
	// Writes that failed may or may not have been applied; acknowledged ones
	// must all be there, and no row twice.
	if st.Rows < int64(written) || st.Rows > int64(written+25*len(writeErr)) {
		t.Errorf("read %d rows; %d rows were acknowledged and %d batches of 25 failed", st.Rows, written, len(writeErr))
	}
	for id, n := range seen {
		if n > 1 {
			t.Errorf("id %d read %d times", id, n)
		}
	}
	for first := range acked {
		for id := first; id < first+25; id++ {
			if seen[id] != 1 {
				t.Errorf("id %d of an acknowledged write read %d times", id, seen[id])
			}
		}
	}
	for _, err := range writeErr {
		t.Logf("write error during the failover: %v", err)
	}
}

// failoverBatch builds n rows with ids from first.
func failoverBatch(schema *arrow.Schema, first int64, bucket int32, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := 0; i < n; i++ {
		b.Field(0).(*array.Int64Builder).Append(first + int64(i))
		b.Field(1).(*array.Int32Builder).Append(bucket)
		b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("row %d of bucket %d", first+int64(i), bucket))
	}
	return b.NewRecordBatch()
}
