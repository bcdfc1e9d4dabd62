package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/internal/e2e"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
)

// What a newcomer meets first: the help, `create` for our components, and
// `fluss checkpoints` on the pipeline `create` printed. The binary is the
// one TestMain (main_test.go) builds.

// runBin runs the binary in dir with env added to the environment and
// returns its stdout, stderr and exit code.
func runBin(t *testing.T, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("fluss-iggy %s: timed out\nstderr:\n%s", strings.Join(args, " "), stderr.String())
	}
	return stdout.String(), stderr.String(), exitCode(err)
}

// repoRoot is the repository's root directory (config/ is there).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestHelp: --help, -h and help print the same text, which describes
// fluss-iggy rather than Benthos's generic stream processor, lists our
// commands and Benthos's, and whose examples work: the files they name
// exist and lint, and the create example prints a config that lints.
func TestHelp(t *testing.T) {
	dir := t.TempDir()
	help, stderr, code := runBin(t, dir, nil, "--help")
	if code != 0 || stderr != "" {
		t.Fatalf("--help: exit %d, stderr %q", code, stderr)
	}
	for _, args := range [][]string{{"-h"}, {"help"}} {
		if out, _, code := runBin(t, dir, nil, args...); code != 0 || out != help {
			t.Errorf("%v: exit %d, output differs from --help:\n%s", args, code, out)
		}
	}
	for _, want := range []string{
		"move Apache Fluss tables into Apache Iggy, and Iggy topics into Fluss",
		"run config/iggy_to_fluss.yaml",
		"create fluss//iggy > pipeline.yaml",
		"lint pipeline.yaml",
		"run -r config/resources/bbolt.yaml config/fluss_to_iggy.yaml",
		"fluss scan --bootstrap",
		"fluss checkpoints -r config/resources/bbolt.yaml --cache checkpoints demo.orders",
		"iggy peek --address 127.0.0.1:8090 --stream fluss --topic orders --from latest-5",
	} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q", want)
		}
	}
	for _, cmd := range []string{"fluss", "iggy", "create", "lint", "run", "streams", "list", "test", "blobl", "echo", "template"} {
		if !strings.Contains(help, "\n   "+cmd+" ") {
			t.Errorf("help does not list the command %q", cmd)
		}
	}
	for _, stale := range []string{"mundane", "kafka"} {
		if strings.Contains(help, stale) {
			t.Errorf("help still says %q", stale)
		}
	}
	root := repoRoot(t)
	if out, stderr, code := runBin(t, root, nil, "lint", "-r", "config/resources/bbolt.yaml", "config/fluss_to_iggy.yaml"); code != 0 {
		t.Errorf("the help's run example does not lint: exit %d\n%s%s", code, out, stderr)
	}
	if out, stderr, code := runBin(t, root, nil, "lint", "config/iggy_to_fluss.yaml"); code != 0 {
		t.Errorf("the help's example of the other direction does not lint: exit %d\n%s%s", code, out, stderr)
	}
	createAndLint(t, dir, "fluss//iggy")
}

// createAndLint runs `create ARGS...` in dir, writes the config to a file
// and lints it with the binary; it returns the file's path and content.
func createAndLint(t *testing.T, dir string, args ...string) (string, string) {
	t.Helper()
	conf, stderr, code := runBin(t, dir, nil, append([]string{"create"}, args...)...)
	if code != 0 || stderr != "" {
		t.Fatalf("create %v: exit %d, stderr %q", args, code, stderr)
	}
	path := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, stderr, code := runBin(t, dir, nil, "lint", path); code != 0 || out != "" || stderr != "" {
		t.Errorf("create %v printed a config that does not lint (exit %d):\n%s%s\nconfig:\n%s", args, code, out, stderr, conf)
	}
	return path, conf
}

// TestCreateLints: every expression that names the fluss input or the iggy
// output prints a config that lints as printed, with the fluss input's
// checkpoint cache; other expressions get Benthos's own create, and its
// errors are printed.
func TestCreateLints(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"fluss//iggy"}, {"--small", "fluss//iggy"}, {"-s", "fluss/mapping,log/iggy"},
		{"fluss"}, {"-s", "fluss//stdout"}, {"-s", "generate//iggy"}, {"-s", "fluss,generate//iggy,stdout"},
	} {
		_, conf := createAndLint(t, dir, args...)
		hasFluss := strings.Contains(args[len(args)-1], "fluss")
		if got := strings.Contains(conf, "label: checkpoints"); got != hasFluss {
			t.Errorf("create %v: checkpoint cache present = %v, want %v:\n%s", args, got, hasFluss, conf)
		}
		for _, bad := range []string{"shard:", "personal_access_token", "table_type"} {
			if strings.Contains(conf, bad) {
				t.Errorf("create %v: the config sets %s:\n%s", args, bad, conf)
			}
		}
	}
	_, conf := createAndLint(t, dir, "-s", "stdin//stdout")
	if !strings.Contains(conf, "stdin:") || strings.Contains(conf, "Fill in") {
		t.Errorf("create stdin//stdout is not Benthos's config:\n%s", conf)
	}
	out, stderr, code := runBin(t, dir, nil, "create", "kafka//file")
	if code == 0 || out != "" || !strings.Contains(stderr, "unrecognised input type 'kafka'") {
		t.Errorf("create kafka//file: exit %d, stdout %q, stderr %q; want an error naming kafka", code, out, stderr)
	}
}

// checkpointLine is one line of `fluss checkpoints`.
type checkpointLine struct {
	Partition *string `json:"partition"`
	Bucket    int32   `json:"bucket"`
	Committed *int64  `json:"committed"`
	Latest    *int64  `json:"latest"`
	Lag       *int64  `json:"lag"`
}

// offsetLine is one line of the Java tool's list-offsets.
type offsetLine struct {
	Bucket int32 `json:"bucket"`
	Latest int64 `json:"latest"`
}

func decodeLines[T any](t *testing.T, what, s string) []T {
	t.Helper()
	var out []T
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		var v T
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("%s: line %q: %v", what, line, err)
		}
		out = append(out, v)
	}
	return out
}

// flussCluster returns the address of FLUSS_BOOTSTRAP's cluster or of one
// started for the test (this package's TestMain does not run
// flusstest.Main, which would stop a shared one), and a runner of the Java
// fixture tool against it.
func flussCluster(t *testing.T) (string, func(args ...string) string) {
	t.Helper()
	if addr := os.Getenv(flusstest.EnvBootstrap); addr != "" {
		return addr, func(args ...string) string {
			return flusstest.RunJavaEnv(t, []string{flusstest.EnvBootstrap + "=" + addr}, args...)
		}
	}
	c := flusstest.StartCluster(t, flusstest.Options{})
	return c.Bootstrap, func(args ...string) string { return c.RunJava(t, args...) }
}

// TestCreatedPipelineRunsAndCheckpoints: the config `create fluss//iggy`
// prints runs once its addresses and names are set (here with end_at:
// latest, into the Iggy test server); `fluss checkpoints` on it then shows
// lag 0 in every bucket, and after more rows are appended, a lag equal to
// the rows appended to each bucket (counted by the Java tool).
func TestCreatedPipelineRunsAndCheckpoints(t *testing.T) {
	addr, java := flussCluster(t)
	srv, err := iggytest.Start(iggytest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	db := flusstest.UniqueName("create")
	table := db + ".orders"
	java("create-database", db)
	t.Cleanup(func() { java("drop-database", db, "--if-exists", "--cascade") })
	java("create-table", table, "--columns", "id BIGINT, note STRING", "--buckets", "3", "--bucket-key", "id")
	java("append", table, "--rows", "300", "--seed", "1")

	dir := t.TempDir()
	pipeline, _ := createAndLint(t, dir, "fluss//iggy")
	env := []string{
		"FLUSS_BOOTSTRAP=" + addr, "FLUSS_DATABASE=" + db, "FLUSS_TABLE=orders",
		"IGGY_TCP_ADDRESS=" + srv.Addr(), "IGGY_USERNAME=iggy", "IGGY_PASSWORD=iggy", "IGGY_STREAM=" + db,
		"FLUSS_IGGY_STATE_DIR=" + filepath.Join(dir, "state"),
	}
	out, stderr, code := runBin(t, dir, env, "run", "--set", "input.fluss.end_at=latest", "--set", "http.enabled=false", pipeline)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, stderr)
	}
	if n := srv.MessageCount(db, "orders"); n != 300 {
		t.Fatalf("Iggy holds %d messages, want 300", n)
	}

	checkpoints := func() []checkpointLine {
		t.Helper()
		out, stderr, code := runBin(t, dir, env, "fluss", "checkpoints", "-r", pipeline, "--cache", "checkpoints", "--bootstrap", addr, table)
		if code != 0 {
			t.Fatalf("fluss checkpoints: exit %d\n%s", code, stderr)
		}
		t.Logf("fluss checkpoints:\n%s%s", out, stderr)
		return decodeLines[checkpointLine](t, "fluss checkpoints", out)
	}
	latest := func() map[int32]int64 {
		m := map[int32]int64{}
		for _, o := range decodeLines[offsetLine](t, "list-offsets", java("list-offsets", table)) {
			m[o.Bucket] = o.Latest
		}
		return m
	}
	before := latest()
	lines := checkpoints()
	if len(lines) != 3 {
		t.Fatalf("%d lines, want one per bucket (3)", len(lines))
	}
	for _, l := range lines {
		if l.Partition != nil || l.Committed == nil || l.Latest == nil || l.Lag == nil ||
			*l.Lag != 0 || *l.Committed != before[l.Bucket] {
			t.Errorf("after the bounded run: %+v, want committed = latest = %d, lag 0", l, before[l.Bucket])
		}
	}

	java("append", table, "--rows", "90", "--seed", "2", "--start", "300")
	after := latest()
	var total int64
	for _, l := range checkpoints() {
		appended := after[l.Bucket] - before[l.Bucket]
		total += appended
		if l.Lag == nil || *l.Lag != appended || *l.Latest != after[l.Bucket] {
			t.Errorf("after appending: bucket %d: %+v, want lag %d (latest %d)", l.Bucket, l, appended, after[l.Bucket])
		}
	}
	if total != 90 {
		t.Errorf("the Java tool counts %d appended rows over the buckets, want 90", total)
	}
}

// TestCreatedTemplateRunsAsPrinted: the README's own-pipeline steps on a
// fresh clone. The shipped example has already read demo.orders into Iggy
// (its positions in ./state); then `create fluss//iggy` printed as is, run
// with only the README's exports (FLUSS_BOOTSTRAP, IGGY_TCP_ADDRESS) and the
// same state directory, reads the same default table (demo.orders) from its
// start into Iggy: every row arrives, none is skipped for the example's
// positions. Before, the template read database fluss (exit 1, no such
// table) and, with FLUSS_DATABASE=demo, shared the example's bbolt file and
// key and delivered nothing.
func TestCreatedTemplateRunsAsPrinted(t *testing.T) {
	addr, java := flussCluster(t)
	java("create-database", "demo", "--if-not-exists")
	java("create-table", "demo.orders", "--if-not-exists", "--buckets", "3",
		"--columns", "id BIGINT, customer STRING, amount DECIMAL(10,2), created_at TIMESTAMP(3), note STRING")
	java("append", "demo.orders", "--rows", "200", "--seed", "7")
	var total int
	for _, o := range decodeLines[offsetLine](t, "list-offsets", java("list-offsets", "demo.orders")) {
		total += int(o.Latest)
	}
	dir := t.TempDir()
	state := "FLUSS_IGGY_STATE_DIR=" + filepath.Join(dir, "state") // ./state of both runs
	example, err := iggytest.Start(iggytest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer example.Close()
	root := repoRoot(t)
	out, stderr, code := runBin(t, dir, []string{"FLUSS_BOOTSTRAP=" + addr, "IGGY_TCP_ADDRESS=" + example.Addr(), state},
		"run", "--set", "input.fluss.end_at=latest", "--set", "http.enabled=false",
		"-r", filepath.Join(root, "config/resources/bbolt.yaml"), filepath.Join(root, "config/fluss_to_iggy.yaml"))
	if n := example.MessageCount("fluss", "orders"); code != 0 || n < total {
		t.Fatalf("the example: exit %d, %d of %d rows in Iggy\n%s%s", code, n, total, out, stderr)
	}

	srv, err := iggytest.Start(iggytest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	pipeline, conf := createAndLint(t, dir, "fluss//iggy")
	p, err := e2e.Start(bin, []string{"FLUSS_BOOTSTRAP=" + addr, "IGGY_TCP_ADDRESS=" + srv.Addr(), state,
		"FLUSS_IGGY_HTTP_ADDRESS=127.0.0.1:0"}, "run", pipeline) // any free port
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	err = e2e.WaitFor(2*time.Minute, 200*time.Millisecond, func() (bool, error) {
		return srv.MessageCount("fluss", "orders") >= total || p.Exited(), nil
	})
	if n := srv.MessageCount("fluss", "orders"); err != nil || n != total {
		t.Fatalf("the created pipeline delivered %d of the %d rows of demo.orders (exited: %v)\n%s\nconfig:\n%s", n, total, p.Exited(), p.Output(), conf)
	}
	if err := p.Stop(20 * time.Second); err != nil {
		t.Errorf("stopping the created pipeline: %v\n%s", err, p.Tail(5))
	}
}
