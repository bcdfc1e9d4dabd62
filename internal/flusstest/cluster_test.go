package flusstest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestUniqueName(t *testing.T) {
	valid := regexp.MustCompile(`^[A-Za-z0-9_]{1,200}$`)
	seen := map[string]bool{}
	for _, prefix := range []string{"orders", "my-table.v2", "", "__x", strings.Repeat("a", 300)} {
		for i := 0; i < 3; i++ {
			n := UniqueName(prefix)
			if !valid.MatchString(n) {
				t.Errorf("UniqueName(%q) = %q: not a valid Fluss name", prefix, n)
			}
			if strings.HasPrefix(n, "__") {
				t.Errorf("UniqueName(%q) = %q starts with __ (reserved)", prefix, n)
			}
			if seen[n] {
				t.Errorf("UniqueName(%q) = %q repeated", prefix, n)
			}
			seen[n] = true
		}
	}
	if n := UniqueName("orders"); !strings.HasPrefix(n, "orders_") {
		t.Errorf("UniqueName(orders) = %q, want the prefix kept", n)
	}
}

func TestRepoRoot(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Errorf("RepoRoot() = %s, which has no go.mod: %v", root, err)
	}
}

func TestVersion(t *testing.T) {
	for _, c := range []struct {
		v            string
		major, minor int
		want         bool
	}{
		{"0.7.0", 0, 8, false},
		{"0.7.0", 0, 7, true},
		{"0.8.0-incubating", 0, 8, true},
		{"0.9.1-incubating", 0, 10, false},
		{"0.10.0", 0, 9, true},
		{"1.0", 0, 11, true},
		{"latest", 0, 0, false},
	} {
		if got := AtLeast(c.v, c.major, c.minor); got != c.want {
			t.Errorf("AtLeast(%q, %d, %d) = %v, want %v", c.v, c.major, c.minor, got, c.want)
		}
	}
	t.Setenv(EnvVersion, "0.7.0")
	if v := Version(t); v != "0.7.0" {
		t.Errorf("Version() with %s=0.7.0 = %q", EnvVersion, v)
	}
	t.Setenv(EnvVersion, "")
	if v := Version(t); !AtLeast(v, 0, 0) {
		t.Errorf("Version() without %s = %q, want the script's default release", EnvVersion, v)
	}
}

// TestSharedClusterAnswers checks that the shared cluster's bootstrap address
// accepts TCP connections.
func TestSharedClusterAnswers(t *testing.T) {
	addr := Require(t)
	dial(t, addr)
	if again := Bootstrap(); again != addr {
		t.Errorf("Bootstrap() = %q after Require returned %q", again, addr)
	}
}

// TestOwnCluster starts a second cluster (two tablet servers, SASL) beside
// the shared one, restarts a tablet server, talks to the cluster through the
// Java tool with SASL credentials, and checks that Stop leaves neither a
// process nor the directory behind.
func TestOwnCluster(t *testing.T) {
	c := StartCluster(t, Options{Tablets: 2, SASL: true, Conf: map[string]string{"log.segment.file-size": "1mb"}})
	dial(t, c.Bootstrap)
	dial(t, c.PlaintextBootstrap)
	if c.Tablets != 2 || c.Version == "" || c.Dir == "" || c.Username == "" || c.Password == "" {
		t.Errorf("cluster fields not filled in: %+v", c)
	}
	if want := Version(t); c.Version != want {
		t.Errorf("cluster runs Fluss %q, want %q (Version)", c.Version, want)
	}
	if shared := Require(t); shared == c.Bootstrap {
		t.Errorf("own cluster has the shared cluster's address %s", shared)
	}
	conf, err := os.ReadFile(filepath.Join(c.Dir, "conf", "server.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(conf, []byte("log.segment.file-size: 1mb\n")) {
		t.Errorf("server.yaml lacks the extra entry:\n%s", conf)
	}

	pids := c.Pids()
	for _, name := range []string{"zookeeper", "coordinator", "tablet-0", "tablet-1", "watchdog"} {
		if pids[name] == 0 || !ownedProcessAlive(pids[name], c.Dir) {
			t.Fatalf("process %s (pid %d) is not running; pids %v", name, pids[name], pids)
		}
	}

	// A controlled stop and a restart of tablet server 1.
	if err := c.StopTabletServer(1); err != nil {
		t.Fatal(err)
	}
	if ownedProcessAlive(pids["tablet-1"], c.Dir) {
		t.Fatalf("tablet-1 (pid %d) still runs after StopTabletServer", pids["tablet-1"])
	}
	if err := c.StartTabletServer(1); err != nil {
		t.Fatal(err)
	}
	restarted := c.Pids()["tablet-1"]
	if restarted == pids["tablet-1"] || !ownedProcessAlive(restarted, c.Dir) {
		t.Fatalf("tablet-1 not restarted: old pid %d, new pid %d", pids["tablet-1"], restarted)
	}
	pids["tablet-1"] = restarted
	superviseRestartsTablet(t, c, pids)

	// The official client sees both tablet servers through the SASL listener.
	c.RunJava(t, "wait-ready", "--tablets", "2")
	db := UniqueName("flusstest")
	c.RunJava(t, "create-database", db)
	before, after := db+".before", db+".after"
	c.RunJava(t, "create-table", before, "--columns", "id BIGINT, name STRING", "--buckets", "2")
	superviseRestartsWedgedCoordinator(t, c, pids)
	// The new coordinator knows the table made before it and elects the
	// leaders of a new one (what a wedged coordinator no longer does).
	c.RunJava(t, "create-table", after, "--columns", "id BIGINT, name STRING", "--buckets", "2")
	for _, table := range []string{before, after} {
		c.RunJava(t, "append", table, "--rows", "20")
		if n := strings.Count(strings.TrimSpace(c.RunJava(t, "scan", table)), "\n") + 1; n != 20 {
			t.Errorf("table %s: scan found %d rows after the coordinator restart, want 20", table, n)
		}
	}
	if tail := c.LogTail(5); !strings.Contains(tail, "coordinator.log") {
		t.Errorf("LogTail does not show the coordinator log:\n%s", tail)
	}

	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for name, pid := range pids {
		for ownedProcessAlive(pid, c.Dir) {
			if time.Now().After(deadline) {
				t.Fatalf("process %s (pid %d) still runs after Stop", name, pid)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if _, err := os.Stat(c.Dir); !os.IsNotExist(err) {
		t.Errorf("cluster directory %s still exists after Stop (err %v)", c.Dir, err)
	}
	if err := c.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

// superviseRestartsTablet runs `fluss-cluster.sh supervise`, kills tablet
// server 0 as in a crash, and waits for the supervisor to bring it back and
// say so (supervise.log, and diagnose's report). The supervisor is left
// running: the caller's Stop must stop it (pids["supervise"]).
func superviseRestartsTablet(t *testing.T, c *Cluster, pids map[string]int) {
	t.Helper()
	out, err := os.Create(filepath.Join(t.TempDir(), "supervise.out"))
	if err != nil {
		t.Fatal(err)
	}
	sup := exec.Command("bash", filepath.Join(c.root, "scripts", "fluss-cluster.sh"), "supervise", "--dir", c.Dir, "--interval", "1")
	sup.Dir, sup.Stdout, sup.Stderr = c.root, out, out
	if err := sup.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = sup.Wait() }()
	if err := c.KillTabletServer(0); err != nil {
		t.Fatal(err)
	}
	if b, ok := waitSuperviseLog(c, "tablet server 0 is back", "tablet server 0 could not be restarted"); !ok {
		printed, _ := os.ReadFile(out.Name())
		t.Fatalf("supervise did not restart tablet server 0 within 4 minutes; supervise.log:\n%s\nits output:\n%s", b, printed)
	}
	now := c.Pids()
	if now["tablet-0"] == pids["tablet-0"] || !ownedProcessAlive(now["tablet-0"], c.Dir) {
		t.Fatalf("tablet-0 not restarted by supervise: old pid %d, new pid %d", pids["tablet-0"], now["tablet-0"])
	}
	report, err := runScript(c.root, nil, commandTimeout, "diagnose", "--dir", c.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"tablet-0 pid " + strconv.Itoa(now["tablet-0"]) + " running",
		"tablet server 0: its process (pid " + strconv.Itoa(pids["tablet-0"]) + ") has exited; restarting it",
		"--- coordinator.log:",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("diagnose does not say %q:\n%s", want, report)
		}
	}
	pids["tablet-0"], pids["supervise"] = now["tablet-0"], now["supervise"]
}

// superviseRestartsWedgedCoordinator writes into the coordinator's log the
// line a wedged Fluss coordinator logs for every change it fails (the wedge
// itself cannot be caused on purpose), and waits for the supervisor that
// superviseRestartsTablet left running to restart the coordinator.
func superviseRestartsWedgedCoordinator(t *testing.T, c *Cluster, pids map[string]int) {
	t.Helper()
	logPath := filepath.Join(c.Dir, "logs", "coordinator.log")
	f, err := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = fmt.Fprintf(f, "%s ERROR [coordinator-event-thread] CoordinatorEventProcessor - Uncaught error processing event "+
		"java.lang.IllegalStateException: The NotifyLeaderAndIsr batch request from coordinator to tablet server "+
		"is not empty while creating a new one. Some NotifyLeaderAndIsr request in {} might be lost.\n",
		time.Now().Format("2006-01-02 15:04:05.000"))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := waitSuperviseLog(c, "coordinator is back", "coordinator could not be restarted"); !ok {
		t.Fatalf("supervise did not restart the wedged coordinator; supervise.log:\n%s\n%s", b, c.LogTail(40))
	}
	now := c.Pids()
	if now["coordinator"] == pids["coordinator"] || !ownedProcessAlive(now["coordinator"], c.Dir) {
		t.Fatalf("coordinator not restarted: old pid %d, new pid %d", pids["coordinator"], now["coordinator"])
	}
	pids["coordinator"] = now["coordinator"]
}

// waitSuperviseLog waits up to 4 minutes for the supervisor's log to say
// done, and reports false at once when it says failed. It returns the log.
func waitSuperviseLog(c *Cluster, done, failed string) ([]byte, bool) {
	logFile := filepath.Join(c.Dir, "supervise.log")
	for deadline := time.Now().Add(4 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		b, _ := os.ReadFile(logFile)
		if bytes.Contains(b, []byte(done)) {
			return b, true
		}
		if bytes.Contains(b, []byte(failed)) || time.Now().After(deadline) {
			return b, false
		}
	}
}

func dial(t *testing.T, addr string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("bootstrap %s does not answer: %v", addr, err)
	}
	conn.Close()
}

// ownedProcessAlive reports whether pid is a live (not zombie) process whose
// command line names dir, so a recycled pid does not count.
func ownedProcessAlive(pid int, dir string) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	proc := filepath.Join("/proc", strconv.Itoa(pid))
	stat, err := os.ReadFile(filepath.Join(proc, "stat"))
	if err != nil {
		return false
	}
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
		return false
	}
	cmdline, err := os.ReadFile(filepath.Join(proc, "cmdline"))
	return err == nil && bytes.Contains(cmdline, []byte(dir))
}

// TestPickPortReserves picks 300 ports in separate subshells, as the cluster
// script does: each must be new (without a reservation shared between the
// pickers, 300 random picks among 12,000 ports repeat one with a probability
// of 97 %), reserved, and below the ephemeral range.
func TestPickPortReserves(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	script := `die() { echo "die: $*" >&2; exit 1; }
source "$1/scripts/lib/fluss-ready.sh"
for ((n = 0; n < 300; n++)); do p="$(pick_port)" || exit 1; echo "$p"; done`
	cmd := exec.Command("bash", "-c", script, "pick", root)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pick_port: %v\n%s", err, out)
	}
	ephemeral := 65536
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			ephemeral, _ = strconv.Atoi(f[0])
		}
	}
	seen := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		n, err := strconv.Atoi(p)
		if err != nil || n < 20000 || (ephemeral > 21000 && n >= ephemeral) {
			t.Fatalf("pick_port gave %q (ephemeral range from %d)", p, ephemeral)
		}
		if seen[p] {
			t.Fatalf("pick_port gave port %s twice", p)
		}
		seen[p] = true
		if _, err := os.Stat(filepath.Join(tmp, "fluss-iggy-ports", p)); err != nil {
			t.Fatalf("port %s not reserved: %v", p, err)
		}
	}
	if len(seen) != 300 {
		t.Fatalf("pick_port gave %d ports, want 300:\n%s", len(seen), out)
	}
}

// TestUpRetriesTakenPort runs upWithRetry against a stand-in script that
// fails like a server whose port was taken: it must start again in a fresh
// directory, and give up at once on any other failure.
func TestUpRetriesTakenPort(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	calls := filepath.Join(root, "calls")
	stub := `#!/bin/bash
echo "$*" >>"` + calls + `"
n=$(wc -l <"` + calls + `")
case "$STUB_MODE" in
bind) ((n < 3)) && { echo "BindException: Address already in use" >&2; exit 1; } ;;
other) echo "no java" >&2; exit 1 ;;
esac
echo FLUSS_BOOTSTRAP=127.0.0.1:1
`
	if err := os.WriteFile(filepath.Join(root, "scripts", "fluss-cluster.sh"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode      string
		wantCalls int
		wantErr   bool
	}{{"bind", 3, false}, {"other", 1, true}} {
		_ = os.Remove(calls)
		dir, stdout, err := upWithRetry(root, []string{"STUB_MODE=" + tc.mode}, []string{"up"})
		if (err != nil) != tc.wantErr {
			t.Fatalf("%s: err = %v, want error %v", tc.mode, err, tc.wantErr)
		}
		b, _ := os.ReadFile(calls)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) != tc.wantCalls {
			t.Fatalf("%s: script ran %d times, want %d:\n%s", tc.mode, len(lines), tc.wantCalls, b)
		}
		if len(lines) > 1 && lines[0] == lines[1] {
			t.Errorf("%s: the retry reused the directory: %q", tc.mode, lines)
		}
		if !tc.wantErr && (!strings.Contains(stdout, "FLUSS_BOOTSTRAP") || !strings.HasSuffix(lines[len(lines)-1], dir)) {
			t.Errorf("%s: dir %q, stdout %q, calls %q", tc.mode, dir, stdout, lines)
		}
		_ = os.RemoveAll(dir)
	}
}
