package flussinput

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// newTestInput builds an input on mock resources with a cache named offs,
// without connecting.
func newTestInput(t *testing.T, extra string) (*input, *service.Resources) {
	t.Helper()
	pc, err := Spec().ParseYAML(baseYAML+extra, nil)
	if err != nil {
		t.Fatal(err)
	}
	mgr := service.MockResources(service.MockResourcesOptAddCache("offs"))
	in, err := newInputFromParsed(pc, mgr)
	if err != nil {
		t.Fatal(err)
	}
	return in, mgr
}

func readCheckpoint(t *testing.T, mgr *service.Resources, key string) *checkpointValue {
	t.Helper()
	var (
		raw    []byte
		getErr error
	)
	if err := mgr.AccessCache(context.Background(), "offs", func(c service.Cache) {
		raw, getErr = c.Get(context.Background(), key)
	}); err != nil {
		t.Fatal(err)
	}
	if errors.Is(getErr, service.ErrKeyNotFound) {
		return nil
	}
	if getErr != nil {
		t.Fatal(getErr)
	}
	v, err := parseCheckpoint(key, raw)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func offsetOf(v *checkpointValue, k bucketKey) int64 {
	if v == nil {
		return -1
	}
	for _, b := range v.Buckets {
		if b.key() == k {
			return b.Offset
		}
	}
	return -1
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestAcksAreWrittenToTheCache(t *testing.T) {
	in, mgr := newTestInput(t, "")
	in.cp.setTableID(77)
	in.cp.start(kb0, "", 0)
	in.mu.Lock()
	in.startFlusherLocked()
	in.mu.Unlock()

	waitFor(t, "the start position", func() bool { return offsetOf(readCheckpoint(t, mgr, "fluss_shop_orders"), kb0) == 0 })

	var acks []service.AckFunc
	for i := int64(0); i < 3; i++ {
		e := handOut(t, in.cp, kb0, i*10, i*10+10)
		acks = append(acks, in.ackFunc(&sent{entries: []*entry{e}}))
	}
	ctx := context.Background()
	_ = acks[1](ctx, nil)
	_ = acks[2](ctx, nil)
	time.Sleep(50 * time.Millisecond)
	if got := offsetOf(readCheckpoint(t, mgr, "fluss_shop_orders"), kb0); got != 0 {
		t.Fatalf("offset %d written with the first batch unacknowledged", got)
	}
	_ = acks[0](ctx, nil)
	waitFor(t, "offset 30", func() bool { return offsetOf(readCheckpoint(t, mgr, "fluss_shop_orders"), kb0) == 30 })
	v := readCheckpoint(t, mgr, "fluss_shop_orders")
	if v.TableID != 77 || v.Database != "shop" || v.Table != "orders" {
		t.Errorf("value %+v", v)
	}
	waitFor(t, "slots given back", func() bool { return in.cp.inFlight() == 0 })

	// Acks right before Close are written by Close.
	e := handOut(t, in.cp, kb0, 30, 45)
	_ = in.ackFunc(&sent{entries: []*entry{e}})(ctx, nil)
	if err := in.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := offsetOf(readCheckpoint(t, mgr, "fluss_shop_orders"), kb0); got != 45 {
		t.Fatalf("offset %d after Close, want 45", got)
	}
	if err := in.Close(ctx); err != nil {
		t.Fatal("second Close:", err)
	}
}

// With auto_replay_nacks: false a nack moves the position past the rows.
func TestNackSkipsWhenReplayIsOff(t *testing.T) {
	in, mgr := newTestInput(t, "auto_replay_nacks: false\n")
	in.cp.start(kb0, "", 0)
	e1 := handOut(t, in.cp, kb0, 0, 10)
	e2 := handOut(t, in.cp, kb0, 10, 20)
	ctx := context.Background()
	_ = in.ackFunc(&sent{entries: []*entry{e1}})(ctx, errors.New("output rejected it"))
	_ = in.ackFunc(&sent{entries: []*entry{e2}})(ctx, nil)
	if got := committed(in.cp, kb0); got != 20 {
		t.Fatalf("committed %d, want 20", got)
	}
	in.mu.Lock()
	in.startFlusherLocked()
	in.mu.Unlock()
	if err := in.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := offsetOf(readCheckpoint(t, mgr, "fluss_shop_orders"), kb0); got != 20 {
		t.Fatalf("written %d", got)
	}
}

// A cache that fails is retried; nothing acknowledged is lost.
func TestFlushRetriesFailedWrites(t *testing.T) {
	in, mgr := newTestInput(t, "")
	in.store.cache = "missing"
	in.cp.start(kb0, "", 5)
	if err := in.flushOnce(context.Background()); err == nil {
		t.Fatal("write to a missing cache succeeded")
	}
	in.store.cache = "offs"
	if err := in.flushOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := offsetOf(readCheckpoint(t, mgr, "fluss_shop_orders"), kb0); got != 5 {
		t.Fatalf("written %d", got)
	}
}

func TestCheckpointValueIsVersionedJSON(t *testing.T) {
	in, mgr := newTestInput(t, "checkpoint_key: custom\n")
	in.cp.setTableID(1)
	in.cp.start(bucketKey{partitionID: 4, bucket: 2}, "2026", 11)
	if err := in.flushOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	var raw []byte
	_ = mgr.AccessCache(context.Background(), "offs", func(c service.Cache) { raw, _ = c.Get(context.Background(), "custom") })
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if m["version"] != float64(1) {
		t.Errorf("value %s", raw)
	}
}

// Fluss unreachable: Connect fails with a growing back-off and says why.
func TestConnectUnreachableBacksOff(t *testing.T) {
	pc, err := Spec().ParseYAML(`
bootstrap_servers: [ "127.0.0.1:1" ]
database: shop
table: orders
checkpoint_cache: offs
connect_timeout: 1s
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	in, err := newInputFromParsed(pc, service.MockResources(service.MockResourcesOptAddCache("offs")))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close(context.Background())
	var waits []time.Duration
	for i := 0; i < 3; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := in.Connect(ctx)
		cancel()
		var bo *service.ErrBackOff
		if !errors.As(err, &bo) {
			t.Fatalf("attempt %d: %v is not an ErrBackOff", i, err)
		}
		if !strings.Contains(err.Error(), "127.0.0.1:1") {
			t.Errorf("error does not name the servers: %v", err)
		}
		waits = append(waits, bo.Wait)
	}
	if !(waits[0] < waits[1] && waits[1] < waits[2]) {
		t.Errorf("back-off does not grow: %v", waits)
	}
}
