package flussinput

import (
	"testing"

	"github.com/fluss-iggy/fluss-iggy/fluss"
)

func rowsUnit(b int32, start int64) *unit {
	return &unit{kind: unitRows, key: bucketKey{partitionID: fluss.NoPartition, bucket: b}, start: start, end: start + 1}
}

// TestOrderGateOneBatchPerBucket: with a batch of bucket 0 out, later rows
// of bucket 0 wait (and so does a gap behind them) while bucket 1 passes;
// the ack releases them in arrival order.
func TestOrderGateOneBatchPerBucket(t *testing.T) {
	g := newOrderGate(true, 8)
	first := rowsUnit(0, 0)
	if !g.offer(first) {
		t.Fatal("the first unit of a bucket waits")
	}
	g.taken(first.key)
	g.sealed()

	second, third := rowsUnit(0, 1), rowsUnit(0, 2)
	gap := &unit{kind: unitGap, key: second.key, start: 3, end: 4}
	other := rowsUnit(1, 0)
	for _, u := range []*unit{second, third, gap} {
		if g.offer(u) {
			t.Fatalf("unit at %d of a bucket with a batch out passed", u.start)
		}
	}
	if !g.offer(other) {
		t.Fatal("a unit of another bucket waits")
	}
	if u := g.next(); u != nil {
		t.Fatalf("next gave %v before the ack", u)
	}
	if !g.pending() || g.full() {
		t.Fatalf("pending %v, full %v", g.pending(), g.full())
	}

	g.acked([]bucketKey{first.key})
	select {
	case <-g.ready:
	default:
		t.Fatal("no ready signal after the ack")
	}
	if u := g.next(); u != second {
		t.Fatalf("next gave %v, want the unit at 1", u)
	}
	// Gathered into one batch, the third unit may join the second.
	g.taken(second.key)
	if u := g.next(); u != third {
		t.Fatalf("next gave %v, want the unit at 2 (same batch)", u)
	}
	g.taken(third.key)
	g.sealed()
	// The gap follows once it heads its bucket's queue, even with a batch out.
	if u := g.next(); u != gap {
		t.Fatalf("next gave %v, want the gap", u)
	}
	if g.pending() {
		t.Fatal("units left")
	}
}

// TestOrderGateLimitAndNone: the gate is full at its limit, and with
// ordering: none every unit passes.
func TestOrderGateLimitAndNone(t *testing.T) {
	g := newOrderGate(true, 2)
	g.offer(rowsUnit(0, 0))
	g.taken(bucketKey{partitionID: fluss.NoPartition, bucket: 0})
	g.sealed()
	g.offer(rowsUnit(0, 1))
	if g.full() {
		t.Fatal("full at 1 of 2")
	}
	g.offer(rowsUnit(0, 2))
	if !g.full() {
		t.Fatal("not full at 2 of 2")
	}
	g.reconnected()
	if g.pending() || g.full() {
		t.Fatal("units kept after a reconnect")
	}

	none := newOrderGate(false, 1)
	for i := range 5 {
		if !none.offer(rowsUnit(0, int64(i))) {
			t.Fatal("ordering: none kept a unit")
		}
		none.taken(bucketKey{bucket: 0})
	}
	if none.next() != nil || none.full() || none.pending() {
		t.Fatal("ordering: none keeps state")
	}
}
