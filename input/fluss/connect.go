package flussinput

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/fluss"
)

// Connect loads the checkpoint (once), connects to the cluster, works out
// where every bucket starts and starts the worker. A failure no retry cures
// stops the pipeline; others are returned with a growing back-off so the
// engine retries without flooding the log (see connectFailed). Called
// while the connection is up, after a read the stall interrupted, it
// reports the stall (see stallWatch).
func (in *input) Connect(ctx context.Context) error {
	in.mu.Lock()
	up := in.conn != nil && !in.closed
	in.mu.Unlock()
	if up {
		return in.stall.hold(ctx, in.tablePath(), in.readHasWork)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return service.ErrEndOfInput
	}
	if in.conn != nil {
		return nil
	}
	c, err := in.connectLocked(ctx)
	if err != nil {
		return in.connectFailed(ctx, err)
	}
	in.connectFailures = 0
	in.conn = c
	in.gate.reconnected()
	return nil
}

func (in *input) clientOptions() []fluss.Option {
	opts := []fluss.Option{
		fluss.Bootstrap(in.conf.bootstrap...),
		fluss.DialTimeout(in.conf.connectTimeout),
		fluss.RequestTimeout(in.conf.requestTimeout),
		fluss.ClientSoftware("fluss-iggy", "0.1.0"),
		fluss.Remote(in.conf.remote),
	}
	if in.conf.sasl {
		opts = append(opts, fluss.SASLPlain(in.conf.saslUser, in.conf.saslPassword))
	}
	return opts
}

// connectLocked makes one connection: client, table, plan, scanner,
// subscriptions, and starts its worker.
func (in *input) connectLocked(ctx context.Context) (_ *connection, err error) {
	if !in.started {
		if err := in.loadCheckpointLocked(ctx); err != nil {
			return nil, err
		}
	}
	client, err := fluss.NewClient(ctx, in.clientOptions()...)
	if err != nil {
		return nil, &clientError{err: err} // it names the servers
	}
	defer func() {
		if err != nil {
			_ = client.Close()
		}
	}()
	info, err := in.loadTable(ctx, client)
	if err != nil {
		return nil, err
	}
	resumed := in.loadedOffsets(info)
	plan, parts, err := in.planBuckets(ctx, client, info)
	if err != nil {
		return nil, err
	}
	w, err := in.newWorker(client, info)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = w.scanner.Close()
		}
	}()
	if err := w.subscribe(ctx, plan, parts); err != nil {
		return nil, err
	}
	if len(w.snapshots) > 0 {
		// The snapshots chosen are written before any of their rows is
		// handed out: a restart reads the same ones (a newer snapshot
		// would not delete keys that rows of the older one created).
		if err := in.flushOnce(ctx); err != nil {
			return nil, fmt.Errorf("writing the chosen KV snapshots to the checkpoint of table %s: %w", in.tablePath(), err)
		}
	}
	first := !in.started
	in.started = true
	bounded := in.startProgressLocked(plan)
	in.log.Infof("Reading Fluss table %s (id %d, %s) from %d bucket(s)%s", in.tablePath(), info.TableID, tableKind(info), len(w.produced), bounded)
	in.logStarts(plan, first, resumed)
	in.startMonitorLocked()
	go w.run()
	return w.c, nil
}

// loadCheckpointLocked reads the checkpoint. Until the first successful
// start nothing was handed out, so it is (re)read on every attempt: a user
// may have fixed or deleted it meanwhile. This is also the first access of
// the cache resource, made from this one goroutine.
func (in *input) loadCheckpointLocked(ctx context.Context) error {
	raw, err := in.store.get(ctx)
	if err != nil {
		return fmt.Errorf("reading the checkpoint: %w", err)
	}
	in.loaded = nil
	in.cp.clear()
	if raw != nil {
		v, err := parseCheckpoint(in.conf.checkpointKey, raw)
		if err != nil {
			if in.conf.onUnresumable == unresumableFail {
				return fmt.Errorf("%w; delete the key or set %s to earliest or latest", err, fiFieldOnUnresumable)
			}
			in.log.Warnf("Ignoring the checkpoint of %s: %v; every bucket starts from %s (%s)", in.tablePath(), err, in.conf.onUnresumable, fiFieldOnUnresumable)
			v = &checkpointValue{Version: checkpointVersion, unresumable: true}
		}
		in.loaded = v
	}
	in.startFlusherLocked()
	return nil
}

// newWorker creates the scanner, the message builder and the worker of a
// connection.
func (in *input) newWorker(client *fluss.Client, info *fluss.TableInfo) (*worker, error) {
	var sopts []fluss.ScanOption
	if len(in.conf.columns) > 0 {
		sopts = append(sopts, fluss.ScanColumns(in.conf.columns...))
	}
	sopts = append(sopts,
		fluss.FetchMaxBytes(in.conf.fetchMaxBytes),
		fluss.FetchMaxBucketBytes(in.conf.fetchMaxBucketBytes),
		fluss.FetchMaxWait(in.conf.fetchMaxWait),
		fluss.ScanFetchObserver(in.metrics.observeFetch),
	)
	scanner, err := client.NewScanner(info, sopts...)
	if err != nil {
		return nil, fmt.Errorf("reading table %s: %w", in.tablePath(), err)
	}
	builder, err := in.newBuilder(info, scanner)
	if err != nil {
		_ = scanner.Close()
		return nil, err
	}
	var replay *messageBuilder
	if in.conf.replayNacks {
		if replay, err = in.newBuilder(info, scanner); err != nil {
			_ = scanner.Close()
			return nil, err
		}
	}
	c := &connection{
		client:  client,
		info:    info,
		scanner: scanner,
		units:   make(chan *unit, unitQueue),
		done:    make(chan struct{}),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return &worker{
		in:       in,
		c:        c,
		info:     info,
		scanner:  scanner,
		client:   client,
		builder:  builder,
		replay:   replay,
		produced: map[bucketKey]int64{},
		parts:    map[int64]string{},
	}, nil
}

// newBuilder returns a message builder for the rows of scanner.
func (in *input) newBuilder(info *fluss.TableInfo, scanner *fluss.Scanner) (*messageBuilder, error) {
	b, err := newMessageBuilder(tableMeta{
		database: in.conf.database, table: in.conf.table, tableID: info.TableID, pkTable: info.HasPrimaryKey(),
	}, scanner.Schema(), scanner.ArrowSchema(), in.conf.arrowPayload)
	if err != nil {
		return nil, err
	}
	b.ipcCodec = in.conf.arrowCodec
	if in.conf.structuredRows {
		b.useStructuredRows()
	}
	return b, nil
}

// subscribe subscribes the scanner to the planned buckets that have rows
// left to read.
func (w *worker) subscribe(ctx context.Context, plan []plannedBucket, parts []fluss.PartitionInfo) error {
	in := w.in
	for _, pb := range plan {
		if pb.snap != nil {
			w.snapshots = append(w.snapshots, &snapshotRead{key: pb.key, partition: pb.partition, snap: *pb.snap, pos: pb.offset})
			if pb.key.partitionID != fluss.NoPartition {
				w.parts[pb.key.partitionID] = pb.partition
			}
			continue
		}
		if in.endOffsets != nil {
			end, ok := in.endOffsets[pb.key]
			if !ok || pb.offset >= end {
				continue // nothing (more) to read in this bucket
			}
		}
		if err := w.scanner.Subscribe(ctx, pb.key.partitionID, pb.key.bucket, fluss.ExactOffset(pb.offset)); err != nil {
			return fmt.Errorf("subscribing to table %s %s: %w", in.tablePath(), pb.key, err)
		}
		w.produced[pb.key] = pb.offset
		if pb.key.partitionID != fluss.NoPartition {
			w.parts[pb.key.partitionID] = pb.partition
		}
	}
	for _, p := range parts {
		w.parts[p.ID] = p.Name
	}
	return nil
}

func tableKind(info *fluss.TableInfo) string {
	k := "log table"
	if info.HasPrimaryKey() {
		k = "primary-key table"
	}
	if info.IsPartitioned() {
		k = "partitioned " + k
	}
	return k
}

// loadTable fetches the table and checks it against the configuration.
// What cannot change by waiting is a permanentError.
func (in *input) loadTable(ctx context.Context, client *fluss.Client) (*fluss.TableInfo, error) {
	path := fluss.NewTablePath(in.conf.database, in.conf.table)
	info, err := client.Table(ctx, path)
	if err != nil {
		return nil, in.missingTable(ctx, client, path, err)
	}
	if err := in.checkTable(info); err != nil {
		return nil, &permanentError{err: err}
	}
	return info, nil
}

// missingTable explains a failure to load the table: a missing database
// or table stops the pipeline, or is waited for with wait_for_table;
// anything else (the cluster is unreachable) is retried.
func (in *input) missingTable(ctx context.Context, client *fluss.Client, path fluss.TablePath, err error) error {
	var missing error
	if ok, derr := client.DatabaseExists(ctx, in.conf.database); derr == nil && !ok {
		missing = fmt.Errorf("field %s: database %q does not exist", fiFieldDatabase, in.conf.database)
	} else if ok, terr := client.TableExists(ctx, path); terr == nil && !ok {
		missing = fmt.Errorf("field %s: table %q does not exist in database %q", fiFieldTable, in.conf.table, in.conf.database)
	}
	switch {
	case missing == nil:
		return fmt.Errorf("loading table %s: %w", path, err)
	case in.conf.waitForTable:
		return &waitingError{err: fmt.Errorf("%w yet; waiting for it (%s: true)", missing, fiFieldWaitForTable)}
	}
	return &permanentError{err: fmt.Errorf("%w; create it, or set %s: true to wait for it", missing, fiFieldWaitForTable)}
}

// checkTable checks a table against table_type, columns, buckets and
// partitions.
func (in *input) checkTable(info *fluss.TableInfo) error {
	path := in.tablePath()
	switch in.conf.tableType {
	case tableTypeLog:
		if info.HasPrimaryKey() {
			return fmt.Errorf("field %s: table %s is a primary-key table (primary key %v), not a log table", fiFieldTableType, path, info.PrimaryKey)
		}
	case tableTypePK:
		if !info.HasPrimaryKey() {
			return fmt.Errorf("field %s: table %s is a log table, not a primary-key table", fiFieldTableType, path)
		}
	}
	if in.conf.startMode == startModeSnapshot && !info.HasPrimaryKey() {
		return fmt.Errorf("field %s: %s needs a primary-key table; table %s is a log table (use earliest)", fiFieldStartOffset, startSnapshot, path)
	}
	if len(in.conf.columns) > 0 {
		if _, err := info.Schema.ProjectionIndices(in.conf.columns); err != nil {
			var uc *fluss.UnknownColumnError
			if errors.As(err, &uc) {
				return fmt.Errorf("field %s: table %s has no column %q (its columns: %s)", fiFieldColumns, path, uc.Column, strings.Join(uc.Columns, ", "))
			}
			return fmt.Errorf("field %s: table %s: %w", fiFieldColumns, path, err)
		}
	}
	if err := in.assign.checkBuckets(info.NumBuckets); err != nil {
		return err
	}
	if len(in.conf.partitions) > 0 && !info.IsPartitioned() {
		return fmt.Errorf("field %s: table %s is not partitioned", fiFieldPartitions, path)
	}
	return nil
}

func partitionSuffix(name string) string {
	if name == "" {
		return ""
	}
	return " partition " + name
}

func policyMode(p string) startMode {
	if p == unresumableLatest {
		return startModeLatest
	}
	return startModeEarliest
}
