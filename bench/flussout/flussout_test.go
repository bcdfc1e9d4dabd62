package flussout_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/redpanda-data/benthos/v4/public/components/io"
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
	_ "github.com/fluss-iggy/fluss-iggy/output/fluss"
)

// runTimeout bounds one run of a case.
const runTimeout = 15 * time.Minute

// batchRows is the output's batching count: the pipeline's batch size.
const batchRows = 4096

// rounds is $FLUSS_BENCH_OUT_ROUNDS (default 3): every case runs once per
// round, the cases taking turns, and the best round of each counts.
func rounds() int {
	if n, err := strconv.Atoi(os.Getenv("FLUSS_BENCH_OUT_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 3
}

// bench is one benchmark run: the cluster, the rows file and the tables the
// Java runs' start-up is measured on.
type bench struct {
	b         *testing.B
	boot      string
	root      string
	client    *fluss.Client
	db        string
	rows      int
	file      string // rows lines
	oneRow    string // the first line alone
	startLog  fluss.TablePath
	startPK   fluss.TablePath
	tableSeq  int
	batchRows int
}

// kase is one way of writing the rows.
type kase struct {
	name string
	desc string
	// table is the kind of fresh table each run writes ("" = none: drop).
	table string
	// java names the fluss-java.sh command; its start-up is subtracted.
	java string
	// input of a stream run: inputFile or inputBatches.
	input string
	// maxInFlight of the fluss output (0 = not the fluss output).
	maxInFlight int
	// vs names the case whose rows/s this one's is divided by.
	vs string
}

const (
	tableLog = "log"
	tablePK  = "pk"
)

func cases() []kase {
	const java = "(fluss-client 0.9.1, full JIT, -Xmx1g, SerialGC)"
	const out = "`fluss` output, batching count 4,096 (period 50ms)"
	return []kase{
		{name: "java_append", table: tableLog, java: "append",
			desc: "Java client AppendWriter: `fluss-java.sh append --file` " + java},
		{name: "fluss_output", table: tableLog, input: inputFile, maxInFlight: 1, vs: "java_append",
			desc: "`file` input (lines) → " + out + ", max_in_flight 1 (the default)"},
		{name: "fluss_output_mif4", table: tableLog, input: inputFile, maxInFlight: 4, vs: "java_append",
			desc: "the same, max_in_flight 4"},
		{name: "fluss_output_batches", table: tableLog, input: inputBatches, maxInFlight: 1, vs: "java_append",
			desc: "an input emitting batches of 4,096 lines (as the fluss and iggy inputs emit a batch per poll) → " + out + ", max_in_flight 1"},
		{name: "fluss_output_batches_mif4", table: tableLog, input: inputBatches, maxInFlight: 4, vs: "java_append",
			desc: "the same, max_in_flight 4"},
		{name: "java_upsert", table: tablePK, java: "upsert",
			desc: "Java client UpsertWriter into a primary-key table (id): `fluss-java.sh upsert --file` " + java},
		{name: "fluss_output_pk", table: tablePK, input: inputFile, maxInFlight: 1, vs: "java_upsert",
			desc: "`file` input → " + out + " into a primary-key table, max_in_flight 1"},
		{name: "fluss_output_pk_batches", table: tablePK, input: inputBatches, maxInFlight: 1, vs: "java_upsert",
			desc: "batches of 4,096 lines → " + out + " into a primary-key table, max_in_flight 1"},
		{name: "file_drop", input: inputFile,
			desc: "`file` input → `drop`: the file input's and Benthos' own cost, no Fluss"},
		{name: "batches_drop", input: inputBatches,
			desc: "batches of 4,096 lines → `drop`"},
	}
}

// selected is the cases $FLUSS_BENCH_OUT_CASES names (a comma list; all
// when unset), with the cases their ratios need.
func selected() []kase {
	only := os.Getenv("FLUSS_BENCH_OUT_CASES")
	all := cases()
	if only == "" {
		return all
	}
	names := strings.Split(only, ",")
	for _, k := range all {
		if slices.Contains(names, k.name) && k.vs != "" {
			names = append(names, k.vs)
		}
	}
	return slices.DeleteFunc(all, func(k kase) bool { return !slices.Contains(names, k.name) })
}

// BenchmarkFlussOutput writes the same rows with the Java client's writer
// and with the fluss output (see README.md).
func BenchmarkFlussOutput(b *testing.B) {
	bn := setup(b)
	ks := selected()
	res := map[string]*tally{}
	for round := 0; round < rounds(); round++ {
		for _, k := range ks {
			m, err := bn.run(k)
			if err != nil {
				b.Fatalf("%s, round %d: %v", k.name, round+1, err)
			}
			if res[k.name] == nil {
				res[k.name] = &tally{}
			}
			res[k.name].add(m)
		}
	}
	bn.report(ks, res)
}

// setup connects, writes the rows file and creates the database and the
// tables the Java start-up runs write to; the database is dropped when b
// ends.
func setup(b *testing.B) *bench {
	ctx := context.Background()
	bn := &bench{b: b, boot: flusstest.Require(b), rows: rowCount(), batchRows: batchRows}
	var err error
	if bn.root, err = flusstest.RepoRoot(); err != nil {
		b.Fatal(err)
	}
	if bn.client, err = fluss.NewClient(ctx, fluss.Bootstrap(bn.boot)); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { bn.client.Close() })
	dir := b.TempDir()
	bn.file, bn.oneRow = dir+"/rows.jsonl", dir+"/one.jsonl"
	size, err := writeRows(bn.file, bn.rows)
	if err == nil {
		_, err = writeRows(bn.oneRow, 1)
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d rows, %.1f MB of JSON lines in %s", bn.rows, float64(size)/1e6, bn.file)
	bn.db = flusstest.UniqueName("outbench")
	if err := bn.client.CreateDatabase(ctx, bn.db, nil, false); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = bn.client.DropDatabase(context.Background(), bn.db, true, true) })
	if bn.startLog, err = createTable(ctx, bn.client, bn.db, "java_start_log", false); err != nil {
		b.Fatal(err)
	}
	if bn.startPK, err = createTable(ctx, bn.client, bn.db, "java_start_pk", true); err != nil {
		b.Fatal(err)
	}
	return bn
}

// run runs case k once on a fresh table and checks the Java scan counts
// every row. The tables stay until the database is dropped at the end: a
// table created right after another was dropped was once never given to its
// tablet server (the coordinator missed the creation and later failed the
// drop with a NullPointerException in processDropTable).
func (bn *bench) run(k kase) (result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	if k.table == "" {
		m, err := runStream(ctx, inputYAML(k.input, bn.file, bn.batchRows), "drop: {}\n")
		return result{measured: m}, err
	}
	bn.tableSeq++
	path, err := createTable(ctx, bn.client, bn.db, fmt.Sprintf("%s_%d", k.name, bn.tableSeq), k.table == tablePK)
	if err != nil {
		return result{}, err
	}
	var r result
	if k.java != "" {
		start := bn.startLog
		if k.table == tablePK {
			start = bn.startPK
		}
		r.startUp, err = withServerCPU(func() (measured, error) { return runJava(ctx, bn.root, bn.boot, k.java, start, bn.oneRow) })
		if err != nil {
			return r, err
		}
		r.measured, err = withServerCPU(func() (measured, error) { return runJava(ctx, bn.root, bn.boot, k.java, path, bn.file) })
	} else {
		in, out := inputYAML(k.input, bn.file, bn.batchRows), outputYAML(bn.boot, path, bn.batchRows, k.maxInFlight)
		r.measured, err = withServerCPU(func() (measured, error) { return runStream(ctx, in, out) })
	}
	if err != nil {
		return r, err
	}
	if n := javaCount(bn.b, path); n != int64(bn.rows) {
		return r, fmt.Errorf("the Java scan of %s counts %d rows, want %d", path, n, bn.rows)
	}
	return r, nil
}

// result is one run of a case.
type result struct {
	measured
	startUp measured // the same Java command writing one row (Java cases)
}

// write is the time, CPU and tablet servers' CPU (-1 when unknown) of the
// write itself: for Java, the run minus the start-up run (JVM start, class
// loading, connecting, one row).
func (r result) write() (wall, cpu, server time.Duration) {
	if r.startUp.wall == 0 {
		return r.wall, r.cpu, r.server
	}
	server = -1
	if r.server >= 0 && r.startUp.server >= 0 {
		server = max(r.server-r.startUp.server, 0)
	}
	return max(r.wall-r.startUp.wall, time.Millisecond), max(r.cpu-r.startUp.cpu, 0), server
}

// tally keeps the rounds of one case.
type tally struct {
	all  []result
	best int // index of the fastest write
}

func (t *tally) add(r result) {
	t.all = append(t.all, r)
	w, _, _ := r.write()
	if bw, _, _ := t.all[t.best].write(); w < bw {
		t.best = len(t.all) - 1
	}
}
