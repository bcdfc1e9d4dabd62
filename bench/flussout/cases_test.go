package flussout_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

// measured is what one run of a writer cost.
type measured struct {
	wall time.Duration // the whole run, start-up included
	cpu  time.Duration // user + system CPU of the writer's process(es)
	self time.Duration // the Java tool's own timing of its write loop; 0 for ours
	// server is the tablet servers' CPU over the run (-1 when unknown; see
	// serverCPU).
	server time.Duration
}

// javaOpts are the JVM options the Java writer runs with, added to
// $FLUSS_TOOL_JAVA_OPTS. fluss-java.sh stops the JIT at C1 for every
// command but `scan --count-only` (short commands start faster); a writer
// of a million rows is not short, so it gets the full JIT, as the Java scan
// does in bench/pipeline.
const javaOpts = "-XX:TieredStopAtLevel=4"

// runJava runs `fluss-java.sh COMMAND TABLE --file FILE` (append or
// upsert) and measures the child: wall time from start to exit, CPU from
// its rusage (the JVM, the shell script and the classpath lookup it runs),
// and the tool's own "seconds" (its write loop: reading and parsing the
// file, writing, waiting for every acknowledgement).
func runJava(ctx context.Context, root, boot, command string, table fluss.TablePath, file string) (measured, error) {
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "scripts", "fluss-java.sh"),
		command, table.String(), "--file", file)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), flusstest.EnvBootstrap+"="+boot,
		"FLUSS_TOOL_JAVA_OPTS="+strings.TrimSpace(os.Getenv("FLUSS_TOOL_JAVA_OPTS")+" "+javaOpts))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	m := measured{wall: time.Since(start)}
	if err != nil {
		return m, fmt.Errorf("fluss-java.sh %s %s: %w\n%s", command, table, err, errb.String())
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.cpu = tv(ru.Utime) + tv(ru.Stime)
	}
	var status struct {
		Rows    int64   `json:"rows"`
		Seconds float64 `json:"seconds"`
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &status); err != nil {
		return m, fmt.Errorf("fluss-java.sh %s %s printed %q: %w", command, table, out.String(), err)
	}
	m.self = time.Duration(status.Seconds * float64(time.Second))
	return m, nil
}

func tv(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }

// cpuTime is the user and system CPU this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return tv(ru.Utime) + tv(ru.Stime)
}

// shippedGCPercent is the container image's GOGC (see the Dockerfile).
const shippedGCPercent = 200

// batchPeriod flushes the last, partial batch: without a period it would
// wait for more messages forever, as the file input closes only once every
// message it read is acknowledged. It costs the run at most that long at its
// end; mid-stream a batch fills in far less.
const batchPeriod = "50ms"

// outputYAML is the `fluss` output writing table, batches of batchRows
// messages (or what batchPeriod gathers), maxInFlight batches at once.
func outputYAML(boot string, table fluss.TablePath, batchRows, maxInFlight int) string {
	return fmt.Sprintf(`fluss:
  bootstrap_servers: [ %q ]
  database: %s
  table: %s
  max_in_flight: %d
  batching:
    count: %d
    period: %s
`, boot, table.Database, table.Table, maxInFlight, batchRows, batchPeriod)
}

// Inputs of the stream runs: the `file` input, one message per line, or
// linesInput, batches of batchRows lines.
const (
	inputFile    = "file"
	inputBatches = "batches"
)

// inputYAML is the input reading the rows file.
func inputYAML(kind, file string, batchRows int) string {
	if kind == inputBatches {
		return fmt.Sprintf("%s:\n  path: %q\n  count: %d\n", linesInputName, file, batchRows)
	}
	return fmt.Sprintf("file:\n  paths: [ %q ]\n  scanner:\n    lines: {}\n", file)
}

// runStream runs a Benthos stream in this process, input → output, until the
// input ends and every message is acknowledged, with the container image's
// GOGC. CPU is this process's rusage over the run: the stream is all it
// does meanwhile.
func runStream(ctx context.Context, input, output string) (measured, error) {
	env, err := benchEnv()
	if err != nil {
		return measured{}, err
	}
	b := env.NewStreamBuilder()
	if err := b.SetLoggerYAML("level: warn"); err != nil {
		return measured{}, err
	}
	if err := b.AddInputYAML(input); err != nil {
		return measured{}, err
	}
	if err := b.AddOutputYAML(output); err != nil {
		return measured{}, err
	}
	s, err := b.Build()
	if err != nil {
		return measured{}, err
	}
	defer debug.SetGCPercent(debug.SetGCPercent(shippedGCPercent))
	stop, err := startProfile()
	if err != nil {
		return measured{}, err
	}
	defer stop()
	cpu0, start := cpuTime(), time.Now()
	if err := s.Run(ctx); err != nil {
		return measured{}, fmt.Errorf("stream %s -> %s: %w", strings.SplitN(input, ":", 2)[0], strings.SplitN(output, ":", 2)[0], err)
	}
	return measured{wall: time.Since(start), cpu: cpuTime() - cpu0}, nil
}

// startProfile starts a CPU profile into $FLUSS_BENCH_OUT_CPUPROFILE when
// it is set (each stream run overwrites it: the last one wins) and returns
// the function that stops it.
func startProfile() (func(), error) {
	path := os.Getenv("FLUSS_BENCH_OUT_CPUPROFILE")
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile %s: %w", path, err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
