package scan_test

import (
	"cmp"
	"fmt"
	"slices"
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

// rowFormatRounds is how many times each table is scanned: rounds alternate
// between the formats and the report gives each one's median, since one
// scan of a few hundred thousand rows lasts well under a second and a busy
// machine moves a single figure by a third.
const rowFormatRounds = 3

// BenchmarkScanRowFormat reads the same rows from an ARROW (ZSTD) and a
// COMPACTED log table with our scanner and reports rows/s, CPU per row and
// peak RSS of each (the scan of median CPU among rowFormatRounds
// alternating ones), and the CPU ratio COMPACTED/ARROW (target: at most
// 2). Both tables have the benchmark table's 10 columns and 4 buckets; the
// Java tool writes them
// (our writer writes ARROW only) with the same generated rows,
// FLUSS_BENCH_ROWS of them (default 2,000,000).
//
//	go test -run '^$' -bench ScanRowFormat -benchtime 1x -timeout 30m ./bench/scan
func BenchmarkScanRowFormat(b *testing.B) {
	addr := flusstest.Require(b)
	rows := strconv.Itoa(benchtable.Rows())
	db := flusstest.UniqueName("bench_rows")
	flusstest.RunJava(b, "create-database", db)
	defer flusstest.RunJava(b, "drop-database", db, "--if-exists", "--cascade")
	formats := []string{"ARROW", "COMPACTED"}
	paths := map[string]fluss.TablePath{}
	for _, format := range formats {
		table := db + ".scan_" + strings.ToLower(format)
		flusstest.RunJava(b, "create-table", table, "--columns", benchColumns(), "--buckets",
			strconv.Itoa(benchtable.Buckets), "--log-format", format)
		flusstest.RunJava(b, "append", table, "--rows", rows, "--seed", "1")
		path, err := fluss.ParseTablePath(table)
		if err != nil {
			b.Fatal(err)
		}
		paths[format] = path
	}
	runs := map[string][]result{}
	for i := 0; i < b.N; i++ {
		for round := 0; round < rowFormatRounds; round++ {
			for _, format := range formats {
				runs[format] = append(runs[format], runChild(b, addr, paths[format], ""))
			}
		}
	}
	var report strings.Builder
	fmt.Fprintf(&report, "\nscan of %s rows (%d buckets), our scanner, median of %d scans each\n", rows,
		benchtable.Buckets, len(runs[formats[0]]))
	fmt.Fprintf(&report, "%-10s %10s %8s %12s %9s %12s %10s\n", "format", "rows", "seconds", "rows/s", "MB/s", "CPU µs/row", "peak RSS")
	cpu := map[string]float64{}
	for _, format := range formats {
		r := medianByCPU(runs[format])
		cpu[format] = r.CPUSeconds / float64(r.Rows) * 1e6
		b.ReportMetric(cpu[format], strings.ToLower(format)+"-cpu-us/row")
		fmt.Fprintf(&report, "%-10s %10d %8.3f %12.0f %9.1f %12.3f %8.1fMB\n", format, r.Rows, r.Seconds,
			float64(r.Rows)/r.Seconds, float64(r.Bytes)/1e6/r.Seconds, cpu[format], float64(r.PeakRSSKB)/1024)
		b.ReportMetric(float64(r.PeakRSSKB)/1024, strings.ToLower(format)+"-peak-RSS-MB")
	}
	ratio := cpu["COMPACTED"] / cpu["ARROW"]
	b.ReportMetric(ratio, "cpu-ratio")
	fmt.Fprintf(&report, "CPU per row COMPACTED/ARROW: %.2fx (target <= 2x)\n", ratio)
	fmt.Print(report.String())
}

// medianByCPU returns the run of median CPU per row.
func medianByCPU(runs []result) result {
	s := slices.Clone(runs)
	slices.SortFunc(s, func(a, b result) int {
		return cmp.Compare(a.CPUSeconds/float64(a.Rows), b.CPUSeconds/float64(b.Rows))
	})
	return s[len(s)/2]
}
