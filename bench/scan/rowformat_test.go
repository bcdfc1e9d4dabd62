package scan_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/fluss-iggy/fluss-iggy/bench/benchtable"
	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

// cpuSeconds is the user+system CPU time of this process so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// benchColumns is the benchmark table's column list in the type syntax.
func benchColumns() string {
	var cols []string
	for _, c := range benchtable.Schema().Columns {
		cols = append(cols, c.Name+" "+c.Type.String())
	}
	return strings.Join(cols, ", ")
}

// BenchmarkScanRowFormat reads the same rows from an ARROW (ZSTD) and a
// COMPACTED log table with our scanner and reports rows/s and CPU per row
// of each, and the CPU ratio COMPACTED/ARROW (target: at most 2). Both
// tables have the benchmark table's 10 columns and 4 buckets; the Java tool
// writes them (our writer writes ARROW only) with the same generated rows,
// FLUSS_BENCH_ROWS of them (default 2,000,000).
//
//	go test -run '^$' -bench ScanRowFormat -benchtime 1x -timeout 30m ./bench/scan
func BenchmarkScanRowFormat(b *testing.B) {
	addr := flusstest.Require(b)
	c, err := fluss.NewClient(context.Background(), fluss.Bootstrap(addr))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	rows := strconv.Itoa(benchtable.Rows())
	db := flusstest.UniqueName("bench_rows")
	flusstest.RunJava(b, "create-database", db)
	defer flusstest.RunJava(b, "drop-database", db, "--if-exists", "--cascade")
	var report strings.Builder
	fmt.Fprintf(&report, "\nscan of %s rows (%d buckets), our scanner\n", rows, benchtable.Buckets)
	fmt.Fprintf(&report, "%-10s %10s %8s %12s %9s %12s\n", "format", "rows", "seconds", "rows/s", "MB/s", "CPU µs/row")
	var arrowCPU float64
	for _, format := range []string{"ARROW", "COMPACTED"} {
		table := db + ".scan_" + strings.ToLower(format)
		flusstest.RunJava(b, "create-table", table, "--columns", benchColumns(), "--buckets",
			strconv.Itoa(benchtable.Buckets), "--log-format", format)
		flusstest.RunJava(b, "append", table, "--rows", rows, "--seed", "1")
		path, err := fluss.ParseTablePath(table)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(format, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				r := runChild(b, addr, path, "")
				perRow := r.CPUSeconds / float64(r.Rows) * 1e6
				b.ReportMetric(float64(r.Rows)/r.Seconds, "rows/s")
				b.ReportMetric(perRow, "cpu-us/row")
				fmt.Fprintf(&report, "%-10s %10d %8.3f %12.0f %9.1f %12.3f\n", format, r.Rows, r.Seconds,
					float64(r.Rows)/r.Seconds, float64(r.Bytes)/1e6/r.Seconds, perRow)
				if format == "ARROW" {
					arrowCPU = perRow
				} else if arrowCPU > 0 {
					b.ReportMetric(perRow/arrowCPU, "cpu-ratio")
					fmt.Fprintf(&report, "CPU per row COMPACTED/ARROW: %.2fx (target <= 2x)\n", perRow/arrowCPU)
				}
			}
		})
	}
	fmt.Print(report.String())
}
