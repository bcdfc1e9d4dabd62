package flussinput

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

// The snapshot crash test: 100,000 keys written in rounds, a KV snapshot of
// every bucket, then a start_offset: snapshot pipeline killed with SIGKILL
// three times in its snapshot phase and twice in its changelog phase while
// more changes arrive.
const (
	snapCrashKeys          = 100_000
	snapCrashSnapshotKills = 3
	snapCrashLogKills      = 2
	snapCrashLaterSteps    = 4
	snapCrashLaterRows     = 5_000
)

// snapCrashConfig is the pipeline: every message becomes a line "bucket
// change-type snapshot-id row-json", a pause per batch keeps each phase
// long enough to be killed in.
const snapCrashConfig = `http:
  enabled: false
logger:
  level: warn
input:
  fluss:
    bootstrap_servers: [ %q ]
    database: %s
    table: %s
    start_offset: snapshot
    # The later changes make the cluster (5 s interval) take new snapshots
    # and drop old ones: a bucket killed in the middle of one may find it
    # gone, and then starts its latest one again. Only upserts come after the
    # first snapshot, so rows delivered from an older one cannot leave keys
    # that a newer one no longer has.
    on_unresumable_offset: earliest
    checkpoint_cache: offs
    checkpoint_limit: 8
    max_batch_rows: 500
    fetch_max_wait: 100ms
    end_at: %s
    snapshot_dir: %s
  processors:
    - sleep:
        duration: '${! if batch_index() == 0 { "15ms" } else { "0s" } }'
    - mapping: 'root = "%%v %%v %%v %%s".format(@fluss_bucket, @fluss_change_type, @fluss_snapshot_id.or(-1), content().string())'
output:
  file:
    path: ${CRASH_OUT}
    codec: lines
cache_resources:
  - label: offs
    bbolt:
      path: %s
`

// TestIntegrationSnapshotCrashRecovery: what the killed and restarted
// pipeline wrote, replayed in order, equals the table's contents.
func TestIntegrationSnapshotCrashRecovery(t *testing.T) {
	if testing.Short() && !flusstest.InCI() {
		t.Skip("crash test skipped in -short mode (it runs whenever CI is set)")
	}
	boot, c := cluster(t)
	bin := binary(t)
	table := createTable(t, c, "snapcrash", tableSpec{columns: "id BIGINT, name STRING, amount DOUBLE", primaryKey: []string{"id"}, buckets: 4})
	java(t, "upsert", table, "--rows", strconv.Itoa(snapCrashKeys), "--seed", "1", "--flush-every", "5000")
	java(t, "upsert", table, "--rows", "30000", "--seed", "2", "--flush-every", "5000")
	java(t, "delete", table, "--rows", "10000", "--start", "90000", "--flush-every", "5000")
	waitSnapshots(t, c, table)

	dir := t.TempDir()
	config := func(endAt string) string {
		p := filepath.Join(dir, "config-"+endAt+".yaml")
		y := fmt.Sprintf(snapCrashConfig, boot, testDB.name, table, endAt, filepath.Join(dir, "snapshots"), filepath.Join(dir, "checkpoints.db"))
		if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	streaming, bounded := config("none"), config("latest")
	r := &crashRuns{t: t, bin: bin, dir: dir, rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0))}

	for i := 0; i < snapCrashSnapshotKills; i++ {
		r.killDuring(streaming, true)
	}
	appended := make(chan error, 1)
	go func() { appended <- laterChanges(boot, table) }()
	for i := 0; i < snapCrashLogKills; i++ {
		r.killDuring(streaming, false)
	}
	if err := <-appended; err != nil {
		t.Fatal(err)
	}
	r.runToEnd(bounded)

	got := state{}
	for _, out := range r.outs {
		lines, err := readLines(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			if row, ok := parseCrashLine(l); ok {
				got.apply(t, row)
			}
		}
	}
	want := replayJava(t, javaScan(t, table))
	got.diff(t, want)
	t.Logf("%d runs (%d kills in the snapshot phase, %d in the changelog) give the table's %d keys", len(r.outs), snapCrashSnapshotKills, snapCrashLogKills, len(want))
	// Files of killed runs are removed by the next reader that opens; the
	// last run's are removed when each snapshot ends.
	entries, _ := os.ReadDir(filepath.Join(dir, "snapshots"))
	t.Logf("snapshot_dir holds %d entries after the last run", len(entries))
}

// laterChanges upserts keys in steps while the pipeline reads the changelog.
func laterChanges(boot, table string) error {
	root, err := flusstest.RepoRoot()
	if err != nil {
		return err
	}
	for i := 0; i < snapCrashLaterSteps; i++ {
		cmd := exec.Command("bash", "scripts/fluss-java.sh", "upsert", testDB.name+"."+table,
			"--rows", strconv.Itoa(snapCrashLaterRows), "--start", strconv.Itoa(i*20_000), "--seed", strconv.Itoa(10+i))
		cmd.Dir = root
		cmd.Env = append(os.Environ(), flusstest.EnvBootstrap+"="+boot)
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("later changes, step %d: %v\n%s", i, err, b)
		}
	}
	return nil
}

// parseCrashLine reads "bucket change-type snapshot-id row-json"; a line
// cut by a kill is skipped.
func parseCrashLine(l string) (row, bool) {
	f := strings.SplitN(l, " ", 4)
	if len(f) != 4 || !json.Valid([]byte(f[3])) {
		return row{}, false
	}
	b, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return row{}, false
	}
	return row{Bucket: b, ChangeType: f[1], Row: json.RawMessage(f[3])}, true
}

// crashRuns starts and kills the pipeline binary, one output file per run.
type crashRuns struct {
	t    *testing.T
	bin  string
	dir  string
	rng  *rand.Rand
	outs []string
}

func (r *crashRuns) start(cfg string) (*exec.Cmd, string) {
	n := len(r.outs)
	out := filepath.Join(r.dir, fmt.Sprintf("out-%d.txt", n))
	r.outs = append(r.outs, out)
	cmd := exec.Command(r.bin, "run", cfg)
	cmd.Env = append(os.Environ(), "CRASH_OUT="+out)
	logf, err := os.Create(filepath.Join(r.dir, fmt.Sprintf("run-%d.log", n)))
	if err != nil {
		r.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { _ = cmd.Process.Kill(); _ = logf.Close() })
	return cmd, out
}

// killDuring runs the pipeline until it writes rows of the wanted phase
// (snapshot rows, or changelog rows), lets it run a random moment more,
// and kills it while its output grows.
func (r *crashRuns) killDuring(cfg string, snapshotPhase bool) {
	t := r.t
	cmd, out := r.start(cfg)
	began := time.Now()
	deadline := began.Add(2 * time.Minute)
	for !lastLineInPhase(out, snapshotPhase) {
		if time.Now().After(deadline) {
			logs, _ := os.ReadFile(filepath.Join(r.dir, fmt.Sprintf("run-%d.log", len(r.outs)-1)))
			t.Fatalf("run %d wrote no %s rows within 2 minutes\n%s", len(r.outs)-1, phaseName(snapshotPhase), tail(string(logs), 30))
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Duration(r.rng.Int64N(int64(700 * time.Millisecond))))
	size := fileSize(out)
	for until := time.Now().Add(10 * time.Second); time.Now().Before(until) && fileSize(out) == size; {
		time.Sleep(time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	t.Logf("run %d: killed in the %s phase after %s", len(r.outs)-1, phaseName(snapshotPhase), time.Since(began).Round(time.Millisecond))
}

func phaseName(snapshot bool) string {
	if snapshot {
		return "snapshot"
	}
	return "changelog"
}

// lastLineInPhase reports whether the last whole line of out is a row of
// the snapshot phase (snapshot id >= 0) or of the changelog (-1).
func lastLineInPhase(out string, snapshotPhase bool) bool {
	lines, err := readLines(out)
	if err != nil || len(lines) < 2 {
		return false
	}
	f := strings.SplitN(lines[len(lines)-2], " ", 4)
	return len(f) == 4 && (f[2] != "-1") == snapshotPhase
}

// runToEnd runs the pipeline with end_at: latest until it exits.
func (r *crashRuns) runToEnd(cfg string) {
	cmd, _ := r.start(cfg)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			logs, _ := os.ReadFile(filepath.Join(r.dir, fmt.Sprintf("run-%d.log", len(r.outs)-1)))
			r.t.Fatalf("final run: %v\n%s", err, tail(string(logs), 40))
		}
	case <-time.After(4 * time.Minute):
		_ = cmd.Process.Kill()
		r.t.Fatal("final run did not end within 4 minutes")
	}
}
