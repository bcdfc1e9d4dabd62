package flussinput

import (
	"context"
	"fmt"

	"github.com/fluss-iggy/fluss-iggy/fluss"
)

// plannedBucket is where one bucket starts.
type plannedBucket struct {
	key       bucketKey
	partition string
	offset    int64
	// snap is set for a bucket in its snapshot phase; offset then counts
	// the snapshot's rows (see snapshot.go).
	snap *checkpointSnapshot
}

// positionSource says where a planned position came from.
type positionSource int8

const (
	fromResume     positionSource = iota // the previous connection's read position
	fromCheckpoint                       // the cache
	fromStart                            // start_offset (or earliest for new partitions)
)

// startSpec is where buckets without a position start.
type startSpec struct {
	mode   startMode
	offset int64 // startModeOffset
	ts     int64 // startModeTimestamp
}

// part is a partition to read (id fluss.NoPartition for tables without).
type part struct {
	id   int64
	name string
}

// planClient is what planning asks the cluster: a *fluss.Client (unit
// tests plan against a stub).
type planClient interface {
	Partitions(ctx context.Context, info *fluss.TableInfo) ([]fluss.PartitionInfo, error)
	NumBuckets(ctx context.Context, info *fluss.TableInfo, partitionID int64) (int32, error)
	ListOffsets(ctx context.Context, info *fluss.TableInfo, partitionID int64, buckets []int32, spec fluss.OffsetSpec) (map[int32]int64, error)
	LatestKVSnapshots(ctx context.Context, info *fluss.TableInfo, partition fluss.PartitionInfo) ([]fluss.KVSnapshot, error)
}

// bucketsToRead returns the buckets of one partition (fluss.NoPartition:
// of the table) this instance reads, in bucket order. Each partition has
// its own bucket count (fluss.Client.NumBuckets: on Fluss 1.0 partitions
// created before bucket.num was altered keep theirs).
func (in *input) bucketsToRead(ctx context.Context, client planClient, info *fluss.TableInfo, p part) ([]bucketKey, error) {
	n, err := client.NumBuckets(ctx, info, p.id)
	if err != nil {
		return nil, fmt.Errorf("counting the buckets of table %s%s: %w", in.tablePath(), partitionSuffix(p.name), err)
	}
	return in.assign.bucketsOf(p.id, n), nil
}

// planBuckets decides which buckets to read and from where, applying
// on_unresumable_offset, and records the positions in the checkpointer.
// It also returns every partition of the table.
func (in *input) planBuckets(ctx context.Context, client planClient, info *fluss.TableInfo) ([]plannedBucket, []fluss.PartitionInfo, error) {
	in.dropStaleFallback(info)
	loaded, unresumable, err := in.usableCheckpoint(info)
	if err != nil {
		return nil, nil, err
	}
	start := in.startFor(info, unresumable)
	parts, all, err := in.partsToRead(ctx, client, info)
	if err != nil {
		return nil, nil, err
	}
	var plan []plannedBucket
	for _, p := range parts {
		pp, err := in.planPartition(ctx, client, info, p, loaded, start)
		if err != nil {
			return nil, nil, err
		}
		plan = append(plan, pp...)
	}
	if in.conf.endAtLatest && in.endOffsets == nil {
		if in.endOffsets, err = in.endOffsetsOf(ctx, client, info, plan); err != nil {
			return nil, nil, err
		}
	}
	return plan, all, nil
}

// usableCheckpoint returns the positions loaded from the cache, or
// unresumable=true when they cannot be used: the value was corrupt, or it
// (or the previous connection) belongs to another incarnation of the table
// (dropped and created again under the same name). With
// on_unresumable_offset: fail that is an error.
func (in *input) usableCheckpoint(info *fluss.TableInfo) (loaded map[bucketKey]int64, unresumable bool, err error) {
	loaded = map[bucketKey]int64{}
	fail := in.conf.onUnresumable == unresumableFail
	if !in.started && in.loaded != nil {
		switch v := in.loaded; {
		case v.unresumable:
			unresumable = true // corrupt: already reported
		case v.TableID != info.TableID:
			if fail {
				return nil, false, fmt.Errorf("the checkpoint in cache key %q belongs to table id %d, but table %s now has id %d (dropped and created again?); delete the key or set %s to earliest or latest",
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
		if fail {
			return nil, false, fmt.Errorf("table %s was dropped and created again (table id %d, was %d); set %s to earliest or latest to read the new table",
				in.tablePath(), info.TableID, tid, fiFieldOnUnresumable)
		}
		in.log.Warnf("Table %s was dropped and created again (table id %d, was %d); every bucket starts from %s (%s)",
			in.tablePath(), info.TableID, tid, in.conf.onUnresumable, fiFieldOnUnresumable)
		unresumable = true
	}
	return loaded, unresumable, nil
}

// dropStaleFallback forgets, in a sharded input, a value under
// checkpoint_key (left by an unsharded run) that belongs to another table id
// or could not be parsed: the per-bucket keys are the positions there, and
// that value is only read for buckets they lack.
func (in *input) dropStaleFallback(info *fluss.TableInfo) {
	v := in.loaded
	if !in.store.perBucket || in.started || v == nil || (!v.unresumable && v.TableID == info.TableID) {
		return
	}
	if !v.unresumable {
		in.log.Warnf("Not using the positions in cache key %q: they belong to table id %d, but table %s now has id %d", in.conf.checkpointKey, v.TableID, in.tablePath(), info.TableID)
	}
	in.loaded = nil
}

// startFor returns where buckets without a position start: start_offset on
// the first start, earliest for partitions that appeared since, and the
// on_unresumable_offset policy when the positions were unusable (which are
// then forgotten). It records the table id the positions belong to.
func (in *input) startFor(info *fluss.TableInfo, unresumable bool) startSpec {
	start := startSpec{mode: in.conf.startMode, offset: in.conf.startOffset, ts: in.conf.startTimestamp}
	if in.started {
		start.mode = startModeEarliest
	}
	if unresumable {
		in.cp.resetAll(info.TableID)
		start.mode = policyMode(in.conf.onUnresumable)
	}
	in.cp.setTableID(info.TableID)
	return start
}

// partsToRead returns the partitions this instance reads (one with id
// fluss.NoPartition for tables without partitions) and every partition of the
// table, and forgets loaded positions of partitions that no longer exist.
func (in *input) partsToRead(ctx context.Context, client planClient, info *fluss.TableInfo) ([]part, []fluss.PartitionInfo, error) {
	if !info.IsPartitioned() {
		return []part{{id: fluss.NoPartition}}, nil, nil
	}
	ps, err := client.Partitions(ctx, info)
	if err != nil {
		return nil, nil, fmt.Errorf("listing the partitions of table %s: %w", in.tablePath(), err)
	}
	var parts []part
	existing := map[int64]bool{}
	for _, p := range ps {
		existing[p.ID] = true
		if in.assign.wantsPartition(p.Name) {
			parts = append(parts, part{id: p.ID, name: p.Name})
		}
	}
	in.cp.pruneExtra(func(k bucketKey) bool { return existing[k.partitionID] })
	return parts, ps, nil
}

// partitionPlan is the plan of one partition's buckets in the making.
type partitionPlan struct {
	p          part
	keys       []bucketKey
	planned    map[int32]*plannedBucket
	sources    map[int32]positionSource
	toList     []int32 // buckets starting by start mode: offsets to list
	toValidate []int32 // buckets with a known offset: check it is in the log
	toSnapshot []int32 // buckets starting from their latest KV snapshot
}

// planPartition works out where the buckets of one partition start and
// records them in the checkpointer.
func (in *input) planPartition(ctx context.Context, client planClient, info *fluss.TableInfo, p part, loaded map[bucketKey]int64, start startSpec) ([]plannedBucket, error) {
	keys, err := in.bucketsToRead(ctx, client, info, p)
	if err != nil || len(keys) == 0 {
		return nil, err
	}
	if !in.started {
		if err := in.loadBucketKeys(ctx, info, keys, loaded); err != nil {
			return nil, fmt.Errorf("reading the checkpoint of table %s%s: %w", in.tablePath(), partitionSuffix(p.name), err)
		}
	}
	pp := &partitionPlan{p: p, keys: keys, planned: map[int32]*plannedBucket{}, sources: map[int32]positionSource{}}
	for _, k := range keys {
		in.planBucket(pp, k, loaded, start)
	}
	if err := in.listSnapshots(ctx, client, info, pp); err != nil {
		return nil, err
	}
	if err := in.listStartOffsets(ctx, client, info, pp, start); err != nil {
		return nil, err
	}
	if err := in.validatePositions(ctx, client, info, pp); err != nil {
		return nil, err
	}
	plan := make([]plannedBucket, 0, len(keys))
	for _, k := range keys {
		pb := pp.planned[k.bucket]
		switch {
		case pp.sources[k.bucket] == fromResume:
		case pb.snap != nil:
			in.cp.startSnapshot(k, p.name, *pb.snap, pb.offset)
		default:
			in.cp.start(k, p.name, pb.offset)
		}
		plan = append(plan, *pb)
	}
	return plan, nil
}

// planBucket sorts a bucket by where its position comes from: known (to
// validate, or a snapshot phase to continue), or to find by start mode.
func (in *input) planBucket(pp *partitionPlan, k bucketKey, loaded map[bucketKey]int64, start startSpec) {
	pos, source := in.knownPosition(k, loaded)
	pb := &plannedBucket{key: k, partition: pp.p.name, offset: pos}
	pp.planned[k.bucket] = pb
	pp.sources[k.bucket] = source
	switch {
	case source != fromStart:
		if snap, ok := in.cp.snapshotPhase(k); ok {
			pb.snap = &snap // positions count snapshot rows: nothing to validate
			return
		}
		pp.toValidate = append(pp.toValidate, k.bucket)
	case start.mode == startModeOffset:
		pb.offset = start.offset
		pp.toValidate = append(pp.toValidate, k.bucket)
	case start.mode == startModeSnapshot:
		pp.toSnapshot = append(pp.toSnapshot, k.bucket)
	default:
		pp.toList = append(pp.toList, k.bucket)
	}
}

// listSnapshots finds the latest KV snapshot of the buckets that start from
// one; those without a snapshot yet read their changelog from the earliest
// offset.
func (in *input) listSnapshots(ctx context.Context, client planClient, info *fluss.TableInfo, pp *partitionPlan) error {
	if len(pp.toSnapshot) == 0 {
		return nil
	}
	snaps, err := client.LatestKVSnapshots(ctx, info, fluss.PartitionInfo{ID: pp.p.id, Name: pp.p.name})
	if err != nil {
		return fmt.Errorf("listing the KV snapshots of table %s%s: %w", in.tablePath(), partitionSuffix(pp.p.name), err)
	}
	latest := map[int32]fluss.KVSnapshot{}
	for _, s := range snaps {
		latest[s.Bucket.Bucket] = s
	}
	for _, b := range pp.toSnapshot {
		s, ok := latest[b]
		if !ok || s.SnapshotID == fluss.NoSnapshot {
			pp.toList = append(pp.toList, b) // listed as earliest
			continue
		}
		pp.planned[b].offset = 0
		pp.planned[b].snap = &checkpointSnapshot{ID: s.SnapshotID, LogOffset: s.LogOffset}
	}
	return nil
}

// knownPosition returns a bucket's position from the previous connection
// or from the checkpoint, or fromStart when it has none.
func (in *input) knownPosition(k bucketKey, loaded map[bucketKey]int64) (int64, positionSource) {
	if pos, _, ok := in.cp.resumePosition(k); ok {
		return pos, fromResume
	}
	if off, ok := loaded[k]; ok {
		return off, fromCheckpoint
	}
	return 0, fromStart
}

// listStartOffsets asks the cluster where the buckets that start by start
// mode (earliest, latest, timestamp) start.
func (in *input) listStartOffsets(ctx context.Context, client planClient, info *fluss.TableInfo, pp *partitionPlan, start startSpec) error {
	if len(pp.toList) == 0 {
		return nil
	}
	spec := fluss.EarliestOffset()
	switch start.mode {
	case startModeLatest:
		spec = fluss.LatestOffset()
	case startModeTimestamp:
		spec = fluss.OffsetAtTimestamp(start.ts)
	}
	offs, err := client.ListOffsets(ctx, info, pp.p.id, pp.toList, spec)
	if err != nil {
		return fmt.Errorf("listing the %s offsets of table %s%s: %w", spec, in.tablePath(), partitionSuffix(pp.p.name), err)
	}
	for _, b := range pp.toList {
		off, ok := offs[b]
		if !ok {
			return fmt.Errorf("listing the %s offsets of table %s%s: no offset for bucket %d", spec, in.tablePath(), partitionSuffix(pp.p.name), b)
		}
		pp.planned[b].offset = off
	}
	return nil
}

// validatePositions checks that known positions lie within their bucket's
// log, applying on_unresumable_offset to those that do not.
func (in *input) validatePositions(ctx context.Context, client planClient, info *fluss.TableInfo, pp *partitionPlan) error {
	if len(pp.toValidate) == 0 {
		return nil
	}
	earliest, err := client.ListOffsets(ctx, info, pp.p.id, pp.toValidate, fluss.EarliestOffset())
	if err != nil {
		return fmt.Errorf("listing the earliest offsets of table %s%s: %w", in.tablePath(), partitionSuffix(pp.p.name), err)
	}
	latest, err := client.ListOffsets(ctx, info, pp.p.id, pp.toValidate, fluss.LatestOffset())
	if err != nil {
		return fmt.Errorf("listing the latest offsets of table %s%s: %w", in.tablePath(), partitionSuffix(pp.p.name), err)
	}
	for _, b := range pp.toValidate {
		pb := pp.planned[b]
		if lo, hi := earliest[b], latest[b]; pb.offset < lo || pb.offset > hi {
			if err := in.outsideLog(pp, pb, lo, hi); err != nil {
				return err
			}
		}
	}
	return nil
}

// outsideLog handles a position outside its bucket's log [lo, hi]: an
// error with on_unresumable_offset: fail, otherwise a warning and a move to
// its start or end.
func (in *input) outsideLog(pp *partitionPlan, pb *plannedBucket, lo, hi int64) error {
	source := pp.sources[pb.key.bucket]
	what := map[positionSource]string{
		fromResume:     "read position",
		fromCheckpoint: fmt.Sprintf("checkpoint (cache key %q)", in.conf.checkpointKey),
		fromStart:      fiFieldStartOffset,
	}[source]
	msg := fmt.Sprintf("table %s%s bucket %d: the %s offset %d is outside the log, which holds offsets %d to %d",
		in.tablePath(), partitionSuffix(pp.p.name), pb.key.bucket, what, pb.offset, lo, hi)
	if in.conf.onUnresumable == unresumableFail {
		return fmt.Errorf("%s (rows expired, or the log was truncated); set %s to earliest or latest to continue", msg, fiFieldOnUnresumable)
	}
	target := lo
	if in.conf.onUnresumable == unresumableLatest {
		target = hi
	}
	in.log.Warnf("%s; continuing from %s offset %d (%s)", msg, in.conf.onUnresumable, target, fiFieldOnUnresumable)
	if source == fromResume {
		if target >= pb.offset {
			in.cp.skipTo(pb.key, target)
		} else {
			in.cp.reset(pb.key, pp.p.name, target)
		}
	}
	pb.offset = target
	return nil
}

// endOffsetsOf lists the end offsets of the planned buckets (end_at:
// latest): where the bounded run stops.
func (in *input) endOffsetsOf(ctx context.Context, client planClient, info *fluss.TableInfo, plan []plannedBucket) (map[bucketKey]int64, error) {
	ends := map[bucketKey]int64{}
	byPart := map[int64][]int32{}
	for _, pb := range plan {
		byPart[pb.key.partitionID] = append(byPart[pb.key.partitionID], pb.key.bucket)
	}
	for pid, bs := range byPart {
		offs, err := client.ListOffsets(ctx, info, pid, bs, fluss.LatestOffset())
		if err != nil {
			return nil, fmt.Errorf("listing the end offsets of table %s: %w", in.tablePath(), err)
		}
		for _, b := range bs {
			ends[bucketKey{partitionID: pid, bucket: b}] = offs[b]
		}
	}
	return ends, nil
}
