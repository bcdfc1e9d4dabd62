package pipeline_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/fluss-iggy/fluss-iggy/bench/benchtable"
)

// cpuPerRow is a stage's CPU µs per row (0 when not measured).
func cpuPerRow(r result) float64 {
	if r.Rows <= 0 || r.CPU <= 0 {
		return 0
	}
	return r.CPU * 1e6 / float64(r.Rows)
}

// mbPerSecond is a stage's throughput in MB of its basis (see stage).
func (bn *bench) mbPerSecond(basis string, r result) string {
	var total int64
	switch basis {
	case "fluss":
		total = bn.flussBytes
	case "json":
		total = bn.mappedBytes
	case "rows":
		total = bn.jsonBytes
	case "ipc_none", "ipc_lz4", "ipc_zstd":
		total = bn.ipcBytes[strings.TrimPrefix(basis, "ipc_")]
	}
	if total == 0 || r.Seconds <= 0 || bn.rows == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f", float64(total)*float64(r.Rows)/float64(bn.rows)/1e6/r.Seconds)
}

// report renders bench/results.md.
func (bn *bench) report(stages []stage, best map[string]result) string {
	var rep strings.Builder
	bn.header(&rep)
	fmt.Fprintf(&rep, "![CPU µs per row, stage by stage](%s)\n\n", chartFile)
	fmt.Fprintf(&rep, "| stage | what runs | rows | seconds | rows/s | MB/s | CPU µs/row | peak RSS |\n|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range stages {
		r, ok := best[s.name]
		if !ok {
			fmt.Fprintf(&rep, "| `%s` | %s (skipped: %s not set or the segments not found) | – | – | – | – | – | – |\n", s.name, s.what, envClusterDir)
			continue
		}
		rate := thousands(int64(r.rate() + 0.5))
		cpu := "–"
		if c := cpuPerRow(r); c > 0 {
			cpu = fmt.Sprintf("%.2f", c)
			if r.ScanCPU > 0 {
				cpu += fmt.Sprintf(" (the scan alone: %.2f)", r.ScanCPU/float64(r.Rows)*1e6)
			}
		}
		if s.name == "startup" {
			rate = "–"
			cpu = fmt.Sprintf("%.2f s", r.CPU)
		}
		fmt.Fprintf(&rep, "| `%s` | %s | %s | %.3f | %s | %s | %s | %.1f MB |\n", s.name, s.what, thousands(r.Rows), r.Seconds, rate, bn.mbPerSecond(s.basis, r), cpu, float64(r.PeakRSSKB)/1024)
		bn.b.ReportMetric(r.rate(), s.name+"-rows/s")
	}
	fmt.Fprintf(&rep, "\nMB/s: for the scans and the input, MB of Fluss log batches as stored and fetched (ZSTD, %.1f MB for the table); "+
		"for the json stages that write to Iggy, MB of JSON payload as sent (%.1f MB for the table after the mapping; the rows alone are %.1f MB of canonical JSON, the basis of the no-mapping stages); "+
		"for arrow_ipc, MB of IPC payload as sent with the stage's compression. "+
		"CPU µs/row is the user+system CPU time of the measured process (not of the Iggy server or the Fluss cluster) per row; the Java scan's includes JVM start-up and JIT, and the scans time only the scan while their CPU covers the whole process. "+
		"Peak RSS is the VmHWM of the measured process (the JVM for the Java scan; the child process for `output_alone` and `raw_sdk_send`, which includes their %d prebuilt messages; the bench process itself for `scan_floor`), sampled every 20 ms. "+
		"Every stage of the binary runs with the Docker image's %s unless it says otherwise.\n\n",
		float64(bn.flussBytes)/1e6, float64(bn.mappedBytes)/1e6, float64(bn.jsonBytes)/1e6, poolRows, strings.Join(shippedGC, " "))
	bn.ratios(&rep, best)
	bn.arrowTable(&rep, best)
	bn.gcTable(&rep, best)
	fmt.Fprintf(&rep, "\nWhere the time goes, and what would close the gap: [bench/pipeline/README.md](pipeline/README.md).\n")
	return rep.String()
}

// ratios writes the ratios table and the targets.
func (bn *bench) ratios(w io.Writer, best map[string]result) {
	rate := func(n string) float64 { return best[n].rate() }
	cpu := func(n string) float64 { return cpuPerRow(best[n]) }
	fmt.Fprintf(w, "## Ratios\n\n| ratio | rows/s | CPU µs/row |\n|---|---:|---:|\n")
	pairs := []struct{ label, a, b string }{
		{"our scanner / Java client scan", "go_scan", "java_scan"},
		{"our scanner / physical floor (fetch bytes + decompress)", "go_scan", "scan_floor"},
		{"input json → drop / our scanner", "input_json_drop", "go_scan"},
		{"input arrow_ipc → drop / our scanner", "input_arrow_drop", "go_scan"},
		{"output alone / raw SDK send", "output_alone", "raw_sdk_send"},
		{"**full pipeline json (mapping, structured rows) / the same without the mapping**", "pipeline_json", "pipeline_json_nomap"},
		{"the same, `pipeline.threads: 1`", "pipeline_json_t1", "pipeline_json_nomap_t1"},
		{"full pipeline json, rows as JSON bytes (before) / without the mapping", "pipeline_json_bytes", "pipeline_json_nomap"},
		{"full pipeline json, structured rows / JSON bytes", "pipeline_json", "pipeline_json_bytes"},
		{"**without the mapping / raw SDK send**", "pipeline_json_nomap", "raw_sdk_send"},
		{"without the mapping, threads 1 / raw SDK send", "pipeline_json_nomap_t1", "raw_sdk_send"},
		{"full pipeline json / raw SDK send", "pipeline_json", "raw_sdk_send"},
		{"full pipeline json, threads 2 / threads 1", "pipeline_json", "pipeline_json_t1"},
		{"full pipeline arrow_ipc / raw SDK send", "pipeline_arrow", "raw_sdk_send"},
	}
	for _, p := range pairs {
		if rate(p.a) == 0 || rate(p.b) == 0 {
			fmt.Fprintf(w, "| %s | – | – |\n", p.label)
			continue
		}
		// CPU ratio as a over b: above 1 means a costs more per row.
		fmt.Fprintf(w, "| %s | %.2f× | %.2f× |\n", p.label, rate(p.a)/rate(p.b), cpu(p.a)/cpu(p.b))
	}
	verdict := func(ok bool) string {
		if ok {
			return "**met**"
		}
		return "**not met**"
	}
	r1 := rate("pipeline_json") / rate("pipeline_json_nomap")
	r2 := rate("pipeline_json_nomap") / rate("raw_sdk_send")
	fmt.Fprintf(w, "\n**Targets** (issue 15), rows/s in this run: the shipped json pipeline with its mapping at least 0.5× the same without it: **%.2f×** (threads 1: %.2f×), %s; "+
		"the no-mapping json pipeline at least 0.5× the raw SDK send rate: **%.2f×** (threads 1: %.2f×), %s.",
		r1, rate("pipeline_json_t1")/rate("pipeline_json_nomap_t1"), verdict(r1 >= 0.5),
		r2, rate("pipeline_json_nomap_t1")/rate("raw_sdk_send"), verdict(r2 >= 0.5))
	if f := cpu("scan_floor"); f > 0 {
		// The floor runs inside the bench process: compare the scan's own
		// CPU (its count line), not the binary's start-up.
		scan, what := cpu("go_scan"), "the whole process, start-up included"
		if g := best["go_scan"]; g.ScanCPU > 0 && g.Rows > 0 {
			scan, what = g.ScanCPU/float64(g.Rows)*1e6, fmt.Sprintf("the scan itself as its count line reports it, start-up excluded; %.2f× with the whole process", cpu("go_scan")/f)
		}
		r3 := scan / f
		fmt.Fprintf(w, " Our scanner's CPU per row at most 2× the physical floor's: **%.2f×** (%s), %s.", r3, what, verdict(r3 <= 2))
		bn.b.ReportMetric(r3, "scan/floor-cpu")
	}
	fmt.Fprintf(w, "\n\n")
	bn.b.ReportMetric(r1, "json-map/nomap")
	bn.b.ReportMetric(r2, "json-nomap/sdk")
}

// arrowTable writes payload bytes and CPU per row of arrow_ipc by
// compression.
func (bn *bench) arrowTable(w io.Writer, best map[string]result) {
	stored, what := bn.storedBytes, "the table's log segment files"
	if stored == 0 {
		stored, what = bn.flussBytes, "the log batches the scanner fetched"
	}
	fmt.Fprintf(w, "### arrow_ipc by `arrow_ipc_compression`\n\n| compression | payload bytes/row | vs Fluss's stored batches | rows/s | CPU µs/row |\n|---|---:|---:|---:|---:|\n")
	for _, c := range []struct{ codec, stage string }{{"none", "pipeline_arrow"}, {"lz4", "pipeline_arrow_lz4"}, {"zstd", "pipeline_arrow_zstd"}} {
		r := best[c.stage]
		per := float64(bn.ipcBytes[c.codec]) / float64(max(bn.rows, 1))
		fmt.Fprintf(w, "| %s | %.1f | %.2f× | %s | %.2f |\n", c.codec, per, float64(bn.ipcBytes[c.codec])/float64(max(stored, 1)),
			thousands(int64(r.rate()+0.5)), cpuPerRow(r))
	}
	fmt.Fprintf(w, "\nPayload bytes are those of one message per record batch as the input writes it (schema and batch), measured in the bench process; "+
		"Fluss stores %.1f bytes per row (ZSTD; %s).\n\n", float64(stored)/float64(max(bn.rows, 1)), what)
}

// gcTable writes the shipped json pipeline under several GC settings.
func (bn *bench) gcTable(w io.Writer, best map[string]result) {
	fmt.Fprintf(w, "### GC settings (the shipped json pipeline, threads 2)\n\n| GOGC | GOMEMLIMIT | rows/s | vs GOGC=100 | CPU µs/row | peak RSS |\n|---|---|---:|---:|---:|---:|\n")
	base := best["gc_100"].rate()
	for _, g := range []struct{ stage, gogc, limit string }{
		{"gc_100", "100", "off"}, {"gc_200", "200", "off"}, {"gc_400", "400", "off"},
		{"gc_200_limit", "200", "1GiB"}, {"gc_400_limit", "400", "512MiB"}, {"gc_off_limit", "off", "512MiB"},
	} {
		r := best[g.stage]
		fmt.Fprintf(w, "| %s | %s | %s | %.2f× | %.2f | %.1f MB |\n", g.gogc, g.limit, thousands(int64(r.rate()+0.5)), r.rate()/max(base, 1), cpuPerRow(r), float64(r.PeakRSSKB)/1024)
	}
	fmt.Fprintf(w, "\n`gc_200` runs exactly `pipeline_json`'s settings (%s rows/s there, %s here): the gap between the two is this run's noise, which is why the CPU per row is the steadier figure.\n\n",
		thousands(int64(best["pipeline_json"].rate()+0.5)), thousands(int64(best["gc_200"].rate()+0.5)))
}

func (bn *bench) header(w io.Writer) {
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	mem := "unknown"
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "MemTotal:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				mem = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
			}
		}
	}
	version := "?"
	if out, err := exec.Command(bn.bin, "--version").Output(); err == nil {
		version = strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	}
	fmt.Fprintf(w, "# Benchmark results\n\n")
	fmt.Fprintf(w, "Written by `make bench` (bench/run-all.sh → `go test -bench Pipeline ./bench/pipeline`, see bench/pipeline/doc.go) on %s.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(w, "| machine | |\n|---|---|\n")
	fmt.Fprintf(w, "| CPU | %d cores (%s) |\n| memory | %s |\n| OS | %s/%s, %s |\n| load average (1, 5, 15 min) | %s at the start, %s at the end |\n",
		runtime.NumCPU(), cpu, mem, runtime.GOOS, runtime.GOARCH, kernel(), bn.startLoad, bn.load2)
	fmt.Fprintf(w, "| Fluss | %s, one tablet server on loopback |\n| Iggy | the in-memory test server (internal/iggytest) in its own process, keeping the last %d messages per partition |\n",
		envOr("FLUSS_VERSION", "0.9.1-incubating"), iggyKeep)
	fmt.Fprintf(w, "| binary | %s (%s) |\n\n", version, runtime.Version())
	rowsNote := ""
	if os.Getenv(envRows) != "" {
		rowsNote = " (set by FLUSS_BENCH_ROWS; `make bench` defaults to 2,000,000)"
	}
	fmt.Fprintf(w, "One table, `%s`: %s rows%s, 10 columns (BIGINT id, TIMESTAMP(3), 2 short STRINGs, DECIMAL(12,2), INT with nulls, DOUBLE, BOOLEAN, DATE, a 20–60 character STRING), ZSTD, %d buckets (%s rows each), written with our writer in batches of %d rows. Every stage reads all of it from the earliest offsets, except where noted. %s.\n\n",
		bn.table, thousands(bn.rows), rowsNote, benchtable.Buckets, joinInts(bn.bucketRows), benchtable.BatchRows, roundsText())
}

func roundsText() string {
	if n := rounds(); n > 1 {
		return fmt.Sprintf("Each stage ran %d times in turn; the best round is shown", n)
	}
	return "Each stage ran once"
}

func joinInts(v []int64) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = thousands(n)
	}
	return strings.Join(s, " / ")
}

func kernel() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "?"
	}
	return "Linux " + strings.TrimSpace(string(b))
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
