package flusscmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/urfave/cli/v2"
	"gopkg.in/yaml.v3"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/jsonrow"
	"github.com/fluss-iggy/fluss-iggy/input/fluss"
)

const checkpointsDescription = `Reads the positions a fluss input committed to its checkpoint cache and prints one
JSON line per bucket of the table: the committed offset (the next row the pipeline
will read), the latest offset (the high watermark) and the lag between them:

  {"partition":null,"bucket":0,"committed":250,"latest":260,"lag":10}

A bucket without a committed position has "committed":null and "lag":null; a
position stored for a bucket the table no longer has (a dropped partition) has
"latest":null. Warnings (expired positions, a re-created table) and the total lag
go to stderr.

The cache is built from the cache_resources of the -r files (resource files such as
config/resources/bbolt.yaml, or whole pipeline configs: only cache_resources is read),
with environment variables interpolated as in 'run'. A bbolt file can be open in one
process only, so for a running pipeline use a shared cache (redis), or the
fluss_input_lag metric.

The key is the input's default checkpoint_key, fluss_<db>_<table>; a sharded input
(shard) keeps each bucket under <key>_bucket_<b> (<key>_p<partition id>_bucket_<b>),
which are read too, the furthest position of a bucket winning, as the input does.
An input with buckets, partitions or an explicit checkpoint_key uses another key:
give it with --key.`

// checkpointsCommand returns `fluss checkpoints`.
func checkpointsCommand(common []cli.Flag) *cli.Command {
	return &cli.Command{
		Name:        "checkpoints",
		Usage:       "Print a pipeline's committed offset, the latest offset and the lag of every bucket, from its checkpoint cache",
		ArgsUsage:   "DB.TABLE",
		Description: checkpointsDescription,
		Flags: append([]cli.Flag{
			&cli.StringSliceFlag{Name: "resources", Aliases: []string{"r"}, Usage: "YAML files (globs allowed) with the cache resource; only their cache_resources are read"},
			&cli.StringFlag{Name: "cache", Usage: "label of the checkpoint cache resource (the input's checkpoint_cache)"},
			&cli.StringFlag{Name: "key", Usage: "cache key of the checkpoint (default: fluss_<db>_<table>, the input's default checkpoint_key)"},
		}, common...),
		Action: runCheckpoints,
	}
}

// runCheckpoints is the action of `fluss checkpoints`.
func runCheckpoints(cc *cli.Context) error {
	path, err := tableArg(cc)
	if err != nil {
		return err
	}
	files, label := cc.StringSlice("resources"), cc.String("cache")
	if len(files) == 0 || label == "" {
		return cli.Exit("checkpoints needs -r FILE (the cache resource) and --cache LABEL (the input's checkpoint_cache)", 2)
	}
	key := cc.String("key")
	if key == "" {
		key = DefaultCheckpointKey(path)
	}
	cache, err := OpenCache(files, label)
	if err != nil {
		return cli.Exit("fluss: checkpoints: "+err.Error(), 1)
	}
	defer cache.Close()
	return withClient(cc, func(ctx context.Context, c *fluss.Client) error {
		w := bufio.NewWriter(cc.App.Writer)
		if err := Checkpoints(ctx, c, path, key, cache.Get, w, cc.App.ErrWriter); err != nil {
			return err
		}
		return w.Flush()
	})
}

// DefaultCheckpointKey is the checkpoint_key a fluss input reading the whole
// table uses when none is configured (with shard too, which adds a key per
// bucket: flussinput.BucketCheckpointKey).
func DefaultCheckpointKey(path fluss.TablePath) string {
	return strings.ReplaceAll("fluss_"+path.Database+"_"+path.Table, "/", "_")
}

// errNoCheckpoint reports a key the cache does not hold.
var errNoCheckpoint = errors.New("no checkpoint")

// Cache is a cache resource built from resource files, for reading
// checkpoints outside a pipeline.
type Cache struct {
	res     *service.Resources
	label   string
	closeFn func(context.Context) error
}

// OpenCache builds the cache resource labelled label from the
// cache_resources of the YAML files matching patterns. The cache's own log
// is discarded: its failures come back as errors (said once).
func OpenCache(patterns []string, label string) (*Cache, error) {
	conf, err := cacheResourceYAML(patterns, label)
	if err != nil {
		return nil, err
	}
	rb := service.NewResourceBuilder()
	rb.SetLogger(slog.New(slog.DiscardHandler))
	if err := rb.AddYAML(conf); err != nil {
		return nil, fmt.Errorf("cache %q: %w", label, err)
	}
	res, closeRes, err := rb.Build()
	if err != nil {
		return nil, fmt.Errorf("cache %q: %w", label, err)
	}
	return &Cache{res: res, label: label, closeFn: closeRes}, nil
}

// Get returns the value under key, or nil when the cache has none.
func (c *Cache) Get(ctx context.Context, key string) ([]byte, error) {
	var val []byte
	var getErr error
	if err := c.res.AccessCache(ctx, c.label, func(cc service.Cache) { val, getErr = cc.Get(ctx, key) }); err != nil {
		return nil, fmt.Errorf("cache %q: %w", c.label, err)
	}
	if errors.Is(getErr, service.ErrKeyNotFound) {
		return nil, nil
	}
	if getErr != nil {
		return nil, fmt.Errorf("reading key %q from cache %q: %w", key, c.label, getErr)
	}
	if val == nil {
		val = []byte{}
	}
	return val, nil
}

// Close closes the cache resource.
func (c *Cache) Close() {
	cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = c.closeFn(cctx)
}

// ReadCheckpoint returns the value under key in the cache resource labelled
// label of the YAML files matching patterns (see OpenCache); a missing key
// is an error.
func ReadCheckpoint(ctx context.Context, patterns []string, label, key string) ([]byte, error) {
	c, err := OpenCache(patterns, label)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	val, err := c.Get(ctx, key)
	if err == nil && val == nil {
		err = fmt.Errorf("%w under key %q in cache %q: has a pipeline read the table with this cache yet? (an input with buckets, partitions or checkpoint_key uses another key: give it with --key)", errNoCheckpoint, key, label)
	}
	return val, err
}

// cacheResourceYAML returns a resources document holding only the cache
// resource labelled label, found in the cache_resources of the files
// matching patterns.
func cacheResourceYAML(patterns []string, label string) (string, error) {
	var (
		found  *yaml.Node
		from   string
		labels []string
	)
	for _, file := range expandGlobs(patterns) {
		items, err := cacheResources(file)
		if err != nil {
			return "", err
		}
		for _, item := range items {
			labels = append(labels, item.label)
			if item.label != label {
				continue
			}
			if found != nil {
				return "", fmt.Errorf("cache resource %q is defined in both %s and %s", label, from, file)
			}
			found, from = item.node, file
		}
	}
	if found == nil {
		return "", fmt.Errorf("no cache resource labelled %q in %s (found: %s)", label, strings.Join(patterns, ", "), orNone(labels))
	}
	b, err := yaml.Marshal(map[string]any{"cache_resources": []*yaml.Node{found}})
	if err != nil {
		return "", fmt.Errorf("cache resource %q of %s: %w", label, from, err)
	}
	return string(b), nil
}

// expandGlobs returns the files matching each pattern; a pattern that
// matches nothing is kept, so that reading it names the missing file.
func expandGlobs(patterns []string) []string {
	var files []string
	for _, p := range patterns {
		m, err := filepath.Glob(p)
		if err != nil || len(m) == 0 {
			m = []string{p}
		}
		files = append(files, m...)
	}
	return files
}

// labelledNode is an item of cache_resources.
type labelledNode struct {
	label string
	node  *yaml.Node
}

// cacheResources returns the cache_resources items of a YAML file.
func cacheResources(file string) ([]labelledNode, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var doc struct {
		CacheResources []yaml.Node `yaml:"cache_resources"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	out := make([]labelledNode, 0, len(doc.CacheResources))
	for i := range doc.CacheResources {
		var item struct {
			Label string `yaml:"label"`
		}
		if err := doc.CacheResources[i].Decode(&item); err != nil {
			return nil, fmt.Errorf("%s: cache_resources[%d]: %w", file, i, err)
		}
		out = append(out, labelledNode{item.Label, &doc.CacheResources[i]})
	}
	return out, nil
}

func orNone(labels []string) string {
	if len(labels) == 0 {
		return "none"
	}
	return strings.Join(labels, ", ")
}

// BucketLag is one line of `fluss checkpoints`.
type BucketLag struct {
	// Partition is the partition name ("" for tables without partitions).
	Partition   string
	PartitionID int64 // fluss.NoPartition for tables without partitions
	Bucket      int32
	// Committed is the next offset the pipeline reads (nil: no position
	// stored for the bucket).
	Committed *int64
	// Earliest and Latest are the bucket's offsets now (nil: the table has
	// no such bucket any more).
	Earliest, Latest *int64
}

// Lag returns Latest - Committed, or false when either is unknown.
func (b BucketLag) Lag() (int64, bool) {
	if b.Committed == nil || b.Latest == nil {
		return 0, false
	}
	return *b.Latest - *b.Committed, true
}

type bucketID struct {
	partitionID int64
	bucket      int32
}

// Lags pairs the buckets of a table (ranges, from BucketRanges) with the
// positions of a checkpoint: every bucket of the table in order, then the
// stored positions of buckets the table no longer has.
func Lags(ranges []fluss.BucketRange, cp *flussinput.Checkpoint) []BucketLag {
	stored := make(map[bucketID]int, len(cp.Buckets))
	for i, b := range cp.Buckets {
		pid := fluss.NoPartition
		if b.PartitionID != nil {
			pid = *b.PartitionID
		}
		stored[bucketID{pid, b.Bucket}] = i
	}
	out := make([]BucketLag, 0, len(ranges))
	for _, r := range ranges {
		l := BucketLag{Partition: r.Partition, PartitionID: r.Bucket.PartitionID, Bucket: r.Bucket.Bucket, Earliest: ptr(r.Start), Latest: ptr(r.End)}
		id := bucketID{r.Bucket.PartitionID, r.Bucket.Bucket}
		if i, ok := stored[id]; ok {
			l.Committed = ptr(cp.Buckets[i].Offset)
			delete(stored, id)
		}
		out = append(out, l)
	}
	for _, b := range cp.Buckets { // in the stored order: by partition id, bucket
		pid := fluss.NoPartition
		if b.PartitionID != nil {
			pid = *b.PartitionID
		}
		if _, ok := stored[bucketID{pid, b.Bucket}]; ok {
			out = append(out, BucketLag{Partition: b.Partition, PartitionID: pid, Bucket: b.Bucket, Committed: ptr(b.Offset)})
		}
	}
	return out
}

func ptr(v int64) *int64 { return &v }

// GetFunc reads a cache key: nil when absent.
type GetFunc func(ctx context.Context, key string) ([]byte, error)

// Checkpoints writes one line per bucket of path with its committed
// position: {"partition":…,"bucket":…,"committed":…,"latest":…,"lag":…},
// and on note the warnings about positions the input cannot resume from and
// the total lag. The positions are those under key and under each bucket's
// own key (a sharded input's), the furthest of a bucket winning, as the
// input resumes.
func Checkpoints(ctx context.Context, c *fluss.Client, path fluss.TablePath, key string, get GetFunc, w, note io.Writer) error {
	info, err := c.RefreshTable(ctx, path)
	if err != nil {
		return err
	}
	ranges, err := c.BucketRanges(ctx, info, "")
	if err != nil {
		return err
	}
	cp, err := collectCheckpoint(ctx, path, key, ranges, get)
	if err != nil {
		return err
	}
	lags := Lags(ranges, cp)
	var line []byte
	for _, l := range lags {
		line = appendLagLine(line[:0], l)
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	if cp.TableID != info.TableID {
		fmt.Fprintf(note, "fluss: warning: the checkpoint is of table id %d but %s now has id %d (dropped and created again): the input does not resume from it (see on_unresumable_offset)\n", cp.TableID, path, info.TableID)
	}
	for _, l := range lags {
		if msg := lagWarning(l); msg != "" {
			fmt.Fprintf(note, "fluss: warning: %s: %s\n", describeLag(l), msg)
		}
	}
	_, err = fmt.Fprintln(note, lagSummary(path, key, lags))
	return err
}

// collectCheckpoint reads the value under key and the per-bucket keys of
// every bucket in ranges into one checkpoint.
func collectCheckpoint(ctx context.Context, path fluss.TablePath, key string, ranges []fluss.BucketRange, get GetFunc) (*flussinput.Checkpoint, error) {
	var cp *flussinput.Checkpoint
	add := func(k string) error {
		raw, err := get(ctx, k)
		if err != nil || raw == nil {
			return err
		}
		v, err := flussinput.DecodeCheckpoint(k, raw)
		if err != nil {
			return err
		}
		if v.Database != path.Database || v.Table != path.Table {
			return fmt.Errorf("key %q holds the checkpoint of %s.%s, not of %s", k, v.Database, v.Table, path)
		}
		cp = flussinput.MergeCheckpoints(cp, v)
		return nil
	}
	if err := add(key); err != nil {
		return nil, err
	}
	for _, r := range ranges {
		if err := add(flussinput.BucketCheckpointKey(key, r.Bucket.PartitionID, r.Bucket.Bucket)); err != nil {
			return nil, err
		}
	}
	if cp == nil {
		return nil, fmt.Errorf("%w under key %q or its per-bucket keys (%s): has a pipeline read the table with this cache yet? (an input with buckets, partitions or checkpoint_key uses another key: give it with --key)",
			errNoCheckpoint, key, flussinput.BucketCheckpointKey(key, fluss.NoPartition, 0))
	}
	return cp, nil
}

// lagWarning says why the input cannot resume a bucket from its position
// as printed, or returns "".
func lagWarning(l BucketLag) string {
	switch {
	case l.Committed == nil:
		return ""
	case l.Latest == nil:
		return "a position is stored for it, but the table has no such bucket now (dropped partition)"
	case *l.Committed < *l.Earliest:
		return fmt.Sprintf("committed offset %d is below the earliest stored offset %d (those rows expired): the input does not resume from it (see on_unresumable_offset)", *l.Committed, *l.Earliest)
	case *l.Committed > *l.Latest:
		return fmt.Sprintf("committed offset %d is beyond the latest offset %d: the input does not resume from it (see on_unresumable_offset)", *l.Committed, *l.Latest)
	}
	return ""
}

// lagSummary is the last line on note: the total lag and the buckets
// without a position.
func lagSummary(path fluss.TablePath, key string, lags []BucketLag) string {
	var total int64
	missing := 0
	for _, l := range lags {
		if n, ok := l.Lag(); ok {
			total += n
		} else if l.Committed == nil {
			missing++
		}
	}
	s := fmt.Sprintf("fluss: %s, checkpoint key %q: %d buckets, total lag %d rows", path, key, len(lags), total)
	if missing > 0 {
		s += fmt.Sprintf("; %d buckets have no committed position (not started yet, or read by an instance with another key)", missing)
	}
	return s
}

func describeLag(l BucketLag) string {
	if l.PartitionID == fluss.NoPartition {
		return "bucket " + strconv.Itoa(int(l.Bucket))
	}
	return "partition " + l.Partition + " bucket " + strconv.Itoa(int(l.Bucket))
}

// appendLagLine appends the JSON line of l, with its newline.
func appendLagLine(dst []byte, l BucketLag) []byte {
	dst = append(dst, `{"partition":`...)
	if l.PartitionID == fluss.NoPartition {
		dst = append(dst, "null"...)
	} else {
		dst = jsonrow.AppendString(dst, l.Partition)
	}
	dst = append(dst, `,"bucket":`...)
	dst = strconv.AppendInt(dst, int64(l.Bucket), 10)
	dst = appendOptInt(append(dst, `,"committed":`...), l.Committed)
	dst = appendOptInt(append(dst, `,"latest":`...), l.Latest)
	dst = append(dst, `,"lag":`...)
	if n, ok := l.Lag(); ok {
		dst = strconv.AppendInt(dst, n, 10)
	} else {
		dst = append(dst, "null"...)
	}
	return append(dst, "}\n"...)
}

func appendOptInt(dst []byte, v *int64) []byte {
	if v == nil {
		return append(dst, "null"...)
	}
	return strconv.AppendInt(dst, *v, 10)
}
