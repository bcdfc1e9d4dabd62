package flussinput

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/internal/stop"
)

// state replays changelog rows into a table's contents, by primary key (the
// "id" column): +I and +U set a key, -D deletes it, -U changes nothing.
type state map[string]json.RawMessage

func (s state) apply(t *testing.T, r row) {
	t.Helper()
	var k struct {
		ID json.Number `json:"id"`
	}
	if err := json.Unmarshal(r.Row, &k); err != nil || k.ID == "" {
		t.Fatalf("row without id: %s (%v)", r.Row, err)
	}
	switch r.ChangeType {
	case "+I", "+U":
		s[k.ID.String()] = r.Row
	case "-D":
		delete(s, k.ID.String())
	}
}

// replayJava replays the Java tool's changelog scan (bucket by bucket in
// offset order; keys never change buckets).
func replayJava(t *testing.T, rows map[string]row) state {
	all := make([]row, 0, len(rows))
	for _, r := range rows {
		all = append(all, r)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Bucket != all[j].Bucket {
			return all[i].Bucket < all[j].Bucket
		}
		return all[i].Offset < all[j].Offset
	})
	s := state{}
	for _, r := range all {
		s.apply(t, r)
	}
	return s
}

func (s state) diff(t *testing.T, want state) {
	t.Helper()
	bad := 0
	for k, w := range want {
		if g, ok := s[k]; !ok || string(g) != string(w) {
			if bad++; bad <= 5 {
				t.Errorf("key %s: got %s, want %s", k, g, w)
			}
		}
	}
	for k, g := range s {
		if _, ok := want[k]; !ok {
			if bad++; bad <= 5 {
				t.Errorf("key %s: got %s, want no row", k, g)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d keys differ (%d keys, want %d)", bad, len(s), len(want))
	}
}

// waitSnapshots waits until every bucket of a table has a KV snapshot that
// covers its whole changelog, and returns them.
func waitSnapshots(t *testing.T, c *fluss.Client, table string) []fluss.KVSnapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	info, err := c.Table(ctx, fluss.NewTablePath(testDB.name, table))
	if err != nil {
		t.Fatal(err)
	}
	latest := latestOffsets(t, c, table, fluss.NoPartition)
	for {
		snaps, err := c.LatestKVSnapshots(ctx, info, fluss.PartitionInfo{ID: fluss.NoPartition})
		if err != nil {
			t.Fatal(err)
		}
		done := len(snaps) == int(info.NumBuckets)
		for _, s := range snaps {
			done = done && s.SnapshotID != fluss.NoSnapshot && s.LogOffset == latest[s.Bucket.Bucket]
		}
		if done {
			return snaps
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no snapshot covering the changelog of every bucket of %s (latest offsets %v): %v", table, latest, snaps)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// snapshotTable creates a primary-key table with changes and waits for a KV
// snapshot of every bucket that covers them.
func snapshotTable(t *testing.T, c *fluss.Client) (string, []fluss.KVSnapshot) {
	table := createTable(t, c, "snap", tableSpec{columns: "id BIGINT, name STRING, amount DOUBLE", primaryKey: []string{"id"}, buckets: 3})
	java(t, "upsert", table, "--rows", "3000", "--seed", "1")
	java(t, "upsert", table, "--rows", "1000", "--seed", "2")
	java(t, "delete", table, "--rows", "500", "--start", "2500")
	return table, waitSnapshots(t, c, table)
}

// TestIntegrationStartFromSnapshot: start_offset: snapshot delivers every
// live row of each bucket's snapshot as +I (with fluss_snapshot_id and the
// covered offset), then the changelog from that offset, so that replaying
// what arrived gives the table's contents; and a restart in the middle of
// the snapshot phase resumes it from the checkpoint.
func TestIntegrationStartFromSnapshot(t *testing.T) {
	boot, c := cluster(t)
	table, _ := snapshotTable(t, c)
	cfg := "start_offset: snapshot\nend_at: latest\nmax_batch_rows: 100\n"

	t.Run("then_changelog", func(t *testing.T) {
		// Connect (the snapshots to read are chosen), then change the
		// table: those changes come from the changelog after the snapshots.
		mgr := service.MockResources(service.MockResourcesOptAddCache("offs"))
		in := connectInput(t, boot, table, "start_offset: snapshot\nmax_batch_rows: 100\n", mgr)
		java(t, "upsert", table, "--rows", "400", "--seed", "3")
		java(t, "delete", table, "--rows", "100", "--start", "0")
		javaRows := javaScan(t, table)
		want := replayJava(t, javaRows)
		got := readUntilState(t, in, want)
		checkSnapshotRun(t, got, javaRows, want)
	})

	t.Run("resume", func(t *testing.T) {
		// Snapshots covering the changes above first: a newer one taken
		// between the two runs would replace the one read halfway.
		waitSnapshots(t, c, table)
		mgr := service.MockResources(service.MockResourcesOptAddCache("offs"))
		first := connectInput(t, boot, table, "start_offset: snapshot\nmax_batch_rows: 100\n", mgr)
		s := state{}
		for i := 0; i < 5; i++ {
			b, ack := readOne(t, first)
			for _, m := range b {
				s.apply(t, rowOf(t, m))
			}
			if err := ack(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
		}
		want := replayJava(t, javaScan(t, table))
		if err := first.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		v := readCheckpoint(t, mgr, "fluss_"+testDB.name+"_"+table)
		inSnapshot := 0
		for _, b := range v.Buckets {
			if b.Snapshot != nil {
				inSnapshot++
			}
		}
		if inSnapshot == 0 {
			t.Fatalf("no bucket in its snapshot phase in the checkpoint after 5 batches: %+v", v.Buckets)
		}
		second := connectInput(t, boot, table, cfg, mgr)
		snapRows := 0
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		readEach(ctx, t, second, service.ErrEndOfInput, func(m *service.Message) {
			if _, ok := m.MetaGetMut(metaSnapshotID); ok {
				snapRows++
			}
			s.apply(t, rowOf(t, m))
		})
		if snapRows >= 2500 {
			t.Errorf("the restart read %d snapshot rows: it did not resume", snapRows)
		}
		s.diff(t, want)
		t.Logf("after 5 batches and a restart: %d snapshot rows read again or for the first time", snapRows)
	})
}

// TestIntegrationSnapshotGone: a checkpoint in the middle of a snapshot the
// server no longer has (here: a checkpoint naming a snapshot id that does
// not exist) stops the pipeline with on_unresumable_offset: fail, and with
// earliest starts the bucket's latest snapshot again, which still gives the
// table's contents.
func TestIntegrationSnapshotGone(t *testing.T) {
	boot, c := cluster(t)
	table, _ := snapshotTable(t, c)
	mgr := service.MockResources(service.MockResourcesOptAddCache("offs"))
	first := connectInput(t, boot, table, "start_offset: snapshot\nmax_batch_rows: 100\n", mgr)
	_, ack := readOne(t, first)
	_ = ack(context.Background(), nil)
	if err := first.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	key := "fluss_" + testDB.name + "_" + table
	v := readCheckpoint(t, mgr, key)
	const old = int64(1) << 40
	read := 0
	for i := range v.Buckets {
		if v.Buckets[i].Snapshot == nil {
			t.Fatalf("bucket %d left its snapshot phase after one batch: %+v", v.Buckets[i].Bucket, v.Buckets[i])
		}
		v.Buckets[i].Snapshot.ID = old
		if v.Buckets[i].Offset > 0 {
			read++
		}
	}
	if read != 1 {
		t.Fatalf("%d buckets with snapshot rows read after one batch, want 1: %+v", read, v.Buckets)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t.Cleanup(stop.Reset)

	t.Run("none_read", func(t *testing.T) {
		// No row of the gone snapshot read: the latest one replaces it,
		// even with on_unresumable_offset: fail.
		fresh := *v
		fresh.Buckets = slices.Clone(v.Buckets)
		for i := range fresh.Buckets {
			s := *fresh.Buckets[i].Snapshot
			fresh.Buckets[i].Offset, fresh.Buckets[i].Snapshot = 0, &s
		}
		mgr := service.MockResources(service.MockResourcesOptAddCache("offs"))
		writeCheckpoint(t, mgr, key, fresh)
		stop.Reset()
		in := connectInput(t, boot, table, "start_offset: snapshot\non_unresumable_offset: fail\nend_at: latest\nmax_batch_rows: 100\n", mgr)
		got := state{}
		for {
			b, ack, err := in.ReadBatch(ctx)
			if errors.Is(err, service.ErrEndOfInput) {
				break
			}
			if err != nil {
				t.Fatalf("%v (stopped with: %v)", err, stop.Err())
			}
			for _, m := range b {
				if id, _ := m.MetaGetMut(metaSnapshotID); id == old {
					t.Fatalf("a row of snapshot %d, which does not exist", old)
				}
				got.apply(t, rowOf(t, m))
			}
			_ = ack(ctx, nil)
		}
		got.diff(t, replayJava(t, javaScan(t, table)))
		if err := stop.Err(); err != nil {
			t.Fatalf("the pipeline was stopped: %v", err)
		}
	})

	writeCheckpoint(t, mgr, key, *v)
	stop.Reset()
	failing := connectInput(t, boot, table, "start_offset: snapshot\non_unresumable_offset: fail\n", mgr)
	if _, _, err := failing.ReadBatch(ctx); !errors.Is(err, service.ErrNotConnected) {
		t.Fatalf("ReadBatch with the snapshot gone: %v, want the connection to end", err)
	}
	if err := stop.Err(); err == nil || !strings.Contains(err.Error(), "no longer exists") {
		t.Fatalf("the pipeline was not stopped with the reason: %v", err)
	}
	t.Logf("on_unresumable_offset: fail: %v", stop.Err())
	_ = failing.Close(context.Background())

	again := connectInput(t, boot, table, "start_offset: snapshot\non_unresumable_offset: earliest\nend_at: latest\nmax_batch_rows: 100\n", mgr)
	got := state{}
	newer := 0
	for {
		b, ack, err := again.ReadBatch(ctx)
		if errors.Is(err, service.ErrEndOfInput) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range b {
			if id, ok := m.MetaGetMut(metaSnapshotID); ok && id != old {
				newer++
			}
			got.apply(t, rowOf(t, m))
		}
		_ = ack(ctx, nil)
	}
	if newer == 0 {
		t.Error("no row of a newer snapshot")
	}
	got.diff(t, replayJava(t, javaScan(t, table)))
}

// writeCheckpoint stores v under key in the cache "offs".
func writeCheckpoint(t *testing.T, mgr *service.Resources, key string, v checkpointValue) {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var setErr error
	if err := mgr.AccessCache(context.Background(), "offs", func(cc service.Cache) { setErr = cc.Set(context.Background(), key, raw, nil) }); err != nil || setErr != nil {
		t.Fatal(err, setErr)
	}
}

// checkSnapshotRun checks what a start_offset: snapshot run delivered: per
// bucket, +I rows of one snapshot (fluss_offset = the offset it covers)
// whose contents equal the Java changelog replayed below that offset, then
// changelog rows from that offset; and all of it replayed equals want.
func checkSnapshotRun(t *testing.T, got []*service.Message, javaRows map[string]row, want state) {
	t.Helper()
	type phase struct {
		id, offset int64
		rows       state
		logRows    int
	}
	buckets := map[int64]*phase{}
	all := state{}
	for _, m := range got {
		r := rowOf(t, m)
		p := buckets[r.Bucket]
		if id, ok := m.MetaGetMut(metaSnapshotID); ok {
			if p == nil {
				p = &phase{id: id.(int64), offset: r.Offset, rows: state{}}
				buckets[r.Bucket] = p
			}
			if id != p.id || r.Offset != p.offset || r.ChangeType != "+I" || p.logRows > 0 {
				t.Fatalf("bucket %d: snapshot row %s (snapshot %v, offset %d, %s) after snapshot %d at %d and %d changelog rows",
					r.Bucket, r.Row, id, r.Offset, r.ChangeType, p.id, p.offset, p.logRows)
			}
			p.rows.apply(t, r)
		} else if p != nil {
			if r.Offset < p.offset {
				t.Fatalf("bucket %d: changelog row at offset %d, below its snapshot's %d", r.Bucket, r.Offset, p.offset)
			}
			p.logRows++
		}
		all.apply(t, r)
	}
	if len(buckets) == 0 {
		t.Fatal("no snapshot rows")
	}
	for b, p := range buckets {
		below := map[string]row{}
		for k, r := range javaRows {
			if r.Bucket == b && r.Offset < p.offset {
				below[k] = r
			}
		}
		t.Logf("bucket %d: snapshot %d covering offset %d: %d rows, then %d changelog rows", b, p.id, p.offset, len(p.rows), p.logRows)
		p.rows.diff(t, replayJava(t, below))
	}
	all.diff(t, want)
}

// readUntilState reads and acknowledges batches until the rows read,
// replayed, equal want, and returns the messages.
func readUntilState(t *testing.T, in *input, want state) []*service.Message {
	t.Helper()
	var got []*service.Message
	s := state{}
	deadline := time.Now().Add(3 * time.Minute)
	for !s.equal(want) {
		if time.Now().After(deadline) {
			s.diff(t, want)
			t.Fatal("the table's contents never arrived")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		b, ack, err := in.ReadBatch(ctx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range b {
			s.apply(t, rowOf(t, m))
		}
		got = append(got, b...)
		_ = ack(context.Background(), nil)
	}
	return got
}

func (s state) equal(want state) bool {
	if len(s) != len(want) {
		return false
	}
	for k, w := range want {
		if string(s[k]) != string(w) {
			return false
		}
	}
	return true
}

// TestIntegrationSnapshotStillUnreadable: with on_unresumable_offset:
// earliest, a bucket whose latest snapshot cannot be read (its files removed
// from remote storage while the server still lists it, and the table left
// unchanged so that no newer one comes) is opened again after a pause that
// grows from a second, not as fast as the server answers, and the other
// bucket's snapshot, queued behind it, is read meanwhile.
func TestIntegrationSnapshotStillUnreadable(t *testing.T) {
	boot, c := cluster(t)
	table := createTable(t, c, "unreadable", tableSpec{columns: "id BIGINT, name STRING, amount DOUBLE", primaryKey: []string{"id"}, buckets: 2})
	java(t, "upsert", table, "--rows", "500", "--seed", "1")
	var snap fluss.KVSnapshot
	for _, s := range waitSnapshots(t, c, table) {
		if s.Bucket.Bucket == 0 { // the first of the worker's queue
			snap = s
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	removeSnapshotFiles(ctx, t, c, snap)

	logs := &lineCounter{substr: fmt.Sprintf("snapshot %d, read to row 0, no longer exists", snap.SnapshotID)}
	mgr := service.MockResources(service.MockResourcesOptAddCache("offs"),
		service.MockResourcesOptUseLogger(service.NewLoggerFromSlog(slog.New(slog.NewTextHandler(logs, nil)))))
	start := time.Now()
	in := connectInput(t, boot, table, "start_offset: snapshot\non_unresumable_offset: earliest\nmax_batch_rows: 100\n", mgr)
	rctx, rcancel := context.WithTimeout(ctx, 7500*time.Millisecond)
	defer rcancel()
	rows := map[int64]int{}
	readEach(rctx, t, in, context.DeadlineExceeded, func(m *service.Message) {
		rows[meta(t, m, metaBucket).(int64)]++
	})
	elapsed := time.Since(start)
	if rows[0] != 0 || rows[1] == 0 {
		t.Errorf("read %d rows of bucket 0 (snapshot unreadable) and %d of bucket 1, want none and its snapshot's", rows[0], rows[1])
	}
	// Attempts at 0, 1, 3 and 7 s (pauses of 1, 2, 4, 8 ... 30 s); before
	// the pause, thousands.
	n := logs.count()
	if limit := 2 + int(math.Log2(1+elapsed.Seconds())); n < 2 || n > limit {
		t.Errorf("snapshot %d was found unreadable %d times in %s, want 2 to %d", snap.SnapshotID, n, elapsed.Round(time.Millisecond), limit)
	}
	t.Logf("snapshot %d found unreadable %d times in %s; %d rows of bucket 1 read meanwhile", snap.SnapshotID, n, elapsed.Round(time.Millisecond), rows[1])
}

// readEach reads batches until ReadBatch fails with end, calling fn on
// every message and acknowledging every batch; any other error fails t.
func readEach(ctx context.Context, t *testing.T, in *input, end error, fn func(*service.Message)) {
	t.Helper()
	for {
		b, ack, err := in.ReadBatch(ctx)
		if errors.Is(err, end) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range b {
			fn(m)
		}
		_ = ack(context.Background(), nil)
	}
}

// removeSnapshotFiles deletes the files of a KV snapshot from the cluster's
// remote storage, which must be a local directory.
func removeSnapshotFiles(ctx context.Context, t *testing.T, c *fluss.Client, snap fluss.KVSnapshot) {
	t.Helper()
	files, err := c.KVSnapshotFiles(ctx, snap.Bucket, snap.SnapshotID)
	if err != nil {
		t.Fatal(err)
	}
	if len(files.Files) == 0 {
		t.Fatalf("snapshot %d lists no files", snap.SnapshotID)
	}
	for _, f := range files.Files {
		u, err := url.Parse(f.RemotePath)
		if err != nil || (u.Scheme != "file" && u.Scheme != "") {
			t.Fatalf("snapshot file %s is not on a local path (%v): this test needs the cluster's remote.data.dir on local disk", f.RemotePath, err)
		}
		if err := os.Remove(u.Path); err != nil {
			t.Fatal(err)
		}
	}
}

// lineCounter is an io.Writer that counts the log lines holding substr.
type lineCounter struct {
	mu     sync.Mutex
	substr string
	n      int
}

func (l *lineCounter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n += bytes.Count(p, []byte(l.substr))
	return len(p), nil
}

func (l *lineCounter) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}
