package flussinput

import (
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/redpanda-data/benthos/v4/public/service"
)

// startMode says where a bucket without a checkpoint starts.
type startMode int

const (
	startModeEarliest startMode = iota
	startModeLatest
	startModeTimestamp
	startModeOffset
	startModeSnapshot
)

// inputConfig is the validated configuration of one fluss input.
type inputConfig struct {
	bootstrap      []string
	database       string
	table          string
	saslUser       string
	saslPassword   string
	sasl           bool
	connectTimeout time.Duration
	requestTimeout time.Duration
	waitForTable   bool // wait for a missing database or table

	columns   []string
	tableType string // "", tableTypeLog or tableTypePK

	startMode      startMode
	startOffset    int64 // startModeOffset
	startTimestamp int64 // startModeTimestamp, epoch ms
	onUnresumable  string
	endAtLatest    bool
	arrowPayload   bool
	structuredRows bool   // payload_format: structured
	arrowCodec     string // arrow_ipc_compression: compressionNone, compressionLZ4 or compressionZstd
	snapshotDir    string // snapshot_dir ("": the system's temporary directory)

	partitions        []string // empty: all
	discoveryInterval time.Duration
	buckets           []int32 // empty: all
	shardIndex        int
	shardCount        int // 0: no sharding

	checkpointCache string
	checkpointKey   string
	checkpointLimit int
	orderByBucket   bool // ordering: bucket
	replayNacks     bool // auto_replay_nacks
	batching        service.BatchPolicy

	fetchMaxBytes       int
	fetchMaxBucketBytes int
	fetchMaxWait        time.Duration
	maxBatchRows        int

	remote fluss.RemoteStorageOptions
}

// defaultMaxBatchRows is max_batch_rows for JSON payloads when unset.
const defaultMaxBatchRows = 1024

// parseConfig reads and validates the parsed YAML with the checks of the
// lint rules (checks.go), so that a config `lint` passes is one `run`
// accepts, and the messages, which name the field, are the same. It does
// no I/O.
func parseConfig(pc *service.ParsedConfig) (*inputConfig, error) {
	c := &inputConfig{}
	for _, step := range []func(*service.ParsedConfig) error{
		c.parseConnection, c.parseTable, c.parsePosition, c.parseSelection, c.parseCheckpointing, c.parseFetch, c.parseRemote,
	} {
		if err := step(pc); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// parseConnection reads the servers, the table's name, SASL and timeouts.
func (c *inputConfig) parseConnection(pc *service.ParsedConfig) error {
	addrs, err := pc.FieldStringList(fiFieldBootstrap)
	if err != nil {
		return err
	}
	if c.bootstrap, err = checkBootstrap(addrs); err != nil {
		return err
	}
	if c.database, err = nonEmpty(pc, fiFieldDatabase); err != nil {
		return err
	}
	if c.table, err = nonEmpty(pc, fiFieldTable); err != nil {
		return err
	}
	if c.waitForTable, err = boolField(pc, fiFieldWaitForTable); err != nil {
		return err
	}
	if pc.Contains(fiFieldSASL) {
		if err := c.parseSASL(pc); err != nil {
			return err
		}
	}
	if c.connectTimeout, err = durationField(pc, fiFieldConnectTimeout, false); err != nil {
		return err
	}
	c.requestTimeout, err = durationField(pc, fiFieldRequestTimeout, false)
	return err
}

// parseSASL reads the sasl object.
func (c *inputConfig) parseSASL(pc *service.ParsedConfig) error {
	mech, err := pc.FieldString(fiFieldSASL, fiFieldSASLMechanism)
	if err != nil {
		return err
	}
	if err := checkMechanism(mech); err != nil {
		return err
	}
	if c.saslUser, err = nonEmpty(pc, saslUsernamePath); err != nil {
		return err
	}
	if c.saslPassword, err = pc.FieldString(fiFieldSASL, fiFieldSASLPassword); err != nil {
		return err
	}
	c.sasl = true
	return nil
}

// parseTable reads the columns and the table type assertion.
func (c *inputConfig) parseTable(pc *service.ParsedConfig) error {
	var err error
	if c.columns, err = names(pc, fiFieldColumns, "column"); err != nil {
		return err
	}
	if pc.Contains(fiFieldTableType) {
		c.tableType, err = enumField(pc, fiFieldTableType, tableTypeLog, tableTypePK)
	}
	return err
}

// parsePosition reads where to start and stop and the payload format.
func (c *inputConfig) parsePosition(pc *service.ParsedConfig) error {
	if err := c.parseStart(pc); err != nil {
		return err
	}
	if c.startMode == startModeSnapshot && c.tableType == tableTypeLog {
		return errors.New(snapshotNeedsPK)
	}
	var err error
	if c.onUnresumable, err = enumField(pc, fiFieldOnUnresumable, unresumableFail, unresumableEarliest, unresumableLatest); err != nil {
		return err
	}
	endAt, err := enumField(pc, fiFieldEndAt, endAtNone, endAtLatest)
	if err != nil {
		return err
	}
	c.endAtLatest = endAt == endAtLatest
	format, err := enumField(pc, fiFieldPayloadFormat, formatJSON, formatStructured, formatArrow)
	if err != nil {
		return err
	}
	c.arrowPayload = format == formatArrow
	c.structuredRows = format == formatStructured
	c.arrowCodec, err = enumField(pc, fiFieldArrowCompression, compressionNone, compressionLZ4, compressionZstd)
	return err
}

// parseStart reads start_offset and start_timestamp.
func (c *inputConfig) parseStart(pc *service.ParsedConfig) error {
	raw, err := pc.FieldString(fiFieldStartOffset)
	if err != nil {
		return err
	}
	if c.startMode, c.startOffset, err = checkStartOffset(raw); err != nil {
		return err
	}
	hasTS := pc.Contains(fiFieldStartTimestamp)
	switch {
	case c.startMode == startModeTimestamp && !hasTS:
		return errors.New(timestampNeedsTimestamp)
	case c.startMode != startModeTimestamp && hasTS:
		return fmt.Errorf(timestampOnlyWith, strings.TrimSpace(raw))
	case hasTS:
		ts, err := pc.FieldString(fiFieldStartTimestamp)
		if err != nil {
			return err
		}
		c.startTimestamp, err = parseTimestamp(ts)
		return err
	}
	return nil
}

// parseSelection reads which partitions and buckets are read.
func (c *inputConfig) parseSelection(pc *service.ParsedConfig) error {
	var err error
	if c.partitions, err = names(pc, fiFieldPartitions, "partition"); err != nil {
		return err
	}
	if c.discoveryInterval, err = durationField(pc, fiFieldDiscoveryInterval, true); err != nil {
		return err
	}
	list, err := pc.FieldAny(fiFieldBuckets)
	if err != nil {
		return err
	}
	items, _ := list.([]any)
	if c.buckets, err = checkBuckets(items); err != nil {
		return err
	}
	if !pc.Contains(fiFieldShard) {
		return nil
	}
	if len(c.buckets) > 0 {
		return errors.New(bucketsAndShard)
	}
	return c.parseShard(pc)
}

// parseShard reads the shard object.
func (c *inputConfig) parseShard(pc *service.ParsedConfig) error {
	v, err := pc.FieldAny(fiFieldShard, fiFieldShardIndex)
	if err != nil {
		return err
	}
	index, err := shardIndexOf(v)
	if err != nil {
		return err
	}
	count, err := wholeNumber(pc, shardCountPath, 1, maxShardCount)
	if err != nil {
		return err
	}
	if err := checkShardIndex(index, count); err != nil {
		return err
	}
	c.shardIndex, c.shardCount = int(index), int(count)
	return nil
}

// parseCheckpointing reads the cache, key and in-flight limit.
func (c *inputConfig) parseCheckpointing(pc *service.ParsedConfig) error {
	var err error
	if c.checkpointCache, err = nonEmpty(pc, fiFieldCheckpointCache); err != nil {
		return err
	}
	c.checkpointKey = c.defaultCheckpointKey()
	if pc.Contains(fiFieldCheckpointKey) {
		if c.checkpointKey, err = pc.FieldString(fiFieldCheckpointKey); err != nil {
			return err
		}
		if err := checkCheckpointKey(c.checkpointKey); err != nil {
			return err
		}
	}
	limit, err := wholeNumber(pc, fiFieldCheckpointLimit, 1, maxCheckpointLimit)
	if err != nil {
		return err
	}
	c.checkpointLimit = int(limit)
	ordering, err := enumField(pc, fiFieldOrdering, orderingBucket, orderingNone)
	if err != nil {
		return err
	}
	c.orderByBucket = ordering == orderingBucket
	if c.replayNacks, err = boolField(pc, fiFieldAutoReplayNacks); err != nil {
		return err
	}
	c.batching, err = pc.FieldBatchPolicy(fiFieldBatching)
	return err
}

// parseFetch reads the fetch sizes and the batch size.
func (c *inputConfig) parseFetch(pc *service.ParsedConfig) error {
	n, err := wholeNumber(pc, fiFieldFetchMaxBytes, 1, maxInt32)
	if err != nil {
		return err
	}
	c.fetchMaxBytes = int(n)
	if n, err = wholeNumber(pc, fiFieldFetchMaxBucketByte, 1, maxInt32); err != nil {
		return err
	}
	c.fetchMaxBucketBytes = int(n)
	if c.fetchMaxWait, err = durationField(pc, fiFieldFetchMaxWait, true); err != nil {
		return err
	}
	switch {
	case pc.Contains(fiFieldMaxBatchRows):
		n, err = wholeNumber(pc, fiFieldMaxBatchRows, 0, maxInt32)
		c.maxBatchRows = int(n)
	case c.arrowPayload:
		c.maxBatchRows = 0 // one message per record batch
	default:
		c.maxBatchRows = defaultMaxBatchRows
	}
	return err
}

// defaultCheckpointKey derives the cache key from the table and the part of
// it this instance reads, so that instances reading different parts never
// overwrite each other's positions.
func (c *inputConfig) defaultCheckpointKey() string {
	var b strings.Builder
	b.WriteString("fluss_")
	b.WriteString(c.database)
	b.WriteByte('_')
	b.WriteString(c.table)
	if len(c.buckets) > 0 {
		bs := slices.Clone(c.buckets)
		slices.Sort(bs)
		b.WriteString("_buckets")
		for _, x := range bs {
			fmt.Fprintf(&b, "_%d", x)
		}
	}
	if len(c.partitions) > 0 {
		ps := slices.Clone(c.partitions)
		slices.Sort(ps)
		h := fnv.New32a()
		for _, p := range ps {
			h.Write([]byte(p))
			h.Write([]byte{0})
		}
		fmt.Fprintf(&b, "_partitions_%08x", h.Sum32())
	}
	return strings.ReplaceAll(b.String(), "/", "_")
}

// parseRemote reads remote_storage and snapshot_dir.
func (c *inputConfig) parseRemote(pc *service.ParsedConfig) (err error) {
	if c.snapshotDir, err = pc.FieldString(fiFieldSnapshotDir); err != nil {
		return err
	}
	s3 := pc.Namespace(fiFieldRemote, fiFieldRemoteS3)
	o := &c.remote.S3
	for _, f := range []struct {
		name string
		dst  *string
	}{
		{fiFieldS3Endpoint, &o.Endpoint}, {fiFieldS3Region, &o.Region}, {fiFieldS3AccessKey, &o.AccessKey},
		{fiFieldS3SecretKey, &o.SecretKey}, {fiFieldS3SessionToken, &o.SessionToken},
	} {
		if *f.dst, err = s3.FieldString(f.name); err != nil {
			return err
		}
	}
	if (o.AccessKey == "") != (o.SecretKey == "") {
		return errors.New(s3KeysTogether)
	}
	if o.PathStyle, err = s3.FieldBool(fiFieldS3PathStyle); err != nil {
		return err
	}
	n, err := wholeNumber(pc, readAheadPath, 1, maxInt32)
	c.remote.ReadAhead = int(n)
	return err
}
