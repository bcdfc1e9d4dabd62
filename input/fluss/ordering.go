package flussinput

import "sync"

// orderGate keeps the rows of a bucket in order whatever the pipeline's
// threads and the output's max_in_flight (ordering: bucket): at most one
// batch holding rows of a bucket is out between ReadBatch and its ack. A
// unit of a bucket with a batch out waits, in arrival order with the other
// units of its bucket, until that batch is acked; units of other buckets
// pass it. With ordering: none every unit passes at once.
//
// The batch being gathered by the batching policy may take several units of
// one bucket (they stay in order within the batch). What waits is bounded
// by limit units; past it, ReadBatch stops taking units from the worker
// until an ack frees a bucket, which holds the worker back too.
type orderGate struct {
	mu      sync.Mutex
	enabled bool
	limit   int
	busy    map[bucketKey]int  // batches out (handed out or being gathered) per bucket
	open    map[bucketKey]bool // buckets of the batch being gathered
	held    []*unit            // waiting units, in arrival order
	perKey  map[bucketKey]int  // waiting units per bucket
	ready   chan struct{}      // a signal after an ack freed a bucket
}

func newOrderGate(enabled bool, limit int) *orderGate {
	return &orderGate{
		enabled: enabled, limit: max(limit, 1),
		busy: map[bucketKey]int{}, open: map[bucketKey]bool{}, perKey: map[bucketKey]int{},
		ready: make(chan struct{}, 1),
	}
}

// offer passes a unit from the worker: true if it may go into a batch now,
// false if the gate keeps it for later (next returns it then).
func (g *orderGate) offer(u *unit) bool {
	if !g.enabled {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.perKey[u.key] == 0 && !g.waitsLocked(u) {
		return true
	}
	g.held = append(g.held, u)
	g.perKey[u.key]++
	return false
}

// waitsLocked reports whether a unit at the head of its bucket's queue must
// wait: a rows unit while another batch of its bucket is out. Gaps and
// resets carry no rows and only keep their place in the queue.
func (g *orderGate) waitsLocked(u *unit) bool {
	return u.kind == unitRows && g.busy[u.key] > 0 && !g.open[u.key]
}

// next returns the first kept unit that may go now (the oldest unit of its
// bucket, whose bucket has no batch out), or nil.
func (g *orderGate) next() *unit {
	if !g.enabled {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	seen := map[bucketKey]bool{}
	for i, u := range g.held {
		if seen[u.key] {
			continue
		}
		seen[u.key] = true
		if g.waitsLocked(u) {
			continue
		}
		g.held = append(g.held[:i], g.held[i+1:]...)
		if g.perKey[u.key]--; g.perKey[u.key] == 0 {
			delete(g.perKey, u.key)
		}
		return u
	}
	return nil
}

// full reports whether the gate keeps as many units as it may.
func (g *orderGate) full() bool {
	if !g.enabled {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.held) >= g.limit
}

// pending reports whether the gate keeps units.
func (g *orderGate) pending() bool {
	if !g.enabled {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.held) > 0
}

// taken records that rows of bucket k went into the batch being gathered.
func (g *orderGate) taken(k bucketKey) {
	if !g.enabled {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.open[k] {
		g.open[k] = true
		g.busy[k]++
	}
}

// sealed records that the batch being gathered was handed out.
func (g *orderGate) sealed() {
	if !g.enabled {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	clear(g.open)
}

// acked records that a batch holding rows of buckets was acknowledged (or
// dropped), freeing them for their next batch.
func (g *orderGate) acked(buckets []bucketKey) {
	if !g.enabled || len(buckets) == 0 {
		return
	}
	g.mu.Lock()
	for _, k := range buckets {
		if g.busy[k]--; g.busy[k] <= 0 {
			delete(g.busy, k)
		}
	}
	g.mu.Unlock()
	select {
	case g.ready <- struct{}{}:
	default:
	}
}

// reconnected forgets the kept units (a new connection reads them again
// from the checkpoint). Batches already handed out, and the one being
// gathered, stay counted: their acks still come, and a bucket's rows read
// again wait for them.
func (g *orderGate) reconnected() {
	if !g.enabled {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, u := range g.held {
		u.release()
	}
	g.held = nil
	clear(g.perKey)
}
