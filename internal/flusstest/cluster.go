package flusstest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Timeouts for the cluster script. `up` and `start-tablet` wait at most
// FLUSS_CLUSTER_READY_TIMEOUT (300 s by default) by themselves and then fail
// with the servers' logs; these outer bounds are longer so that the script's
// own, more telling, error comes first. The first `up` also downloads the jars.
const (
	upTimeout      = 10 * time.Minute
	commandTimeout = 6 * time.Minute
)

// Options selects the shape of a cluster started by [StartCluster].
type Options struct {
	// Tablets is the number of TabletServers (ids 0..Tablets-1); 0 means 1.
	Tablets int
	// SASL makes the client listener require SASL/PLAIN. The users are
	// admin/admin-secret (Cluster.Username/Password) and alice/alice-secret.
	SASL bool
	// Conf holds extra server.yaml entries for every server, for example
	// "log.segment.file-size": "1kb". Values may not contain '#'.
	Conf map[string]string
	// Version is the Fluss release to run, e.g. "0.7.0"; "" means
	// $FLUSS_VERSION or, when that is unset, the script's default (see
	// [Version]).
	Version string
}

// Cluster is a running Fluss cluster started by scripts/fluss-cluster.sh.
type Cluster struct {
	// Bootstrap is the client address of the CoordinatorServer, "127.0.0.1:PORT".
	// With SASL it is the SASL listener.
	Bootstrap string
	// PlaintextBootstrap is, for a SASL cluster, a listener without
	// authentication (the servers' internal one); empty otherwise.
	PlaintextBootstrap string
	// ZooKeeper is the address of the cluster's ZooKeeper, "127.0.0.1:PORT".
	ZooKeeper string
	// Username and Password are a SASL/PLAIN user of a SASL cluster.
	Username, Password string
	// Dir is the cluster directory (configuration, data, logs, pid files);
	// Stop deletes it.
	Dir string
	// LogDir holds one .log (and .out) file per process.
	LogDir string
	// Version is the Fluss release that runs.
	Version string
	// Tablets is the number of TabletServers started.
	Tablets int

	root     string
	stopOnce sync.Once
	stopErr  error
}

// StartCluster starts a cluster for one test and stops it when the test ends,
// printing the tail of its logs first if the test failed. It fails the test
// if the cluster does not come up (or skips it, outside CI, when Java is
// missing).
func StartCluster(t testing.TB, opts Options) *Cluster {
	t.Helper()
	start := time.Now()
	c, err := startCluster(opts)
	if err != nil {
		failOrSkip(t, err)
	}
	t.Logf("flusstest: Fluss %s with %d tablet server(s) ready at %s in %s (dir %s)",
		c.Version, c.Tablets, c.Bootstrap, time.Since(start).Round(100*time.Millisecond), c.Dir)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("flusstest: tail of the Fluss logs in %s:\n%s", c.LogDir, c.LogTail(40))
		}
		if err := c.Stop(); err != nil {
			t.Errorf("flusstest: %v", err)
		}
	})
	return c
}

func startCluster(opts Options) (*Cluster, error) {
	if err := checkTools(); err != nil {
		return nil, err
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	tablets := opts.Tablets
	if tablets <= 0 {
		tablets = 1
	}
	args := []string{"up", "--tablets", strconv.Itoa(tablets), "--owner-pid", strconv.Itoa(os.Getpid())}
	if opts.SASL {
		args = append(args, "--sasl")
	}
	keys := make([]string, 0, len(opts.Conf))
	for k := range opts.Conf {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "--conf", k+"="+opts.Conf[k])
	}
	var scriptEnv []string
	if opts.Version != "" {
		scriptEnv = append(scriptEnv, EnvVersion+"="+opts.Version)
	}
	dir, stdout, err := upWithRetry(root, scriptEnv, args)
	if err != nil {
		return nil, err
	}
	env := parseEnv(stdout)
	c := &Cluster{
		Bootstrap:          env["FLUSS_BOOTSTRAP"],
		PlaintextBootstrap: env["FLUSS_PLAINTEXT_BOOTSTRAP"],
		ZooKeeper:          env["FLUSS_ZOOKEEPER"],
		Username:           env["FLUSS_SASL_USERNAME"],
		Password:           env["FLUSS_SASL_PASSWORD"],
		Dir:                dir,
		LogDir:             env["FLUSS_LOG_DIR"],
		Version:            env["FLUSS_VERSION"],
		Tablets:            tablets,
		root:               root,
	}
	if d := env["FLUSS_CLUSTER_DIR"]; d != "" {
		c.Dir = d
	}
	if c.LogDir == "" {
		c.LogDir = filepath.Join(c.Dir, "logs")
	}
	if c.Bootstrap == "" {
		_ = c.Stop()
		return nil, fmt.Errorf("fluss-cluster.sh up printed no FLUSS_BOOTSTRAP line; its output was:\n%s", stdout)
	}
	return c, nil
}

// bindAttempts is how many times upWithRetry starts a cluster whose server
// found its port taken: the script reserves the ports it picks against its
// own kind, but any other program may bind one between the pick and the
// server's start.
const bindAttempts = 3

// upWithRetry runs `fluss-cluster.sh up` with args in a new directory, again
// with fresh ports (and directory) while a server fails with "Address already
// in use". It returns the directory and the script's stdout.
func upWithRetry(root string, env, args []string) (string, string, error) {
	for attempt := 1; ; attempt++ {
		dir, err := os.MkdirTemp("", "fluss-iggy-test-")
		if err != nil {
			return "", "", fmt.Errorf("creating the cluster directory: %w", err)
		}
		stdout, err := runScript(root, env, upTimeout, append(append([]string(nil), args...), "--dir", dir)...)
		if err == nil {
			return dir, stdout, nil
		}
		// `up` stops what it started and deletes the directory on failure.
		_ = os.RemoveAll(dir)
		if attempt == bindAttempts || !strings.Contains(err.Error(), "Address already in use") {
			return "", "", err
		}
	}
}

// Stop stops every process of the cluster at once (SIGKILL: nothing of a
// throwaway cluster needs a clean shutdown) and deletes its directory. It is
// safe to call more than once.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		_, err := runScript(c.root, nil, commandTimeout, "down", "--kill", "--dir", c.Dir)
		if err != nil {
			c.stopErr = fmt.Errorf("stopping the Fluss cluster in %s: %w", c.Dir, err)
		}
	})
	return c.stopErr
}

// KillTabletServer kills TabletServer id with SIGKILL, as in a crash. Its
// ZooKeeper session lives on until it times out (15 s), so the coordinator
// notices the loss only then.
func (c *Cluster) KillTabletServer(id int) error {
	return c.tabletCommand("kill-tablet", id, "--signal", "KILL")
}

// StopTabletServer stops TabletServer id with SIGTERM (a controlled
// shutdown) and waits for it to exit.
func (c *Cluster) StopTabletServer(id int) error {
	return c.tabletCommand("kill-tablet", id, "--signal", "TERM")
}

// StartTabletServer (re)starts TabletServer id with its old data directory
// and waits until the coordinator has registered it again. After a SIGKILL
// that takes up to the ZooKeeper session timeout.
func (c *Cluster) StartTabletServer(id int) error {
	return c.tabletCommand("start-tablet", id)
}

func (c *Cluster) tabletCommand(cmd string, id int, extra ...string) error {
	args := append([]string{cmd, strconv.Itoa(id), "--dir", c.Dir}, extra...)
	if _, err := runScript(c.root, nil, commandTimeout, args...); err != nil {
		return fmt.Errorf("%s %d: %w", cmd, id, err)
	}
	return nil
}

// Pids returns the process ids of the cluster's processes by name
// ("zookeeper", "coordinator", "tablet-0", ..., and "watchdog", the helper
// that stops the cluster when the test binary exits).
func (c *Cluster) Pids() map[string]int {
	pids := map[string]int{}
	files, _ := filepath.Glob(filepath.Join(c.Dir, "pids", "*.pid"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
			pids[strings.TrimSuffix(filepath.Base(f), ".pid")] = pid
		}
	}
	return pids
}

// LogTail returns the last n lines of each of the cluster's log files, each
// under a header naming the file.
func (c *Cluster) LogTail(n int) string {
	files, _ := filepath.Glob(filepath.Join(c.LogDir, "*"))
	sort.Strings(files)
	var b strings.Builder
	for _, f := range files {
		lines, err := tailLines(f, n)
		if err != nil || len(lines) == 0 {
			continue
		}
		fmt.Fprintf(&b, "===== %s (last %d lines) =====\n", f, len(lines))
		for _, l := range lines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	if b.Len() == 0 {
		return "(no logs in " + c.LogDir + ")"
	}
	return b.String()
}

// tailLines returns the last n lines of a file, reading at most its last 1 MiB.
func tailLines(path string, n int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	const maxRead = 1 << 20
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > maxRead {
		if _, err := f.Seek(st.Size()-maxRead, 0); err != nil {
			return nil, err
		}
	}
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), maxRead)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > 2*n {
			lines = append(lines[:0], lines[len(lines)-n:]...)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines, sc.Err()
}

// runScript runs scripts/fluss-cluster.sh with args and extra environment
// entries (KEY=VALUE) and returns its stdout; on failure the error carries
// its stderr (which includes log tails).
func runScript(root string, env []string, timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	script := filepath.Join(root, "scripts", "fluss-cluster.sh")
	cmd := exec.CommandContext(ctx, "bash", append([]string{script}, args...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("timed out after %s: %w", timeout, err)
		}
		return stdout.String(), fmt.Errorf("fluss-cluster.sh %s: %w\n%s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// parseEnv reads KEY=VALUE lines.
func parseEnv(out string) map[string]string {
	env := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if ok && k != "" {
			env[k] = v
		}
	}
	return env
}
