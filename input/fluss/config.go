package fluss

import (
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// startMode says where a bucket without a checkpoint starts.
type startMode int

const (
	startModeEarliest startMode = iota
	startModeLatest
	startModeTimestamp
	startModeOffset
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

	columns   []string
	tableType string // "", tableTypeLog or tableTypePK

	startMode      startMode
	startOffset    int64 // startModeOffset
	startTimestamp int64 // startModeTimestamp, epoch ms
	onUnresumable  string
	endAtLatest    bool
	arrowPayload   bool

	partitions        []string // empty: all
	discoveryInterval time.Duration
	buckets           []int32 // empty: all
	shardIndex        int
	shardCount        int // 0: no sharding

	checkpointCache string
	checkpointKey   string
	checkpointLimit int
	batching        service.BatchPolicy

	fetchMaxBytes       int
	fetchMaxBucketBytes int
	fetchMaxWait        time.Duration
	maxBatchRows        int
}

// defaultMaxBatchRows is max_batch_rows for JSON payloads when unset.
const defaultMaxBatchRows = 1024

// parseConfig reads and validates the parsed YAML. Errors name the field.
// It does no I/O.
func parseConfig(pc *service.ParsedConfig) (*inputConfig, error) {
	c := &inputConfig{}
	var err error
	if c.bootstrap, err = pc.FieldStringList(fiFieldBootstrap); err != nil {
		return nil, err
	}
	c.bootstrap = slices.DeleteFunc(c.bootstrap, func(s string) bool { return strings.TrimSpace(s) == "" })
	if len(c.bootstrap) == 0 {
		return nil, fmt.Errorf("field %s: at least one address is required", fiFieldBootstrap)
	}
	for _, a := range c.bootstrap {
		if _, port, ok := strings.Cut(a, ":"); !ok || port == "" {
			return nil, fmt.Errorf("field %s: address %q is not host:port", fiFieldBootstrap, a)
		}
	}
	if c.database, err = pc.FieldString(fiFieldDatabase); err != nil {
		return nil, err
	}
	if c.table, err = pc.FieldString(fiFieldTable); err != nil {
		return nil, err
	}
	if c.database == "" {
		return nil, fmt.Errorf("field %s: must not be empty", fiFieldDatabase)
	}
	if c.table == "" {
		return nil, fmt.Errorf("field %s: must not be empty", fiFieldTable)
	}

	if pc.Contains(fiFieldSASL) {
		sc := pc.Namespace(fiFieldSASL)
		mech, err := sc.FieldString(fiFieldSASLMechanism)
		if err != nil {
			return nil, err
		}
		if !strings.EqualFold(mech, "PLAIN") {
			return nil, fmt.Errorf("field %s.%s: unsupported mechanism %q (Fluss supports PLAIN)", fiFieldSASL, fiFieldSASLMechanism, mech)
		}
		if c.saslUser, err = sc.FieldString(fiFieldSASLUsername); err != nil {
			return nil, err
		}
		if c.saslPassword, err = sc.FieldString(fiFieldSASLPassword); err != nil {
			return nil, err
		}
		if c.saslUser == "" {
			return nil, fmt.Errorf("field %s.%s: must not be empty", fiFieldSASL, fiFieldSASLUsername)
		}
		c.sasl = true
	}
	if c.connectTimeout, err = positiveDuration(pc, fiFieldConnectTimeout); err != nil {
		return nil, err
	}
	if c.requestTimeout, err = positiveDuration(pc, fiFieldRequestTimeout); err != nil {
		return nil, err
	}

	if c.columns, err = pc.FieldStringList(fiFieldColumns); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, col := range c.columns {
		if col == "" {
			return nil, fmt.Errorf("field %s: empty column name", fiFieldColumns)
		}
		if seen[col] {
			return nil, fmt.Errorf("field %s: column %q listed twice", fiFieldColumns, col)
		}
		seen[col] = true
	}
	if pc.Contains(fiFieldTableType) {
		if c.tableType, err = pc.FieldString(fiFieldTableType); err != nil {
			return nil, err
		}
		if c.tableType != tableTypeLog && c.tableType != tableTypePK {
			return nil, fmt.Errorf("field %s: %q is not %s or %s", fiFieldTableType, c.tableType, tableTypeLog, tableTypePK)
		}
	}

	start, err := pc.FieldString(fiFieldStartOffset)
	if err != nil {
		return nil, err
	}
	switch start = strings.TrimSpace(start); start {
	case startEarliest:
		c.startMode = startModeEarliest
	case startLatest:
		c.startMode = startModeLatest
	case startTimestamp:
		c.startMode = startModeTimestamp
		if !pc.Contains(fiFieldStartTimestamp) {
			return nil, fmt.Errorf("field %s: %s: timestamp needs field %s", fiFieldStartOffset, fiFieldStartOffset, fiFieldStartTimestamp)
		}
		ts, err := pc.FieldString(fiFieldStartTimestamp)
		if err != nil {
			return nil, err
		}
		if c.startTimestamp, err = parseTimestamp(ts); err != nil {
			return nil, fmt.Errorf("field %s: %w", fiFieldStartTimestamp, err)
		}
	default:
		n, err := strconv.ParseInt(start, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("field %s: %q is not earliest, latest, timestamp or a non-negative offset", fiFieldStartOffset, start)
		}
		c.startMode, c.startOffset = startModeOffset, n
	}
	if c.startMode != startModeTimestamp && pc.Contains(fiFieldStartTimestamp) {
		return nil, fmt.Errorf("field %s: only used with %s: timestamp (it is %s)", fiFieldStartTimestamp, fiFieldStartOffset, start)
	}

	if c.onUnresumable, err = pc.FieldString(fiFieldOnUnresumable); err != nil {
		return nil, err
	}
	switch c.onUnresumable {
	case unresumableFail, unresumableEarliest, unresumableLatest:
	default:
		return nil, fmt.Errorf("field %s: %q is not fail, earliest or latest", fiFieldOnUnresumable, c.onUnresumable)
	}
	endAt, err := pc.FieldString(fiFieldEndAt)
	if err != nil {
		return nil, err
	}
	switch endAt {
	case endAtNone:
	case endAtLatest:
		c.endAtLatest = true
	default:
		return nil, fmt.Errorf("field %s: %q is not none or latest", fiFieldEndAt, endAt)
	}
	format, err := pc.FieldString(fiFieldPayloadFormat)
	if err != nil {
		return nil, err
	}
	switch format {
	case formatJSON:
	case formatArrow:
		c.arrowPayload = true
	default:
		return nil, fmt.Errorf("field %s: %q is not json or arrow_ipc", fiFieldPayloadFormat, format)
	}

	if c.partitions, err = pc.FieldStringList(fiFieldPartitions); err != nil {
		return nil, err
	}
	for _, p := range c.partitions {
		if p == "" {
			return nil, fmt.Errorf("field %s: empty partition name", fiFieldPartitions)
		}
	}
	if c.discoveryInterval, err = pc.FieldDuration(fiFieldDiscoveryInterval); err != nil {
		return nil, err
	}
	if c.discoveryInterval < 0 {
		return nil, fmt.Errorf("field %s: must not be negative", fiFieldDiscoveryInterval)
	}
	bs, err := pc.FieldIntList(fiFieldBuckets)
	if err != nil {
		return nil, err
	}
	for _, b := range bs {
		if b < 0 || b > 1<<31-1 {
			return nil, fmt.Errorf("field %s: bucket %d is out of range", fiFieldBuckets, b)
		}
		if slices.Contains(c.buckets, int32(b)) {
			return nil, fmt.Errorf("field %s: bucket %d listed twice", fiFieldBuckets, b)
		}
		c.buckets = append(c.buckets, int32(b))
	}
	if pc.Contains(fiFieldShard) {
		if len(c.buckets) > 0 {
			return nil, fmt.Errorf("fields %s and %s: set one, not both", fiFieldBuckets, fiFieldShard)
		}
		sc := pc.Namespace(fiFieldShard)
		if c.shardIndex, err = sc.FieldInt(fiFieldShardIndex); err != nil {
			return nil, err
		}
		if c.shardCount, err = sc.FieldInt(fiFieldShardCount); err != nil {
			return nil, err
		}
		if c.shardCount < 1 {
			return nil, fmt.Errorf("field %s.%s: must be at least 1, got %d", fiFieldShard, fiFieldShardCount, c.shardCount)
		}
		if c.shardIndex < 0 || c.shardIndex >= c.shardCount {
			return nil, fmt.Errorf("field %s.%s: must be between 0 and %d (count - 1), got %d", fiFieldShard, fiFieldShardIndex, c.shardCount-1, c.shardIndex)
		}
	}

	if c.checkpointCache, err = pc.FieldString(fiFieldCheckpointCache); err != nil {
		return nil, err
	}
	if c.checkpointCache == "" {
		return nil, fmt.Errorf("field %s: must name a cache resource", fiFieldCheckpointCache)
	}
	if pc.Contains(fiFieldCheckpointKey) {
		if c.checkpointKey, err = pc.FieldString(fiFieldCheckpointKey); err != nil {
			return nil, err
		}
		if c.checkpointKey == "" {
			return nil, fmt.Errorf("field %s: must not be empty", fiFieldCheckpointKey)
		}
	} else {
		c.checkpointKey = c.defaultCheckpointKey()
	}
	if strings.Contains(c.checkpointKey, "/") {
		return nil, fmt.Errorf("field %s: %q must not contain '/'", fiFieldCheckpointKey, c.checkpointKey)
	}
	if c.checkpointLimit, err = pc.FieldInt(fiFieldCheckpointLimit); err != nil {
		return nil, err
	}
	if c.checkpointLimit < 1 {
		return nil, fmt.Errorf("field %s: must be at least 1, got %d", fiFieldCheckpointLimit, c.checkpointLimit)
	}
	if c.batching, err = pc.FieldBatchPolicy(fiFieldBatching); err != nil {
		return nil, err
	}

	if c.fetchMaxBytes, err = pc.FieldInt(fiFieldFetchMaxBytes); err != nil {
		return nil, err
	}
	if c.fetchMaxBytes < 1 {
		return nil, fmt.Errorf("field %s: must be positive, got %d", fiFieldFetchMaxBytes, c.fetchMaxBytes)
	}
	if c.fetchMaxBucketBytes, err = pc.FieldInt(fiFieldFetchMaxBucketByte); err != nil {
		return nil, err
	}
	if c.fetchMaxBucketBytes < 1 {
		return nil, fmt.Errorf("field %s: must be positive, got %d", fiFieldFetchMaxBucketByte, c.fetchMaxBucketBytes)
	}
	if c.fetchMaxWait, err = pc.FieldDuration(fiFieldFetchMaxWait); err != nil {
		return nil, err
	}
	if c.fetchMaxWait < 0 {
		return nil, fmt.Errorf("field %s: must not be negative", fiFieldFetchMaxWait)
	}
	switch {
	case pc.Contains(fiFieldMaxBatchRows):
		if c.maxBatchRows, err = pc.FieldInt(fiFieldMaxBatchRows); err != nil {
			return nil, err
		}
		if c.maxBatchRows < 0 {
			return nil, fmt.Errorf("field %s: must not be negative, got %d", fiFieldMaxBatchRows, c.maxBatchRows)
		}
	case c.arrowPayload:
		c.maxBatchRows = 0 // one message per record batch
	default:
		c.maxBatchRows = defaultMaxBatchRows
	}
	return c, nil
}

func positiveDuration(pc *service.ParsedConfig, field string) (time.Duration, error) {
	d, err := pc.FieldDuration(field)
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, fmt.Errorf("field %s: must be positive, got %s", field, d)
	}
	return d, nil
}

// parseTimestamp reads an RFC 3339 time or epoch milliseconds.
func parseTimestamp(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("empty timestamp")
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 {
			return 0, fmt.Errorf("timestamp %d is negative", n)
		}
		return n, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("%q is neither an RFC 3339 time nor milliseconds since the epoch", s)
	}
	if t.Before(time.Unix(0, 0)) {
		return 0, fmt.Errorf("timestamp %q is before 1970", s)
	}
	return t.UnixMilli(), nil
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
	if c.shardCount > 0 {
		fmt.Fprintf(&b, "_shard_%d_of_%d", c.shardIndex, c.shardCount)
	}
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
