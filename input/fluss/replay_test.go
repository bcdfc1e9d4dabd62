package flussinput

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

func TestRetryPause(t *testing.T) {
	for _, c := range []struct {
		attempt int
		want    time.Duration
	}{{1, 0}, {2, 0}, {3, time.Millisecond}, {4, 2 * time.Millisecond}, {12, 512 * time.Millisecond}, {13, time.Second}, {500, time.Second}} {
		if got := retryPause(c.attempt); got != c.want {
			t.Errorf("attempt %d: pause %v, want %v", c.attempt, got, c.want)
		}
	}
}

// After the input's end the replayer waits for the batches still out: a
// nack of one of them is delivered again rather than ending the input.
func TestReplayerWaitsForBatchesOutAtTheEnd(t *testing.T) {
	r := newReplayer(nil)
	r.out = 1
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := r.waitEnd(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("with a batch out: %v, want to wait", err)
	}
	s := &sent{}
	go func() {
		time.Sleep(10 * time.Millisecond)
		_ = r.ackFor(s)(context.Background(), errors.New("rejected"))
	}()
	if err := r.waitEnd(context.Background()); err != nil {
		t.Fatalf("after a nack: %v, want nil (deliver it)", err)
	}
	if got := r.nextRetry(); got != s {
		t.Fatalf("retry %p, want the nacked batch %p", got, s)
	}
	r.out = 0
	if err := r.waitEnd(context.Background()); !errors.Is(err, service.ErrEndOfInput) {
		t.Fatalf("nothing out: %v, want the end", err)
	}
}

// A unit keeps what its rows were built with: rebuilt after its bucket
// moved to another snapshot, the rows still name the snapshot they came
// from.
func TestRowsUnitRebuildsWithItsSnapshot(t *testing.T) {
	s, as, rec := benchRecord(t, 4)
	defer rec.Release()
	builder := func() *messageBuilder {
		b, err := newMessageBuilder(tableMeta{database: "db", table: "t", tableID: 9, pkTable: true}, s, as, false)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	w := &worker{builder: builder(), replay: builder()}
	sr := &snapshotRead{key: kb0, snap: checkpointSnapshot{ID: 3, LogOffset: 100}}
	bc := batchContext{key: kb0, snap: &sr.snap}
	u, err := w.rowsUnit(&bc, rec, insertChangeTypes(4), 0, 1, 3, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer u.release()
	sr.snap = checkpointSnapshot{ID: 7, LogOffset: 500}
	again, err := u.src.rebuild()
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != 2 || len(u.msgs) != 2 {
		t.Fatalf("%d rows built, %d rebuilt, want 2", len(u.msgs), len(again))
	}
	for i, m := range again {
		id, _ := m.MetaGetMut(metaSnapshotID)
		off, _ := m.MetaGetMut(metaOffset)
		if id != int64(3) || off != int64(100) {
			t.Errorf("row %d rebuilt with snapshot %v at offset %v, want snapshot 3 at 100", i, id, off)
		}
		b1, _ := u.msgs[i].AsBytes()
		b2, _ := m.AsBytes()
		if string(b1) != string(b2) {
			t.Errorf("row %d: built %s, rebuilt %s", i, b1, b2)
		}
	}
}
