package flussinput

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

// Crash test parameters: 200,000 rows appended in steps while the binary
// runs and is killed with SIGKILL five times.
const (
	crashRows        = 200_000
	crashSteps       = 10
	crashKills       = 5
	crashLimit       = 8   // checkpoint_limit
	crashBatchRows   = 250 // max_batch_rows
	crashDupAllowed  = crashLimit * crashBatchRows
	crashFinalWait   = 4 * time.Minute
	crashMinRunTime  = 1500 * time.Millisecond
	crashRunTimeSpan = 3500 * time.Millisecond
)

// binary returns the fluss-iggy binary: $FLUSS_IGGY_BIN, or one built
// from this checkout into a temporary directory.
func binary(t *testing.T) string {
	t.Helper()
	if b := os.Getenv("FLUSS_IGGY_BIN"); b != "" {
		return b
	}
	root, err := flusstest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "fluss-iggy")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", out, "./cmd/fluss-iggy")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the binary: %v\n%s", err, b)
	}
	return out
}

func TestIntegrationCrashRecovery(t *testing.T) {
	if testing.Short() && !flusstest.InCI() {
		t.Skip("crash test skipped in -short mode (it runs whenever CI is set)")
	}
	boot, c := cluster(t)
	bin := binary(t)
	table := createTable(t, c, "crash", tableSpec{columns: "id BIGINT, name STRING", buckets: 4})
	dir := t.TempDir()

	config := func(endAt string) string {
		p := filepath.Join(dir, "config-"+endAt+".yaml")
		y := fmt.Sprintf(`http:
  enabled: false
logger:
  level: warn
input:
  fluss:
    bootstrap_servers: [ %q ]
    database: %s
    table: %s
    checkpoint_cache: offs
    checkpoint_limit: %d
    max_batch_rows: %d
    fetch_max_wait: 100ms
    end_at: %s
  processors:
    - mapping: 'root = "%%v %%v %%v".format(@fluss_bucket, @fluss_offset, this.id)'
output:
  file:
    path: ${CRASH_OUT}
    codec: lines
cache_resources:
  - label: offs
    bbolt:
      path: %s
`, boot, testDB.name, table, crashLimit, crashBatchRows, endAt, filepath.Join(dir, "checkpoints.db"))
		if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	streaming, bounded := config("none"), config("latest")

	start := func(cfg string, run int) (*exec.Cmd, string) {
		out := filepath.Join(dir, fmt.Sprintf("out-%d.txt", run))
		cmd := exec.Command(bin, "run", cfg)
		cmd.Env = append(os.Environ(), "CRASH_OUT="+out)
		logf, err := os.Create(filepath.Join(dir, fmt.Sprintf("run-%d.log", run)))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = logf.Close()
		})
		return cmd, out
	}

	// Rows stream in while the binary runs and is killed.
	var (
		appendDone = make(chan struct{})
		appendErr  error
		appendOnce sync.Once
	)
	go func() {
		defer close(appendDone)
		step := crashRows / crashSteps
		for i := 0; i < crashSteps; i++ {
			cmd := exec.Command("bash", "scripts/fluss-java.sh", "append", testDB.name+"."+table,
				"--rows", strconv.Itoa(step), "--start", strconv.Itoa(i*step), "--flush-every", "2000")
			root, _ := flusstest.RepoRoot()
			cmd.Dir = root
			cmd.Env = append(os.Environ(), flusstest.EnvBootstrap+"="+boot)
			if b, err := cmd.CombinedOutput(); err != nil {
				appendOnce.Do(func() { appendErr = fmt.Errorf("append step %d: %v\n%s", i, err, b) })
				return
			}
		}
	}()

	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	t.Logf("crash test: kill moments from seed %d", seed)
	var outs []string
	for run := 0; run < crashKills; run++ {
		cmd, out := start(streaming, run)
		outs = append(outs, out)
		// A random moment, then the next instant the output grows: the
		// kill lands while rows are being written.
		wait := crashMinRunTime + time.Duration(rng.Int64N(int64(crashRunTimeSpan)))
		began := time.Now()
		time.Sleep(wait)
		size := fileSize(out)
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if s := fileSize(out); s != size {
				break
			}
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		t.Logf("run %d: killed after %s", run, time.Since(began).Round(time.Millisecond))
	}
	<-appendDone
	if appendErr != nil {
		t.Fatal(appendErr)
	}

	// The last run reads up to the end and exits by itself.
	cmd, out := start(bounded, crashKills)
	outs = append(outs, out)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			logs, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("run-%d.log", crashKills)))
			t.Fatalf("final run: %v\n%s", err, tail(string(logs), 40))
		}
	case <-time.After(crashFinalWait):
		_ = cmd.Process.Kill()
		logs, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("run-%d.log", crashKills)))
		t.Fatalf("final run did not finish within %s\n%s", crashFinalWait, tail(string(logs), 40))
	}

	// Every (bucket, offset) at least once; duplicates per kill bounded.
	latest := latestOffsets(t, c, table, fluss.NoPartition)
	type pos struct{ b, o int64 }
	seen := map[pos]bool{}
	ids := map[int64]bool{}
	total := 0
	for run, path := range outs {
		lines, err := readLines(path)
		if err != nil {
			t.Fatalf("run %d output: %v", run, err)
		}
		dups := 0
		for _, l := range lines {
			var p pos
			var id int64
			if _, err := fmt.Sscanf(l, "%d %d %d", &p.b, &p.o, &id); err != nil {
				continue // a line cut by the kill
			}
			if seen[p] {
				dups++
			}
			seen[p] = true
			ids[id] = true
		}
		total += len(lines)
		if run == 0 {
			t.Logf("run %d: %d rows written", run, len(lines))
			continue
		}
		t.Logf("run %d: %d rows written, %d delivered again after kill %d (allowed %d)", run, len(lines), dups, run, crashDupAllowed)
		if dups > crashDupAllowed {
			t.Errorf("kill %d: %d rows delivered twice, more than checkpoint_limit x max_batch_rows = %d", run, dups, crashDupAllowed)
		}
	}
	var sum int64
	for b, l := range latest {
		sum += l
		for o := int64(0); o < l; o++ {
			if !seen[pos{int64(b), o}] {
				t.Errorf("bucket %d offset %d never written", b, o)
				break
			}
		}
	}
	if sum != crashRows || len(ids) != crashRows {
		t.Errorf("table holds %d rows, %d distinct ids written; want %d", sum, len(ids), crashRows)
	}
	t.Logf("crash test: %d rows in the table, %d lines written over %d runs (%d duplicates)", sum, total, len(outs), total-len(seen))
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return st.Size()
}

func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out, sc.Err()
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
