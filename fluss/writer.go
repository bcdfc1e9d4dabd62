package fluss

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/wire"
	"github.com/fluss-iggy/fluss-iggy/fluss/records"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// The writer sends what the Java client's writers send, without their
// accumulators: Append turns an Arrow record into one log batch per bucket
// (ProduceLog) in the table's log format (ARROW compressed with the table's
// codec, as projected reads require; INDEXED or COMPACTED records), Upsert
// and Delete turn rows into KV batches (PutKv) of rows in the table's kv
// format, routed to buckets by the Fluss bucketing function over the bucket
// key. The batches of one write go to each leader in one request per
// connection (bucket mod WriteConnections), all at once, unlike the Java
// client's one request per leader that the server handles bucket after
// bucket. Writes wait for every in-sync replica (acks -1) by default. A bucket
// whose leader refuses the batch with a retriable error
// (NOT_LEADER_OR_FOLLOWER, ...) is sent again after a metadata refresh. A
// batch the server may have appended (a timeout, a connection lost after
// sending) is sent again only by an idempotent writer (WriteIdempotent),
// whose servers recognise the repeat; otherwise it is not, so a write is
// applied at most once by this client and its error is then ambiguous.

type writeConfig struct {
	acks             int32
	timeout          time.Duration
	mem              memory.Allocator
	createPartitions bool
	idempotent       bool
	connections      int
}

// WriteOption configures a Writer.
type WriteOption func(*writeConfig)

// WriteAcks sets the acknowledgements a write waits for: -1 every in-sync
// replica (default), 1 the leader, 0 none.
func WriteAcks(acks int) WriteOption { return func(c *writeConfig) { c.acks = int32(acks) } }

// WriteTimeout sets how long a server may take to replicate a write (the
// request's timeout_ms; default 30s).
func WriteTimeout(d time.Duration) WriteOption { return func(c *writeConfig) { c.timeout = d } }

// WriteCreatePartitions lets Write create a partition its rows name that
// does not exist yet (default: such rows fail, naming the partition).
func WriteCreatePartitions(create bool) WriteOption {
	return func(c *writeConfig) { c.createPartitions = create }
}

// WriteIdempotent makes the writer idempotent, as the Java client is by
// default: batches carry a writer id and per-bucket sequence, so a batch
// whose answer was lost is sent again without being written twice. It
// needs acks -1, and sends one batch at a time per bucket.
func WriteIdempotent(on bool) WriteOption { return func(c *writeConfig) { c.idempotent = on } }

// WriteConnections sets how many connections to each tablet server a write
// spreads its buckets over (default DefaultWriteConnections); bucket b
// always goes over connection b mod n, so a bucket's batches keep their
// order. A Fluss server handles one connection's requests one after
// another: with one connection, the buckets of a write are written one by
// one; with more, several at once.
func WriteConnections(n int) WriteOption { return func(c *writeConfig) { c.connections = n } }

// DefaultWriteConnections is the number of connections per tablet server a
// writer uses unless WriteConnections says otherwise.
const DefaultWriteConnections = 4

// WriteAllocator sets the allocator for Arrow's temporary encoding buffers.
func WriteAllocator(mem memory.Allocator) WriteOption { return func(c *writeConfig) { c.mem = mem } }

// Writer writes to one table. It is safe for concurrent use. The fluss
// output writes with it (Write); tests and benchmarks write their tables
// with it too, beside the Java tool.
type Writer struct {
	c      *Client
	info   *TableInfo
	cfg    writeConfig
	codec  records.Compression
	schema *arrow.Schema

	// Primary-key tables.
	pkCols     []int
	bucketCols []int // nil: the bucket key is the primary key (or, of a log table, none)
	encMu      sync.Mutex
	keyEnc     *records.RowEncoder // keys and values (in the table's kv format)
	bucketEnc  *records.RowEncoder // also of log tables with a bucket key

	// Log tables whose log format is INDEXED or COMPACTED (nil: ARROW).
	rowLog *records.RowLogEncoder

	// The numbering of an idempotent writer's batches (nil: not idempotent).
	idem *idempotence

	// The sticky assigner of log tables without a bucket key.
	stickyOnce sync.Once
	sticky     atomic.Uint32
}

// WriteError is the failure of one bucket of a write.
type WriteError struct {
	Table     TablePath
	Bucket    TableBucket
	Partition string
	Err       error
}

// Error implements error.
func (e *WriteError) Error() string {
	return fmt.Sprintf("fluss: write to %s %s: %v", e.Table, describeBucket(e.Bucket, e.Partition), e.Err)
}

// Unwrap returns the cause.
func (e *WriteError) Unwrap() error { return e.Err }

// NewWriter returns a writer for the table described by info. Records given
// to it must have the Arrow schema of info's schema (Schema.ArrowSchema).
func (c *Client) NewWriter(info *TableInfo, opts ...WriteOption) (*Writer, error) {
	if info == nil || info.Schema == nil {
		return nil, errors.New("fluss: NewWriter needs a table info")
	}
	cfg := writeConfig{acks: -1, timeout: 30 * time.Second, mem: memory.DefaultAllocator, connections: DefaultWriteConnections}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.acks < -1 || cfg.acks > 1 {
		return nil, fmt.Errorf("fluss: writer of %s: acks %d (want -1, 0 or 1)", info.Path, cfg.acks)
	}
	if cfg.connections < 1 {
		return nil, fmt.Errorf("fluss: writer of %s: %d connections per tablet server (want at least 1)", info.Path, cfg.connections)
	}
	if cfg.idempotent && cfg.acks != -1 {
		return nil, fmt.Errorf("fluss: writer of %s: an idempotent writer needs acks -1 (all), not %d", info.Path, cfg.acks)
	}
	w := &Writer{c: c, info: info, cfg: cfg, codec: records.CompressionZSTD}
	if cfg.idempotent {
		w.idem = newIdempotence()
	}
	if d := info.Descriptor; d != nil {
		codec, err := records.ParseCompression(d.ArrowCompression())
		if err != nil {
			return nil, fmt.Errorf("fluss: writer of %s: %w", info.Path, err)
		}
		w.codec = codec
	}
	as, err := info.Schema.ArrowSchema()
	if err != nil {
		return nil, fmt.Errorf("fluss: writer of %s: %w", info.Path, err)
	}
	w.schema = as
	if info.HasPrimaryKey() {
		err = w.initPrimaryKey()
	} else {
		err = w.initLog()
	}
	if err != nil {
		return nil, fmt.Errorf("fluss: writer of %s: %w", info.Path, err)
	}
	return w, nil
}

// initLog prepares the batch encoder of a log table in a row format and
// its bucket-key encoder.
func (w *Writer) initLog() error {
	if d := w.info.Descriptor; d != nil {
		format, err := records.ParseLogFormat(d.LogFormat())
		if err != nil {
			return err
		}
		if format != records.LogFormatArrow {
			if w.rowLog, err = records.NewRowLogEncoder(w.info.Schema, format); err != nil {
				return err
			}
		}
	}
	return w.initLogBucketKey()
}

// initPrimaryKey prepares the key encoders of a primary-key table: the
// primary key's, and the bucket key's when the two differ.
func (w *Writer) initPrimaryKey() (err error) {
	info := w.info
	if w.pkCols, err = info.Schema.ProjectionIndices(info.PrimaryKey); err != nil {
		return fmt.Errorf("primary key: %w", err)
	}
	kvFormat := records.LogFormatCompacted
	if d := info.Descriptor; d != nil {
		if kvFormat, err = records.ParseKVFormat(d.Property(types.PropKVFormat, "")); err != nil {
			return err
		}
	}
	if w.keyEnc, err = records.NewKVEncoder(info.Schema, w.pkCols, kvFormat); err != nil {
		return err
	}
	bk := bucketKey(info)
	if equalStrings(bk, info.PrimaryKey) {
		return nil
	}
	return w.initBucketEncoder(bk)
}

// initLogBucketKey prepares the bucket-key encoder of a log table declared
// with a bucket key; rows of other log tables go to one bucket per write.
func (w *Writer) initLogBucketKey() error {
	if d := w.info.Descriptor; d != nil && len(d.BucketKeys) > 0 {
		return w.initBucketEncoder(d.BucketKeys)
	}
	return nil
}

func (w *Writer) initBucketEncoder(cols []string) (err error) {
	if w.bucketCols, err = w.info.Schema.ProjectionIndices(cols); err != nil {
		return fmt.Errorf("bucket key: %w", err)
	}
	w.bucketEnc, err = records.NewRowEncoder(w.schema, w.bucketCols)
	return err
}

// bucketKey returns the columns a primary-key table is bucketed by: the
// declared bucket key, else the primary key without the partition keys.
func bucketKey(info *TableInfo) []string {
	if d := info.Descriptor; d != nil && len(d.BucketKeys) > 0 {
		return d.BucketKeys
	}
	var out []string
	for _, k := range info.PrimaryKey {
		part := false
		for _, p := range info.PartitionKeys {
			if p == k {
				part = true
			}
		}
		if !part {
			out = append(out, k)
		}
	}
	return out
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Schema returns the Arrow schema records must have.
func (w *Writer) Schema() *arrow.Schema { return w.schema }

// Compression returns the codec ARROW log batches are compressed with (the
// table's; INDEXED and COMPACTED batches are not compressed).
func (w *Writer) Compression() records.Compression { return w.codec }

func (w *Writer) checkSchema(rec arrow.RecordBatch) error {
	if !rec.Schema().Equal(w.schema) {
		return fmt.Errorf("fluss: write to %s: record schema %s differs from the table's %s", w.info.Path, rec.Schema(), w.schema)
	}
	return nil
}

// Append appends rec as one log batch to a bucket of a log table
// (partitionID NoPartition unless partitioned) and returns the offset of
// its first row.
func (w *Writer) Append(ctx context.Context, partitionID int64, bucket int32, rec arrow.RecordBatch) (int64, error) {
	res, err := w.AppendBuckets(ctx, partitionID, map[int32]arrow.RecordBatch{bucket: rec})
	if err != nil {
		return -1, err
	}
	return res[bucket], nil
}

// AppendBuckets appends one record per bucket (one log batch each), with one
// ProduceLog request per leader and connection (WriteConnections), and
// returns the base offset of each. On error the offsets of the buckets that
// succeeded are still returned; the error joins a *WriteError per failed
// bucket.
func (w *Writer) AppendBuckets(ctx context.Context, partitionID int64, recs map[int32]arrow.RecordBatch) (map[int32]int64, error) {
	if w.info.HasPrimaryKey() {
		return nil, fmt.Errorf("fluss: append to %s: %w", w.info.Path, errcode.New(errcode.NonPrimaryKeyTable.Code, "the table has a primary key: use Upsert and Delete"))
	}
	batches := make(map[int32][]byte, len(recs))
	for b, rec := range recs {
		if err := w.checkSchema(rec); err != nil {
			return nil, err
		}
		if rec.NumRows() == 0 {
			return nil, fmt.Errorf("fluss: append to %s bucket %d: empty record", w.info.Path, b)
		}
		opts := records.LogBatchOptions{SchemaID: int16(w.info.SchemaID), Compression: w.codec, Allocator: w.cfg.mem}
		var data []byte
		var err error
		if w.rowLog != nil {
			data, err = w.rowLog.AppendLogBatch(nil, rec, opts)
		} else {
			data, err = records.EncodeLogBatch(rec, opts)
		}
		if err != nil {
			return nil, fmt.Errorf("fluss: append to %s bucket %d: %w", w.info.Path, b, err)
		}
		batches[b] = data
	}
	return w.send(ctx, partitionID, batches, 0)
}

// Upsert inserts or updates the rows of rec in a primary-key table (in one
// partition, partitionID NoPartition unless partitioned), one KV batch per
// bucket.
func (w *Writer) Upsert(ctx context.Context, partitionID int64, rec arrow.RecordBatch) error {
	return w.PutKV(ctx, partitionID, rec, nil)
}

// Delete deletes the keys of the rows of rec (only the primary-key columns
// are read) from a primary-key table. Deleting a missing key is not an
// error (it leaves an empty batch in the changelog).
func (w *Writer) Delete(ctx context.Context, partitionID int64, rec arrow.RecordBatch) error {
	del := make([]bool, rec.NumRows())
	for i := range del {
		del[i] = true
	}
	return w.PutKV(ctx, partitionID, rec, del)
}

// PutKV writes the rows of rec to a primary-key table: row i is deleted
// when deletes[i] is true (deletes may be nil), else upserted. Rows are
// routed to buckets by the bucket key and keep their order within a
// bucket. For a partitioned table every row must belong to the partition
// partitionID names (its partition columns hold the partition's values).
// The error joins a *WriteError per failed bucket.
func (w *Writer) PutKV(ctx context.Context, partitionID int64, rec arrow.RecordBatch, deletes []bool) error {
	if !w.info.HasPrimaryKey() {
		return fmt.Errorf("fluss: put to %s: %w", w.info.Path, errcode.New(errcode.NonPrimaryKeyTable.Code, ""))
	}
	if err := w.checkSchema(rec); err != nil {
		return err
	}
	n := int(rec.NumRows())
	if deletes != nil && len(deletes) != n {
		return fmt.Errorf("fluss: put to %s: %d delete flags for %d rows", w.info.Path, len(deletes), n)
	}
	_, numBuckets, err := w.c.checkBuckets(ctx, w.info, partitionID, []int32{})
	if err != nil {
		return fmt.Errorf("fluss: put to %s: %w", w.info.Path, err)
	}
	builders := map[int32]*records.KVBatchBuilder{}
	w.encMu.Lock()
	var key []byte
	for i := 0; i < n; i++ {
		var err error
		enc := w.keyEnc
		if w.bucketEnc != nil {
			enc = w.bucketEnc
		}
		key, err = enc.AppendKey(key[:0], rec, i)
		if err != nil {
			w.encMu.Unlock()
			return fmt.Errorf("fluss: put to %s: %w", w.info.Path, err)
		}
		b := BucketOf(key, numBuckets)
		kb := builders[b]
		if kb == nil {
			kb = records.NewKVBatchBuilder(int16(w.info.SchemaID), nil)
			builders[b] = kb
		}
		if err := kb.AppendRow(w.keyEnc, rec, i, deletes != nil && deletes[i]); err != nil {
			w.encMu.Unlock()
			return fmt.Errorf("fluss: put to %s row %d: %w", w.info.Path, i, err)
		}
	}
	w.encMu.Unlock()
	batches := make(map[int32][]byte, len(builders))
	for b, kb := range builders {
		batches[b] = kb.Build()
	}
	_, err = w.send(ctx, partitionID, batches, numBuckets)
	return err
}

// send writes one batch per bucket, grouped by leader, retrying buckets the
// servers refused with a retriable error. kvBuckets is 0 for log batches
// (ProduceLog); KV batches (PutKv) give the bucket count their buckets were
// hashed over, which the requests carry as routing_bucket_count.
func (w *Writer) send(ctx context.Context, partitionID int64, batches map[int32][]byte, kvBuckets int32) (map[int32]int64, error) {
	pending := make([]int32, 0, len(batches))
	for b := range batches {
		pending = append(pending, b)
	}
	sort.Slice(pending, func(i, j int) bool { return pending[i] < pending[j] })
	partName, err := w.checkSend(ctx, partitionID, pending)
	if err != nil {
		return nil, err
	}
	var used map[int32]records.WriterState // the numbers an idempotent writer gave the batches
	if w.idem != nil {
		tbs := make([]TableBucket, len(pending))
		for i, b := range pending {
			tbs[i] = w.info.Bucket(partitionID, b)
		}
		release, err := w.idem.acquire(ctx, tbs)
		if err != nil {
			return nil, fmt.Errorf("fluss: write to %s: waiting for the buckets' previous writes: %w", w.info.Path, err)
		}
		defer release()
		used = make(map[int32]records.WriterState, len(pending))
	}
	out := map[int32]int64{}
	failed := map[int32]error{}
	w.sendAttempts(ctx, partitionID, partName, pending, batches, kvBuckets, used, out, failed)
	if w.idem != nil {
		w.settle(partitionID, used, out, failed)
	}
	if len(failed) == 0 {
		return out, nil
	}
	return out, w.writeErrors(partitionID, partName, failed)
}

// writeMaxAttempts bounds the rounds of one write.
const writeMaxAttempts = 10

// sendAttempts sends the batches of pending buckets in rounds, with the
// client's backoff between them, until every bucket succeeded (out) or
// failed for good (failed).
func (w *Writer) sendAttempts(ctx context.Context, partitionID int64, partName string, pending []int32, batches map[int32][]byte, kvBuckets int32,
	used map[int32]records.WriterState, out map[int32]int64, failed map[int32]error) {
	announce := beforeSendOf(ctx)
	for attempt := 0; len(pending) > 0; attempt++ {
		mayRetry := attempt+1 < writeMaxAttempts
		var last error
		if w.idem != nil {
			changed, err := w.stamp(ctx, partitionID, pending, batches, kvBuckets > 0, used)
			if err == nil && changed && announce != nil {
				if err = w.announce(ctx, announce, partitionID, partName, used); err != nil {
					for _, b := range pending {
						failed[b] = fmt.Errorf("before sending: %w", err)
					}
					return
				}
			}
			if err != nil {
				last = fmt.Errorf("numbering the batches: %w", err)
				if !mayRetry || ctx.Err() != nil || !(errcode.IsRetriable(err) || errcode.InvalidatesMetadata(err) || isConnError(err)) {
					for _, b := range pending {
						failed[b] = last
					}
					return
				}
			}
		}
		if last == nil {
			pending, last = w.sendRound(ctx, partitionID, pending, batches, kvBuckets, mayRetry, used, out, failed)
		}
		if len(pending) > 0 {
			if err := wire.Sleep(ctx, w.c.backoff().Delay(attempt)); err != nil {
				for _, b := range pending {
					failed[b] = fmt.Errorf("%w (last error: %w)", err, last)
				}
				return
			}
		}
	}
}

func isConnError(err error) bool {
	var ce *wire.ConnError
	return errors.As(err, &ce)
}

// checkSend validates the partition and buckets of a write and returns the
// partition's name ("" when not partitioned or not cached).
func (w *Writer) checkSend(ctx context.Context, partitionID int64, buckets []int32) (string, error) {
	info := w.info
	if _, _, err := w.c.checkBuckets(ctx, info, partitionID, buckets); err != nil {
		return "", fmt.Errorf("fluss: write to %s: %w", info.Path, err)
	}
	partName := ""
	if partitionID != NoPartition {
		if p, ok := w.c.partitionByID(info.TableID, partitionID); ok {
			partName = p.Name
		}
	}
	return partName, nil
}

// sendRound sends the batches of pending buckets to their leaders once,
// storing offsets in out and final errors in failed. It returns the buckets
// to send again (when mayRetry) and the last error that asked for it.
func (w *Writer) sendRound(ctx context.Context, partitionID int64, pending []int32, batches map[int32][]byte, kvBuckets int32, mayRetry bool,
	used map[int32]records.WriterState, out map[int32]int64, failed map[int32]error) (retry []int32, last error) {
	info := w.info
	var mu sync.Mutex
	keep := func(b int32, err error, sent bool) {
		mu.Lock()
		defer mu.Unlock()
		if errcode.InvalidatesMetadata(err) {
			w.c.invalidateLeader(info.Bucket(partitionID, b))
		}
		if w.idem != nil && lostWriterState(err) {
			w.idem.reset(used[b].WriterID)
		}
		if mayRetry && ctx.Err() == nil && w.retriable(err, sent) {
			retry = append(retry, b)
			last = err
			return
		}
		failed[b] = err
	}
	noLeader := func(b int32, err error) { keep(b, err, false) }
	w.c.forEachLeader(ctx, info, partitionID, pending, noLeader, func(leader int32, all []int32) {
		forEachLane(all, w.cfg.connections, func(lane int, bs []int32) {
			res, err := w.sendOnce(ctx, leader, lane, partitionID, bs, batches, kvBuckets)
			if err != nil {
				var ce *wire.ConnError
				sent := !(errors.As(err, &ce) && (ce.Op == "dial" || ce.Op == "handshake"))
				for _, b := range bs {
					keep(b, fmt.Errorf("tablet server %d: %w", leader, err), sent)
				}
				return
			}
			got := map[int32]bool{}
			for _, r := range res {
				got[r.bucket] = true
				if r.err != nil {
					keep(r.bucket, fmt.Errorf("tablet server %d: %w", leader, r.err), false)
					continue
				}
				mu.Lock()
				out[r.bucket] = r.offset
				mu.Unlock()
			}
			for _, b := range bs {
				if !got[b] {
					keep(b, fmt.Errorf("tablet server %d did not answer for the bucket", leader), true)
				}
			}
		})
	})
	return retry, last
}

// writeErrors joins one *WriteError per failed bucket, ordered by bucket.
func (w *Writer) writeErrors(partitionID int64, partName string, failed map[int32]error) error {
	bs := make([]int32, 0, len(failed))
	for b := range failed {
		bs = append(bs, b)
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i] < bs[j] })
	errs := make([]error, 0, len(bs))
	for _, b := range bs {
		errs = append(errs, &WriteError{Table: w.info.Path, Bucket: w.info.Bucket(partitionID, b), Partition: partName, Err: failed[b]})
	}
	return errors.Join(errs...)
}

// retriable decides whether a failed write may be sent again. Most
// per-bucket error codes are refusals (NOT_LEADER_OR_FOLLOWER,
// NOT_ENOUGH_REPLICAS, ...), but REQUEST_TIME_OUT and
// NOT_ENOUGH_REPLICAS_AFTER_APPEND come after the leader appended the batch,
// and a request error after sending (timeout, lost connection) leaves it
// unknown. An idempotent writer sends those again, as the leader
// recognises a repeat, and also a batch whose writer state the leader lost
// (under a new writer id); any other writer does not, so that a batch is
// never written twice by this client.
func (w *Writer) retriable(err error, sent bool) bool {
	if w.idem != nil {
		if sent || errors.Is(err, errcode.RequestTimeOut) || errors.Is(err, errcode.NotEnoughReplicasAfterAppend) || lostWriterState(err) {
			return true
		}
	} else if sent || errors.Is(err, errcode.RequestTimeOut) || errors.Is(err, errcode.NotEnoughReplicasAfterAppend) {
		return false
	}
	return errcode.IsRetriable(err) || errcode.InvalidatesMetadata(err)
}

type writeBucketResult struct {
	bucket int32
	offset int64
	err    error
}

// sendOnce sends the batches of buckets in one request over connection lane
// of their leader.
func (w *Writer) sendOnce(ctx context.Context, leader int32, lane int, partitionID int64, buckets []int32, batches map[int32][]byte, kvBuckets int32) ([]writeBucketResult, error) {
	conn, err := w.c.tabletLaneConn(ctx, leader, lane)
	if err != nil {
		return nil, err
	}
	var pid *int64
	if partitionID != NoPartition {
		pid = proto.Int64(partitionID)
	}
	timeoutMs := int32(w.cfg.timeout / time.Millisecond)
	callTimeout := wire.WithTimeout(w.c.requestTimeout() + w.cfg.timeout)
	var out []writeBucketResult
	if kvBuckets > 0 {
		req := &pb.PutKvRequest{Acks: proto.Int32(w.cfg.acks), TableId: proto.Int64(w.info.TableID), TimeoutMs: proto.Int32(timeoutMs)}
		for _, b := range buckets {
			req.BucketsReq = append(req.BucketsReq, &pb.PbPutKvReqForBucket{
				PartitionId: pid, BucketId: proto.Int32(b), Records: batches[b], RoutingBucketCount: proto.Int32(kvBuckets),
			})
		}
		var resp pb.PutKvResponse
		if err := conn.Call(ctx, wire.PutKV, req, &resp, callTimeout); err != nil {
			return nil, err
		}
		for _, r := range resp.GetBucketsResp() {
			out = append(out, writeBucketResult{bucket: r.GetBucketId(), offset: -1, err: errcode.New(r.GetErrorCode(), r.GetErrorMessage())})
		}
		return out, nil
	}
	req := &pb.ProduceLogRequest{Acks: proto.Int32(w.cfg.acks), TableId: proto.Int64(w.info.TableID), TimeoutMs: proto.Int32(timeoutMs)}
	for _, b := range buckets {
		req.BucketsReq = append(req.BucketsReq, &pb.PbProduceLogReqForBucket{PartitionId: pid, BucketId: proto.Int32(b), Records: batches[b]})
	}
	var resp pb.ProduceLogResponse
	if err := conn.Call(ctx, wire.ProduceLog, req, &resp, callTimeout); err != nil {
		return nil, err
	}
	for _, r := range resp.GetBucketsResp() {
		out = append(out, writeBucketResult{bucket: r.GetBucketId(), offset: r.GetBaseOffset(), err: errcode.New(r.GetErrorCode(), r.GetErrorMessage())})
	}
	return out, nil
}
