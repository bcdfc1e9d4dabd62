package flusscmd_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	_ "github.com/redpanda-data/benthos/v4/public/components/pure"

	"github.com/fluss-iggy/fluss-iggy/cmd/fluss-iggy/flusscmd"
	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/input/fluss"
)

func decode(t *testing.T, v string) *flussinput.Checkpoint {
	t.Helper()
	cp, err := flussinput.DecodeCheckpoint("k", []byte(v))
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

// TestLagLines: every bucket of the table gets a line in order, with null
// for what is unknown (no position stored; a bucket the table no longer
// has), and lag = latest - committed.
func TestLagLines(t *testing.T) {
	cp := decode(t, `{"version":1,"database":"d","table":"t","table_id":7,"buckets":[
		{"partition_id":3,"partition":"2026","bucket":0,"offset":10},
		{"partition_id":3,"partition":"2026","bucket":1,"offset":40},
		{"partition_id":9,"partition":"2024","bucket":0,"offset":5}]}`)
	bucket := func(pid int64, b int32) fluss.TableBucket {
		return fluss.TableBucket{TableID: 7, PartitionID: pid, Bucket: b}
	}
	ranges := []fluss.BucketRange{
		{Bucket: bucket(3, 0), Partition: "2026", Start: 0, End: 25},
		{Bucket: bucket(3, 1), Partition: "2026", Start: 0, End: 40},
		{Bucket: bucket(4, 0), Partition: "2027", Start: 0, End: 8},
	}
	var got strings.Builder
	var line []byte
	for _, l := range flusscmd.Lags(ranges, cp) {
		line = flusscmd.AppendLagLine(line[:0], l)
		got.Write(line)
	}
	want := `{"partition":"2026","bucket":0,"committed":10,"latest":25,"lag":15}
{"partition":"2026","bucket":1,"committed":40,"latest":40,"lag":0}
{"partition":"2027","bucket":0,"committed":null,"latest":8,"lag":null}
{"partition":"2024","bucket":0,"committed":5,"latest":null,"lag":null}
`
	if got.String() != want {
		t.Errorf("lines:\n%s\nwant:\n%s", got.String(), want)
	}
}

// TestReadCheckpointFromPipelineConfig: the cache comes from the
// cache_resources of a whole pipeline config (its input and output are
// not built), with environment variables interpolated; a missing label or
// key is an error naming what exists.
func TestReadCheckpointFromPipelineConfig(t *testing.T) {
	t.Setenv("FLUSSCMD_TEST_VALUE", `{"version":1}`)
	conf := `
input:
  fluss: { bootstrap_servers: [ "127.0.0.1:1" ], database: d, table: t, checkpoint_cache: ckpt }
output:
  drop: {}
cache_resources:
  - label: other
    memory: {}
  - label: ckpt
    memory:
      init_values:
        fluss_d_t: '${FLUSSCMD_TEST_VALUE}'
`
	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	key := flusscmd.DefaultCheckpointKey(fluss.TablePath{Database: "d", Table: "t"})
	val, err := flusscmd.ReadCheckpoint(ctx, []string{filepath.Join(filepath.Dir(path), "*.yaml")}, "ckpt", key)
	if err != nil || string(val) != `{"version":1}` {
		t.Errorf("ReadCheckpoint = %q, %v; want the init value", val, err)
	}
	if _, err := flusscmd.ReadCheckpoint(ctx, []string{path}, "nope", key); err == nil || !strings.Contains(err.Error(), "found: other, ckpt") {
		t.Errorf("unknown label: %v; want an error listing the labels", err)
	}
	if _, err := flusscmd.ReadCheckpoint(ctx, []string{path}, "ckpt", "fluss_x_y"); err == nil || !strings.Contains(err.Error(), `no checkpoint under key "fluss_x_y"`) {
		t.Errorf("missing key: %v; want an error naming the key", err)
	}
}

// TestCollectCheckpointPerBucket: the positions of a sharded input's
// per-bucket keys are shown with those of the whole value, the furthest of
// a bucket winning, as the input resumes.
func TestCollectCheckpointPerBucket(t *testing.T) {
	path := fluss.TablePath{Database: "d", Table: "t"}
	key := flusscmd.DefaultCheckpointKey(path)
	one := func(b, off int) string {
		return `{"version":1,"database":"d","table":"t","table_id":7,"buckets":[{"bucket":` + strconv.Itoa(b) + `,"offset":` + strconv.Itoa(off) + `}]}`
	}
	cache := map[string]string{
		key:               `{"version":1,"database":"d","table":"t","table_id":7,"buckets":[{"bucket":0,"offset":10},{"bucket":1,"offset":50}]}`,
		key + "_bucket_1": one(1, 20),
		key + "_bucket_2": one(2, 7),
	}
	get := func(_ context.Context, k string) ([]byte, error) {
		if v, ok := cache[k]; ok {
			return []byte(v), nil
		}
		return nil, nil
	}
	var ranges []fluss.BucketRange
	for b := range int32(3) {
		ranges = append(ranges, fluss.BucketRange{Bucket: fluss.TableBucket{TableID: 7, PartitionID: fluss.NoPartition, Bucket: b}, End: 100})
	}
	cp, err := flusscmd.CollectCheckpoint(context.Background(), path, key, ranges, get)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int32]int64{}
	for _, b := range cp.Buckets {
		got[b.Bucket] = b.Offset
	}
	if want := map[int32]int64{0: 10, 1: 50, 2: 7}; !maps.Equal(got, want) {
		t.Errorf("positions %v, want %v", got, want)
	}
	delete(cache, key)
	if cp, err = flusscmd.CollectCheckpoint(context.Background(), path, key, ranges, get); err != nil || len(cp.Buckets) != 2 {
		t.Fatalf("per-bucket keys only: %+v %v", cp, err)
	}
	clear(cache)
	if _, err := flusscmd.CollectCheckpoint(context.Background(), path, key, ranges, get); err == nil || !strings.Contains(err.Error(), `no checkpoint under key "fluss_d_t" or its per-bucket keys (fluss_d_t_bucket_0)`) {
		t.Fatalf("nothing stored: %v", err)
	}
}
