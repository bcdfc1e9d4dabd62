package flussout_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/fluss-iggy/fluss-iggy/bench/benchtable"
)

// rate is rows per second of a write that took secs.
func rate(rows int, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(rows) / secs
}

// report prints the table of the best round of each case (and writes it to
// $FLUSS_BENCH_OUT_REPORT when set) and reports its figures as benchmark
// metrics: rows/s, CPU µs/row and the servers' CPU µs/row per case, and the
// ratio of each fluss output case's rows/s to its Java counterpart's.
func (bn *bench) report(ks []kase, res map[string]*tally) {
	var w strings.Builder
	fmt.Fprintf(&w, "\nfluss output against the Java client's writer: %d rows of the bench table (%d columns, %d buckets, ZSTD), one JSON line each, best of %d rounds\n",
		bn.rows, len(benchtable.Schema().Columns), benchtable.Buckets, rounds())
	fmt.Fprintf(&w, "%-26s %8s %9s %8s %11s %11s %11s %8s   %s\n", "case", "wall s", "start-up", "write s", "rows/s", "CPU µs/row", "server µs", "vs Java", "all rounds (rows/s)")
	rates := map[string]float64{}
	for _, k := range ks {
		t := res[k.name]
		best := t.all[t.best]
		secs, cpu, server := best.write()
		r := rate(bn.rows, secs.Seconds())
		rates[k.name] = r
		cpuRow := float64(cpu.Microseconds()) / float64(bn.rows)
		var all []string
		for _, x := range t.all {
			s, _, _ := x.write()
			all = append(all, fmt.Sprintf("%.0f", rate(bn.rows, s.Seconds())))
		}
		vs := ""
		if k.vs != "" && rates[k.vs] > 0 {
			vs = fmt.Sprintf("%.2fx", r/rates[k.vs])
			bn.b.ReportMetric(r/rates[k.vs], k.name+"/"+k.vs)
		}
		start := "-"
		if best.startUp.wall > 0 {
			start = fmt.Sprintf("%.3f", best.startUp.wall.Seconds())
		}
		srv := "-"
		if server >= 0 && k.table != "" {
			srvRow := float64(server.Microseconds()) / float64(bn.rows)
			srv = fmt.Sprintf("%.2f", srvRow)
			bn.b.ReportMetric(srvRow, k.name+"-server-CPU-us/row")
		}
		fmt.Fprintf(&w, "%-26s %8.3f %9s %8.3f %11.0f %11.2f %11s %8s   %s\n", k.name, best.wall.Seconds(), start, secs.Seconds(), r, cpuRow, srv, vs, strings.Join(all, " "))
		bn.b.ReportMetric(r, k.name+"-rows/s")
		bn.b.ReportMetric(cpuRow, k.name+"-CPU-us/row")
	}
	w.WriteString("\nwrite s: for Java, the run minus the start-up run; CPU µs/row: the writer's process (Java: also minus the start-up run's); server µs: the tablet servers' CPU per row over the write (a local cluster named by FLUSS_CLUSTER_DIR, else -)\n\n")
	for _, k := range ks {
		fmt.Fprintf(&w, "%-26s %s\n", k.name, k.desc)
		if best := res[k.name].all[res[k.name].best]; best.self > 0 {
			fmt.Fprintf(&w, "%-26s   its own timing of the write loop (file read and parsed, rows written, all acknowledged): %.3f s = %.0f rows/s; start-up run (1 row): %.3f s wall, %.2f s CPU\n",
				"", best.self.Seconds(), rate(bn.rows, best.self.Seconds()), best.startUp.wall.Seconds(), best.startUp.cpu.Seconds())
		}
	}
	fmt.Print(w.String())
	if path := os.Getenv("FLUSS_BENCH_OUT_REPORT"); path != "" {
		if err := os.WriteFile(path, []byte(strings.TrimPrefix(w.String(), "\n")), 0o644); err != nil {
			bn.b.Errorf("writing the report: %v", err)
		}
	}
}
