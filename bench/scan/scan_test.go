package scan_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

const (
	envChild   = "FLUSS_SCAN_BENCH_CHILD"
	envRows    = "FLUSS_SCAN_BENCH_ROWS"
	envTable   = "FLUSS_SCAN_BENCH_TABLE"
	envColumns = "FLUSS_SCAN_BENCH_COLUMNS"
	buckets    = 4
	batchRows  = 8192
)

func TestMain(m *testing.M) {
	if os.Getenv(envChild) != "" {
		os.Exit(child())
	}
	flusstest.Main(m)
}

// result is one measured scan.
type result struct {
	Rows      int64   `json:"rows"`
	Seconds   float64 `json:"seconds"`
	Bytes     int64   `json:"bytes"`
	PeakRSSKB int64   `json:"peak_rss_kb"`
}

// child scans the table named in the environment with our scanner, counting
// rows, and prints a result line. It runs in its own process so that its
// peak RSS is the scan's.
func child() int {
	ctx := context.Background()
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "scan child:", err)
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
	var opts []fluss.ScanOption
	if cols := os.Getenv(envColumns); cols != "" {
		opts = append(opts, fluss.ScanColumns(strings.Split(cols, ",")...))
	}
	s, err := c.NewScanner(info, opts...)
	if err != nil {
		return fail(err)
	}
	defer s.Close()
	ranges, err := c.BucketRanges(ctx, info, "")
	if err != nil {
		return fail(err)
	}
	var rows int64
	start := time.Now()
	err = s.ReadRanges(ctx, ranges, func(b *fluss.ScanBatch) error {
		rows += int64(b.NumRows())
		return nil
	})
	secs := time.Since(start).Seconds()
	if err != nil {
		return fail(err)
	}
	out, _ := json.Marshal(result{Rows: rows, Seconds: secs, Bytes: s.Stats().RecordsBytes, PeakRSSKB: peakRSSKB()})
	fmt.Println(string(out))
	return 0
}

// peakRSSKB reads VmHWM from /proc/self/status (0 when unavailable).
func peakRSSKB() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

func benchRows() int {
	if n, err := strconv.Atoi(os.Getenv(envRows)); err == nil && n > 0 {
		return n
	}
	return 2_000_000
}

// benchSchema: 10 columns of mixed types.
func benchSchema() *types.Schema {
	return types.MustSchema([]types.Column{
		types.NewColumn("id", types.BigInt().NotNull()),
		types.NewColumn("ts", types.Timestamp(3)),
		types.NewColumn("user_name", types.String()),
		types.NewColumn("category", types.String()),
		types.NewColumn("price", types.Decimal(12, 2)),
		types.NewColumn("quantity", types.Int()),
		types.NewColumn("score", types.Double()),
		types.NewColumn("active", types.Boolean()),
		types.NewColumn("day", types.Date()),
		types.NewColumn("note", types.String()),
	})
}

var categories = []string{"books", "garden", "toys", "music", "tools", "food", "sports", "baby"}

const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 "

func randString(r *rand.Rand, buf []byte, n int) string {
	buf = buf[:0]
	for i := 0; i < n; i++ {
		buf = append(buf, letters[r.IntN(len(letters))])
	}
	return string(buf)
}

// benchBatch builds rows [first, first+n).
func benchBatch(schema *arrow.Schema, first int64, n int) arrow.RecordBatch {
	r := rand.New(rand.NewPCG(uint64(first), 42))
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	var buf []byte
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	for i := 0; i < n; i++ {
		id := first + int64(i)
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(base + id*37 + int64(r.IntN(1000))))
		b.Field(2).(*array.StringBuilder).Append("user_" + randString(r, buf, 8))
		b.Field(3).(*array.StringBuilder).Append(categories[r.IntN(len(categories))])
		b.Field(4).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(r.IntN(10_000_000))))
		if r.IntN(10) == 0 {
			b.Field(5).AppendNull()
		} else {
			b.Field(5).(*array.Int32Builder).Append(int32(r.IntN(1000)))
		}
		b.Field(6).(*array.Float64Builder).Append(r.Float64() * 100)
		b.Field(7).(*array.BooleanBuilder).Append(r.IntN(2) == 0)
		b.Field(8).(*array.Date32Builder).Append(arrow.Date32(19000 + r.IntN(2000)))
		b.Field(9).(*array.StringBuilder).Append(randString(r, buf, 20+r.IntN(40)))
	}
	return b.NewRecordBatch()
}

// createTable creates and fills the benchmark table with our writer.
func createTable(b *testing.B, c *fluss.Client, rows int) (fluss.TablePath, func()) {
	ctx := context.Background()
	db := flusstest.UniqueName("bench")
	if err := c.CreateDatabase(ctx, db, nil, false); err != nil {
		b.Fatal(err)
	}
	drop := func() { _ = c.DropDatabase(context.Background(), db, true, true) }
	path := fluss.NewTablePath(db, "scan_bench")
	desc := &types.TableDescriptor{Schema: *benchSchema(), BucketCount: buckets,
		Properties: map[string]string{types.PropArrowCompression: "ZSTD"}}
	if err := c.CreateTable(ctx, path, desc, false); err != nil {
		drop()
		b.Fatal(err)
	}
	var info *fluss.TableInfo
	for deadline := time.Now().Add(time.Minute); ; {
		var err error
		info, err = c.RefreshTable(ctx, path)
		if err == nil {
			if _, err = c.ListOffsets(ctx, info, fluss.NoPartition, nil, fluss.LatestOffset()); err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			drop()
			b.Fatalf("table %s not ready: %v", path, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	w, err := c.NewWriter(info)
	if err != nil {
		drop()
		b.Fatal(err)
	}
	start := time.Now()
	// One writer goroutine per bucket.
	var wg sync.WaitGroup
	errs := make(chan error, buckets)
	per := (rows + buckets - 1) / buckets
	for bk := 0; bk < buckets; bk++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lo, hi := bk*per, min((bk+1)*per, rows)
			for first := lo; first < hi; first += batchRows {
				n := min(batchRows, hi-first)
				rec := benchBatch(w.Schema(), int64(first), n)
				_, err := w.Append(ctx, fluss.NoPartition, int32(bk), rec)
				rec.Release()
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		drop()
		b.Fatal(err)
	}
	b.Logf("wrote %d rows to %s in %s", rows, path, time.Since(start).Round(time.Millisecond))
	return path, drop
}

func runChild(b *testing.B, addr string, table fluss.TablePath, columns string) result {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChild+"=1", flusstest.EnvBootstrap+"="+addr,
		envTable+"="+table.String(), envColumns+"="+columns)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		b.Fatalf("scan child: %v\n%s", err, errb.String())
	}
	var r result
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &r); err != nil {
		b.Fatalf("scan child printed %q: %v", out.String(), err)
	}
	return r
}

func runJava(b *testing.B, table fluss.TablePath, columns string) result {
	args := []string{"scan", table.String(), "--count-only"}
	if columns != "" {
		args = append(args, "--columns", columns)
	}
	out := flusstest.RunJava(b, args...)
	var r result
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &r); err != nil {
		b.Fatalf("java scan printed %q: %v", out, err)
	}
	return r
}

// BenchmarkScan compares full and projected scans of the benchmark table by
// our scanner and by the Java client (see the package doc).
func BenchmarkScan(b *testing.B) {
	addr := flusstest.Require(b)
	c, err := fluss.NewClient(context.Background(), fluss.Bootstrap(addr))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	rows := benchRows()
	var path fluss.TablePath
	if t := os.Getenv(envTable); t != "" {
		if path, err = fluss.ParseTablePath(t); err != nil {
			b.Fatal(err)
		}
	} else {
		var drop func()
		path, drop = createTable(b, c, rows)
		defer drop()
	}
	cases := []struct{ name, columns string }{
		{"all10", ""},
		{"projected2", "user_name,price"},
	}
	var report strings.Builder
	fmt.Fprintf(&report, "\nscan of %s (%d buckets, ZSTD)\n", path, buckets)
	fmt.Fprintf(&report, "%-11s %-5s %10s %8s %12s %9s %10s\n", "case", "who", "rows", "seconds", "rows/s", "MB/s", "peak RSS")
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				ours := runChild(b, addr, path, tc.columns)
				java := runJava(b, path, tc.columns)
				if ours.Rows != java.Rows {
					b.Errorf("%s: our scan counted %d rows, the Java client %d", tc.name, ours.Rows, java.Rows)
				}
				mb := float64(ours.Bytes) / 1e6
				oursRate, javaRate := float64(ours.Rows)/ours.Seconds, float64(java.Rows)/java.Seconds
				b.ReportMetric(oursRate, "rows/s")
				b.ReportMetric(mb/ours.Seconds, "MB/s")
				b.ReportMetric(javaRate, "java-rows/s")
				b.ReportMetric(oursRate/javaRate, "ratio")
				b.ReportMetric(float64(ours.PeakRSSKB)/1024, "peak-RSS-MB")
				fmt.Fprintf(&report, "%-11s %-5s %10d %8.3f %12.0f %9.1f %8.1fMB\n", tc.name, "go", ours.Rows, ours.Seconds, oursRate, mb/ours.Seconds, float64(ours.PeakRSSKB)/1024)
				fmt.Fprintf(&report, "%-11s %-5s %10d %8.3f %12.0f %9.1f %10s\n", tc.name, "java", java.Rows, java.Seconds, javaRate, mb/java.Seconds, "-")
				fmt.Fprintf(&report, "%-11s ratio go/java rows/s: %.2fx\n", tc.name, oursRate/javaRate)
			}
		})
	}
	fmt.Print(report.String())
}
