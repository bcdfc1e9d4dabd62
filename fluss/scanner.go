package fluss

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluss-iggy/fluss-iggy/fluss/records"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// The scanner reads the log of one table: log tables and the changelogs of
// primary-key tables alike. Fetches go to the bucket leaders, buckets grouped
// per leader, with at most one fetch in flight per tablet server; each
// response is decoded in the goroutine that received it, so servers are read
// and decoded concurrently while the caller processes earlier batches.
//
// Offsets, errors and leaders, in short (fluss-protocol.md §5):
//   - a bucket's next offset advances to the end of the last complete batch
//     of a response (empty batches included); rows below the fetch offset
//     and a truncated trailing batch are dropped; rows of overlapping
//     batches (remote segments) come once; a hole in the offsets of an
//     unprojected read pauses the bucket with a *BucketError (offsets are
//     dense in a Fluss log: rows would be missing);
//   - NOT_LEADER_OR_FOLLOWER, UNKNOWN_TABLE_OR_BUCKET, lost connections and
//     the other errors errcode calls retriable or metadata-invalidating drop
//     the cached leader and retry the bucket after a backoff;
//   - LOG_OFFSET_OUT_OF_RANGE pauses the bucket and reports an
//     *OffsetOutOfRangeError with the bucket's valid range; other errors
//     pause the bucket with a *BucketError. SeekBucket resumes a paused bucket.

// ErrScannerClosed is returned by calls on a closed Scanner.
var ErrScannerClosed = errors.New("fluss: scanner closed")

// bucketState is the scanner's state of one subscribed bucket; guarded by
// Scanner.mu.
type bucketState struct {
	tb        TableBucket
	partition string
	offset    int64 // next offset to fetch
	// returned is the next offset after what Poll has handed out: rows
	// in [returned, offset) are queued for Poll (or being handed out).
	returned int64
	hw       int64 // last high watermark seen, -1 unknown
	epoch    uint64
	inflight bool
	queued   int
	retryAt  time.Time
	failures int
	paused   bool
	// unprojected makes the next fetch of the bucket ask for all columns
	// (after a projected fetch could not step over empty batches).
	unprojected bool
	// noPushdown: the servers cannot project this bucket (after an
	// INVALID_COLUMN_PROJECTION); project locally from now on.
	noPushdown bool
}

// scanItem is what a fetch left for Poll: batches, or an error, or only
// progress over empty batches. next is the bucket's fetch position after
// the item: once Poll hands the item out, every row below next has been
// returned.
type scanItem struct {
	st      *bucketState
	epoch   uint64
	batches []*ScanBatch
	err     error
	next    int64
}

// Scanner reads the log of one table. Create it with Client.NewScanner,
// Subscribe buckets, then call Poll in a loop; Close it when done. Its
// methods are safe for concurrent use, but batches come out of one Poll
// queue: run one Poll loop per scanner.
type Scanner struct {
	c    *Client
	info *TableInfo
	cfg  scanConfig

	// schema is the output schema (latest schema, projected); proj the
	// output columns as indices into the latest schema (nil = all).
	schema      *types.Schema
	arrowSchema *arrow.Schema
	proj        []int
	serverProj  []int32
	// format is the table's log format: ARROW batches or row records.
	format records.LogFormat

	dec decoders

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu         sync.Mutex
	buckets    map[TableBucket]*bucketState
	queue      []scanItem
	busy       map[int32]bool // tablet servers with a fetch in flight
	refreshing bool
	closed     bool
	stats      ScanStats
	started    bool

	wake   chan struct{} // to the fetch loop
	notify chan struct{} // to Poll
}

// NewScanner returns a scanner of the table described by info (from
// Client.Table or RefreshTable). Batches written under older schema ids
// are returned with the columns of info's schema (columns added later are
// null in them).
func (c *Client) NewScanner(info *TableInfo, opts ...ScanOption) (*Scanner, error) {
	if info == nil || info.Schema == nil {
		return nil, errors.New("fluss: NewScanner needs a table info")
	}
	cfg, err := c.scanConfig(info, opts)
	if err != nil {
		return nil, err
	}
	format := records.LogFormatArrow
	if d := info.Descriptor; d != nil {
		if format, err = records.ParseLogFormat(d.LogFormat()); err != nil {
			return nil, fmt.Errorf("fluss: scan %s: %w", info.Path, err)
		}
	}
	if format != records.LogFormatArrow {
		// Servers project ARROW logs only (INVALID_COLUMN_PROJECTION
		// otherwise); row formats are projected here.
		cfg.pushdown = false
	}
	s := &Scanner{
		c:       c,
		info:    info,
		cfg:     cfg,
		format:  format,
		buckets: map[TableBucket]*bucketState{},
		busy:    map[int32]bool{},
		wake:    make(chan struct{}, 1),
		notify:  make(chan struct{}, 1),
	}
	s.schema = info.Schema
	if cfg.columns != nil {
		idx, err := info.Schema.ProjectionIndices(cfg.columns)
		if err != nil {
			return nil, fmt.Errorf("fluss: scan %s: %w", info.Path, err)
		}
		if len(idx) == 0 {
			return nil, fmt.Errorf("fluss: scan %s: the projection selects no column", info.Path)
		}
		ps, err := info.Schema.ProjectIndices(idx)
		if err != nil {
			return nil, fmt.Errorf("fluss: scan %s: %w", info.Path, err)
		}
		s.schema = ps
		s.proj = idx
		s.serverProj = records.ServerProjection(idx)
	}
	s.arrowSchema, err = s.schema.ArrowSchema()
	if err != nil {
		return nil, fmt.Errorf("fluss: scan %s: %w", info.Path, err)
	}
	s.dec.init(s)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// scanConfig applies the options to the defaults and checks them.
func (c *Client) scanConfig(info *TableInfo, opts []ScanOption) (scanConfig, error) {
	cfg := scanConfig{
		maxBytes:       DefaultFetchMaxBytes,
		maxBucketBytes: DefaultFetchMaxBucketBytes,
		minBytes:       DefaultFetchMinBytes,
		maxWait:        DefaultFetchMaxWait,
		mem:            newRecycler(defaultRecycleBytes),
		checkCRC:       true,
		pushdown:       true,
		maxBuffered:    1,
	}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.maxBytes <= 0 || cfg.maxBucketBytes <= 0 {
		return cfg, fmt.Errorf("fluss: scan %s: fetch max bytes must be positive", info.Path)
	}
	cfg.maxWait = max(cfg.maxWait, 0)
	cfg.maxBuffered = max(cfg.maxBuffered, 1)
	if cfg.remote == nil {
		rs, err := c.remoteStorage()
		if err != nil {
			return cfg, fmt.Errorf("fluss: scan %s: remote storage: %w", info.Path, err)
		}
		cfg.remote = rs
	}
	return cfg, nil
}

// Table returns the table info the scanner was created with.
func (s *Scanner) Table() *TableInfo { return s.info }

// Schema returns the schema of the returned rows: the table's schema, or the
// projected columns in projection order.
func (s *Scanner) Schema() *types.Schema { return s.schema }

// ArrowSchema returns the Arrow schema of the returned records.
func (s *Scanner) ArrowSchema() *arrow.Schema { return s.arrowSchema }

// Subscribe starts reading one bucket (partitionID NoPartition for
// non-partitioned tables) from start. Subscribing a bucket again moves it.
func (s *Scanner) Subscribe(ctx context.Context, partitionID int64, bucket int32, start OffsetSpec) error {
	return s.SubscribeBuckets(ctx, partitionID, []int32{bucket}, start)
}

// SubscribeBuckets subscribes several buckets of one partition (or of a
// non-partitioned table) from the same start; nil means every bucket of
// the partition (Client.NumBuckets). The start offsets are listed with one
// request per leader.
func (s *Scanner) SubscribeBuckets(ctx context.Context, partitionID int64, buckets []int32, start OffsetSpec) error {
	info := s.info
	partName := ""
	if partitionID != NoPartition && info.IsPartitioned() {
		p, ok := s.c.partitionByID(info.TableID, partitionID)
		if !ok {
			if _, err := s.c.Partitions(ctx, info); err != nil {
				return fmt.Errorf("fluss: subscribe to %s partition %d: %w", info.Path, partitionID, err)
			}
			if p, ok = s.c.partitionByID(info.TableID, partitionID); !ok {
				return fmt.Errorf("fluss: subscribe to %s partition %d: no such partition", info.Path, partitionID)
			}
		}
		partName = p.Name
	}
	buckets, _, err := s.c.checkBuckets(ctx, info, partitionID, buckets)
	if err != nil {
		return fmt.Errorf("fluss: subscribe to %s: %w", info.Path, err)
	}
	offsets := make(map[int32]int64, len(buckets))
	if start.kind == offsetExact {
		if start.value < 0 {
			return fmt.Errorf("fluss: subscribe to %s: negative offset %d", info.Path, start.value)
		}
		for _, b := range buckets {
			offsets[b] = start.value
		}
	} else {
		got, err := s.c.ListOffsets(ctx, info, partitionID, buckets, start)
		if err != nil {
			return fmt.Errorf("fluss: subscribe to %s at %s: %w", info.Path, start, err)
		}
		offsets = got
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrScannerClosed
	}
	for _, b := range buckets {
		tb := info.Bucket(partitionID, b)
		st := s.buckets[tb]
		if st == nil {
			st = &bucketState{tb: tb, partition: partName}
			s.buckets[tb] = st
		}
		s.resetLocked(st, offsets[b])
	}
	s.startLocked()
	s.signal(s.wake)
	return nil
}

// resetLocked moves a bucket to offset, discarding what is buffered or in
// flight for it and clearing a pause.
func (s *Scanner) resetLocked(st *bucketState, offset int64) {
	st.epoch++
	st.offset = offset
	st.returned = offset
	st.hw = -1
	st.paused = false
	st.failures = 0
	st.retryAt = time.Time{}
	st.unprojected = false
	s.dropQueuedLocked(st)
}

func (s *Scanner) dropQueuedLocked(st *bucketState) {
	kept := s.queue[:0]
	for _, it := range s.queue {
		if it.st == st {
			for _, b := range it.batches {
				b.Release()
			}
			continue
		}
		kept = append(kept, it)
	}
	for i := len(kept); i < len(s.queue); i++ {
		s.queue[i] = scanItem{}
	}
	s.queue = kept
	st.queued = 0
}

// SeekBucket moves a subscribed bucket to offset; it also resumes a bucket paused
// by an error.
func (s *Scanner) SeekBucket(partitionID int64, bucket int32, offset int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.buckets[s.info.Bucket(partitionID, bucket)]
	if st == nil {
		return fmt.Errorf("fluss: seek %s %s: not subscribed", s.info.Path, describeBucket(s.info.Bucket(partitionID, bucket), ""))
	}
	s.resetLocked(st, offset)
	s.signal(s.wake)
	return nil
}

// Unsubscribe stops reading a bucket and drops what was buffered for it.
func (s *Scanner) Unsubscribe(partitionID int64, bucket int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tb := s.info.Bucket(partitionID, bucket)
	if st := s.buckets[tb]; st != nil {
		st.epoch++
		s.dropQueuedLocked(st)
		delete(s.buckets, tb)
	}
}

// BucketPosition is the read position of a subscribed bucket.
type BucketPosition struct {
	Bucket    TableBucket
	Partition string
	// Offset is the next offset the scanner will fetch: every row below it
	// has been fetched (and returned by Poll or buffered for it). Rows
	// below Offset may still be waiting for the next Poll: do not take
	// Offset >= end after a Poll to mean that Poll returned every row
	// below end (use Returned).
	Offset int64
	// Returned is the next offset after what Poll has returned: every row
	// below it has been returned by Poll (empty batches included), none at
	// or after it. Returned <= Offset.
	Returned int64
	// HighWatermark is the last high watermark seen (-1 before the first
	// fetch). Lag = HighWatermark - Offset.
	HighWatermark int64
	// Paused reports a bucket stopped by an error (until SeekBucket).
	Paused bool
}

// Position returns the position of a subscribed bucket.
func (s *Scanner) Position(partitionID int64, bucket int32) (BucketPosition, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.buckets[s.info.Bucket(partitionID, bucket)]
	if st == nil {
		return BucketPosition{}, false
	}
	return st.position(), true
}

// HighWatermark returns the last high watermark seen for a bucket (-1 when
// none was seen yet or the bucket is not subscribed).
func (s *Scanner) HighWatermark(partitionID int64, bucket int32) int64 {
	p, ok := s.Position(partitionID, bucket)
	if !ok {
		return -1
	}
	return p.HighWatermark
}

// Positions returns the positions of every subscribed bucket.
func (s *Scanner) Positions() []BucketPosition {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]BucketPosition, 0, len(s.buckets))
	for _, st := range s.buckets {
		out = append(out, st.position())
	}
	return out
}

func (st *bucketState) position() BucketPosition {
	return BucketPosition{Bucket: st.tb, Partition: st.partition, Offset: st.offset, Returned: st.returned,
		HighWatermark: st.hw, Paused: st.paused}
}

// Stats returns counters of what the scanner fetched and returned.
func (s *Scanner) Stats() ScanStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Poll waits until fetched data is available and returns it: the batches of
// every bucket fetched since the last call, in offset order per bucket.
// The caller must Release every batch, also when err is not nil.
//
// The error joins the *BucketError and *OffsetOutOfRangeError values of
// buckets that failed since the last call (each such bucket is paused).
// Poll may return neither batches nor an error when fetches only advanced
// positions over empty batches (see Position). It returns ctx.Err() when
// ctx ends first, and ErrScannerClosed after Close.
func (s *Scanner) Poll(ctx context.Context) ([]*ScanBatch, error) {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, ErrScannerClosed
		}
		if len(s.queue) > 0 {
			items := s.queue
			s.queue = nil
			var (
				out  []*ScanBatch
				errs []error
			)
			for _, it := range items {
				it.st.queued--
				if it.epoch == it.st.epoch && it.next > it.st.returned {
					it.st.returned = it.next
				}
				out = append(out, it.batches...)
				if it.err != nil {
					errs = append(errs, it.err)
				}
			}
			for _, b := range out {
				s.stats.Batches++
				s.stats.Rows += int64(b.NumRows())
			}
			s.mu.Unlock()
			s.signal(s.wake)
			return out, errors.Join(errs...)
		}
		s.mu.Unlock()
		select {
		case <-s.notify:
		case <-s.ctx.Done(): // closed
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Close stops fetching, waits for fetches in flight and releases buffered
// batches. Batches returned by Poll stay valid until released.
func (s *Scanner) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.cancel()
	s.mu.Unlock()
	s.wg.Wait()
	s.mu.Lock()
	for _, it := range s.queue {
		for _, b := range it.batches {
			b.Release()
		}
	}
	s.queue = nil
	s.buckets = map[TableBucket]*bucketState{}
	s.mu.Unlock()
	return nil
}

// signal wakes the goroutine waiting on ch without blocking.
func (s *Scanner) signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// startLocked starts the fetch loop on the first subscription.
func (s *Scanner) startLocked() {
	if s.started {
		return
	}
	s.started = true
	s.wg.Add(1)
	go s.loop()
}
