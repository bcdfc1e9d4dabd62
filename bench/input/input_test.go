package input_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	_ "github.com/redpanda-data/benthos/v4/public/components/io"
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"

	"github.com/fluss-iggy/fluss-iggy/bench/benchtable"
	"github.com/fluss-iggy/fluss-iggy/fluss"
	_ "github.com/fluss-iggy/fluss-iggy/input/fluss"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

const (
	envChild = "FLUSS_INPUT_BENCH_CHILD" // the mode a child process runs
	envTable = "FLUSS_BENCH_TABLE"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(envChild); mode != "" {
		os.Exit(child(mode))
	}
	flusstest.Main(m)
}

// result is what a child measured.
type result struct {
	Rows      int64   `json:"rows"`
	Seconds   float64 `json:"seconds"`
	PeakRSSKB int64   `json:"peak_rss_kb"` // VmHWM
}

func child(mode string) int {
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "%s child: %v\n", mode, err)
		return 1
	}
	path, err := fluss.ParseTablePath(os.Getenv(envTable))
	if err != nil {
		return fail(err)
	}
	boot := os.Getenv(flusstest.EnvBootstrap)
	if p := os.Getenv("FLUSS_INPUT_BENCH_CPUPROFILE"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			return fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return fail(err)
		}
		defer pprof.StopCPUProfile()
	}
	var r result
	switch mode {
	case "raw":
		r, err = rawScan(boot, path)
	case "json", "arrow_ipc":
		r, err = inputToDrop(boot, path, mode)
	case "floor":
		r, err = floor()
	default:
		err = fmt.Errorf("unknown mode %q", mode)
	}
	if err != nil {
		return fail(err)
	}
	r.PeakRSSKB = benchtable.PeakRSSKB()
	out, _ := json.Marshal(r)
	fmt.Println(string(out))
	return 0
}

// rawScan reads every bucket from its earliest offset to the high watermark
// seen at the start with the client's Scanner, counting rows.
func rawScan(boot string, path fluss.TablePath) (result, error) {
	ctx := context.Background()
	c, err := fluss.NewClient(ctx, fluss.Bootstrap(boot))
	if err != nil {
		return result{}, err
	}
	defer c.Close()
	info, err := c.RefreshTable(ctx, path)
	if err != nil {
		return result{}, err
	}
	ranges, err := c.BucketRanges(ctx, info, "")
	if err != nil {
		return result{}, err
	}
	s, err := c.NewScanner(info)
	if err != nil {
		return result{}, err
	}
	defer s.Close()
	start := time.Now()
	ends := map[int32]int64{}
	for _, r := range ranges {
		if r.End > r.Start {
			ends[r.Bucket.Bucket] = r.End
			if err := s.Subscribe(ctx, fluss.NoPartition, r.Bucket.Bucket, fluss.ExactOffset(r.Start)); err != nil {
				return result{}, err
			}
		}
	}
	var rows int64
	for len(ends) > 0 {
		bs, err := s.Poll(ctx)
		for _, b := range bs {
			if end, ok := ends[b.Bucket.Bucket]; ok {
				n := int64(b.NumRows())
				if b.FirstOffset+n > end {
					n = max(end-b.FirstOffset, 0)
				}
				rows += n
				if b.FirstOffset+int64(b.NumRows()) >= end {
					s.Unsubscribe(fluss.NoPartition, b.Bucket.Bucket)
					delete(ends, b.Bucket.Bucket)
				}
			}
			b.Release()
		}
		if err != nil {
			return result{}, err
		}
	}
	return result{Rows: rows, Seconds: time.Since(start).Seconds()}, nil
}

// inputToDrop runs fluss (end_at: latest) -> drop and counts the rows the
// input committed.
func inputToDrop(boot string, path fluss.TablePath, format string) (result, error) {
	b := service.NewStreamBuilder()
	if err := b.SetLoggerYAML("level: warn"); err != nil {
		return result{}, err
	}
	dir, err := os.MkdirTemp("", "inbench")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	if err := b.AddCacheYAML("label: offs\nfile:\n  directory: " + dir + "\n"); err != nil {
		return result{}, err
	}
	if err := b.AddInputYAML(fmt.Sprintf(`fluss:
  bootstrap_servers: [ %q ]
  database: %s
  table: %s
  checkpoint_cache: offs
  checkpoint_key: bench
  payload_format: %s
  end_at: latest
`, boot, path.Database, path.Table, format)); err != nil {
		return result{}, err
	}
	if err := b.AddOutputYAML("drop: {}"); err != nil {
		return result{}, err
	}
	s, err := b.Build()
	if err != nil {
		return result{}, err
	}
	start := time.Now()
	if err := s.Run(context.Background()); err != nil {
		return result{}, err
	}
	secs := time.Since(start).Seconds()
	// The rows committed: the sum of the positions written on shutdown.
	value, err := os.ReadFile(dir + "/bench")
	if err != nil {
		return result{}, fmt.Errorf("reading the checkpoint: %w", err)
	}
	var cp struct {
		Buckets []struct {
			Offset int64 `json:"offset"`
		} `json:"buckets"`
	}
	if err := json.Unmarshal(value, &cp); err != nil {
		return result{}, err
	}
	var rows int64
	for _, b := range cp.Buckets {
		rows += b.Offset
	}
	return result{Rows: rows, Seconds: secs}, nil
}

// repeat is the number of rounds (FLUSS_BENCH_REPEAT, default 3).
func repeat() int {
	if n, err := strconv.Atoi(os.Getenv("FLUSS_BENCH_REPEAT")); err == nil && n > 0 {
		return n
	}
	return 3
}

// floorInput hands out batches of messages shaped like the json payload
// (a ~200-byte object and the eight metadata keys of a row of a table
// without partitions), built by a goroutine as the fluss input's worker
// builds them, without reading or encoding anything: the ceiling of the
// input's design, set by what Benthos itself costs per message.
//
// The input builds such messages key by key, as here: copying a per-batch
// template message instead (what it does for partitioned tables, whose ten
// keys overflow a small Go map) costs more with eight keys (9 allocations
// per message instead of 6; see BenchmarkMessageMeta in input/fluss).
type floorInput struct {
	rows    int
	payload []byte
	ch      chan service.MessageBatch
}

func (f *floorInput) Connect(context.Context) error {
	if f.ch != nil {
		return nil
	}
	f.ch = make(chan service.MessageBatch, 16)
	go func() {
		defer close(f.ch)
		for left := f.rows; left > 0; {
			n := min(1024, left)
			left -= n
			batch := make(service.MessageBatch, n)
			for i := range batch {
				m := service.NewMessage(f.payload)
				m.MetaSetMut("fluss_database", "db")
				m.MetaSetMut("fluss_table", "t")
				m.MetaSetMut("fluss_table_id", int64(7))
				m.MetaSetMut("fluss_bucket", int64(1))
				m.MetaSetMut("fluss_timestamp", int64(1767225600000))
				m.MetaSetMut("fluss_schema_id", int64(1))
				m.MetaSetMut("fluss_offset", int64(left+i))
				batch[i] = m
			}
			f.ch <- batch
		}
	}()
	return nil
}

func (f *floorInput) Close(context.Context) error { return nil }

func (f *floorInput) ReadBatch(ctx context.Context) (service.MessageBatch, service.AckFunc, error) {
	select {
	case b, ok := <-f.ch:
		if !ok {
			return nil, nil, service.ErrEndOfInput
		}
		return b, func(context.Context, error) error { return nil }, nil
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
}

// floor runs floorInput (with the auto-replay wrapper the fluss input uses)
// into drop for as many messages as the table has rows.
func floor() (result, error) {
	env := service.NewEnvironment()
	spec := service.NewConfigSpec().Field(service.NewAutoRetryNacksToggleField())
	rows := benchtable.Rows()
	if err := env.RegisterBatchInput("floor", spec, func(pc *service.ParsedConfig, _ *service.Resources) (service.BatchInput, error) {
		payload := []byte(`{"id":1234567,"ts":"2026-01-01T10:00:00.123","user_name":"user_abcdefgh","category":"garden","price":"12345.67","quantity":42,"score":12.3456789,"active":true,"day":"2022-01-01","note":"abcdefghijklmnopqrstuvwxyz0123456789"}`)
		return service.AutoRetryNacksBatchedToggled(pc, &floorInput{rows: rows, payload: payload})
	}); err != nil {
		return result{}, err
	}
	b := env.NewStreamBuilder()
	_ = b.SetLoggerYAML("level: warn")
	if err := b.AddInputYAML("floor: {}"); err != nil {
		return result{}, err
	}
	if err := b.AddOutputYAML("drop: {}"); err != nil {
		return result{}, err
	}
	s, err := b.Build()
	if err != nil {
		return result{}, err
	}
	start := time.Now()
	if err := s.Run(context.Background()); err != nil {
		return result{}, err
	}
	return result{Rows: int64(rows), Seconds: time.Since(start).Seconds()}, nil
}

// createTable creates and fills the benchmark table (bench/benchtable) in a
// database of its own; the returned func drops that database.
func createTable(b *testing.B, c *fluss.Client, rows int) (fluss.TablePath, func()) {
	ctx := context.Background()
	db := flusstest.UniqueName("inbench")
	if err := c.CreateDatabase(ctx, db, nil, false); err != nil {
		b.Fatal(err)
	}
	drop := func() { _ = c.DropDatabase(context.Background(), db, true, true) }
	path := fluss.NewTablePath(db, "input_bench")
	start := time.Now()
	if err := benchtable.Create(ctx, c, path, rows, nil); err != nil {
		drop()
		b.Fatal(err)
	}
	b.Logf("wrote %d rows to %s in %s", rows, path, time.Since(start).Round(time.Millisecond))
	return path, drop
}

// runChild runs one mode in a child process and returns its result and
// peak RSS in KiB.
func runChild(b *testing.B, boot string, path fluss.TablePath, mode string) (result, int64) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChild+"="+mode, flusstest.EnvBootstrap+"="+boot, envTable+"="+path.String())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s child: %v\n%s", mode, err, errb.String())
	}
	var r result
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
		b.Fatalf("%s child printed %q: %v", mode, out.String(), err)
	}
	rss := r.PeakRSSKB
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && rss == 0 {
		rss = ru.Maxrss // KiB on Linux
	}
	return r, rss
}

// BenchmarkInput compares the raw scan with the input feeding drop in json
// and arrow_ipc (see the package doc).
func BenchmarkInput(b *testing.B) {
	boot := flusstest.Require(b)
	c, err := fluss.NewClient(context.Background(), fluss.Bootstrap(boot))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	rows := benchtable.Rows()
	var path fluss.TablePath
	if t := os.Getenv(envTable); t != "" {
		if path, err = fluss.ParseTablePath(t); err != nil {
			b.Fatal(err)
		}
	} else {
		var drop func()
		path, drop = createTable(b, c, rows)
		if os.Getenv("FLUSS_BENCH_KEEP") == "" {
			defer drop()
		} else {
			b.Logf("keeping table %s (FLUSS_BENCH_TABLE=%s reuses it)", path, path)
		}
	}
	// Rounds of raw, json, arrow_ipc in turn; the best of each mode counts
	// (the machine is shared, so the slowest runs measure the neighbours).
	modes := []string{"raw", "json", "arrow_ipc", "floor"}
	type best struct {
		rate float64
		secs float64
		rss  int64
		all  []float64
	}
	results := map[string]*best{}
	for _, m := range modes {
		results[m] = &best{}
	}
	for round := 0; round < repeat(); round++ {
		for _, mode := range modes {
			r, rss := runChild(b, boot, path, mode)
			if r.Rows != int64(rows) {
				b.Errorf("%s: %d rows, want %d", mode, r.Rows, rows)
			}
			rate := float64(r.Rows) / r.Seconds
			x := results[mode]
			x.all = append(x.all, rate)
			if rate > x.rate {
				x.rate, x.secs = rate, r.Seconds
			}
			x.rss = max(x.rss, rss)
		}
	}
	raw := results["raw"].rate
	if raw == 0 {
		b.Fatal(errors.New("no raw scan rate"))
	}
	var report strings.Builder
	fmt.Fprintf(&report, "\nfluss input on %s (%d rows, %d buckets, ZSTD), best of %d rounds\n", path, rows, benchtable.Buckets, repeat())
	fmt.Fprintf(&report, "%-10s %8s %12s %8s %10s   %s\n", "mode", "seconds", "rows/s", "vs raw", "peak RSS", "all rounds (rows/s)")
	for _, mode := range modes {
		x := results[mode]
		var all []string
		for _, a := range x.all {
			all = append(all, fmt.Sprintf("%.0f", a))
		}
		fmt.Fprintf(&report, "%-10s %8.3f %12.0f %7.0f%% %8.1fMB   %s\n", mode, x.secs, x.rate, 100*x.rate/raw, float64(x.rss)/1024, strings.Join(all, " "))
		b.ReportMetric(x.rate, mode+"-rows/s")
		b.ReportMetric(float64(x.rss)/1024, mode+"-peak-RSS-MB")
		if mode != "raw" {
			b.ReportMetric(x.rate/raw, mode+"-vs-raw")
		}
	}
	fmt.Print(report.String())
}
