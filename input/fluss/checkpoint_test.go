package flussinput

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/redpanda-data/benthos/v4/public/service"
)

var kb0 = bucketKey{partitionID: fluss.NoPartition, bucket: 0}

// handOut tracks rows [start, end) as one batch, taking a slot first.
func handOut(t *testing.T, c *checkpointer, k bucketKey, start, end int64) *entry {
	t.Helper()
	if err := c.acquire(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	e, err := c.track(k, start, end, &flight{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func committed(c *checkpointer, k bucketKey) int64 { return c.positions()[k][0] }

func TestOutOfOrderAcksCommitContiguousPrefix(t *testing.T) {
	c := newCheckpointer(10)
	c.start(kb0, "", 100)
	e1 := handOut(t, c, kb0, 100, 110)
	e2 := handOut(t, c, kb0, 110, 120)
	e3 := handOut(t, c, kb0, 120, 125)
	c.ack([]*entry{e3})
	if got := committed(c, kb0); got != 100 {
		t.Fatalf("committed %d after acking the last batch only", got)
	}
	c.ack([]*entry{e2})
	if got := committed(c, kb0); got != 100 {
		t.Fatalf("committed %d with the first batch unacknowledged", got)
	}
	c.ack([]*entry{e1})
	if got := committed(c, kb0); got != 125 {
		t.Fatalf("committed %d after all acks, want 125", got)
	}
	// Acking twice changes nothing.
	c.ack([]*entry{e1, e2})
	if got := committed(c, kb0); got != 125 {
		t.Fatalf("committed %d", got)
	}
}

func TestGapEntriesCommitWithTheirPredecessors(t *testing.T) {
	c := newCheckpointer(10)
	c.start(kb0, "", 0)
	e1 := handOut(t, c, kb0, 0, 5)
	if _, err := c.track(kb0, 5, 9, nil); err != nil { // empty batches
		t.Fatal(err)
	}
	e2 := handOut(t, c, kb0, 9, 12)
	if got := committed(c, kb0); got != 0 {
		t.Fatalf("committed %d", got)
	}
	c.ack([]*entry{e1})
	if got := committed(c, kb0); got != 9 {
		t.Fatalf("committed %d, want 9 (over the gap)", got)
	}
	c.ack([]*entry{e2})
	if got := committed(c, kb0); got != 12 {
		t.Fatalf("committed %d, want 12", got)
	}
}

func TestTrackRejectsOutOfOrderUnits(t *testing.T) {
	c := newCheckpointer(10)
	c.start(kb0, "", 10)
	if _, err := c.track(kb0, 11, 12, &flight{}); !errors.Is(err, errTrackMismatch) {
		t.Fatalf("error %v", err)
	}
	if _, err := c.track(bucketKey{bucket: 9}, 0, 1, &flight{}); !errors.Is(err, errUntracked) {
		t.Fatalf("error %v", err)
	}
}

func TestBucketsAreIndependent(t *testing.T) {
	c := newCheckpointer(10)
	kb1 := bucketKey{partitionID: fluss.NoPartition, bucket: 1}
	c.start(kb0, "", 0)
	c.start(kb1, "", 50)
	a := handOut(t, c, kb0, 0, 10)
	b := handOut(t, c, kb1, 50, 60)
	c.ack([]*entry{b})
	if committed(c, kb0) != 0 || committed(c, kb1) != 60 {
		t.Fatalf("positions %v", c.positions())
	}
	c.ack([]*entry{a})
	if committed(c, kb0) != 10 {
		t.Fatalf("positions %v", c.positions())
	}
}

// Slots are given back only once the position covering a batch is written,
// so checkpoint_limit bounds what a crash can deliver twice.
func TestSlotsReleasedWhenPersisted(t *testing.T) {
	c := newCheckpointer(2)
	c.start(kb0, "", 0)
	e1 := handOut(t, c, kb0, 0, 10)
	e2 := handOut(t, c, kb0, 10, 20)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := c.acquire(ctx, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("third slot: %v", err)
	}
	c.ack([]*entry{e2, e1})
	if c.inFlight() != 2 {
		t.Fatalf("slots released before the write: %d in flight", c.inFlight())
	}
	s, err := c.takeSnapshot("db", "t")
	if err != nil || s == nil {
		t.Fatal(s, err)
	}
	c.persisted(s)
	if c.inFlight() != 0 {
		t.Fatalf("%d slots still taken after the write", c.inFlight())
	}
	if s, _ := c.takeSnapshot("db", "t"); s != nil {
		t.Error("snapshot without changes")
	}
}

func TestSlotHeldUntilAllEntriesOfAFlightArePersisted(t *testing.T) {
	c := newCheckpointer(1)
	kb1 := bucketKey{partitionID: fluss.NoPartition, bucket: 1}
	c.start(kb0, "", 0)
	c.start(kb1, "", 0)
	if err := c.acquire(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	fl := &flight{}
	pre, _ := c.track(kb1, 0, 3, &flight{}) // an earlier batch of bucket 1, never acked
	e0, _ := c.track(kb0, 0, 5, fl)
	e1, _ := c.track(kb1, 3, 6, fl)
	c.ack([]*entry{e0, e1})
	s, _ := c.takeSnapshot("db", "t")
	c.persisted(s)
	if c.inFlight() != 1 {
		t.Fatal("slot released while bucket 1's entry is not committed")
	}
	pre.fl = nil // it took no slot in this test
	c.ack([]*entry{pre})
	s, _ = c.takeSnapshot("db", "t")
	c.persisted(s)
	if c.inFlight() != 0 {
		t.Fatal("slot not released")
	}
}

func TestAcquireStopsOnStopChannel(t *testing.T) {
	c := newCheckpointer(1)
	if err := c.acquire(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	close(stop)
	if err := c.acquire(context.Background(), stop); !errors.Is(err, service.ErrNotConnected) {
		t.Fatalf("error %v", err)
	}
}

func TestResetForgetsInFlight(t *testing.T) {
	c := newCheckpointer(4)
	c.start(kb0, "", 100)
	e1 := handOut(t, c, kb0, 100, 110)
	c.reset(kb0, "", 40)
	if c.inFlight() != 0 {
		t.Fatalf("slots not given back: %d", c.inFlight())
	}
	c.ack([]*entry{e1}) // stale: ignored
	if got := committed(c, kb0); got != 40 {
		t.Fatalf("committed %d", got)
	}
	pos, _, _ := c.resumePosition(kb0)
	if pos != 40 {
		t.Fatalf("read position %d", pos)
	}
	e2 := handOut(t, c, kb0, 40, 45)
	c.ack([]*entry{e2})
	if got := committed(c, kb0); got != 45 {
		t.Fatalf("committed %d", got)
	}
}

func TestSkipToKeepsInFlight(t *testing.T) {
	c := newCheckpointer(4)
	c.start(kb0, "", 0)
	e1 := handOut(t, c, kb0, 0, 10)
	c.skipTo(kb0, 500)
	if got := committed(c, kb0); got != 0 {
		t.Fatalf("committed %d before the in-flight batch was acked", got)
	}
	c.ack([]*entry{e1})
	if got := committed(c, kb0); got != 500 {
		t.Fatalf("committed %d, want 500", got)
	}
}

func TestConcurrentAcks(t *testing.T) {
	const n = 2000
	c := newCheckpointer(n)
	kb1 := bucketKey{partitionID: 7, bucket: 1}
	c.start(kb0, "", 0)
	c.start(kb1, "p", 0)
	var entries []*entry
	for i := int64(0); i < n/2; i++ {
		entries = append(entries, handOut(t, c, kb0, i*3, i*3+3), handOut(t, c, kb1, i, i+1))
	}
	rand.Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(entries); i += 8 {
				c.ack([]*entry{entries[i]})
			}
		}()
	}
	done, flusherDone := make(chan struct{}), make(chan struct{})
	go func() { // a flusher running alongside
		defer close(flusherDone)
		for {
			select {
			case <-done:
				return
			default:
			}
			if s, _ := c.takeSnapshot("db", "t"); s != nil {
				c.persisted(s)
			}
		}
	}()
	wg.Wait()
	close(done)
	// The flusher may hold a snapshot of the final positions that it has not
	// yet marked persisted; like the input's single flush loop, the last flush
	// runs after it.
	<-flusherDone
	if s, _ := c.takeSnapshot("db", "t"); s != nil {
		c.persisted(s)
	}
	if committed(c, kb0) != 3*n/2 || committed(c, kb1) != n/2 {
		t.Fatalf("positions %v", c.positions())
	}
	if c.inFlight() != 0 {
		t.Fatalf("%d slots taken", c.inFlight())
	}
}

func TestSnapshotValueRoundTrip(t *testing.T) {
	c := newCheckpointer(4)
	c.setTableID(42)
	kp := bucketKey{partitionID: 3, bucket: 1}
	c.start(kb0, "", 7)
	c.start(kp, "2026", 9)
	s, err := c.takeSnapshot("db", "t")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"version":1,"database":"db","table":"t","table_id":42,"buckets":[{"bucket":0,"offset":7},{"partition_id":3,"partition":"2026","bucket":1,"offset":9}]}`
	if string(s.value) != want {
		t.Fatalf("value\n%s\nwant\n%s", s.value, want)
	}
	v, err := parseCheckpoint("k", s.value)
	if err != nil {
		t.Fatal(err)
	}
	if v.TableID != 42 || len(v.Buckets) != 2 || v.Buckets[1].key() != kp || v.Buckets[1].Offset != 9 {
		t.Fatalf("parsed %+v", v)
	}
}

func TestLoadedPositionsAreKeptUntilStarted(t *testing.T) {
	c := newCheckpointer(4)
	v, err := parseCheckpoint("k", []byte(`{"version":1,"table_id":5,"buckets":[{"bucket":0,"offset":7},{"bucket":1,"offset":8},{"partition_id":2,"bucket":0,"offset":1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := c.loadOnce(v)
	if got[kb0] != 7 || got[bucketKey{partitionID: fluss.NoPartition, bucket: 1}] != 8 {
		t.Fatalf("loaded %v", got)
	}
	c.pruneExtra(func(k bucketKey) bool { return k.partitionID == fluss.NoPartition })
	c.start(kb0, "", 10)
	s, _ := c.takeSnapshot("d", "t")
	var out checkpointValue
	if err := json.Unmarshal(s.value, &out); err != nil {
		t.Fatal(err)
	}
	if out.TableID != 5 || len(out.Buckets) != 2 || out.Buckets[0].Offset != 10 || out.Buckets[1].Offset != 8 {
		t.Fatalf("written %s", s.value)
	}
}

func TestParseCheckpointErrorsNameTheKey(t *testing.T) {
	for _, bad := range []string{
		``,
		`garbage`,
		`{"version":2,"table_id":1,"buckets":[]}`,
		`{"version":1,"table_id":1,"buckets":[{"bucket":0,"offset":-1}]}`,
		`{"version":1,"table_id":1,"buckets":[{"bucket":-1,"offset":1}]}`,
		`{"version":1,"table_id":1,"buckets":[{"bucket":0,"offset":1},{"bucket":0,"offset":2}]}`,
		`{"version":1,"table_id":1,"buckets":[{"bucket":0,"offset":"x"}]}`,
		`{"version":1,"table_id":1,"buckets":[]} {}`,
	} {
		_, err := parseCheckpoint("fluss_db_t", []byte(bad))
		if err == nil {
			t.Errorf("%q parsed", bad)
			continue
		}
		if !errors.Is(err, errCorruptCheckpoint) || !strings.Contains(err.Error(), `"fluss_db_t"`) {
			t.Errorf("%q: error %v", bad, err)
		}
	}
}

func TestRemovedBucketsAreForgottenWhenIdle(t *testing.T) {
	c := newCheckpointer(4)
	kp := bucketKey{partitionID: 3, bucket: 0}
	c.start(kp, "x", 0)
	e := handOut(t, c, kp, 0, 4)
	c.remove(kp)
	s, _ := c.takeSnapshot("d", "t")
	if strings.Contains(string(s.value), `"partition_id":3`) {
		t.Errorf("removed bucket written: %s", s.value)
	}
	c.persisted(s)
	if c.state(kp) == nil {
		t.Fatal("state dropped while a batch is in flight")
	}
	c.ack([]*entry{e})
	s, _ = c.takeSnapshot("d", "t")
	c.persisted(s)
	s, _ = c.takeSnapshot("d", "t")
	if s != nil {
		c.persisted(s)
	}
	if c.state(kp) != nil {
		t.Error("state of a dropped partition kept")
	}
}

// The cache store against a mock cache resource.
func TestCheckpointStoreWithMockCache(t *testing.T) {
	mgr := service.MockResources(service.MockResourcesOptAddCache("offs"))
	s := checkpointStore{mgr: mgr, cache: "offs", key: "k"}
	ctx := context.Background()
	v, err := s.get(ctx)
	if err != nil || v != nil {
		t.Fatalf("missing key: %q %v", v, err)
	}
	if err := s.set(ctx, "k", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if v, err = s.get(ctx); err != nil || string(v) != "x" {
		t.Fatalf("got %q %v", v, err)
	}
	bad := checkpointStore{mgr: mgr, cache: "nope", key: "k"}
	if _, err := bad.get(ctx); err == nil || !strings.Contains(err.Error(), `cache "nope"`) {
		t.Fatalf("error %v", err)
	}
}
