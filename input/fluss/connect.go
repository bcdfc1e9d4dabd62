package fluss

import (
	"context"
	"fmt"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	flussapi "github.com/fluss-iggy/fluss-iggy/fluss"
)

// Connect loads the checkpoint (once), connects to the cluster, works out
// where every bucket starts and starts the worker. Failures are returned
// with a growing back-off so the engine retries without flooding the log.
func (in *input) Connect(ctx context.Context) error {
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
		in.connectFailures++
		wait := time.Second << min(in.connectFailures-1, 5)
		if wait > 30*time.Second {
			wait = 30 * time.Second
		}
		return service.NewErrBackOff(err, wait)
	}
	in.connectFailures = 0
	in.conn = c
	return nil
}

func (in *input) clientOptions() []flussapi.Option {
	opts := []flussapi.Option{
		flussapi.Bootstrap(in.conf.bootstrap...),
		flussapi.DialTimeout(in.conf.connectTimeout),
		flussapi.RequestTimeout(in.conf.requestTimeout),
		flussapi.ClientSoftware("fluss-iggy", "0.1.0"),
	}
	if in.conf.sasl {
		opts = append(opts, flussapi.SASLPlain(in.conf.saslUser, in.conf.saslPassword))
	}
	return opts
}

func (in *input) connectLocked(ctx context.Context) (_ *connection, err error) {
	// Until the first successful start nothing was handed out, so the
	// checkpoint is (re)read on every attempt: a user may have fixed or
	// deleted it meanwhile. This is also the first access of the cache
	// resource, made from this one goroutine.
	if !in.started {
		raw, err := in.store.get(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading the checkpoint: %w", err)
		}
		in.loaded = nil
		in.cp.clear()
		if raw != nil {
			v, err := parseCheckpoint(in.conf.checkpointKey, raw)
			if err != nil {
				if in.conf.onUnresumable == unresumableFail {
					return nil, fmt.Errorf("%w; delete the key or set %s to earliest or latest", err, fiFieldOnUnresumable)
				}
				in.log.Warnf("Ignoring the checkpoint of %s: %v; every bucket starts from %s (%s)", in.tablePath(), err, in.conf.onUnresumable, fiFieldOnUnresumable)
				v = &checkpointValue{Version: checkpointVersion, unresumable: true}
			}
			in.loaded = v
		}
		in.startFlusherLocked()
	}

	client, err := flussapi.NewClient(ctx, in.clientOptions()...)
	if err != nil {
		return nil, fmt.Errorf("connecting to Fluss at %v: %w", in.conf.bootstrap, err)
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
	plan, parts, err := in.planBuckets(ctx, client, info)
	if err != nil {
		return nil, err
	}

	var sopts []flussapi.ScanOption
	if len(in.conf.columns) > 0 {
		sopts = append(sopts, flussapi.ScanColumns(in.conf.columns...))
	}
	sopts = append(sopts,
		flussapi.FetchMaxBytes(in.conf.fetchMaxBytes),
		flussapi.FetchMaxBucketBytes(in.conf.fetchMaxBucketBytes),
		flussapi.FetchMaxWait(in.conf.fetchMaxWait),
		flussapi.ScanFetchObserver(in.metrics.observeFetch),
	)
	scanner, err := client.NewScanner(info, sopts...)
	if err != nil {
		return nil, fmt.Errorf("reading table %s: %w", in.tablePath(), err)
	}
	defer func() {
		if err != nil {
			_ = scanner.Close()
		}
	}()
	builder, err := newMessageBuilder(tableMeta{
		database: in.conf.database, table: in.conf.table, tableID: info.TableID, pkTable: info.HasPrimaryKey(),
	}, scanner.Schema(), scanner.ArrowSchema(), in.conf.arrowPayload)
	if err != nil {
		return nil, err
	}

	w := &worker{
		in:       in,
		info:     info,
		scanner:  scanner,
		client:   client,
		builder:  builder,
		produced: map[bucketKey]int64{},
		parts:    map[int64]string{},
	}
	for _, pb := range plan {
		if in.endOffsets != nil {
			end, ok := in.endOffsets[pb.key]
			if !ok || pb.offset >= end {
				continue // nothing (more) to read in this bucket
			}
		}
		if err := scanner.Subscribe(ctx, pb.key.partitionID, pb.key.bucket, flussapi.StartAtOffset(pb.offset)); err != nil {
			return nil, fmt.Errorf("subscribing to table %s %s: %w", in.tablePath(), pb.key, err)
		}
		w.produced[pb.key] = pb.offset
		if pb.key.partitionID != noPartition {
			w.parts[pb.key.partitionID] = pb.partition
		}
	}
	for _, p := range parts {
		w.parts[p.ID] = p.Name
	}

	c := &connection{
		client:  client,
		info:    info,
		scanner: scanner,
		units:   make(chan *unit, 16),
		done:    make(chan struct{}),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	w.c = c
	in.started = true
	in.log.Infof("Reading Fluss table %s (id %d, %s) from %d bucket(s)", in.tablePath(), info.TableID, tableKind(info), len(w.produced))
	go w.run()
	return c, nil
}

func tableKind(info *flussapi.TableInfo) string {
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
func (in *input) loadTable(ctx context.Context, client *flussapi.Client) (*flussapi.TableInfo, error) {
	path := flussapi.NewTablePath(in.conf.database, in.conf.table)
	info, err := client.Table(ctx, path)
	if err != nil {
		if ok, derr := client.DatabaseExists(ctx, in.conf.database); derr == nil && !ok {
			return nil, fmt.Errorf("field %s: database %q does not exist", fiFieldDatabase, in.conf.database)
		}
		if ok, terr := client.TableExists(ctx, path); terr == nil && !ok {
			return nil, fmt.Errorf("field %s: table %q does not exist in database %q", fiFieldTable, in.conf.table, in.conf.database)
		}
		return nil, fmt.Errorf("loading table %s: %w", path, err)
	}
	switch in.conf.tableType {
	case tableTypeLog:
		if info.HasPrimaryKey() {
			return nil, fmt.Errorf("field %s: table %s is a primary-key table (primary key %v), not a log table", fiFieldTableType, path, info.PrimaryKey)
		}
	case tableTypePK:
		if !info.HasPrimaryKey() {
			return nil, fmt.Errorf("field %s: table %s is a log table, not a primary-key table", fiFieldTableType, path)
		}
	}
	if len(in.conf.columns) > 0 {
		if _, err := info.Schema.ProjectionIndices(in.conf.columns); err != nil {
			return nil, fmt.Errorf("field %s: table %s: %w (its columns are %v)", fiFieldColumns, path, err, info.Schema.ColumnNames())
		}
	}
	if err := in.assign.checkBuckets(info.NumBuckets); err != nil {
		return nil, err
	}
	if len(in.conf.partitions) > 0 && !info.IsPartitioned() {
		return nil, fmt.Errorf("field %s: table %s is not partitioned", fiFieldPartitions, path)
	}
	if f := info.Descriptor; f != nil && f.LogFormat() != "ARROW" {
		return nil, fmt.Errorf("table %s: log format %s is not supported (only ARROW)", path, f.LogFormat())
	}
	return info, nil
}

// plannedBucket is where one bucket starts.
type plannedBucket struct {
	key       bucketKey
	partition string
	offset    int64
}

// positionSource says where a planned position came from.
type positionSource int8

const (
	fromResume     positionSource = iota // the previous connection's read position
	fromCheckpoint                       // the cache
	fromStart                            // start_offset (or earliest for new partitions)
)

// planBuckets decides which buckets to read and from where, applying
// on_unresumable_offset, and records the positions in the checkpointer.
func (in *input) planBuckets(ctx context.Context, client *flussapi.Client, info *flussapi.TableInfo) (_ []plannedBucket, _ []flussapi.PartitionInfo, err error) {
	// A checkpoint of another incarnation of the table (dropped and
	// created again under the same name) is not resumable.
	loaded := map[bucketKey]int64{}
	unresumable := false
	if !in.started && in.loaded != nil {
		switch v := in.loaded; {
		case v.unresumable:
			unresumable = true // corrupt: already reported
		case v.TableID != info.TableID:
			if in.conf.onUnresumable == unresumableFail {
				return nil, nil, fmt.Errorf("the checkpoint in cache key %q belongs to table id %d, but table %s now has id %d (dropped and created again?); delete the key or set %s to earliest or latest",
					in.conf.checkpointKey, v.TableID, in.tablePath(), info.TableID, fiFieldOnUnresumable)
			}
			in.log.Warnf("The checkpoint in cache key %q belongs to table id %d, but table %s now has id %d; every bucket starts from %s (%s)",
				in.conf.checkpointKey, v.TableID, in.tablePath(), info.TableID, in.conf.onUnresumable, fiFieldOnUnresumable)
			unresumable = true
		default:
			loaded = in.cp.loadOnce(v)
		}
	}
	if tid := in.cp.currentTableID(); in.started && tid != info.TableID {
		if in.conf.onUnresumable == unresumableFail {
			return nil, nil, fmt.Errorf("table %s was dropped and created again (table id %d, was %d); set %s to earliest or latest to read the new table",
				in.tablePath(), info.TableID, tid, fiFieldOnUnresumable)
		}
		in.log.Warnf("Table %s was dropped and created again (table id %d, was %d); every bucket starts from %s (%s)",
			in.tablePath(), info.TableID, tid, in.conf.onUnresumable, fiFieldOnUnresumable)
		unresumable = true
	}
	// Where buckets without a position start: start_offset on the first
	// start, earliest for partitions that appeared since, and the
	// on_unresumable_offset policy when the positions were unusable.
	startMode, startOffset, startTS := in.conf.startMode, in.conf.startOffset, in.conf.startTimestamp
	if in.started {
		startMode = startModeEarliest
	}
	if unresumable {
		in.cp.resetAll(info.TableID)
		startMode = policyMode(in.conf.onUnresumable)
	}
	in.cp.setTableID(info.TableID)

	type part struct {
		id   int64
		name string
	}
	parts := []part{{id: noPartition}}
	var allParts []flussapi.PartitionInfo
	if info.IsPartitioned() {
		ps, err := client.Partitions(ctx, info)
		allParts = ps
		if err != nil {
			return nil, nil, fmt.Errorf("listing the partitions of table %s: %w", in.tablePath(), err)
		}
		parts = parts[:0]
		for _, p := range ps {
			if in.assign.wantsPartition(p.Name) {
				parts = append(parts, part{id: p.ID, name: p.Name})
			}
		}
		existing := map[int64]bool{}
		for _, p := range ps {
			existing[p.ID] = true
		}
		in.cp.pruneExtra(func(k bucketKey) bool { return existing[k.partitionID] })
	}

	var plan []plannedBucket
	for _, p := range parts {
		keys := in.assign.bucketsOf(p.id, info.NumBuckets)
		if len(keys) == 0 {
			continue
		}
		var (
			toValidate []int32
			toList     []int32
			planned    = map[int32]*plannedBucket{}
			sources    = map[int32]positionSource{}
		)
		for _, k := range keys {
			pb := &plannedBucket{key: k, partition: p.name}
			planned[k.bucket] = pb
			if pos, _, ok := in.cp.resumePosition(k); ok {
				pb.offset, sources[k.bucket] = pos, fromResume
				toValidate = append(toValidate, k.bucket)
			} else if off, ok := loaded[k]; ok {
				pb.offset, sources[k.bucket] = off, fromCheckpoint
				toValidate = append(toValidate, k.bucket)
			} else {
				sources[k.bucket] = fromStart
				if startMode == startModeOffset {
					pb.offset = startOffset
					toValidate = append(toValidate, k.bucket)
				} else {
					toList = append(toList, k.bucket)
				}
			}
		}
		if len(toList) > 0 {
			spec := flussapi.EarliestOffset()
			switch startMode {
			case startModeLatest:
				spec = flussapi.LatestOffset()
			case startModeTimestamp:
				spec = flussapi.OffsetAtTimestamp(startTS)
			}
			offs, err := client.ListOffsets(ctx, info, p.id, toList, spec)
			if err != nil {
				return nil, nil, fmt.Errorf("listing the %s offsets of table %s%s: %w", spec, in.tablePath(), partitionSuffix(p.name), err)
			}
			for _, b := range toList {
				off, ok := offs[b]
				if !ok {
					return nil, nil, fmt.Errorf("listing the %s offsets of table %s%s: no offset for bucket %d", spec, in.tablePath(), partitionSuffix(p.name), b)
				}
				planned[b].offset = off
			}
		}
		if len(toValidate) > 0 {
			earliest, err := client.ListOffsets(ctx, info, p.id, toValidate, flussapi.EarliestOffset())
			if err != nil {
				return nil, nil, fmt.Errorf("listing the earliest offsets of table %s%s: %w", in.tablePath(), partitionSuffix(p.name), err)
			}
			latest, err := client.ListOffsets(ctx, info, p.id, toValidate, flussapi.LatestOffset())
			if err != nil {
				return nil, nil, fmt.Errorf("listing the latest offsets of table %s%s: %w", in.tablePath(), partitionSuffix(p.name), err)
			}
			for _, b := range toValidate {
				pb := planned[b]
				lo, hi := earliest[b], latest[b]
				if pb.offset >= lo && pb.offset <= hi {
					continue
				}
				what := map[positionSource]string{
					fromResume:     "read position",
					fromCheckpoint: fmt.Sprintf("checkpoint (cache key %q)", in.conf.checkpointKey),
					fromStart:      fiFieldStartOffset,
				}[sources[b]]
				msg := fmt.Sprintf("table %s%s bucket %d: the %s offset %d is outside the log, which holds offsets %d to %d", in.tablePath(), partitionSuffix(p.name), b, what, pb.offset, lo, hi)
				if in.conf.onUnresumable == unresumableFail {
					return nil, nil, fmt.Errorf("%s (rows expired, or the log was truncated); set %s to earliest or latest to continue", msg, fiFieldOnUnresumable)
				}
				target := lo
				if in.conf.onUnresumable == unresumableLatest {
					target = hi
				}
				in.log.Warnf("%s; continuing from %s offset %d (%s)", msg, in.conf.onUnresumable, target, fiFieldOnUnresumable)
				if sources[b] == fromResume {
					if target >= pb.offset {
						in.cp.skipTo(pb.key, target)
					} else {
						in.cp.reset(pb.key, p.name, target)
					}
				}
				pb.offset = target
			}
		}
		for _, k := range keys {
			pb := planned[k.bucket]
			if sources[k.bucket] != fromResume {
				in.cp.start(k, p.name, pb.offset)
			}
			plan = append(plan, *pb)
		}
	}

	if in.conf.endAtLatest && in.endOffsets == nil {
		ends := map[bucketKey]int64{}
		byPart := map[int64][]int32{}
		for _, pb := range plan {
			byPart[pb.key.partitionID] = append(byPart[pb.key.partitionID], pb.key.bucket)
		}
		for pid, bs := range byPart {
			offs, err := client.ListOffsets(ctx, info, pid, bs, flussapi.LatestOffset())
			if err != nil {
				return nil, nil, fmt.Errorf("listing the end offsets of table %s: %w", in.tablePath(), err)
			}
			for _, b := range bs {
				ends[bucketKey{partitionID: pid, bucket: b}] = offs[b]
			}
		}
		in.endOffsets = ends
	}
	return plan, allParts, nil
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
