package scan_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/bench/benchtable"
	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

const (
	envChild   = "FLUSS_SCAN_BENCH_CHILD"
	envTable   = "FLUSS_SCAN_BENCH_TABLE"
	envColumns = "FLUSS_SCAN_BENCH_COLUMNS"
	// envProfile, when set, is a path prefix: the child writes a CPU
	// profile of its scan to <prefix>.<table> (a later run of the same
	// table overwrites it).
	envProfile = "FLUSS_SCAN_BENCH_CPUPROFILE"
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
	// CPUSeconds is the user+system CPU time of the scan (our child only).
	CPUSeconds float64 `json:"cpu_seconds,omitempty"`
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
	if p := os.Getenv(envProfile); p != "" {
		stop, err := startProfile(p + "." + path.String())
		if err != nil {
			return fail(err)
		}
		defer stop()
	}
	cpu0 := cpuSeconds()
	start := time.Now()
	err = s.ReadRanges(ctx, ranges, func(b *fluss.ScanBatch) error {
		rows += int64(b.NumRows())
		return nil
	})
	secs := time.Since(start).Seconds()
	cpu := cpuSeconds() - cpu0
	if err != nil {
		return fail(err)
	}
	out, _ := json.Marshal(result{Rows: rows, Seconds: secs, Bytes: s.Stats().RecordsBytes, PeakRSSKB: benchtable.PeakRSSKB(), CPUSeconds: cpu})
	fmt.Println(string(out))
	return 0
}

// startProfile starts a CPU profile written to path; stop ends it.
func startProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// createTable creates and fills the benchmark table (bench/benchtable) in a
// database of its own; the returned func drops that database.
func createTable(b *testing.B, c *fluss.Client, rows int) (fluss.TablePath, func()) {
	ctx := context.Background()
	db := flusstest.UniqueName("bench")
	if err := c.CreateDatabase(ctx, db, nil, false); err != nil {
		b.Fatal(err)
	}
	drop := func() { _ = c.DropDatabase(context.Background(), db, true, true) }
	path := fluss.NewTablePath(db, "scan_bench")
	start := time.Now()
	if err := benchtable.Create(ctx, c, path, rows, nil); err != nil {
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
	rows := benchtable.Rows()
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
	fmt.Fprintf(&report, "\nscan of %s (%d buckets, ZSTD)\n", path, benchtable.Buckets)
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
