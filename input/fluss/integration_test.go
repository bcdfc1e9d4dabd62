package flussinput

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/jsonrow"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
	"github.com/fluss-iggy/fluss-iggy/internal/stop"
)

// Every Fluss type, read as JSON and as Arrow IPC, equals the Java client's
// scan of the same table.
func TestIntegrationAllTypesJSONAndArrow(t *testing.T) {
	boot, c := cluster(t)
	table := flusstest.UniqueName("alltypes")
	flusstest.RunJava(t, "create-table", testDB.name+"."+table, "--all-types", "--buckets", "2")
	java(t, "append", table, "--rows", "300", "--seed", "7", "--flush-every", "40")
	want := javaScan(t, table)
	if len(want) != 300 {
		t.Fatalf("java scan returned %d rows", len(want))
	}

	t.Run("json", func(t *testing.T) {
		var col collector
		runStream(t, streamRun{input: inputYAML(boot, table, "end_at: latest\nmax_batch_rows: 17\n"), consume: col.consume(t)})
		compareRows(t, col.snapshot(), want)
	})

	t.Run("arrow_ipc", func(t *testing.T) {
		col := collector{keep: true}
		runStream(t, streamRun{input: inputYAML(boot, table, "end_at: latest\npayload_format: arrow_ipc\n"), consume: col.consume(t)})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		info, err := c.Table(ctx, fluss.NewTablePath(testDB.name, table))
		if err != nil {
			t.Fatal(err)
		}
		got := decodeArrowMessages(t, info.Schema, col.batches, false)
		compareRows(t, got, want)
	})
}

// decodeArrowMessages decodes arrow_ipc messages into rows in the scan
// format, rendering them with the canonical JSON encoder.
func decodeArrowMessages(t *testing.T, schema *types.Schema, batches []service.MessageBatch, pk bool) []row {
	t.Helper()
	enc, err := jsonrow.NewSchemaEncoder(schema)
	if err != nil {
		t.Fatal(err)
	}
	var out []row
	for _, b := range batches {
		for _, m := range b {
			raw, _ := m.AsBytes()
			r, err := ipc.NewReader(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			first := meta(t, m, metaOffset).(int64)
			last := meta(t, m, metaLastOffset).(int64)
			n := int64(0)
			for r.Next() {
				rec := r.RecordBatch()
				var cts *array.String
				if pk {
					if rec.Schema().Field(0).Name != changeTypeColumn {
						t.Fatalf("first column %q", rec.Schema().Field(0).Name)
					}
					cts = rec.Column(0).(*array.String)
					cols := rec.Columns()[1:]
					fields := rec.Schema().Fields()[1:]
					rec = array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
					defer rec.Release()
				}
				if err := enc.Bind(rec); err != nil {
					t.Fatal(err)
				}
				for i := 0; i < int(rec.NumRows()); i++ {
					var rw row
					if p, ok := m.MetaGetMut(metaPartition); ok {
						s := p.(string)
						rw.Partition = &s
					}
					rw.Bucket = meta(t, m, metaBucket).(int64)
					rw.Offset = first + n
					rw.ChangeType = "+A"
					if cts != nil {
						rw.ChangeType = cts.Value(i)
					}
					rw.Row = enc.AppendRow(nil, i)
					out = append(out, rw)
					n++
				}
			}
			if r.Err() != nil {
				t.Fatal(r.Err())
			}
			r.Release()
			if first+n-1 != last {
				t.Errorf("message at offset %d: %d rows but fluss_last_offset %d", first, n, last)
			}
		}
	}
	return out
}

// logTable is a shared log table with 3 buckets and two appends: ids 0-149
// and, after tsBetween, ids 150-229.
var logTable struct {
	once      sync.Once
	name      string
	tsBetween int64
}

func sharedLogTable(t *testing.T) (string, *fluss.Client, string) {
	t.Helper()
	boot, c := cluster(t)
	logTable.once.Do(func() {
		logTable.name = createTable(t, c, "log", tableSpec{columns: "id BIGINT, name STRING, amount DOUBLE", buckets: 3})
		java(t, "append", logTable.name, "--rows", "150", "--seed", "1", "--flush-every", "25")
		time.Sleep(1100 * time.Millisecond)
		logTable.tsBetween = time.Now().UnixMilli()
		time.Sleep(1100 * time.Millisecond)
		java(t, "append", logTable.name, "--rows", "80", "--seed", "1", "--start", "150", "--flush-every", "20")
	})
	if logTable.name == "" {
		t.Fatal("shared log table setup failed")
	}
	return boot, c, logTable.name
}

func seq(from, to int64) []int64 {
	var out []int64
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

func TestIntegrationStartModes(t *testing.T) {
	boot, c, table := sharedLogTable(t)

	t.Run("earliest", func(t *testing.T) {
		var col collector
		runStream(t, streamRun{input: inputYAML(boot, table, "end_at: latest\n"), consume: col.consume(t)})
		if ids := idsOf(t, col.snapshot()); !slices.Equal(ids, seq(0, 230)) {
			t.Fatalf("ids %v", ids)
		}
	})

	t.Run("timestamp", func(t *testing.T) {
		var col collector
		runStream(t, streamRun{input: inputYAML(boot, table, fmt.Sprintf("end_at: latest\nstart_offset: timestamp\nstart_timestamp: %d\n", logTable.tsBetween)), consume: col.consume(t)})
		if ids := idsOf(t, col.snapshot()); !slices.Equal(ids, seq(150, 230)) {
			t.Fatalf("ids %v", ids)
		}
		// The same as RFC 3339.
		var col2 collector
		ts := time.UnixMilli(logTable.tsBetween).UTC().Format(time.RFC3339Nano)
		runStream(t, streamRun{input: inputYAML(boot, table, "end_at: latest\nstart_offset: timestamp\nstart_timestamp: \""+ts+"\"\n"), consume: col2.consume(t)})
		if ids := idsOf(t, col2.snapshot()); !slices.Equal(ids, seq(150, 230)) {
			t.Fatalf("ids %v", ids)
		}
	})

	t.Run("offset", func(t *testing.T) {
		latest := latestOffsets(t, c, table, fluss.NoPartition)
		var col collector
		runStream(t, streamRun{input: inputYAML(boot, table, "end_at: latest\nstart_offset: 20\n"), consume: col.consume(t)})
		rows := col.snapshot()
		want := 0
		for _, l := range latest {
			want += int(max(l-20, 0))
		}
		if len(rows) != want {
			t.Fatalf("%d rows, want %d (latest offsets %v)", len(rows), want, latest)
		}
		for _, r := range rows {
			if r.Offset < 20 {
				t.Fatalf("row at offset %d", r.Offset)
			}
		}
	})

	t.Run("latest", func(t *testing.T) {
		// A table of its own: rows are appended while the input runs.
		table := createTable(t, c, "latest", tableSpec{columns: "id BIGINT, name STRING", buckets: 2})
		java(t, "append", table, "--rows", "10")
		var col collector
		cacheYAML, dir := fileCache(t)
		var started atomic.Bool
		go func() {
			// The input writes its start positions as soon as it runs.
			for i := 0; i < 3000; i++ {
				if b, err := readRaw(dir, "fluss_"+testDB.name+"_"+table); err == nil && len(b) > 0 {
					java(t, "append", table, "--rows", "25", "--start", "1000")
					started.Store(true)
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
		runStream(t, streamRun{
			input: inputYAML(boot, table, "start_offset: latest\n"), cache: cacheYAML, consume: col.consume(t),
			until: func() bool { return col.count() >= 25 },
		})
		waitFor(t, "the appender", started.Load)
		if !started.Load() {
			t.Fatal("the input never wrote its start positions")
		}
		if ids := idsOf(t, col.snapshot()); !slices.Equal(ids, seq(1000, 1025)) {
			t.Fatalf("ids %v", ids)
		}
	})
}

func TestIntegrationProjection(t *testing.T) {
	boot, _, table := sharedLogTable(t)
	want := javaScan(t, table, "--columns", "amount,id")
	var col collector
	runStream(t, streamRun{input: inputYAML(boot, table, "end_at: latest\ncolumns: [ amount, id ]\n"), consume: col.consume(t)})
	rows := col.snapshot()
	compareRows(t, rows, want)
	if len(rows) > 0 && !strings.HasPrefix(string(rows[0].Row), `{"amount":`) {
		t.Errorf("column order: %s", rows[0].Row)
	}
}

func TestIntegrationShards(t *testing.T) {
	boot, c := cluster(t)
	// Rows hashed by id: without a bucket key the Java writer puts each batch
	// in one sticky bucket, and all 8 batches landed in one shard's buckets
	// once in CI.
	table := createTable(t, c, "shards", tableSpec{columns: "id BIGINT, name STRING", buckets: 5, bucketKeys: []string{"id"}})
	java(t, "append", table, "--rows", "400", "--flush-every", "50")
	var cols [2]collector
	var wg sync.WaitGroup
	for i := range cols {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runStream(t, streamRun{input: inputYAML(boot, table, fmt.Sprintf("end_at: latest\nshard: { index: %d, count: 2 }\n", i)), consume: cols[i].consume(t)})
		}()
	}
	wg.Wait()
	a, b := cols[0].snapshot(), cols[1].snapshot()
	if len(a) == 0 || len(b) == 0 {
		t.Fatalf("a shard read nothing: %d and %d rows", len(a), len(b))
	}
	buckets := [2]map[int64]bool{{}, {}}
	for i, rows := range [][]row{a, b} {
		for _, r := range rows {
			buckets[i][r.Bucket] = true
		}
	}
	for bk := range buckets[0] {
		if buckets[1][bk] {
			t.Errorf("bucket %d read by both shards", bk)
		}
	}
	if ids := idsOf(t, append(a, b...)); !slices.Equal(ids, seq(0, 400)) {
		t.Fatalf("shards together read ids %v", ids)
	}
}

func TestIntegrationPrimaryKeyChangelog(t *testing.T) {
	boot, c := cluster(t)
	table := createTable(t, c, "pk", tableSpec{columns: "id BIGINT, name STRING, amount DOUBLE", primaryKey: []string{"id"}, buckets: 2})
	java(t, "upsert", table, "--rows", "60", "--seed", "1")
	java(t, "upsert", table, "--rows", "20", "--seed", "2")
	java(t, "delete", table, "--rows", "10", "--start", "50")
	want := javaScan(t, table)
	kinds := map[string]int{}
	for _, r := range want {
		kinds[r.ChangeType]++
	}
	if kinds["+I"] != 60 || kinds["-U"] != 20 || kinds["+U"] != 20 || kinds["-D"] != 10 {
		t.Fatalf("java changelog %v", kinds)
	}

	t.Run("json", func(t *testing.T) {
		var col collector
		runStream(t, streamRun{input: inputYAML(boot, table, "end_at: latest\ntable_type: primary_key\n"), consume: col.consume(t)})
		compareRows(t, col.snapshot(), want)
	})
	t.Run("arrow_ipc", func(t *testing.T) {
		col := collector{keep: true}
		runStream(t, streamRun{input: inputYAML(boot, table, "end_at: latest\npayload_format: arrow_ipc\n"), consume: col.consume(t)})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		info, err := c.Table(ctx, fluss.NewTablePath(testDB.name, table))
		if err != nil {
			t.Fatal(err)
		}
		compareRows(t, decodeArrowMessages(t, info.Schema, col.batches, true), want)
	})
}

func TestIntegrationPartitionDiscovery(t *testing.T) {
	boot, c := cluster(t)
	table := createTable(t, c, "parts", tableSpec{columns: "id BIGINT, name STRING, p STRING", partition: []string{"p"}, buckets: 2, partitions: []string{"a", "b"}})
	java(t, "append", table, "--rows", "40")
	var (
		col   collector
		phase atomic.Int32
		mu    sync.Mutex
		want  map[string]row
	)
	go func() {
		for col.count() < 10 {
			time.Sleep(20 * time.Millisecond)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.CreatePartition(ctx, fluss.NewTablePath(testDB.name, table), map[string]string{"p": "c"}, false); err != nil {
			t.Errorf("creating partition c: %v", err)
			return
		}
		// Rows go to every partition, the new one included.
		java(t, "append", table, "--rows", "30", "--start", "100")
		w := javaScan(t, table)
		for k, r := range w {
			if *r.Partition == "b" {
				delete(w, k)
			}
		}
		mu.Lock()
		want = w
		mu.Unlock()
		phase.Store(1)
	}()
	runStream(t, streamRun{
		input: inputYAML(boot, table, "partition_discovery_interval: 1s\npartitions: [ a, c ]\n"), consume: col.consume(t),
		until: func() bool {
			if phase.Load() == 0 {
				return false
			}
			mu.Lock()
			defer mu.Unlock()
			seen := map[string]bool{}
			for _, r := range col.snapshot() {
				seen[r.key()] = true
			}
			for k := range want {
				if !seen[k] {
					return false
				}
			}
			return true
		},
	})
	got := col.snapshot()
	partitionsSeen := map[string]bool{}
	for _, r := range got {
		partitionsSeen[*r.Partition] = true
		var m map[string]any
		_ = json.Unmarshal(r.Row, &m)
		if m["p"] != *r.Partition {
			t.Errorf("row %s in partition %s", r.Row, *r.Partition)
		}
	}
	if !partitionsSeen["c"] || partitionsSeen["b"] {
		t.Errorf("partitions read: %v", partitionsSeen)
	}
	compareRows(t, got, want)
}

// readRaw reads a file-cache value.
func readRaw(dir, key string) ([]byte, error) {
	return os.ReadFile(dir + "/" + key)
}

// ---------------------------------------------------------------------------
// Acknowledgement semantics, with the input driven directly.

// connectInput builds and connects an input against the test cluster.
func connectInput(t *testing.T, boot, table, extra string, mgr *service.Resources) *input {
	t.Helper()
	pc, err := Spec().ParseYAML(strings.TrimPrefix(strings.ReplaceAll(inputYAML(boot, table, extra), "\n  ", "\n"), "fluss:\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	in, err := newInputFromParsed(pc, mgr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := in.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close(context.Background()) })
	return in
}

func readOne(t *testing.T, in *input) (service.MessageBatch, service.AckFunc) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, ack, err := in.ReadBatch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return b, ack
}

func TestIntegrationOutOfOrderAcks(t *testing.T) {
	boot, c := cluster(t)
	table := createTable(t, c, "acks", tableSpec{columns: "id BIGINT, name STRING", buckets: 1})
	java(t, "append", table, "--rows", "40")
	mgr := service.MockResources(service.MockResourcesOptAddCache("offs"))
	// ordering: none, so that four batches of the one bucket are out at once.
	in := connectInput(t, boot, table, "max_batch_rows: 10\nordering: none\n", mgr)
	key := "fluss_" + testDB.name + "_" + table
	var acks []service.AckFunc
	for i := 0; i < 4; i++ {
		b, ack := readOne(t, in)
		if len(b) != 10 || meta(t, b[0], metaOffset).(int64) != int64(10*i) {
			t.Fatalf("batch %d: %d rows from offset %v", i, len(b), meta(t, b[0], metaOffset))
		}
		acks = append(acks, ack)
	}
	ctx := context.Background()
	waitFor(t, "the start position", func() bool { return offsetOf(readCheckpoint(t, mgr, key), kb0) == 0 })
	_ = acks[3](ctx, nil)
	_ = acks[1](ctx, nil)
	time.Sleep(100 * time.Millisecond)
	if got := offsetOf(readCheckpoint(t, mgr, key), kb0); got != 0 {
		t.Fatalf("committed %d with batch 0 unacknowledged", got)
	}
	_ = acks[0](ctx, nil)
	waitFor(t, "offset 20", func() bool { return offsetOf(readCheckpoint(t, mgr, key), kb0) == 20 })
	time.Sleep(100 * time.Millisecond)
	if got := offsetOf(readCheckpoint(t, mgr, key), kb0); got != 20 {
		t.Fatalf("committed %d, want 20 (batch 2 unacknowledged)", got)
	}
	_ = acks[2](ctx, nil)
	waitFor(t, "offset 40", func() bool { return offsetOf(readCheckpoint(t, mgr, key), kb0) == 40 })
	v := readCheckpoint(t, mgr, key)
	info, _ := c.Table(ctx, fluss.NewTablePath(testDB.name, table))
	if v.TableID != info.TableID {
		t.Errorf("table id %d, want %d", v.TableID, info.TableID)
	}
}

// ordering: bucket (the default) hands out the next batch of a bucket only
// once the previous one is acknowledged, while another bucket's batch passes.
func TestIntegrationOrderingOneBatchPerBucket(t *testing.T) {
	boot, c := cluster(t)
	table := createTable(t, c, "ordered", tableSpec{columns: "id BIGINT, name STRING", buckets: 2, bucketKeys: []string{"id"}})
	java(t, "append", table, "--rows", "200")
	mgr := service.MockResources(service.MockResourcesOptAddCache("offs"))
	in := connectInput(t, boot, table, "max_batch_rows: 10\n", mgr)
	first, ack1 := readOne(t, in)
	second, ack2 := readOne(t, in)
	b1, b2 := meta(t, first[0], metaBucket), meta(t, second[0], metaBucket)
	if b1 == b2 {
		t.Fatalf("two batches of bucket %v out at once", b1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, _, err := in.ReadBatch(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a third batch with both buckets out: %v", err)
	}
	_ = ack2(context.Background(), nil)
	third, ack3 := readOne(t, in)
	if got := meta(t, third[0], metaBucket); got != b2 {
		t.Fatalf("after the ack of bucket %v, a batch of bucket %v", b2, got)
	}
	if got, want := meta(t, third[0], metaOffset), meta(t, second[len(second)-1], metaOffset).(int64)+1; got != want {
		t.Fatalf("bucket %v continues at offset %v, want %d", b2, got, want)
	}
	_ = ack1(context.Background(), nil)
	_ = ack3(context.Background(), nil)
}

// checkpoint_limit pauses reading until positions are written.
func TestIntegrationCheckpointLimitBackPressure(t *testing.T) {
	boot, c := cluster(t)
	table := createTable(t, c, "limit", tableSpec{columns: "id BIGINT, name STRING", buckets: 1})
	java(t, "append", table, "--rows", "30")
	mgr := service.MockResources(service.MockResourcesOptAddCache("offs"))
	in := connectInput(t, boot, table, "max_batch_rows: 10\ncheckpoint_limit: 2\nordering: none\n", mgr)
	_, ack1 := readOne(t, in)
	_, ack2 := readOne(t, in)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, _, err := in.ReadBatch(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("third batch with checkpoint_limit 2: %v", err)
	}
	_ = ack2(context.Background(), nil)
	_ = ack1(context.Background(), nil)
	b, _ := readOne(t, in)
	if meta(t, b[0], metaOffset).(int64) != 20 {
		t.Fatalf("third batch at %v", meta(t, b[0], metaOffset))
	}
}

// A nacked batch is delivered again (auto_replay_nacks: true), or skipped
// and committed past (false).
func TestIntegrationNacks(t *testing.T) {
	boot, c := cluster(t)
	table := createTable(t, c, "nacks", tableSpec{columns: "id BIGINT, name STRING", buckets: 1})
	java(t, "append", table, "--rows", "30")

	t.Run("replayed", func(t *testing.T) {
		var (
			col   collector
			calls atomic.Int32
		)
		consume := col.consume(t)
		runStream(t, streamRun{
			input: inputYAML(boot, table, "end_at: latest\nmax_batch_rows: 10\n"),
			consume: func(ctx context.Context, b service.MessageBatch) error {
				if calls.Add(1) == 1 {
					return errors.New("first batch rejected")
				}
				return consume(ctx, b)
			},
		})
		if ids := idsOf(t, col.snapshot()); !slices.Equal(ids, seq(0, 30)) {
			t.Fatalf("ids %v", ids)
		}
	})

	// The input builds a nacked batch again from its rows: what the
	// pipeline changed in place (as a mutation does) is not delivered again.
	for _, c := range []struct{ name, extra string }{
		{"replayed_unchanged", ""},
		{"replayed_unchanged_batched", "batching: { count: 15, processors: [ { mutation: 'root.batched = true' } ] }\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var (
				col   collector
				calls atomic.Int32
			)
			consume := col.consume(t)
			runStream(t, streamRun{
				input: inputYAML(boot, table, "end_at: latest\nmax_batch_rows: 10\npayload_format: structured\n"+c.extra),
				consume: func(ctx context.Context, b service.MessageBatch) error {
					if calls.Add(1) > 1 {
						return consume(ctx, b)
					}
					for _, m := range b {
						v, err := m.AsStructuredMut()
						if err != nil {
							return err
						}
						v.(map[string]any)["name"] = "changed"
						m.MetaSetMut(metaOffset, int64(-1))
					}
					return errors.New("first batch rejected")
				},
			})
			rows := col.snapshot()
			if ids := idsOf(t, rows); !slices.Equal(ids, seq(0, 30)) {
				t.Fatalf("ids %v", ids)
			}
			for _, r := range rows {
				var m map[string]any
				if err := json.Unmarshal(r.Row, &m); err != nil {
					t.Fatal(err)
				}
				id, _ := m["id"].(float64)
				if m["name"] == "changed" || r.Offset != int64(id) {
					t.Errorf("row %s at offset %d: delivered again as the pipeline left it", r.Row, r.Offset)
				}
				if c.extra != "" && m["batched"] != true {
					t.Errorf("row %s: the batching policy's processor did not run", r.Row)
				}
			}
		})
	}

	t.Run("skipped", func(t *testing.T) {
		var (
			col   collector
			calls atomic.Int32
		)
		cacheYAML, dir := fileCache(t)
		consume := col.consume(t)
		runStream(t, streamRun{
			input: inputYAML(boot, table, "end_at: latest\nmax_batch_rows: 10\nauto_replay_nacks: false\n"), cache: cacheYAML,
			consume: func(ctx context.Context, b service.MessageBatch) error {
				if calls.Add(1) == 1 {
					return errors.New("first batch rejected")
				}
				return consume(ctx, b)
			},
		})
		if ids := idsOf(t, col.snapshot()); !slices.Equal(ids, seq(10, 30)) {
			t.Fatalf("ids %v", ids)
		}
		if got := offsetOf(readFileCheckpoint(t, dir, "fluss_"+testDB.name+"_"+table), kb0); got != 30 {
			t.Fatalf("committed %d, want 30", got)
		}
	})
}

// A graceful stop writes every acknowledged position; the next run resumes
// right after it with no row lost or repeated.
func TestIntegrationGracefulStopAndResume(t *testing.T) {
	boot, c := cluster(t)
	table := createTable(t, c, "resume", tableSpec{columns: "id BIGINT, name STRING", buckets: 3})
	java(t, "append", table, "--rows", "600", "--flush-every", "30")
	cacheYAML, dir := fileCache(t)
	key := "fluss_" + testDB.name + "_" + table
	var first collector
	runStream(t, streamRun{input: inputYAML(boot, table, "max_batch_rows: 7\n"), cache: cacheYAML, consume: first.consume(t),
		until: func() bool { return first.count() >= 200 }})
	rows1 := first.snapshot()
	v := readFileCheckpoint(t, dir, key)
	for b := int64(0); b < 3; b++ {
		var n int64
		for _, r := range rows1 {
			if r.Bucket == b {
				n++
			}
		}
		if got := offsetOf(v, bucketKey{partitionID: fluss.NoPartition, bucket: int32(b)}); got != n {
			t.Errorf("bucket %d: committed %d after delivering %d rows", b, got, n)
		}
	}
	var second collector
	runStream(t, streamRun{input: inputYAML(boot, table, "end_at: latest\n"), cache: cacheYAML, consume: second.consume(t)})
	all := append(rows1, second.snapshot()...)
	if ids := idsOf(t, all); !slices.Equal(ids, seq(0, 600)) {
		t.Fatalf("ids over both runs: %d rows", len(ids))
	}
}

// Checkpoint errors at start-up name what is wrong, and are retried.
func TestIntegrationStartupErrors(t *testing.T) {
	boot, c, table := sharedLogTable(t)
	ctx := context.Background()
	info, err := c.Table(ctx, fluss.NewTablePath(testDB.name, table))
	if err != nil {
		t.Fatal(err)
	}
	connectErr := func(yaml string, mgr *service.Resources) error {
		t.Helper()
		pc, err := Spec().ParseYAML(yaml, nil)
		if err != nil {
			t.Fatal(err)
		}
		if mgr == nil {
			mgr = service.MockResources(service.MockResourcesOptAddCache("offs"))
		}
		in, err := newInputFromParsed(pc, mgr)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close(ctx)
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		return in.Connect(cctx)
	}
	base := func(db, tbl, extra string) string {
		return fmt.Sprintf("bootstrap_servers: [ %q ]\ndatabase: %s\ntable: %s\ncheckpoint_cache: offs\n%s", boot, db, tbl, extra)
	}
	// Table checks are permanent (TestIntegrationPermanentErrorsStopThePipeline);
	// an unresumable checkpoint is retried: it can be fixed meanwhile.
	stop.Reset()
	t.Cleanup(stop.Reset)
	withCheckpoint := func(value string) *service.Resources {
		mgr := service.MockResources(service.MockResourcesOptAddCache("offs"))
		_ = mgr.AccessCache(ctx, "offs", func(c service.Cache) { _ = c.Set(ctx, "k", []byte(value), nil) })
		return mgr
	}
	// Corrupt checkpoint.
	if err := connectErr(base(testDB.name, table, "checkpoint_key: k\n"), withCheckpoint("{oops")); err == nil || !strings.Contains(err.Error(), `cache key "k"`) {
		t.Errorf("corrupt checkpoint: %v", err)
	}
	// Another table id.
	other := fmt.Sprintf(`{"version":1,"table_id":%d,"buckets":[{"bucket":0,"offset":1}]}`, info.TableID+1000)
	if err := connectErr(base(testDB.name, table, "checkpoint_key: k\n"), withCheckpoint(other)); err == nil || !strings.Contains(err.Error(), "belongs to table id") {
		t.Errorf("table id change: %v", err)
	}
	// Beyond the log.
	beyond := fmt.Sprintf(`{"version":1,"table_id":%d,"buckets":[{"bucket":0,"offset":100000}]}`, info.TableID)
	if err := connectErr(base(testDB.name, table, "checkpoint_key: k\n"), withCheckpoint(beyond)); err == nil || !strings.Contains(err.Error(), "outside the log") {
		t.Errorf("offset beyond the log: %v", err)
	}
	if err := connectErr(base(testDB.name, table, "start_offset: 100000\n"), nil); err == nil || !strings.Contains(err.Error(), "outside the log") {
		t.Errorf("start_offset beyond the log: %v", err)
	}
	// With a policy they start.
	for _, policy := range []string{"earliest", "latest"} {
		for _, v := range []string{"{oops", other, beyond} {
			if err := connectErr(base(testDB.name, table, "checkpoint_key: k\non_unresumable_offset: "+policy+"\n"), withCheckpoint(v)); err != nil {
				t.Errorf("%s with %s: %v", v, policy, err)
			}
		}
	}
	if err := stop.Err(); err != nil {
		t.Errorf("a checkpoint error stopped the pipeline: %v", err)
	}
}

// An unresumable checkpoint with on_unresumable_offset: earliest reads the
// whole bucket; the other buckets resume.
func TestIntegrationUnresumablePolicyReads(t *testing.T) {
	boot, c, table := sharedLogTable(t)
	ctx := context.Background()
	info, _ := c.Table(ctx, fluss.NewTablePath(testDB.name, table))
	latest := latestOffsets(t, c, table, fluss.NoPartition)
	cacheYAML, dir := fileCache(t)
	key := "fluss_" + testDB.name + "_" + table
	value := fmt.Sprintf(`{"version":1,"table_id":%d,"buckets":[{"bucket":0,"offset":99999},{"bucket":1,"offset":%d},{"bucket":2,"offset":%d}]}`,
		info.TableID, latest[1], latest[2]-1)
	if err := os.WriteFile(dir+"/"+key, []byte(value), 0o644); err != nil {
		t.Fatal(err)
	}
	var col collector
	runStream(t, streamRun{input: inputYAML(boot, table, "end_at: latest\non_unresumable_offset: earliest\n"), cache: cacheYAML, consume: col.consume(t)})
	counts := map[int64]int64{}
	for _, r := range col.snapshot() {
		counts[r.Bucket]++
	}
	if counts[0] != latest[0] || counts[1] != 0 || counts[2] != 1 {
		t.Fatalf("rows per bucket %v, latest offsets %v", counts, latest)
	}
}

// ---------------------------------------------------------------------------
// Metrics, SASL, start-up retries.

// testMetrics is a metrics exporter that keeps the last value of every
// series, by "name{label values}" (for timers: the number of timings), and
// the smallest and largest timing of every timer series.
type testMetrics struct {
	mu      sync.Mutex
	values  map[string]int64
	timings map[string][2]int64 // min, max
}

type testSeries struct {
	m   *testMetrics
	key string
}

func (s testSeries) Incr(n int64) {
	s.m.mu.Lock()
	s.m.values[s.key] += n
	s.m.mu.Unlock()
}
func (s testSeries) Set(v int64) {
	s.m.mu.Lock()
	s.m.values[s.key] = v
	s.m.mu.Unlock()
}
func (s testSeries) Timing(d int64) {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	s.m.values[s.key]++
	if s.m.timings == nil {
		s.m.timings = map[string][2]int64{}
	}
	mm, ok := s.m.timings[s.key]
	if !ok {
		mm = [2]int64{d, d}
	}
	mm[0], mm[1] = min(mm[0], d), max(mm[1], d)
	s.m.timings[s.key] = mm
}

func (m *testMetrics) ctor(name string) func(lv ...string) testSeries {
	return func(lv ...string) testSeries {
		return testSeries{m: m, key: name + "{" + strings.Join(lv, ",") + "}"}
	}
}

func (m *testMetrics) NewCounterCtor(name string, _ ...string) service.MetricsExporterCounterCtor {
	f := m.ctor(name)
	return func(lv ...string) service.MetricsExporterCounter { return f(lv...) }
}
func (m *testMetrics) NewTimerCtor(name string, _ ...string) service.MetricsExporterTimerCtor {
	f := m.ctor(name)
	return func(lv ...string) service.MetricsExporterTimer { return f(lv...) }
}
func (m *testMetrics) NewGaugeCtor(name string, _ ...string) service.MetricsExporterGaugeCtor {
	f := m.ctor(name)
	return func(lv ...string) service.MetricsExporterGauge { return f(lv...) }
}
func (m *testMetrics) Close(context.Context) error { return nil }

// get returns the series of a metric whose label values end with the given
// ones (Benthos puts its label and path first).
func (m *testMetrics) get(name string, labels ...string) (int64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, v := range m.values {
		if strings.HasPrefix(k, name+"{") && strings.HasSuffix(k, ","+strings.Join(labels, ",")+"}") {
			return v, true
		}
	}
	return 0, false
}

func TestIntegrationMetrics(t *testing.T) {
	boot, c := cluster(t)
	table := createTable(t, c, "metrics", tableSpec{columns: "id BIGINT, name STRING", buckets: 2})
	java(t, "append", table, "--rows", "100")
	latest := latestOffsets(t, c, table, fluss.NoPartition)

	b, m := metricsStream(t, inputYAML(boot, table, ""))
	_ = b.SetLoggerYAML("level: warn")
	var n atomic.Int64
	_ = b.AddBatchConsumerFunc(func(_ context.Context, mb service.MessageBatch) error {
		n.Add(int64(len(mb)))
		return nil
	})
	s, errc, cancel := startStream(t, b)
	defer cancel()
	waitFor(t, "100 rows", func() bool { return n.Load() >= 100 })
	defer func() {
		if t.Failed() {
			m.mu.Lock()
			t.Logf("metrics: %v", m.values)
			m.mu.Unlock()
		}
	}()
	waitFor(t, "committed offsets and zero lag", func() bool {
		for bk, l := range latest {
			if v, ok := m.get(metricCommitted, "", strconv.Itoa(int(bk))); !ok || v != l {
				return false
			}
			if v, ok := m.get(metricLag, "", strconv.Itoa(int(bk))); !ok || v != 0 {
				return false
			}
		}
		return true
	})
	// The counters.
	if v, _ := m.get(metricRows, "root.input"); v != 100 {
		t.Errorf("%s = %d, want 100", metricRows, v)
	}
	if v, _ := m.get(metricBatches, "root.input"); v < 1 {
		t.Errorf("%s = %d", metricBatches, v)
	}
	if v, _ := m.get(metricBytes, "root.input"); v < 100*10 {
		t.Errorf("%s = %d", metricBytes, v)
	}
	// The fetch latency timer: one series per tablet server, every
	// timing a plausible round trip.
	m.mu.Lock()
	fetches := 0
	for k, n := range m.values {
		if !strings.HasPrefix(k, metricFetch+"{") {
			continue
		}
		fetches += int(n)
		mm := m.timings[k]
		if mm[0] <= 0 || mm[1] >= int64(30*time.Second) {
			t.Errorf("%s: timings in [%v, %v], want within (0, 30s)", k, time.Duration(mm[0]), time.Duration(mm[1]))
		}
		t.Logf("%s: %d timings in [%v, %v]", k, n, time.Duration(mm[0]), time.Duration(mm[1]))
		if _, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(k, metricFetch+"{,root.input,"), "}")); err != nil {
			t.Errorf("%s: want the labels of the input and a tablet server id", k)
		}
	}
	m.mu.Unlock()
	if fetches == 0 {
		t.Errorf("%s: no timing", metricFetch)
	}
	if err := s.StopWithin(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	<-errc
}

func TestIntegrationSASL(t *testing.T) {
	cl := flusstest.StartCluster(t, flusstest.Options{SASL: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := fluss.NewClient(ctx, fluss.Bootstrap(cl.Bootstrap), fluss.SASLPlain(cl.Username, cl.Password))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	db := flusstest.UniqueName("sasl")
	if err := c.CreateDatabase(ctx, db, nil, false); err != nil {
		t.Fatal(err)
	}
	path := fluss.NewTablePath(db, "t")
	schema := types.MustSchema([]types.Column{types.NewColumn("id", types.BigInt()), types.NewColumn("name", types.String())})
	if err := c.CreateTable(ctx, path, &types.TableDescriptor{Schema: *schema, BucketCount: 1}, false); err != nil {
		t.Fatal(err)
	}
	if err := waitLeaders(ctx, c, path); err != nil {
		t.Fatal(err)
	}
	cl.RunJava(t, "append", path.String(), "--rows", "20")
	in := func(password string) string {
		return fmt.Sprintf(`fluss:
  bootstrap_servers: [ %q ]
  database: %s
  table: t
  checkpoint_cache: offs
  end_at: latest
  sasl:
    mechanism: PLAIN
    username: %s
    password: %s
`, cl.Bootstrap, db, cl.Username, password)
	}
	var col collector
	runStream(t, streamRun{input: in(cl.Password), consume: col.consume(t)})
	if ids := idsOf(t, col.snapshot()); !slices.Equal(ids, seq(0, 20)) {
		t.Fatalf("ids %v", ids)
	}
	// A wrong password stops the pipeline with the reason.
	_, cancelled, err := connectOnce(t, strings.TrimPrefix(strings.ReplaceAll(in("wrong"), "\n  ", "\n"), "fluss:\n"))
	if err == nil || !strings.Contains(err.Error(), "AUTHENTICATE_EXCEPTION") || stop.Err() == nil || !cancelled {
		t.Fatalf("wrong password: %v (stopped: %v)", err, stop.Err())
	}
}

// A batching policy gathers units into larger batches; every row is still
// committed once acknowledged.
func TestIntegrationBatchingPolicy(t *testing.T) {
	boot, c := cluster(t)
	table := createTable(t, c, "batching", tableSpec{columns: "id BIGINT, name STRING", buckets: 2})
	java(t, "append", table, "--rows", "95")
	var (
		mu    sync.Mutex
		sizes []int
		col   collector
	)
	consume := col.consume(t)
	cacheYAML, dir := fileCache(t)
	runStream(t, streamRun{
		input: inputYAML(boot, table, "end_at: latest\nmax_batch_rows: 10\nbatching:\n  count: 25\n  period: 200ms\n"), cache: cacheYAML,
		consume: func(ctx context.Context, b service.MessageBatch) error {
			mu.Lock()
			sizes = append(sizes, len(b))
			mu.Unlock()
			return consume(ctx, b)
		},
	})
	if ids := idsOf(t, col.snapshot()); !slices.Equal(ids, seq(0, 95)) {
		t.Fatalf("ids %v", ids)
	}
	big := 0
	for _, n := range sizes {
		if n >= 25 {
			big++
		}
	}
	if big == 0 {
		t.Errorf("batch sizes %v: the policy never gathered 25 rows", sizes)
	}
	v := readFileCheckpoint(t, dir, "fluss_"+testDB.name+"_"+table)
	latest := latestOffsets(t, c, table, fluss.NoPartition)
	for b, l := range latest {
		if got := offsetOf(v, bucketKey{partitionID: fluss.NoPartition, bucket: b}); got != l {
			t.Errorf("bucket %d committed %d, want %d", b, got, l)
		}
	}
}
