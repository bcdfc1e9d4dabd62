package flussoutput

import (
	"reflect"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
)

func TestMergeRuns(t *testing.T) {
	got := mergeRuns([]offRun{{10, 12}, {0, 3}, {4, 5}, {20, 20}, {11, 15}})
	want := []offRun{{0, 5}, {10, 15}, {20, 20}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("merged %v, want %v", got, want)
	}
}

// begin records runs of consecutive offsets per source; written finds an
// offset only inside a remembered run.
func TestJournalRunsAndReplay(t *testing.T) {
	j := &journal{sourceMD: []string{"s", "p"}, offsetMD: "o", skipped: service.MockResources().Metrics().NewCounter("x")}
	var pos []position
	for _, o := range []int64{5, 6, 7, 9, 10} {
		m := service.NewMessage(nil)
		m.MetaSetMut("s", "orders")
		m.MetaSetMut("p", int64(1))
		m.MetaSetMut("o", o)
		at, again, err := j.replay(m)
		if err != nil || again {
			t.Fatalf("offset %d: %v, %v", o, again, err)
		}
		pos = append(pos, at)
	}
	p := j.begin(pos)
	if want := []offRun{{5, 7}, {9, 10}}; !reflect.DeepEqual(p.rec.Runs["orders/1"], want) {
		t.Fatalf("runs %v, want %v", p.rec.Runs, want)
	}
	j.replayed.Store("orders/1", mergeRuns(p.rec.Runs["orders/1"]))
	j.hasReplay.Store(true)
	for off, want := range map[int64]bool{4: false, 5: true, 7: true, 8: false, 10: true, 11: false} {
		if got := j.written("orders/1", off); got != want {
			t.Errorf("written(orders/1, %d) = %v, want %v", off, got, want)
		}
	}
	if j.written("orders/2", 5) {
		t.Error("another source's offset counted as written")
	}
	m := service.NewMessage(nil)
	m.MetaSetMut("s", "orders")
	if _, _, err := j.replay(m); err == nil {
		t.Error("a message without the position metadata passed")
	}
}
