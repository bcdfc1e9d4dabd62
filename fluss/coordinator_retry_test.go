package fluss

import (
	"errors"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/wire"
)

// TestCoordinatorCallRetriesStandby: a Fluss 1.0 standby coordinator
// refuses a request with NOT_COORDINATOR_LEADER before running it; the
// client asks the cluster for the coordinator again and retries, a write
// (CREATE_DATABASE) included. Only the attempt limit stops it.
func TestCoordinatorCallRetriesStandby(t *testing.T) {
	f := newFakeCluster(t)
	standby := errcode.NotCoordinatorLeader.Code
	f.refuse[wire.CreateDatabase] = []int32{standby}
	ctx := testCtx(t, 30*time.Second)
	c, err := NewClient(ctx, Bootstrap(f.addr()), MaxAttempts(3),
		RetryBackoff(Backoff{Initial: time.Millisecond, Max: 5 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before := f.count(wire.GetMetadata)
	if err := c.CreateDatabase(ctx, "db2", nil, false); err != nil {
		t.Fatalf("CreateDatabase after a standby's refusal: %v", err)
	}
	if got := f.count(wire.CreateDatabase); got != 2 {
		t.Errorf("CREATE_DATABASE sent %d times, want 2", got)
	}
	if f.count(wire.GetMetadata) <= before {
		t.Error("NOT_COORDINATOR_LEADER did not refresh the coordinator")
	}

	// A cluster that never elects a leader: the error after MaxAttempts.
	f2 := newFakeCluster(t)
	c2, err := NewClient(ctx, Bootstrap(f2.addr()), MaxAttempts(3),
		RetryBackoff(Backoff{Initial: time.Millisecond, Max: 5 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	f2.mu.Lock()
	f2.refuse[wire.CreateDatabase] = []int32{standby, standby, standby, standby}
	f2.mu.Unlock()
	err = c2.CreateDatabase(ctx, "db2", nil, false)
	if !errors.Is(err, errcode.NotCoordinatorLeader) {
		t.Fatalf("standby only: %v", err)
	}
	if got := f2.count(wire.CreateDatabase); got != 3 {
		t.Errorf("CREATE_DATABASE sent %d times, want 3 (the attempt limit)", got)
	}
}
