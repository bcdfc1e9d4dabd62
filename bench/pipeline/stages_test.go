package pipeline_test

import (
	"cmp"
	"path/filepath"
	"slices"
)

// stage is one measured step of the run.
type stage struct {
	name, what string
	run        func() (result, error)
	// basis of MB/s: "fluss" (log batches read), "json" (payloads sent
	// after the mapping), "rows" (canonical JSON rows sent), or "" (none)
	basis string
}

// shippedGC is the GOGC and GOMEMLIMIT of the Docker image (Dockerfile),
// which every stage of the binary runs with unless it says otherwise
// (binaryEnv).
var shippedGC = []string{"GOGC=200", "GOMEMLIMIT=off"}

// stages lists every stage in the order they run and are reported.
func (bn *bench) stages() []stage {
	shipped := func(env []string, set ...string) func() (result, error) {
		return func() (result, error) { return bn.pipeline(env, set...) }
	}
	// The shipped config reads payload_format: structured; bytes is json.
	bytes := "input.fluss.payload_format=json"
	nomap := []string{"pipeline.processors=[]", "output.iggy.key=${! @fluss_bucket }", bytes}
	var structured []string
	arrow := func(codec string) func() (result, error) {
		return func() (result, error) { return bn.pipelineArrow(codec) }
	}
	gc := func(gogc, limit string) func() (result, error) {
		return shipped([]string{"GOGC=" + gogc, "GOMEMLIMIT=" + limit}, "pipeline.threads=2")
	}
	return []stage{
		{"java_scan", "Java client scan (`fluss-java.sh scan --count-only`, fluss-client 0.9.1, full JIT, -Xmx1g)", bn.javaScan, "fluss"},
		{"go_scan", "our scanner (`fluss-iggy fluss scan --count-only`), the run of median scan CPU of " + scanRepeatsText, medianCPU(bn.goScan, func(r result) float64 { return r.ScanCPU }), "fluss"},
		{"scan_floor", "physical floor: the table's log segment files read from the tablet server's data directory and every Arrow buffer of every batch decompressed (one zstd decoder, buffers reused), in the bench process; no fetch protocol, no arrays, no rows; the run of median CPU of " + scanRepeatsText, medianCPU(bn.scanFloor, func(r result) float64 { return r.CPU }), "fluss"},
		{"input_json_drop", "`fluss` input (json) → `drop`, the binary with end_at: latest", func() (result, error) { return bn.inputDrop("json") }, "fluss"},
		{"input_arrow_drop", "`fluss` input (arrow_ipc) → `drop`, the binary with end_at: latest", func() (result, error) { return bn.inputDrop("arrow_ipc") }, "fluss"},
		{"output_alone", "`iggy` output alone: the output of config/fluss_to_iggy.yaml (key = row id, ids, headers) fed from memory", func() (result, error) { return bn.childStage("output") }, "json"},
		{"raw_sdk_send", "raw Iggy Go SDK SendMessages of the same messages prebuilt, 1,000 per request to the partition of their key, one connection", func() (result, error) { return bn.childStage("sdk") }, "json"},
		{"pipeline_json", "full pipeline: config/fluss_to_iggy.yaml (key = row id), rows as structured values (`payload_format: structured`), `pipeline.threads` 2", shipped(structured, "pipeline.threads=2"), "json"},
		{"pipeline_json_t1", "the same with `pipeline.threads: 1`", shipped(structured, "pipeline.threads=1"), "json"},
		{"pipeline_json_bytes", "the same with rows as JSON bytes (before this change: Benthos parses each row and re-serialises it), threads 2", shipped(nil, "pipeline.threads=2", bytes), "json"},
		{"pipeline_json_nomap", "the same without the Bloblang mapping (`pipeline.processors: []`, key = bucket), rows as JSON bytes, threads 2", shipped(nil, append(nomap, "pipeline.threads=2")...), "rows"},
		{"pipeline_json_nomap_t1", "the same with `pipeline.threads: 1`", shipped(nil, append(nomap, "pipeline.threads=1")...), "rows"},
		{"pipeline_arrow", "full pipeline in arrow_ipc: config/arrow_ipc_to_iggy.yaml (one message per record batch), `arrow_ipc_compression: none`", arrow("none"), "ipc_none"},
		{"pipeline_arrow_lz4", "the same with `arrow_ipc_compression: lz4`", arrow("lz4"), "ipc_lz4"},
		{"pipeline_arrow_zstd", "the same with `arrow_ipc_compression: zstd`", arrow("zstd"), "ipc_zstd"},
		{"gc_100", "`pipeline_json` (threads 2) with GOGC=100, no GOMEMLIMIT (Go's defaults)", gc("100", "off"), "json"},
		{"gc_200", "… with GOGC=200", gc("200", "off"), "json"},
		{"gc_400", "… with GOGC=400", gc("400", "off"), "json"},
		{"gc_200_limit", "… with GOGC=200, GOMEMLIMIT=1GiB", gc("200", "1GiB"), "json"},
		{"gc_400_limit", "… with GOGC=400, GOMEMLIMIT=512MiB", gc("400", "512MiB"), "json"},
		{"gc_off_limit", "… with GOGC=off, GOMEMLIMIT=512MiB (collect only near the limit)", gc("off", "512MiB"), "json"},
		{"startup", "the binary on an empty table (start-up and shutdown; included in every `the binary` figure)", bn.startup, ""},
	}
}

// scanRepeats is how often the two scan stages run in each round: a scan
// of the table takes a tenth of a second or less, and one such figure moves
// by a third between runs.
const scanRepeats = 3

const scanRepeatsText = "3 runs"

// medianCPU runs fn scanRepeats times and returns the run whose cpu is the
// median.
func medianCPU(fn func() (result, error), cpu func(result) float64) func() (result, error) {
	return func() (result, error) {
		var runs []result
		for range scanRepeats {
			r, err := fn()
			if err != nil {
				return r, err
			}
			runs = append(runs, r)
		}
		slices.SortFunc(runs, func(a, b result) int { return cmp.Compare(cpu(a), cpu(b)) })
		return runs[len(runs)/2], nil
	}
}

// runStages runs every stage rounds() times and keeps the best round.
func (bn *bench) runStages(stages []stage) map[string]result {
	best := map[string]result{}
	for round := 0; round < rounds(); round++ {
		for _, s := range stages {
			r, err := s.run()
			if err == errSkipped {
				bn.b.Logf("round %d %-22s skipped", round+1, s.name)
				continue
			}
			if err != nil {
				bn.b.Fatalf("%s: %v", s.name, err)
			}
			bn.b.Logf("round %d %-22s %9d rows %8.3f s %12.0f rows/s peak RSS %7.1f MB cpu %.2f s", round+1, s.name, r.Rows, r.Seconds, r.rate(), float64(r.PeakRSSKB)/1024, r.CPU)
			if old, ok := best[s.name]; !ok || (s.name == "startup" && r.Seconds < old.Seconds) || (s.name != "startup" && r.rate() > old.rate()) {
				best[s.name] = r
			}
		}
	}
	return best
}

// pipeline runs config/fluss_to_iggy.yaml with extra environment and --set
// values.
func (bn *bench) pipeline(env []string, set ...string) (result, error) {
	args := []string{"run", "--set", "input.fluss.end_at=latest", "--set", "logger.level=warn"}
	for _, v := range set {
		args = append(args, "--set", v)
	}
	args = append(args, "-r", filepath.Join(bn.root, "config", "resources", "bbolt.yaml"), filepath.Join(bn.root, "config", "fluss_to_iggy.yaml"))
	return bn.timedRun(append(bn.binaryEnv(bn.table, bn.newStream()), env...), bn.rows, args...)
}

// pipelineArrow runs config/arrow_ipc_to_iggy.yaml with the given
// arrow_ipc_compression.
func (bn *bench) pipelineArrow(codec string) (result, error) {
	return bn.timedRun(bn.binaryEnv(bn.table, bn.newStream()), bn.rows, "run", "--set", "input.fluss.end_at=latest", "--set", "logger.level=warn",
		"--set", "input.fluss.arrow_ipc_compression="+codec,
		"-r", filepath.Join(bn.root, "config", "resources", "bbolt.yaml"), filepath.Join(bn.root, "config", "arrow_ipc_to_iggy.yaml"))
}
