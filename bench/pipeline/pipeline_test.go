package pipeline_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluss-iggy/fluss-iggy/bench/benchtable"
	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/internal/e2e"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

const (
	envChild   = "FLUSS_PIPELINE_BENCH_CHILD"
	envRows    = benchtable.EnvRows
	envTable   = "FLUSS_BENCH_TABLE"
	envRounds  = "FLUSS_BENCH_ROUNDS"
	envResults = "FLUSS_BENCH_RESULTS"
	// envKeep keeps the database the run creates; envTableOut names a file
	// to write the table's DB.TABLE to (bench/run-all.sh hands the table to
	// bench/input this way).
	envKeep     = "FLUSS_BENCH_KEEP"
	envTableOut = "FLUSS_BENCH_TABLE_OUT"
	// poolRows is how many of the table's rows the output-alone and raw SDK
	// children build messages from (and cycle through).
	poolRows = 100_000
	// iggyKeep caps what the Iggy test server keeps per partition, so that
	// millions of messages do not fill its memory.
	iggyKeep = 20_000
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(envChild); mode != "" {
		os.Exit(child(mode))
	}
	flusstest.Main(m)
}

// result is one measured stage.
type result struct {
	Rows      int64   `json:"rows"`
	Seconds   float64 `json:"seconds"`
	PeakRSSKB int64   `json:"peak_rss_kb"`
	CPU       float64 `json:"cpu_seconds"` // of the measured process
	// ScanCPU is the CPU time of the scan alone, start-up excluded, as
	// `fluss-iggy fluss scan --count-only` reports it (0 for other stages).
	ScanCPU float64 `json:"-"`
}

func (r result) rate() float64 {
	if r.Seconds <= 0 {
		return 0
	}
	return float64(r.Rows) / r.Seconds
}

func rounds() int {
	if n, err := strconv.Atoi(os.Getenv(envRounds)); err == nil && n > 0 {
		return n
	}
	return 1
}

// createTable creates the benchmark table (bench/benchtable) db.name and
// fills it with rows rows (none for rows 0).
func createTable(ctx context.Context, c *fluss.Client, db, name string, rows int) (fluss.TablePath, error) {
	path := fluss.NewTablePath(db, name)
	return path, benchtable.Create(ctx, c, path, rows, nil)
}

// bench holds what the stages share.
type bench struct {
	b                *testing.B
	root, bin        string
	bootstrap        string
	table, empty     fluss.TablePath
	iggyAddr         string
	tableID          int64
	rows             int64
	flussBytes       int64 // log batches as stored (ZSTD)
	jsonBytes        int64 // the rows as canonical JSON
	mappedBytes      int64 // JSON payloads after config/fluss_to_iggy.yaml's mapping
	work             string
	streamSeq        int
	bucketRows       []int64
	arrowSchema      *arrow.Schema
	ipcBytes         map[string]int64 // arrow_ipc payloads per compression
	storedBytes      int64            // the table's log segment files (scan_floor)
	startLoad, load2 string
}

// BenchmarkPipeline runs every stage on one table (see the package doc).
func BenchmarkPipeline(b *testing.B) {
	for i := 0; i < b.N; i++ {
		runAll(b)
	}
}

func runAll(b *testing.B) {
	log.SetOutput(io.Discard) // the Iggy SDK logs every login
	ctx := context.Background()
	bn := &bench{b: b, work: b.TempDir(), startLoad: loadAvg()}
	var err error
	if bn.root, err = flusstest.RepoRoot(); err != nil {
		b.Fatal(err)
	}
	bn.bootstrap = flusstest.Require(b)
	bn.bin = os.Getenv("FLUSS_IGGY_BIN")
	if bn.bin == "" {
		bn.bin = filepath.Join(bn.root, "bin", "fluss-iggy")
		if _, err := os.Stat(bn.bin); err != nil {
			if bn.bin, err = e2e.BuildBinary(ctx, bn.root, bn.work); err != nil {
				b.Fatal(err)
			}
		}
	}
	bn.startIggy()

	c, err := fluss.NewClient(ctx, fluss.Bootstrap(bn.bootstrap))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	rows := benchtable.Rows()
	db := flusstest.UniqueName("bench_pipeline")
	if err := c.CreateDatabase(ctx, db, nil, false); err != nil {
		b.Fatal(err)
	}
	keep := os.Getenv(envKeep) != ""
	if t := os.Getenv(envTable); t != "" {
		if bn.table, err = fluss.ParseTablePath(t); err != nil {
			b.Fatal(err)
		}
	} else {
		start := time.Now()
		if bn.table, err = createTable(ctx, c, db, "pipeline_bench", rows); err != nil {
			b.Fatal(err)
		}
		b.Logf("wrote %d rows to %s in %s", rows, bn.table, time.Since(start).Round(time.Millisecond))
	}
	if bn.empty, err = createTable(ctx, c, db, "empty", 0); err != nil {
		b.Fatal(err)
	}
	if keep {
		b.Logf("keeping database %s (%s)", db, envKeep)
	} else {
		defer func() { _ = c.DropDatabase(context.Background(), db, true, true) }()
	}
	if out := os.Getenv(envTableOut); out != "" {
		if err := os.WriteFile(out, []byte(bn.table.String()+"\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if err := bn.measureTable(ctx, c); err != nil {
		b.Fatal(err)
	}

	stages := bn.stages()
	best := bn.runStages(stages)
	bn.load2 = loadAvg()
	rep := bn.report(stages, best)
	fmt.Print("\n" + rep)
	if path := os.Getenv(envResults); path != "" {
		if err := os.WriteFile(path, []byte(rep), 0o644); err != nil {
			b.Fatal(err)
		}
		svg := filepath.Join(filepath.Dir(path), chartFile)
		if err := os.WriteFile(svg, cpuChart(stages, best), 0o644); err != nil {
			b.Fatal(err)
		}
		b.Logf("wrote %s and %s", path, svg)
	}
}

// startIggy builds and starts internal/iggytest/iggyserver.
func (bn *bench) startIggy() {
	srvBin := filepath.Join(bn.work, "iggyserver")
	cmd := exec.Command("go", "build", "-o", srvBin, "./internal/iggytest/iggyserver")
	cmd.Dir = bn.root
	if out, err := cmd.CombinedOutput(); err != nil {
		bn.b.Fatalf("building iggyserver: %v\n%s", err, out)
	}
	p, err := e2e.Start(srvBin, nil, "serve", "-addr", "127.0.0.1:0", "-max-per-partition", strconv.Itoa(iggyKeep),
		"-owner-pid", strconv.Itoa(os.Getpid()))
	if err != nil {
		bn.b.Fatal(err)
	}
	bn.b.Cleanup(func() { _ = p.Stop(10 * time.Second) })
	if err := e2e.WaitFor(30*time.Second, 20*time.Millisecond, func() (bool, error) {
		if p.Exited() {
			return false, fmt.Errorf("iggyserver exited: %s", p.Output())
		}
		for _, l := range strings.Split(p.Output(), "\n") {
			if v, ok := strings.CutPrefix(l, "IGGY_TCP_ADDRESS="); ok {
				bn.iggyAddr = strings.TrimSpace(v)
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		bn.b.Fatal(err)
	}
}

// measureTable scans the table once in this process to learn its size as
// stored and as JSON.
func (bn *bench) measureTable(ctx context.Context, c *fluss.Client) error {
	info, err := c.RefreshTable(ctx, bn.table)
	if err != nil {
		return err
	}
	bn.tableID = info.TableID
	ranges, err := c.BucketRanges(ctx, info, "")
	if err != nil {
		return err
	}
	for _, r := range ranges {
		bn.rows += r.End - r.Start
		bn.bucketRows = append(bn.bucketRows, r.End-r.Start)
	}
	enc, err := newRowEncoder(info)
	if err != nil {
		return err
	}
	s, err := c.NewScanner(info)
	if err != nil {
		return err
	}
	defer s.Close()
	extra := int64(len(mappingExtra(bn.table)))
	bn.arrowSchema = s.ArrowSchema()
	bn.ipcBytes = map[string]int64{}
	var buf []byte
	err = s.ReadRanges(ctx, ranges, func(sb *fluss.ScanBatch) error {
		if err := enc.Bind(sb.Record); err != nil {
			return err
		}
		if err := addIPCSizes(bn.ipcBytes, bn.arrowSchema, sb.Record); err != nil {
			return err
		}
		for i := 0; i < sb.NumRows(); i++ {
			buf = enc.AppendRow(buf[:0], i)
			bn.jsonBytes += int64(len(buf))
			bn.mappedBytes += int64(len(buf)) + extra
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("measuring %s: %w", bn.table, err)
	}
	bn.flussBytes = s.Stats().RecordsBytes
	return nil
}

// mappingExtra is what config/fluss_to_iggy.yaml's mapping adds to a row
// (with a timestamp of typical length), as it appears in the payload.
func mappingExtra(table fluss.TablePath) string {
	return fmt.Sprintf(`,"ingested_at":"2026-01-31T12:00:00.123456789Z","source":"fluss:%s"`, table)
}

// runProc runs a process to its end and returns its result; rows comes
// from the caller.
func runProc(bin string, env []string, timeout time.Duration, args ...string) (*e2e.Proc, error) {
	p, err := e2e.Start(bin, env, args...)
	if err != nil {
		return nil, err
	}
	if err := p.Wait(timeout); err != nil {
		return p, fmt.Errorf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, p.Tail(30))
	}
	return p, nil
}

// selfTimed parses the {"rows":N,"seconds":S,...} line both scan tools print.
func selfTimed(p *e2e.Proc) (result, error) {
	var r result
	out := strings.TrimSpace(p.Output())
	lines := strings.Split(out, "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
		return r, fmt.Errorf("unexpected output %q: %w", out, err)
	}
	r.PeakRSSKB = p.PeakRSSKB()
	r.ScanCPU, r.CPU = r.CPU, p.CPUTime().Seconds()
	return r, nil
}

func (bn *bench) javaScan() (result, error) {
	p, err := runProc("bash", []string{flusstest.EnvBootstrap + "=" + bn.bootstrap}, 20*time.Minute,
		filepath.Join(bn.root, "scripts", "fluss-java.sh"), "scan", bn.table.String(), "--count-only")
	if err != nil {
		return result{}, err
	}
	return selfTimed(p)
}

func (bn *bench) goScan() (result, error) {
	p, err := runProc(bn.bin, nil, 20*time.Minute, "fluss", "scan", "--bootstrap", bn.bootstrap, "--count-only", bn.table.String())
	if err != nil {
		return result{}, err
	}
	return selfTimed(p)
}

// binaryEnv is the environment of a pipeline run of the binary.
func (bn *bench) binaryEnv(table fluss.TablePath, stream string) []string {
	state, _ := os.MkdirTemp(bn.work, "state")
	return []string{
		"FLUSS_BOOTSTRAP=" + bn.bootstrap,
		"FLUSS_DATABASE=" + table.Database,
		"FLUSS_TABLE=" + table.Table,
		"IGGY_TCP_ADDRESS=" + bn.iggyAddr,
		"IGGY_USERNAME=iggy", "IGGY_PASSWORD=iggy",
		"IGGY_STREAM=" + stream,
		"FLUSS_IGGY_HTTP_ADDRESS=127.0.0.1:0",
		"FLUSS_IGGY_STATE_DIR=" + state,
		shippedGC[0], shippedGC[1],
	}
}

func (bn *bench) newStream() string {
	bn.streamSeq++
	return fmt.Sprintf("bench_%d_%d", os.Getpid(), bn.streamSeq)
}

// timedRun runs the binary and measures its wall time (start-up included).
func (bn *bench) timedRun(env []string, rows int64, args ...string) (result, error) {
	p, err := runProc(bn.bin, env, 30*time.Minute, args...)
	if err != nil {
		return result{}, err
	}
	return result{Rows: rows, Seconds: p.Elapsed().Seconds(), PeakRSSKB: p.PeakRSSKB(), CPU: p.CPUTime().Seconds()}, nil
}

func (bn *bench) inputDropConfig(format string) (string, error) {
	conf := fmt.Sprintf(`http:
  address: 127.0.0.1:0
logger:
  level: warn
input:
  fluss:
    bootstrap_servers: [ "${FLUSS_BOOTSTRAP}" ]
    database: ${FLUSS_DATABASE}
    table: ${FLUSS_TABLE}
    payload_format: %s
    end_at: latest
    checkpoint_cache: checkpoints
output:
  drop: {}
`, format)
	path := filepath.Join(bn.work, "input_"+format+".yaml")
	return path, os.WriteFile(path, []byte(conf), 0o644)
}

func (bn *bench) inputDrop(format string) (result, error) {
	conf, err := bn.inputDropConfig(format)
	if err != nil {
		return result{}, err
	}
	return bn.timedRun(bn.binaryEnv(bn.table, ""), bn.rows, "run", "-r", filepath.Join(bn.root, "config", "resources", "bbolt.yaml"), conf)
}

func (bn *bench) startup() (result, error) {
	conf, err := bn.inputDropConfig("json")
	if err != nil {
		return result{}, err
	}
	return bn.timedRun(bn.binaryEnv(bn.empty, ""), 0, "run", "-r", filepath.Join(bn.root, "config", "resources", "bbolt.yaml"), conf)
}

// childStage runs this test binary as a child in mode "output" or "sdk".
func (bn *bench) childStage(mode string) (result, error) {
	env := []string{
		envChild + "=" + mode,
		flusstest.EnvBootstrap + "=" + bn.bootstrap,
		envTable + "=" + bn.table.String(),
		"IGGY_TCP_ADDRESS=" + bn.iggyAddr,
		"IGGY_STREAM=" + bn.newStream(),
		envRows + "=" + strconv.FormatInt(bn.rows, 10),
	}
	p, err := runProc(os.Args[0], env, 30*time.Minute, "-test.run=^$")
	if err != nil {
		return result{}, err
	}
	sc := bufio.NewScanner(strings.NewReader(p.Output()))
	var last string
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "{") {
			last = sc.Text()
		}
	}
	var r result
	if err := json.Unmarshal([]byte(last), &r); err != nil {
		return r, fmt.Errorf("child %s printed %q: %w", mode, p.Output(), err)
	}
	r.PeakRSSKB = p.PeakRSSKB()
	r.ScanCPU, r.CPU = r.CPU, p.CPUTime().Seconds()
	return r, nil
}
