package fluss

import (
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/wire"
)

// fetchTarget is one bucket of a fetch request, with the state it was sent
// with (a response for an older epoch or offset is stale).
type fetchTarget struct {
	st     *bucketState
	epoch  uint64
	offset int64
	pushed bool // projection pushed down to the server
}

// fetchResult is what one bucket of a fetch response gave.
type fetchResult struct {
	batches []*ScanBatch
	next    int64 // next offset after the complete batches (== offset if none)
	hw      int64 // -1 when absent
	bytes   int   // records bytes received
	// lastSchemaID is the schema id of the last complete batch (-1: none).
	lastSchemaID int32
	err          error
	// whole: err failed the whole request (connection, timeout), not just
	// this bucket.
	whole bool
	// emptyPushed: a projected fetch below the high watermark returned no
	// bytes and no filtered end offset past the fetch offset, which happens
	// when only empty batches remain in the segment (the server drops them
	// when projecting).
	emptyPushed bool
}

// loop sends fetches whenever buckets are ready and servers idle. It ends
// when the scanner is closed.
func (s *Scanner) loop() {
	defer s.wg.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		wait := s.plan()
		if wait > 0 {
			timer.Reset(wait)
		}
		select {
		case <-s.ctx.Done():
			timer.Stop()
			return
		case <-s.wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// plan launches one fetch per idle leader for its ready buckets and a
// metadata refresh for buckets without a known leader. It returns how long
// until the next bucket's retry delay ends (0 = none pending).
func (s *Scanner) plan() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0
	}
	now := time.Now()
	var next time.Duration
	groups := map[int32][]fetchTarget{}
	var missing []*bucketState
	for _, st := range s.buckets {
		if st.paused || st.inflight || st.queued >= s.cfg.maxBuffered {
			continue
		}
		if d := st.retryAt.Sub(now); d > 0 {
			if next == 0 || d < next {
				next = d
			}
			continue
		}
		loc, ok := s.c.location(st.tb)
		if !ok || loc.Leader < 0 {
			missing = append(missing, st)
			continue
		}
		if s.busy[loc.Leader] {
			continue
		}
		pushed := s.proj != nil && s.cfg.pushdown && !st.noPushdown && !st.unprojected
		groups[loc.Leader] = append(groups[loc.Leader], fetchTarget{st: st, epoch: st.epoch, offset: st.offset, pushed: pushed})
	}
	for leader, ts := range groups {
		// The projection is set per table in a request: when some buckets
		// must be read unprojected, send those alone this round.
		if s.proj != nil {
			var raw []fetchTarget
			for _, t := range ts {
				if !t.pushed {
					raw = append(raw, t)
				}
			}
			if len(raw) > 0 {
				ts = raw
			}
		}
		s.busy[leader] = true
		for _, t := range ts {
			t.st.inflight = true
		}
		s.wg.Add(1)
		go s.fetch(leader, ts)
	}
	if len(missing) > 0 && !s.refreshing {
		s.refreshing = true
		s.wg.Add(1)
		go s.refreshLeaders(missing)
	}
	return next
}

// refreshLeaders looks up the leaders of buckets that have none cached (one
// metadata request per table or partition) and schedules retries for those
// still without one.
func (s *Scanner) refreshLeaders(missing []*bucketState) {
	defer s.wg.Done()
	done := map[int64]error{} // partition id -> refresh error
	for _, st := range missing {
		if _, ok := done[st.tb.PartitionID]; ok {
			continue
		}
		_, err := s.c.leader(s.ctx, st.tb)
		done[st.tb.PartitionID] = err
	}
	s.mu.Lock()
	s.refreshing = false
	now := time.Now()
	for _, st := range missing {
		if s.buckets[st.tb] != st || s.ctx.Err() != nil {
			continue
		}
		if loc, ok := s.c.location(st.tb); ok && loc.Leader >= 0 {
			continue
		}
		err := done[st.tb.PartitionID]
		if err == nil {
			err = fmt.Errorf("fluss: leader of %s: %w", st.tb, errcode.New(errcode.LeaderNotAvailable.Code, "no leader in the metadata"))
		}
		if retriable(err) {
			s.backoffLocked(st, now)
			continue
		}
		s.failLocked(st, st.offset, err)
	}
	s.mu.Unlock()
	s.signal(s.wake)
	s.signal(s.notify)
}

// retriable is the scanner's use of the client's one retry rule: errors
// that are retriable or only need fresh metadata.
func retriable(err error) bool {
	return errcode.IsRetriable(err) || errcode.InvalidatesMetadata(err)
}

func (s *Scanner) backoffLocked(st *bucketState, now time.Time) {
	st.retryAt = now.Add(s.c.backoff().Delay(st.failures))
	st.failures++
}

// failLocked pauses a bucket and queues its error for Poll.
func (s *Scanner) failLocked(st *bucketState, offset int64, err error) {
	st.paused = true
	st.queued++
	s.queue = append(s.queue, scanItem{st: st, epoch: st.epoch, next: st.offset, err: &BucketError{
		Table: s.info.Path, Bucket: st.tb, Partition: st.partition, Offset: offset, Err: err,
	}})
}

// fetch sends one FetchLog request to a leader and hands the decoded
// results to finish.
func (s *Scanner) fetch(leader int32, targets []fetchTarget) {
	defer s.wg.Done()
	results := make([]fetchResult, len(targets))
	for i := range results {
		results[i].hw = -1
		results[i].lastSchemaID = -1
		results[i].next = targets[i].offset
	}
	fail := func(err error) {
		for i := range results {
			results[i].err = err
			results[i].whole = true
		}
	}
	conn, err := s.c.tabletConn(s.ctx, leader)
	if err != nil {
		fail(&leaderUnreachableError{leader: leader, err: err})
		s.finish(leader, targets, results)
		return
	}
	req := s.fetchRequest(targets)
	// The decoders own what they return (row formats are copied, Arrow
	// buffers decompressed or copied: records.WithOwnedBuffers), so
	// nothing refers to the response once it is decoded and its frame can
	// take the next one.
	var release func()
	sent := time.Now()
	body, err := conn.CallRaw(s.ctx, wire.FetchLog, req, wire.WithTimeout(s.c.requestTimeout()+s.cfg.maxWait), wire.WithFrameRelease(&release))
	if s.cfg.onFetch != nil {
		s.cfg.onFetch(FetchInfo{Server: leader, Buckets: len(targets), Duration: time.Since(sent), Bytes: len(body), Err: err})
	}
	if err != nil {
		fail(err)
		s.finish(leader, targets, results)
		return
	}
	resp, err := parseFetchResponse(body)
	if err != nil {
		fail(&wire.RequestError{Addr: conn.Addr(), API: wire.FetchLog, Err: err})
		s.finish(leader, targets, results)
		return
	}
	for i, t := range targets {
		r := &results[i]
		br, ok := resp.find(s.info.TableID, t.st.tb.PartitionID, t.st.tb.Bucket)
		if !ok {
			r.err = errcode.New(errcode.UnknownTableOrBucket.Code, fmt.Sprintf("bucket missing from the fetch response of tablet server %d", leader))
			continue
		}
		if br.hw >= 0 {
			r.hw = br.hw
		}
		if br.errCode != 0 {
			r.err = errcode.New(br.errCode, br.errMsg)
			continue
		}
		if len(br.remote) > 0 {
			var info pb.PbRemoteLogFetchInfo
			if err := proto.Unmarshal(br.remote, &info); err != nil {
				r.err = fmt.Errorf("decoding remote log fetch info: %w", err)
				continue
			}
			s.readRemote(t, &info, r)
			continue
		}
		r.bytes = len(br.records)
		s.decodeInto(t, br.records, r, false)
		if r.err == nil && br.filteredEnd > r.next {
			// The server read on past the records, dropping batches a
			// filter excluded: resume where it stopped.
			r.next = br.filteredEnd
		}
		if t.pushed && len(br.records) == 0 && r.next == t.offset && r.hw > t.offset {
			r.emptyPushed = true
		}
	}
	if release != nil {
		release()
	}
	s.finish(leader, targets, results)
}

// fetchRequest builds the FetchLog request of targets (one table).
func (s *Scanner) fetchRequest(targets []fetchTarget) *pb.FetchLogRequest {
	pushed := len(targets) > 0 && targets[0].pushed
	tr := &pb.PbFetchLogReqForTable{
		TableId:                   proto.Int64(s.info.TableID),
		ProjectionPushdownEnabled: proto.Bool(pushed),
	}
	if pushed {
		tr.ProjectedFields = s.serverProj
	}
	for _, t := range targets {
		br := &pb.PbFetchLogReqForBucket{
			BucketId:      proto.Int32(t.st.tb.Bucket),
			FetchOffset:   proto.Int64(t.offset),
			MaxFetchBytes: proto.Int32(s.cfg.maxBucketBytes),
		}
		if t.st.tb.PartitionID != NoPartition {
			br.PartitionId = proto.Int64(t.st.tb.PartitionID)
		}
		tr.BucketsReq = append(tr.BucketsReq, br)
	}
	req := &pb.FetchLogRequest{
		FollowerServerId: proto.Int32(-1),
		MaxBytes:         proto.Int32(s.cfg.maxBytes),
		TablesReq:        []*pb.PbFetchLogReqForTable{tr},
		MinBytes:         proto.Int32(s.cfg.minBytes),
		MaxWaitMs:        proto.Int32(int32(s.cfg.maxWait / time.Millisecond)),
	}
	return req
}

// finish applies fetch results to the bucket states and queues batches and
// errors for Poll. Results of buckets moved or unsubscribed meanwhile are
// dropped.
func (s *Scanner) finish(leader int32, targets []fetchTarget, results []fetchResult) {
	var listRange []*bucketState
	s.mu.Lock()
	s.busy[leader] = false
	s.stats.Fetches++
	now := time.Now()
	for i, t := range targets {
		r := &results[i]
		st := t.st
		current := s.buckets[st.tb] == st && !s.closed
		if current {
			st.inflight = false
		}
		if !current || st.epoch != t.epoch {
			releaseAll(r.batches)
			continue
		}
		s.stats.RecordsBytes += int64(r.bytes)
		if r.hw >= 0 {
			st.hw = r.hw
		}
		progressed := r.next > st.offset
		if progressed {
			st.offset = r.next
		}
		if len(r.batches) > 0 || progressed {
			st.queued++
			s.queue = append(s.queue, scanItem{st: st, epoch: st.epoch, batches: r.batches, next: st.offset})
		}
		switch {
		case r.err == nil:
			st.failures = 0
			st.unprojected = r.emptyPushed
			if st.noPushdown && r.lastSchemaID == s.info.SchemaID {
				// Past the batches of older schemas: the servers can
				// project again.
				st.noPushdown = false
			}
		case s.ctx.Err() != nil:
			// Closing: nothing to report.
		case errors.Is(r.err, errcode.LogOffsetOutOfRange):
			st.paused = true
			listRange = append(listRange, st)
		case errors.Is(r.err, ErrClientClosed):
			s.failLocked(st, st.offset, r.err)
		case errors.Is(r.err, errcode.InvalidColumnProjection) && t.pushed:
			// The server cannot project this bucket's batches with the
			// table's current column indices (batches written before a
			// column was added): project locally from now on.
			st.noPushdown = true
		case retriable(r.err):
			if errcode.InvalidatesMetadata(r.err) {
				if r.whole {
					s.c.invalidateServer(leader)
				} else {
					s.c.invalidateLeader(st.tb)
				}
			}
			s.c.logger().Debug("fluss scan: retrying bucket", "table", s.info.Path.String(),
				"bucket", st.tb.String(), "offset", st.offset, "error", r.err)
			s.backoffLocked(st, now)
		default:
			s.failLocked(st, st.offset, r.err)
		}
	}
	s.mu.Unlock()
	for _, st := range listRange {
		s.wg.Add(1)
		go s.reportOutOfRange(st)
	}
	s.signal(s.notify)
	s.signal(s.wake)
}

// reportOutOfRange lists the valid offsets of a bucket whose fetch offset
// is out of range and queues an *OffsetOutOfRangeError.
func (s *Scanner) reportOutOfRange(st *bucketState) {
	defer s.wg.Done()
	s.mu.Lock()
	epoch, offset := st.epoch, st.offset
	s.mu.Unlock()
	e := &OffsetOutOfRangeError{
		Table: s.info.Path, Bucket: st.tb, Partition: st.partition, Offset: offset, Earliest: -1, Latest: -1,
		Err: errcode.New(errcode.LogOffsetOutOfRange.Code, ""),
	}
	bs := []int32{st.tb.Bucket}
	if m, err := s.c.ListOffsets(s.ctx, s.info, st.tb.PartitionID, bs, EarliestOffset()); err == nil {
		e.Earliest = m[st.tb.Bucket]
	}
	if m, err := s.c.ListOffsets(s.ctx, s.info, st.tb.PartitionID, bs, LatestOffset()); err == nil {
		e.Latest = m[st.tb.Bucket]
	}
	s.mu.Lock()
	if s.buckets[st.tb] == st && st.epoch == epoch && !s.closed {
		st.queued++
		s.queue = append(s.queue, scanItem{st: st, epoch: epoch, next: st.offset, err: e})
	}
	s.mu.Unlock()
	s.signal(s.notify)
}

func releaseAll(bs []*ScanBatch) {
	for _, b := range bs {
		b.Release()
	}
}

// leaderUnreachableError: the cached leader of some buckets cannot be
// reached (it is down, or no longer in the cluster). The leaders must be
// looked up again; the buckets are retried.
type leaderUnreachableError struct {
	leader int32
	err    error
}

func (e *leaderUnreachableError) Error() string {
	return fmt.Sprintf("fluss: leader tablet server %d unreachable: %v", e.leader, e.err)
}

func (e *leaderUnreachableError) Unwrap() error { return e.err }

// Retriable reports true unless the client was closed.
func (e *leaderUnreachableError) Retriable() bool { return !errors.Is(e.err, ErrClientClosed) }

// InvalidatesMetadata reports true: the buckets need their leaders again.
func (e *leaderUnreachableError) InvalidatesMetadata() bool { return true }
