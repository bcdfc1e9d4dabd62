package flusstest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// EnvS3Cluster names the environment variable with the cluster.env of a
// running cluster started by `fluss-cluster.sh up --remote-storage s3`
// (remote.data.dir on a SeaweedFS S3 server, 1 KiB log segments, tiering
// every second). Without it [RequireS3Cluster] starts such a cluster under
// CI or with FLUSS_S3_START=1 ([EnvS3Start]), and skips the test otherwise.
const EnvS3Cluster = "FLUSS_S3_CLUSTER_ENV"

// EnvS3Start names the environment variable that, set to 1, lets
// [RequireS3Cluster] start an S3 cluster outside CI.
const EnvS3Start = "FLUSS_S3_START"

// S3Cluster is a Fluss cluster whose remote.data.dir is on S3: the entries
// of its cluster.env.
type S3Cluster struct {
	// Env holds every KEY=VALUE of the cluster.env.
	Env map[string]string
	// Bootstrap is the client address (FLUSS_BOOTSTRAP).
	Bootstrap string
	// Endpoint, Region, AccessKey, SecretKey and Bucket are the S3 server's
	// (FLUSS_S3_*); it wants path-style requests.
	Endpoint, Region, AccessKey, SecretKey, Bucket string
	// RemoteDataDir is the cluster's remote.data.dir, an s3:// URI.
	RemoteDataDir string
	// Dir is the cluster directory (FLUSS_CLUSTER_DIR).
	Dir string
}

// RequireS3Cluster returns the S3-tiered cluster named by
// FLUSS_S3_CLUSTER_ENV, or starts one for the test (stopped when it ends)
// under CI or with FLUSS_S3_START=1; otherwise it skips the test with the
// reason. It fails the test when the cluster cannot be had or its
// remote.data.dir is not on S3.
func RequireS3Cluster(t testing.TB) *S3Cluster {
	t.Helper()
	if f := os.Getenv(EnvS3Cluster); f != "" {
		env, err := ReadEnvFile(f)
		if err != nil {
			t.Fatalf("flusstest: %s: %v", EnvS3Cluster, err)
		}
		return newS3Cluster(t, env)
	}
	if !InCI() && os.Getenv(EnvS3Start) != "1" {
		t.Skipf("flusstest: no S3 cluster: set %s to the cluster.env of `fluss-cluster.sh up --remote-storage s3`, or %s=1 (under CI one is started)", EnvS3Cluster, EnvS3Start)
	}
	if err := checkTools(); err != nil {
		failOrSkip(t, err)
	}
	root, err := RepoRoot()
	if err != nil {
		t.Fatalf("flusstest: %v", err)
	}
	dir, err := os.MkdirTemp("", "fluss-iggy-s3-")
	if err != nil {
		t.Fatalf("flusstest: %v", err)
	}
	script := filepath.Join(root, "scripts", "fluss-cluster.sh")
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), upTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script, "up", "--remote-storage", "s3", "--dir", dir, "--owner-pid", strconv.Itoa(os.Getpid()))
	cmd.Stderr = os.Stderr
	cmd.WaitDelay = 10 * time.Second
	if _, err := cmd.Output(); err != nil {
		_ = exec.Command("bash", script, "down", "--kill", "--dir", dir).Run()
		os.RemoveAll(dir)
		t.Fatalf("flusstest: starting an S3 cluster: %v", err)
	}
	t.Logf("flusstest: S3 cluster ready in %s (dir %s)", time.Since(start).Round(time.Second), dir)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
		defer cancel()
		if out, err := exec.CommandContext(ctx, "bash", script, "down", "--kill", "--dir", dir).CombinedOutput(); err != nil {
			t.Errorf("flusstest: stopping the S3 cluster: %v\n%s", err, out)
		}
	})
	env, err := ReadEnvFile(filepath.Join(dir, "cluster.env"))
	if err != nil {
		t.Fatalf("flusstest: %v", err)
	}
	return newS3Cluster(t, env)
}

func newS3Cluster(t testing.TB, env map[string]string) *S3Cluster {
	t.Helper()
	c := &S3Cluster{Env: env, Bootstrap: env[EnvBootstrap],
		Endpoint: env["FLUSS_S3_ENDPOINT"], Region: env["FLUSS_S3_REGION"],
		AccessKey: env["FLUSS_S3_ACCESS_KEY"], SecretKey: env["FLUSS_S3_SECRET_KEY"], Bucket: env["FLUSS_S3_BUCKET"],
		RemoteDataDir: env["FLUSS_REMOTE_DATA_DIR"], Dir: env["FLUSS_CLUSTER_DIR"]}
	if c.Bootstrap == "" {
		t.Fatalf("flusstest: the S3 cluster's cluster.env has no %s", EnvBootstrap)
	}
	if !strings.HasPrefix(c.RemoteDataDir, "s3://") {
		t.Fatalf("flusstest: the cluster's remote.data.dir is %q, not s3://", c.RemoteDataDir)
	}
	return c
}

// ReadEnvFile reads a file of KEY=VALUE lines (a cluster.env).
func ReadEnvFile(name string) (map[string]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			env[k] = v
		}
	}
	return env, sc.Err()
}

// JavaEnv returns the environment entries that point the Java fixture tool
// (scripts/fluss-java.sh) at this cluster, with the fluss-fs-s3 plugin on
// its class path so that it reads remote segments (with the cluster's
// security token).
func (c *S3Cluster) JavaEnv() ([]string, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "fluss-cluster.sh"), "classpath")
	if v := c.Env[EnvVersion]; v != "" {
		cmd.Env = append(os.Environ(), EnvVersion+"="+v)
	}
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("fluss-cluster.sh classpath: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	cp := strings.TrimSpace(lines[len(lines)-1])
	if cp == "" {
		return nil, fmt.Errorf("fluss-cluster.sh classpath printed nothing")
	}
	jars, _ := filepath.Glob(filepath.Join(c.Dir, "plugins", "s3", "*.jar"))
	if len(jars) == 0 {
		return nil, fmt.Errorf("no fluss-fs-s3 plugin jar in %s", filepath.Join(c.Dir, "plugins", "s3"))
	}
	for _, j := range jars {
		if real, err := filepath.EvalSymlinks(j); err == nil {
			cp += ":" + real
		}
	}
	env := []string{EnvBootstrap + "=" + c.Bootstrap, "FLUSS_TOOL_CLASSPATH=" + cp}
	if v := c.Env[EnvVersion]; v != "" {
		env = append(env, EnvVersion+"="+v)
	}
	return env, nil
}

// RunJava runs the Java fixture tool against this cluster (see
// [S3Cluster.JavaEnv] and [RunJavaEnv]) and returns its stdout.
func (c *S3Cluster) RunJava(t testing.TB, args ...string) string {
	t.Helper()
	env, err := c.JavaEnv()
	if err != nil {
		t.Fatalf("flusstest: %v", err)
	}
	return RunJavaEnv(t, env, args...)
}
