package bbolt_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/internal/cachetest"
	"github.com/fluss-iggy/fluss-iggy/resources/bbolt"

	_ "github.com/redpanda-data/benthos/v4/public/components/io"
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
)

// Child process modes of this test binary (see TestMain).
const (
	envChild     = "FLUSSIGGY_BBOLT_TEST_CHILD" // "crash" or "lock"
	envChildConf = "FLUSSIGGY_BBOLT_TEST_CONF"  // cache YAML for the child
	envChildFrom = "FLUSSIGGY_BBOLT_TEST_FROM"  // crash: last sequence number
)

func TestMain(m *testing.M) {
	switch os.Getenv(envChild) {
	case "":
		os.Exit(m.Run())
	case "crash":
		os.Exit(crashChild())
	case "lock":
		os.Exit(lockChild())
	default:
		fmt.Fprintf(os.Stderr, "unknown child mode %q\n", os.Getenv(envChild))
		os.Exit(2)
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func yamlConf(path string, extra ...string) string {
	conf := fmt.Sprintf("bbolt:\n  path: %q\n", path)
	for _, e := range extra {
		conf += "  " + e + "\n"
	}
	return conf
}

func open(t *testing.T, opts bbolt.Options) *bbolt.Cache {
	t.Helper()
	c, err := bbolt.Open(opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

func TestSpec(t *testing.T) {
	cachetest.CheckSpec(t, "bbolt")
}

// TestContract runs the shared contract suite against bbolt caches built from
// YAML with default settings (sync on).
func TestContract(t *testing.T) {
	cachetest.Run(t, func(t *testing.T) service.Cache {
		return cachetest.FromYAML(t, yamlConf(filepath.Join(t.TempDir(), "contract.db")))
	}, cachetest.Options{})
}

// TestContractNoSync runs the suite with sync off (the only setting that
// changes the write path) and a non-default bucket.
func TestContractNoSync(t *testing.T) {
	cachetest.Run(t, func(t *testing.T) service.Cache {
		return cachetest.FromYAML(t, yamlConf(filepath.Join(t.TempDir(), "contract.db"), "sync: false", "bucket: other"))
	}, cachetest.Options{})
}

func TestConfigErrors(t *testing.T) {
	for name, conf := range map[string]string{
		"missing path":        "bbolt:\n  bucket: x\n",
		"bad duration":        yamlConf("/tmp/x.db", "default_ttl: soon"),
		"zero open timeout":   yamlConf(filepath.Join(t.TempDir(), "x.db"), "open_timeout: -1s"),
		"negative compaction": yamlConf(filepath.Join(t.TempDir(), "x.db"), "compaction_interval: -1s"),
	} {
		t.Run(name, func(t *testing.T) {
			if c, err := cachetest.NewFromYAML(conf); err == nil {
				_ = c.Close(context.Background())
				t.Fatalf("config accepted:\n%s", conf)
			} else {
				t.Logf("error: %v", err)
			}
		})
	}
}

func TestParentDirectoriesCreated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "c", "checkpoints.db")
	c := cachetest.FromYAML(t, yamlConf(path))
	if err := c.Set(ctxT(t), "k", []byte("v"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database file not created: %v", err)
	}
}

func TestEmptyKey(t *testing.T) {
	c := open(t, bbolt.Options{Path: filepath.Join(t.TempDir(), "x.db")})
	err := c.Set(ctxT(t), "", []byte("v"), nil)
	if err == nil || !strings.Contains(err.Error(), "key must not be empty") {
		t.Fatalf("Set with empty key = %v, want a clear error", err)
	}
}

// TestPersistence checks values, expiries and buckets survive a close and
// reopen of the file. It runs in a synctest bubble: the cache reads the clock
// only through time.Now, so the sleep past the TTL moves the fake clock by
// exactly that much, instantly.
func TestPersistence(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	synctest.Test(t, func(t *testing.T) { testPersistence(t, path) })
}

func testPersistence(t *testing.T, path string) {
	ctx := ctxT(t)
	c := open(t, bbolt.Options{Path: path})
	ttl := 300 * time.Millisecond
	hour := time.Hour
	if err := c.Set(ctx, "forever", []byte("v1"), nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "short", []byte("v2"), &ttl); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "long", []byte("v3"), &hour); err != nil {
		t.Fatal(err)
	}
	other := open(t, bbolt.Options{Path: path, Bucket: "other"})
	if err := other.Set(ctx, "forever", []byte("other bucket"), nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := other.Close(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(ttl + 50*time.Millisecond) // fake clock: returns at once

	c = open(t, bbolt.Options{Path: path})
	for k, want := range map[string]string{"forever": "v1", "long": "v3"} {
		got, err := c.Get(ctx, k)
		if err != nil || string(got) != want {
			t.Fatalf("after reopen Get(%q) = %q, %v; want %q", k, got, err, want)
		}
	}
	if _, err := c.Get(ctx, "short"); !errors.Is(err, service.ErrKeyNotFound) {
		t.Fatalf("expired key after reopen: %v, want ErrKeyNotFound", err)
	}
	other = open(t, bbolt.Options{Path: path, Bucket: "other"})
	if got, err := other.Get(ctx, "forever"); err != nil || string(got) != "other bucket" {
		t.Fatalf("other bucket after reopen = %q, %v", got, err)
	}
}

// TestDefaultTTL runs in a synctest bubble (see TestPersistence): the 400ms
// sleep is fake time, so the keys are exactly 400ms old when checked.
func TestDefaultTTL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ttl.db")
	synctest.Test(t, func(t *testing.T) { testDefaultTTL(t, path) })
}

func testDefaultTTL(t *testing.T, path string) {
	c := cachetest.FromYAML(t, yamlConf(path, "default_ttl: 200ms"))
	ctx := ctxT(t)
	hour, zero := time.Hour, time.Duration(0)
	if err := c.Set(ctx, "default", []byte("v"), nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "explicit", []byte("v"), &hour); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "zero", []byte("v"), &zero); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond)
	if _, err := c.Get(ctx, "default"); !errors.Is(err, service.ErrKeyNotFound) {
		t.Fatalf("key written without TTL under default_ttl 200ms: %v after 400ms, want ErrKeyNotFound", err)
	}
	for _, k := range []string{"explicit", "zero"} {
		if _, err := c.Get(ctx, k); err != nil {
			t.Fatalf("Get(%q): %v", k, err)
		}
	}
}

// TestSetMulti runs in a synctest bubble (see TestPersistence): the 5ms
// sleep is fake time, so "gone" is exactly 5ms past its 1ms TTL when checked.
func TestSetMulti(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	synctest.Test(t, func(t *testing.T) { testSetMulti(t, path) })
}

func testSetMulti(t *testing.T, path string) {
	c := open(t, bbolt.Options{Path: path})
	ctx := ctxT(t)
	ttl := time.Millisecond
	if err := c.SetMulti(ctx,
		service.CacheItem{Key: "a", Value: []byte("1")},
		service.CacheItem{Key: "b", Value: []byte("2")},
		service.CacheItem{Key: "gone", Value: []byte("3"), TTL: &ttl},
	); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	for k, want := range map[string]string{"a": "1", "b": "2"} {
		if got, err := c.Get(ctx, k); err != nil || string(got) != want {
			t.Fatalf("Get(%q) = %q, %v", k, got, err)
		}
	}
	if _, err := c.Get(ctx, "gone"); !errors.Is(err, service.ErrKeyNotFound) {
		t.Fatalf("Get(gone) = %v", err)
	}
	if err := c.SetMulti(ctx, service.CacheItem{Key: "", Value: []byte("x")}); err == nil {
		t.Fatal("SetMulti with an empty key succeeded")
	}
}

// TestClosed checks the cache itself (not the resource manager in front of
// it) refuses calls after Close with an error naming the file.
func TestClosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "closed.db")
	c := open(t, bbolt.Options{Path: path})
	ctx := ctxT(t)
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	checks := map[string]error{}
	_, checks["get"] = c.Get(ctx, "k")
	checks["set"] = c.Set(ctx, "k", nil, nil)
	checks["add"] = c.Add(ctx, "k", nil, nil)
	checks["delete"] = c.Delete(ctx, "k")
	for op, err := range checks {
		if err == nil || !strings.Contains(err.Error(), "closed") || !strings.Contains(err.Error(), path) {
			t.Errorf("%s after Close = %v, want a closed error naming %s", op, err, path)
		}
	}
	// The lock is released: the file opens again (open fails the test when
	// the lock is still held after OpenTimeout).
	open(t, bbolt.Options{Path: path, OpenTimeout: time.Second})
}

// TestSameProcessSharing checks two caches on one file in one process (two
// buckets, or one resource constructed twice by Benthos) share the handle
// instead of waiting for a lock their own process holds.
func TestSameProcessSharing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
	ctx := ctxT(t)
	a := open(t, bbolt.Options{Path: path, Bucket: "a", OpenTimeout: 200 * time.Millisecond})
	b := open(t, bbolt.Options{Path: path, Bucket: "b", OpenTimeout: 200 * time.Millisecond})
	if err := a.Set(ctx, "k", []byte("in a"), nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Set(ctx, "k", []byte("in b"), nil); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Get(ctx, "k"); err != nil || string(got) != "in b" {
		t.Fatalf("b after closing a: %q, %v", got, err)
	}
	if _, err := bbolt.Open(bbolt.Options{Path: path, NoSync: true}); err == nil || !strings.Contains(err.Error(), "sync") {
		t.Fatalf("opening a shared file with a different sync setting: %v, want an error", err)
	}
}

// TestSecondProcessGetsLockError opens a file here and then in a child
// process, which must fail after its open_timeout with an error naming the
// file rather than hang.
func TestSecondProcessGetsLockError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locked.db")
	c := cachetest.FromYAML(t, yamlConf(path))
	if err := c.Set(ctxT(t), "k", []byte("v"), nil); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChild+"=lock", envChildConf+"="+yamlConf(path, "open_timeout: 500ms"))
	start := time.Now()
	out, err := cmd.CombinedOutput()
	elapsed := time.Since(start)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("child: %v, want exit code 3; output:\n%s", err, out)
	}
	msg := string(out)
	if !strings.Contains(msg, path) || !strings.Contains(msg, "locked by another process") {
		t.Fatalf("child error does not name the file and the lock:\n%s", msg)
	}
	if elapsed > 20*time.Second {
		t.Fatalf("child took %s to give up with open_timeout 500ms", elapsed)
	}
	t.Logf("second process failed after %s: %s", elapsed.Round(time.Millisecond), strings.TrimSpace(msg))

	// Once this process closes the file, a child opens it fine.
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	cmd = exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChild+"=lock", envChildConf+"="+yamlConf(path, "open_timeout: 500ms"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child after close: %v\n%s", err, out)
	}
}

// lockChild opens the cache from envChildConf: exit 0 when it opens, 3 with
// the error on stdout when it does not.
func lockChild() int {
	c, err := cachetest.NewFromYAML(os.Getenv(envChildConf))
	if err != nil {
		fmt.Println(err)
		return 3
	}
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(w, "opened")
	_ = w.Flush()
	_ = c.Close(context.Background())
	return 0
}
