package flussinput

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/internal/stop"
)

// unitKind says what a unit handed from the worker to ReadBatch means.
type unitKind int8

const (
	// unitRows: rows [start, end) of a bucket, as messages.
	unitRows unitKind = iota
	// unitGap: offsets [start, end) hold no rows to deliver (empty batches,
	// rows expired from the log); they count as acknowledged.
	unitGap
	// unitReset: the bucket moves to end, forgetting what is in flight.
	unitReset
)

// unit is one step of a bucket's read position, in read order.
type unit struct {
	kind       unitKind
	key        bucketKey
	partition  string
	start, end int64
	msgs       service.MessageBatch // handed over once, then nil
	src        *rowSource           // auto_replay_nacks: the rows, to build msgs again
}

// connection is one connection to the cluster with its worker goroutine.
type connection struct {
	client  *fluss.Client
	info    *fluss.TableInfo
	scanner *fluss.Scanner
	units   chan *unit
	ctx     context.Context // ends when the worker must stop
	cancel  context.CancelFunc
	done    chan struct{} // closed when the worker has returned
	// Set by the worker before done is closed.
	err      error
	finished bool // end_at: latest reached
}

// partialBatch is a batch being gathered by the batching policy; it
// survives ReadBatch calls that end early.
type partialBatch struct {
	fl      *flight
	entries []*entry
	units   []*unit
}

// input is the fluss batch input.
type input struct {
	conf    *inputConfig
	mgr     *service.Resources
	log     *service.Logger
	metrics *inputMetrics
	store   checkpointStore
	cp      *checkpointer
	assign  assigner
	gate    *orderGate
	stall   *stallWatch
	// retryPending reports whether a nacked batch waits to be delivered
	// again (auto_replay_nacks; nil without).
	retryPending func() bool

	mu              sync.Mutex
	conn            *connection
	started         bool                // the first Connect completed
	loaded          *checkpointValue    // value read from the cache (nil: none)
	endOffsets      map[bucketKey]int64 // end_at: latest
	progress        *progress           // end_at: latest, from the first start
	monitoring      bool                // the monitor runs (monitor.go)
	connectFailures int                 // consecutive failed Connects
	flushStop       chan struct{}       // closed to stop the flusher
	flushDone       chan struct{}       // closed when the flusher returned
	flushMu         sync.Mutex          // one checkpoint write at a time
	closed          bool

	hwMu sync.Mutex
	hw   map[bucketKey]int64 // last high watermarks, for the lag metric

	// Used only by the ReadBatch goroutine.
	batcher       *service.Batcher
	replayBatcher *service.Batcher // the batching policy for batches built again after a nack
	partial       *partialBatch
}

func newInputFromParsed(pc *service.ParsedConfig, mgr *service.Resources) (*input, error) {
	conf, err := parseConfig(pc)
	if err != nil {
		return nil, err
	}
	stallTimeout, err := parseStallTimeout(pc)
	if err != nil {
		return nil, err
	}
	if !mgr.HasCache(conf.checkpointCache) {
		return nil, fmt.Errorf("field %s: cache resource %q is not defined; it usually comes from a resource file: fluss-iggy run -r config/resources/bbolt.yaml <config> (or add it under cache_resources)", fiFieldCheckpointCache, conf.checkpointCache)
	}
	in := &input{
		conf:    conf,
		mgr:     mgr,
		log:     mgr.Logger(),
		metrics: newInputMetrics(mgr.Metrics()),
		store:   newCheckpointStore(mgr, conf),
		cp:      newCheckpointer(conf.checkpointLimit),
		assign:  newAssigner(conf),
		gate:    newOrderGate(conf.orderByBucket, maxHeldUnits),
		stall:   newStallWatch(stallTimeout),
		hw:      map[bucketKey]int64{},
	}
	exportShardCount(mgr.Metrics(), conf.shardCount)
	if !conf.batching.IsNoop() {
		if in.batcher, err = conf.batching.NewBatcher(mgr); err != nil {
			return nil, fmt.Errorf("field %s: %w", fiFieldBatching, err)
		}
		if conf.replayNacks {
			if in.replayBatcher, err = conf.batching.NewBatcher(mgr); err != nil {
				return nil, fmt.Errorf("field %s: %w", fiFieldBatching, err)
			}
		}
	}
	return in, nil
}

// unitQueue is how many built units (each at most max_batch_rows messages)
// the worker may have ready ahead of ReadBatch. Built messages take many
// times the memory of their rows: with 16 the shipped json pipeline peaked
// at 400–430 MB against 330–340 MB with 4, at the same speed (300,000 rows,
// three runs each; the no-mapping one 230–260 against 175–185 MB).
const unitQueue = 4

// maxHeldUnits bounds the units (each at most one Fluss record batch) that
// ordering: bucket keeps while their bucket has a batch in flight. The
// worker interleaves the buckets of a poll unit by unit, so a few held
// units let every bucket have a batch out; held units are built messages:
// with 16 and no interleaving the shipped json pipeline peaked at 328–353
// MB, with 4 and the interleaving at 248–264 MB, at the same speed
// (300,000 rows, three alternating runs each).
const maxHeldUnits = 4

func (in *input) tablePath() string { return in.conf.database + "." + in.conf.table }

// ---------------------------------------------------------------------------
// ReadBatch

// ReadBatch hands out the next batch of rows (auto_replay_nacks: false;
// with true the replayer reads through read).
func (in *input) ReadBatch(ctx context.Context) (service.MessageBatch, service.AckFunc, error) {
	batch, s, err := in.read(ctx)
	if err != nil {
		return nil, nil, err
	}
	return batch, in.ackFunc(s), nil
}

// read returns the next batch of rows, blocking until one is available, a
// checkpoint_limit slot is free, or ctx ends. A read that waits while the
// input is stalled ends with ErrNotConnected, keeping the connection (see
// stallWatch).
func (in *input) read(ctx context.Context) (service.MessageBatch, *sent, error) {
	in.mu.Lock()
	c := in.conn
	in.mu.Unlock()
	if c == nil {
		return nil, nil, service.ErrNotConnected
	}
	wctx, cancel := in.stall.watchRead(ctx)
	var (
		batch service.MessageBatch
		s     *sent
		err   error
	)
	if in.batcher != nil {
		batch, s, err = in.readBatched(ctx, wctx, c)
	} else {
		batch, s, err = in.readOne(wctx, c)
	}
	in.stall.readDone(cancel)
	if errors.Is(err, context.Canceled) && ctx.Err() == nil {
		return nil, nil, service.ErrNotConnected // interrupted by a stall
	}
	return batch, s, err
}

// readOne returns the next unit's rows as a batch (without a batching
// policy).
func (in *input) readOne(ctx context.Context, c *connection) (service.MessageBatch, *sent, error) {
	if err := in.acquire(ctx, c); err != nil {
		return nil, nil, in.readError(c, err)
	}
	for {
		u, err := in.nextUnit(ctx, c, nil)
		if err != nil {
			in.cp.releaseSlot()
			return nil, nil, in.readError(c, err)
		}
		fl := &flight{}
		e, err := in.apply(u, fl)
		if err != nil {
			in.cp.releaseSlot()
			return nil, nil, in.readError(c, err)
		}
		if e == nil {
			continue
		}
		in.gate.taken(u.key)
		in.gate.sealed()
		msgs := u.msgs
		u.msgs = nil
		return msgs, &sent{entries: []*entry{e}, units: []*unit{u}}, nil
	}
}

// readBatched gathers units into batches with the batching policy. It
// waits with wctx (see stallWatch) while the batch being gathered is empty,
// with ctx once it holds rows: they go out when the policy says.
func (in *input) readBatched(ctx, wctx context.Context, c *connection) (service.MessageBatch, *sent, error) {
	if in.partial == nil {
		if err := in.acquire(wctx, c); err != nil {
			return nil, nil, in.readError(c, err)
		}
		in.partial = &partialBatch{fl: &flight{}}
	}
	for {
		var (
			timeout <-chan time.Time
			timer   *time.Timer
		)
		if d, ok := in.batcher.UntilNext(); ok {
			timer = time.NewTimer(d)
			timeout = timer.C
		}
		waitCtx := wctx
		if len(in.partial.entries) > 0 {
			waitCtx = ctx
		}
		u, err := in.nextUnit(waitCtx, c, timeout)
		if timer != nil {
			timer.Stop()
		}
		flush := false
		switch {
		case errors.Is(err, errBatchPeriod):
			flush = true
		case err != nil:
			if len(in.partial.entries) > 0 && (errors.Is(err, service.ErrEndOfInput) || errors.Is(err, service.ErrNotConnected)) {
				// Hand out what was gathered first.
				flush = true
				break
			}
			return nil, nil, in.readError(c, err)
		default:
			e, err := in.apply(u, in.partial.fl)
			if err != nil {
				return nil, nil, in.readError(c, err)
			}
			if e == nil {
				continue
			}
			in.gate.taken(u.key)
			in.partial.entries = append(in.partial.entries, e)
			in.partial.units = append(in.partial.units, u)
			for _, m := range u.msgs {
				if in.batcher.Add(m) {
					flush = true
				}
			}
			u.msgs = nil
		}
		if !flush {
			continue
		}
		p := in.partial
		if len(p.entries) == 0 {
			continue
		}
		batch, _ := in.batcher.Flush(ctx)
		in.partial = nil
		in.gate.sealed()
		s := &sent{entries: p.entries, units: p.units}
		if len(batch) == 0 {
			// The batch processors dropped everything: done.
			in.settle(s, nil)
			if err := in.acquire(wctx, c); err != nil {
				return nil, nil, in.readError(c, err)
			}
			in.partial = &partialBatch{fl: &flight{}}
			continue
		}
		return batch, s, nil
	}
}

var errBatchPeriod = errors.New("batching period elapsed")

// acquire takes a checkpoint_limit slot for the next batch. When the worker
// has stopped it fails with ErrNotConnected, or ErrEndOfInput once
// end_at: latest was reached and every unit handed out; units still queued
// after the end are waited for normally.
func (in *input) acquire(ctx context.Context, c *connection) error {
	err := in.cp.acquire(ctx, c.done)
	if !errors.Is(err, service.ErrNotConnected) || !c.finished {
		return err
	}
	if len(c.units) == 0 && !in.gate.pending() {
		return service.ErrEndOfInput
	}
	return in.cp.acquire(ctx, nil)
}

// nextUnit returns the next unit of the connection that may go into a
// batch now (see orderGate). It returns ErrEndOfInput once end_at: latest
// was reached and everything handed out, and ErrNotConnected when the
// worker stopped.
func (in *input) nextUnit(ctx context.Context, c *connection, timeout <-chan time.Time) (*unit, error) {
	g := in.gate
	for {
		if u := g.next(); u != nil {
			return u, nil
		}
		units := c.units
		if g.full() {
			units = nil // wait for an ack to free a bucket
		}
		select {
		case u := <-units:
			if g.offer(u) {
				return u, nil
			}
			continue
		case <-g.ready:
			continue
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timeout:
			return nil, errBatchPeriod
		case <-c.done:
		}
		if u, ok := in.drainUnit(c); ok {
			if u != nil {
				return u, nil
			}
			continue
		}
		if !c.finished {
			return nil, service.ErrNotConnected
		}
		if !g.pending() {
			return nil, service.ErrEndOfInput
		}
		// end_at: latest reached with units waiting for their bucket.
		select {
		case <-g.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timeout:
			return nil, errBatchPeriod
		}
	}
}

// drainUnit takes a unit left in the channel of a connection whose worker
// has stopped: ok is false when there is none, u is nil when the gate kept
// it.
func (in *input) drainUnit(c *connection) (u *unit, ok bool) {
	if in.gate.full() {
		return nil, false
	}
	select {
	case u := <-c.units:
		if in.gate.offer(u) {
			return u, true
		}
		return nil, true
	default:
		return nil, false
	}
}

// entryBuckets lists the buckets of a batch's entries, once each.
func entryBuckets(entries []*entry) []bucketKey {
	keys := make([]bucketKey, 0, 1)
	for _, e := range entries {
		if !slices.Contains(keys, e.st.key) {
			keys = append(keys, e.st.key)
		}
	}
	return keys
}

// apply records a unit in the checkpointer. It returns the entry of a
// rows unit (nil for the other kinds, which need no delivery).
func (in *input) apply(u *unit, fl *flight) (*entry, error) {
	switch u.kind {
	case unitGap:
		if _, err := in.cp.track(u.key, u.start, u.end, nil); err != nil && !errors.Is(err, errUntracked) {
			return nil, err
		}
		return nil, nil
	case unitReset:
		in.cp.reset(u.key, u.partition, u.end)
		return nil, nil
	}
	e, err := in.cp.track(u.key, u.start, u.end, fl)
	if errors.Is(err, errUntracked) {
		in.log.Warnf("Dropping rows %d to %d of table %s%s %s: its partition was dropped", u.start, u.end-1, in.tablePath(), partitionSuffix(u.partition), u.key)
		u.release()
		return nil, nil
	}
	return e, err
}

// readError turns a ReadBatch failure into what the engine expects, tearing
// the connection down when its worker stopped.
func (in *input) readError(c *connection, err error) error {
	switch {
	case errors.Is(err, service.ErrEndOfInput):
		return err
	case errors.Is(err, service.ErrNotConnected):
		select {
		case <-c.done:
			switch {
			case c.err != nil && isPermanent(c.err):
				in.log.Errorf("Reading table %s failed: %v", in.tablePath(), c.err)
				stop.Fail(c.err)
			case c.err != nil:
				in.log.Errorf("Reading table %s failed, reconnecting: %v", in.tablePath(), c.err)
			}
		default:
		}
		in.disconnect(c, nil)
		return service.ErrNotConnected
	case errors.Is(err, errTrackMismatch):
		in.log.Errorf("Reading table %s: %v; reconnecting", in.tablePath(), err)
		in.disconnect(c, nil)
		return service.ErrNotConnected
	}
	return err
}

// disconnect stops a connection's worker and closes it.
func (in *input) disconnect(c *connection, ctx context.Context) {
	in.mu.Lock()
	if in.conn == c {
		in.conn = nil
	}
	in.mu.Unlock()
	c.shutdown(ctx)
}

// shutdown stops the worker, waits for it (bounded by ctx, when given) and
// closes the scanner and client.
func (c *connection) shutdown(ctx context.Context) {
	c.cancel()
	// The worker may be blocked sending a unit: drain until it returns.
	var deadline <-chan struct{}
	if ctx != nil {
		deadline = ctx.Done()
	}
	for {
		select {
		case u := <-c.units:
			u.release()
			continue
		case <-c.done:
		case <-deadline:
		}
		break
	}
	_ = c.scanner.Close()
	_ = c.client.Close()
}

// ackFunc returns the acknowledgement function of a batch
// (auto_replay_nacks: false).
func (in *input) ackFunc(s *sent) service.AckFunc {
	var once sync.Once
	return func(_ context.Context, err error) error {
		once.Do(func() { in.settle(s, err) })
		return nil
	}
}

// settle records a batch as done: acknowledged, or with err (only with
// auto_replay_nacks: false) dropped on purpose, moving past its rows,
// loudly.
func (in *input) settle(s *sent, err error) {
	if err != nil {
		var rows int64
		for _, e := range s.entries {
			rows += e.end - e.start
			in.log.Warnf("Skipping rows %d to %d of table %s %s after a nack (auto_replay_nacks is false): %v",
				e.start, e.end-1, in.tablePath(), e.st.key, err)
		}
		in.metrics.skipped.Incr(rows)
	}
	s.release()
	in.cp.ack(s.entries)
	in.gate.acked(entryBuckets(s.entries))
}

// ---------------------------------------------------------------------------
// Close

// Close stops reading, writes every acknowledged position and closes the
// connection. It is safe to call more than once.
func (in *input) Close(ctx context.Context) error {
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return nil
	}
	in.closed = true
	c := in.conn
	in.conn = nil
	stop, done := in.flushStop, in.flushDone
	prog := in.progress
	in.mu.Unlock()

	if c != nil {
		c.shutdown(ctx)
	}
	var err error
	if stop != nil {
		close(stop)
		select {
		case <-done:
		case <-ctx.Done():
		}
		// Final write of everything acknowledged.
		for attempt := 0; ; attempt++ {
			if err = in.flushOnce(ctx); err == nil {
				break
			}
			in.log.Errorf("Writing the final checkpoint of table %s: %v", in.tablePath(), err)
			if ctx.Err() != nil || attempt >= 5 {
				break
			}
			select {
			case <-time.After(100 * time.Millisecond << attempt):
			case <-ctx.Done():
			}
		}
	}
	in.logProgressEnd(prog)
	if in.batcher != nil {
		_ = in.batcher.Close(ctx)
	}
	if in.replayBatcher != nil {
		_ = in.replayBatcher.Close(ctx)
	}
	return err
}
