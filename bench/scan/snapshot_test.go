package scan_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/bench/benchtable"
	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

const envSnapChild = "FLUSS_SNAPSHOT_BENCH_CHILD"

// init runs the snapshot child (before TestMain, which this file cannot
// extend): it reads every bucket's latest KV snapshot of the table named in
// the environment, counting rows, and prints a snapResult line.
func init() {
	if os.Getenv(envSnapChild) != "" {
		os.Exit(snapshotChild())
	}
}

// snapResult is one measured snapshot read.
type snapResult struct {
	result
	// DiskBytes is the most disk the downloaded files of one bucket's
	// snapshot used (buckets are read one after another).
	DiskBytes int64 `json:"disk_bytes"`
}

func snapshotChild() int {
	ctx := context.Background()
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "snapshot child:", err)
		return 1
	}
	path, err := fluss.ParseTablePath(os.Getenv(envTable))
	if err != nil {
		return fail(err)
	}
	c, err := fluss.NewClient(ctx, fluss.Bootstrap(os.Getenv(flusstest.EnvBootstrap)))
	if err != nil {
		return fail(err)
	}
	defer c.Close()
	info, err := c.RefreshTable(ctx, path)
	if err != nil {
		return fail(err)
	}
	snaps, err := c.LatestKVSnapshots(ctx, info, fluss.PartitionInfo{ID: fluss.NoPartition})
	if err != nil {
		return fail(err)
	}
	var res snapResult
	cpu0 := cpuSeconds()
	start := time.Now()
	for _, s := range snaps {
		r, err := c.OpenKVSnapshot(ctx, info, s)
		if err != nil {
			return fail(err)
		}
		res.DiskBytes = max(res.DiskBytes, r.DiskBytes())
		for {
			rec, err := r.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				r.Close()
				return fail(err)
			}
			res.Rows += rec.NumRows()
			rec.Release()
		}
		r.Close()
	}
	res.Seconds = time.Since(start).Seconds()
	res.CPUSeconds = cpuSeconds() - cpu0
	res.PeakRSSKB = benchtable.PeakRSSKB()
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
	return 0
}

// createPKTable creates the benchmark table's columns with primary key id
// and upserts rows keys.
func createPKTable(b *testing.B, c *fluss.Client, rows int) (fluss.TablePath, func()) {
	ctx := context.Background()
	db := flusstest.UniqueName("snapbench")
	if err := c.CreateDatabase(ctx, db, nil, false); err != nil {
		b.Fatal(err)
	}
	drop := func() { _ = c.DropDatabase(context.Background(), db, true, true) }
	path := fluss.NewTablePath(db, "snapshot_bench")
	schema := *benchtable.Schema()
	schema.PrimaryKey = []string{"id"}
	schema.Columns = append([]types.Column(nil), schema.Columns...)
	schema.Columns[0].Type.Nullable = false
	desc := &types.TableDescriptor{Schema: schema, BucketCount: benchtable.Buckets}
	if err := c.CreateTable(ctx, path, desc, false); err != nil {
		drop()
		b.Fatal(err)
	}
	var info *fluss.TableInfo
	var w *fluss.Writer
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		var err error
		if info, err = c.RefreshTable(ctx, path); err == nil {
			if w, err = c.NewWriter(info); err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			drop()
			b.Fatalf("table %s not ready: %v", path, err)
		}
	}
	start := time.Now()
	for first := 0; first < rows; first += benchtable.BatchRows {
		rec := benchtable.Batch(w.Schema(), int64(first), min(benchtable.BatchRows, rows-first))
		err := w.Upsert(ctx, fluss.NoPartition, rec)
		rec.Release()
		if err != nil {
			drop()
			b.Fatal(err)
		}
	}
	b.Logf("upserted %d keys to %s in %s", rows, path, time.Since(start).Round(time.Millisecond))
	return path, drop
}

// BenchmarkSnapshot reads a primary-key table of FLUSS_BENCH_ROWS keys
// (default 1,000,000) from its KV snapshots (waiting until every bucket has
// one covering all writes) and from its changelog, each in a child process:
// rows/s, peak RSS, and for the snapshots the disk the downloads used.
func BenchmarkSnapshot(b *testing.B) {
	addr := flusstest.Require(b)
	ctx := context.Background()
	c, err := fluss.NewClient(ctx, fluss.Bootstrap(addr))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	rows := benchtable.Rows()
	path, drop := createPKTable(b, c, rows)
	defer drop()
	waitAllSnapshots(b, c, path)
	b.ResetTimer()
	for range b.N {
		snap := runSnapshotChild(b, addr, path)
		logScan := runChild(b, addr, path, "")
		b.ReportMetric(float64(snap.Rows)/snap.Seconds, "snapshot_rows/s")
		b.ReportMetric(float64(snap.PeakRSSKB)/1024, "snapshot_peak_rss_MB")
		b.ReportMetric(float64(snap.DiskBytes)/(1<<20), "snapshot_disk_MB")
		b.ReportMetric(float64(logScan.Rows)/logScan.Seconds, "log_rows/s")
		b.ReportMetric(float64(logScan.PeakRSSKB)/1024, "log_peak_rss_MB")
		b.Logf("snapshot: %d rows in %.2fs (cpu %.2fs), peak RSS %d KB, disk %d bytes; log scan: %d rows in %.2fs (cpu %.2fs), peak RSS %d KB",
			snap.Rows, snap.Seconds, snap.CPUSeconds, snap.PeakRSSKB, snap.DiskBytes,
			logScan.Rows, logScan.Seconds, logScan.CPUSeconds, logScan.PeakRSSKB)
	}
}

// waitAllSnapshots waits until every bucket has a snapshot covering its log.
func waitAllSnapshots(b *testing.B, c *fluss.Client, path fluss.TablePath) {
	ctx := context.Background()
	info, err := c.RefreshTable(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	ranges, err := c.BucketRanges(ctx, info, "")
	if err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(time.Second) {
		snaps, err := c.LatestKVSnapshots(ctx, info, fluss.PartitionInfo{ID: fluss.NoPartition})
		if err != nil {
			b.Fatal(err)
		}
		done := len(snaps) == len(ranges)
		for i, s := range snaps {
			done = done && s.SnapshotID != fluss.NoSnapshot && s.LogOffset >= ranges[i].End
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s: no snapshot of every bucket after 5 minutes (kv.snapshot.interval?)", path)
		}
	}
}

func runSnapshotChild(b *testing.B, addr string, table fluss.TablePath) snapResult {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envSnapChild+"=1", flusstest.EnvBootstrap+"="+addr, envTable+"="+table.String())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		b.Fatalf("snapshot child: %v\n%s", err, errb.String())
	}
	var r snapResult
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &r); err != nil {
		b.Fatalf("snapshot child printed %q: %v", out.String(), err)
	}
	return r
}
