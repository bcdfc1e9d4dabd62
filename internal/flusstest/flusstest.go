// Package flusstest gives integration tests a real Apache Fluss cluster.
//
// A package that needs Fluss calls [Main] from its TestMain:
//
//	func TestMain(m *testing.M) { flusstest.Main(m) }
//
// and its tests ask for the cluster's address with [Require] (or
// [Bootstrap]). If the environment variable FLUSS_BOOTSTRAP is set, that
// cluster is used as it is. Otherwise the first test that asks starts one with
// scripts/fluss-cluster.sh (ZooKeeper, a CoordinatorServer and one
// TabletServer on 127.0.0.1), and Main stops it after the last test. A test
// that needs a cluster of its own (several tablet servers, SASL, killing
// servers) calls [StartCluster].
//
// FLUSS_VERSION ([EnvVersion]) names the Fluss release: the one running at
// FLUSS_BOOTSTRAP, or the one the clusters started here run (default: the
// cluster script's, 0.9.1-incubating); the Java fixture tool uses the client
// of that release. [Version] returns it, [AtLeast] compares it.
//
// Java and, for the first download of the Fluss jars, Maven are needed. When
// they are missing the tests fail, except outside CI (env CI unset), where
// they are skipped with the reason.
package flusstest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// EnvBootstrap names the environment variable that points the tests at a
// running cluster ("host:port"); when it is set no cluster is started.
const EnvBootstrap = "FLUSS_BOOTSTRAP"

// EnvVersion names the environment variable with the Fluss release of the
// cluster at FLUSS_BOOTSTRAP, or of the clusters the tests start (e.g.
// "0.7.0"); the Java fixture tool uses that release's client. Unset, it is
// the release scripts/fluss-cluster.sh starts by default.
const EnvVersion = "FLUSS_VERSION"

// EnvZooKeeper names the environment variable with the ZooKeeper address
// ("host:port") of the cluster at FLUSS_BOOTSTRAP; scripts/fluss-cluster.sh
// writes it to cluster.env beside FLUSS_BOOTSTRAP.
const EnvZooKeeper = "FLUSS_ZOOKEEPER"

// shared is the cluster of the test binary, started on first use.
var shared struct {
	mu        sync.Mutex
	started   bool
	bootstrap string
	cluster   *Cluster // nil when FLUSS_BOOTSTRAP named an outside cluster
	err       error
}

// Main runs the tests of a package (call it from TestMain) and afterwards
// stops the cluster that [Require] or [Bootstrap] may have started. If tests
// failed, it prints the tail of that cluster's logs first. It does not return.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run is [Main] for a TestMain with work of its own after the tests: it
// returns the exit code instead of exiting.
func Run(m *testing.M) int {
	code := m.Run()
	shared.mu.Lock()
	c := shared.cluster
	shared.cluster = nil
	shared.mu.Unlock()
	if c != nil {
		if code != 0 {
			fmt.Fprintf(os.Stderr, "flusstest: tests failed; tail of the Fluss logs in %s:\n%s\n", c.LogDir, c.LogTail(40))
		}
		if err := c.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "flusstest: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// Require returns the bootstrap address ("127.0.0.1:PORT") of the test
// binary's shared cluster, starting the cluster on the first call. If no
// cluster can be had it fails the test, or skips it when Java is missing and
// the environment variable CI is unset.
func Require(t testing.TB) string {
	t.Helper()
	addr, err := sharedBootstrap()
	if err != nil {
		failOrSkip(t, err)
	}
	return addr
}

// ZooKeeper returns the ZooKeeper address of the shared cluster (the one
// [Require] returns the bootstrap address of), for tests of what a client
// does with a port that is not Fluss's: $FLUSS_ZOOKEEPER when FLUSS_BOOTSTRAP
// names an outside cluster, else that of the cluster started here. It fails
// the test when there is none (or skips it, outside CI).
func ZooKeeper(t testing.TB) string {
	t.Helper()
	Require(t)
	shared.mu.Lock()
	c := shared.cluster
	shared.mu.Unlock()
	if c != nil && c.ZooKeeper != "" {
		return c.ZooKeeper
	}
	addr := strings.TrimSpace(os.Getenv(EnvZooKeeper))
	if addr == "" {
		failOrSkip(t, &UnavailableError{Reason: EnvBootstrap + " is set but " + EnvZooKeeper + " is not (export both lines of the cluster's cluster.env)"})
	}
	return addr
}

// Bootstrap is [Require] for code without a testing.TB: it returns the shared
// cluster's bootstrap address and panics if the cluster cannot be started.
// Tests should prefer Require, which fails (or skips) them cleanly.
func Bootstrap() string {
	addr, err := sharedBootstrap()
	if err != nil {
		panic(fmt.Sprintf("flusstest: %v", err))
	}
	return addr
}

func sharedBootstrap() (string, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.started {
		return shared.bootstrap, shared.err
	}
	shared.started = true
	if addr := strings.TrimSpace(os.Getenv(EnvBootstrap)); addr != "" {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			shared.err = fmt.Errorf("%s=%q is not host:port: %w", EnvBootstrap, addr, err)
			return "", shared.err
		}
		shared.bootstrap = addr
		return addr, nil
	}
	// A short KV snapshot interval: the snapshot tests wait for every
	// bucket of a primary-key table to have one.
	c, err := startCluster(Options{Conf: map[string]string{"kv.snapshot.interval": "5s"}})
	if err != nil {
		shared.err = err
		return "", err
	}
	shared.cluster = c
	shared.bootstrap = c.Bootstrap
	return c.Bootstrap, nil
}

// Version returns the Fluss release the tests run against: $FLUSS_VERSION,
// else the default of scripts/fluss-cluster.sh (FLUSS_DEFAULT_VERSION in
// scripts/lib/fluss-version.sh). It fails the test when neither gives a
// MAJOR.MINOR… version.
func Version(t testing.TB) string {
	t.Helper()
	v := strings.TrimSpace(os.Getenv(EnvVersion))
	if v == "" {
		var err error
		if v, err = defaultVersion(); err != nil {
			t.Fatalf("flusstest: %v", err)
		}
	}
	if _, _, ok := majorMinor(v); !ok {
		t.Fatalf("flusstest: %s=%q does not start with MAJOR.MINOR", EnvVersion, v)
	}
	return v
}

// AtLeast reports whether release version is major.minor or later.
func AtLeast(version string, major, minor int) bool {
	ma, mi, ok := majorMinor(version)
	return ok && (ma > major || ma == major && mi >= minor)
}

var versionRE = regexp.MustCompile(`^(\d+)\.(\d+)`)

func majorMinor(v string) (major, minor int, ok bool) {
	m := versionRE.FindStringSubmatch(v)
	if m == nil {
		return 0, 0, false
	}
	major, _ = strconv.Atoi(m[1])
	minor, _ = strconv.Atoi(m[2])
	return major, minor, true
}

var defaultVersionRE = regexp.MustCompile(`(?m)^FLUSS_DEFAULT_VERSION="([^"]+)"`)

// defaultVersion reads the release the cluster script starts by default.
func defaultVersion() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	lib := filepath.Join(root, "scripts", "lib", "fluss-version.sh")
	b, err := os.ReadFile(lib)
	if err != nil {
		return "", fmt.Errorf("reading the default Fluss version: %w", err)
	}
	m := defaultVersionRE.FindSubmatch(b)
	if m == nil {
		return "", fmt.Errorf("%s has no FLUSS_DEFAULT_VERSION=\"…\" line", lib)
	}
	return string(m[1]), nil
}

// UnavailableError reports that a cluster cannot be started on this machine
// because a tool (java, bash) is missing.
type UnavailableError struct {
	Reason string
}

func (e *UnavailableError) Error() string { return e.Reason }

// InCI reports whether the tests run under CI (env CI set to anything but
// "", "0" or "false"), where missing tools must fail tests instead of
// skipping them.
func InCI() bool {
	v := strings.TrimSpace(strings.ToLower(os.Getenv("CI")))
	return v != "" && v != "0" && v != "false"
}

func failOrSkip(t testing.TB, err error) {
	t.Helper()
	var u *UnavailableError
	if errors.As(err, &u) && !InCI() {
		t.Skipf("flusstest: skipping, no Fluss cluster: %v (with CI set this is a failure)", err)
	}
	t.Fatalf("flusstest: no Fluss cluster: %v", err)
}

// checkTools reports a missing java or bash as an *UnavailableError.
func checkTools() error {
	for _, tool := range []string{"bash", "java"} {
		if _, err := exec.LookPath(tool); err != nil {
			return &UnavailableError{Reason: fmt.Sprintf("%q not found on PATH (install a JDK 17, e.g. Debian's openjdk-17-jdk-headless, and maven)", tool)}
		}
	}
	return nil
}

var nameSeq atomic.Uint64

// nameRun keeps names unique across test binaries that share one cluster
// through FLUSS_BOOTSTRAP.
var nameRun = strconv.FormatInt(time.Now().UnixNano()%(1<<40), 36) + strconv.FormatInt(int64(os.Getpid()), 36)

var badNameChars = regexp.MustCompile(`[^A-Za-z0-9_]+`)

// UniqueName returns a database or table name that starts with prefix and is
// unique in this process and, with overwhelming likelihood, across runs. It
// holds only ASCII letters, digits and underscores, as Fluss allows.
func UniqueName(prefix string) string {
	p := strings.Trim(badNameChars.ReplaceAllString(prefix, "_"), "_")
	if p == "" {
		p = "t"
	}
	if len(p) > 100 {
		p = p[:100]
	}
	return fmt.Sprintf("%s_%s_%d", p, nameRun, nameSeq.Add(1))
}

// RepoRoot returns the repository's root directory: $FLUSS_IGGY_ROOT if set,
// else the nearest directory above the working directory (a package directory
// under go test) that holds scripts/fluss-cluster.sh, else the one above this
// source file.
func RepoRoot() (string, error) {
	if r := os.Getenv("FLUSS_IGGY_ROOT"); r != "" {
		return r, nil
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		starts = append(starts, filepath.Dir(file))
	}
	for _, dir := range starts {
		for d := dir; ; d = filepath.Dir(d) {
			if st, err := os.Stat(filepath.Join(d, "scripts", "fluss-cluster.sh")); err == nil && !st.IsDir() {
				return d, nil
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return "", errors.New("repository root not found: no scripts/fluss-cluster.sh above the working directory (set FLUSS_IGGY_ROOT)")
}
