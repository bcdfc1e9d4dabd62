package fluss_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/cmd/fluss-iggy/flusscmd"
	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

// EnvS3Cluster names the cluster.env of a running cluster started with
// `fluss-cluster.sh up --remote-storage s3` (its remote.data.dir on S3).
// Without it the S3 tests start such a cluster themselves under CI (or with
// FLUSS_S3_START=1), and are skipped otherwise.
const envS3Cluster = "FLUSS_S3_CLUSTER_ENV"

// s3Cluster is the cluster.env of an S3-tiered cluster.
type s3Cluster map[string]string

// requireS3Cluster returns the configured S3 cluster, or starts one.
func requireS3Cluster(t *testing.T) s3Cluster {
	t.Helper()
	if f := os.Getenv(envS3Cluster); f != "" {
		env, err := readEnvFile(f)
		if err != nil {
			t.Fatalf("%s: %v", envS3Cluster, err)
		}
		return env
	}
	if !flusstest.InCI() && os.Getenv("FLUSS_S3_START") != "1" {
		t.Skipf("no S3 cluster: set %s to the cluster.env of `fluss-cluster.sh up --remote-storage s3`, or FLUSS_S3_START=1 (under CI one is started)", envS3Cluster)
	}
	root, err := flusstest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "fluss-iggy-s3-")
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, "scripts", "fluss-cluster.sh")
	start := time.Now()
	cmd := exec.Command("bash", script, "up", "--remote-storage", "s3", "--dir", dir, "--owner-pid", strconv.Itoa(os.Getpid()))
	cmd.Stderr = os.Stderr
	if _, err := cmd.Output(); err != nil {
		os.RemoveAll(dir)
		t.Fatalf("starting an S3 cluster: %v", err)
	}
	t.Logf("S3 cluster ready in %s (dir %s)", time.Since(start).Round(time.Second), dir)
	t.Cleanup(func() {
		if out, err := exec.Command("bash", script, "down", "--kill", "--dir", dir).CombinedOutput(); err != nil {
			t.Errorf("stopping the S3 cluster: %v\n%s", err, out)
		}
	})
	env, err := readEnvFile(filepath.Join(dir, "cluster.env"))
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func readEnvFile(name string) (s3Cluster, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	env := s3Cluster{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			env[k] = v
		}
	}
	return env, sc.Err()
}

// storage returns a RemoteStorage with the cluster's static S3 credentials.
func (e s3Cluster) storage(t *testing.T, c *fluss.Client) *fluss.RemoteStorage {
	t.Helper()
	rs, err := c.RemoteStorage(fluss.RemoteStorageOptions{S3: fluss.S3Options{
		Endpoint:  e["FLUSS_S3_ENDPOINT"],
		Region:    e["FLUSS_S3_REGION"],
		AccessKey: e["FLUSS_S3_ACCESS_KEY"],
		SecretKey: e["FLUSS_S3_SECRET_KEY"],
		PathStyle: true,
	}, ReadAhead: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rs.Close() })
	return rs
}

// TestScannerRemoteSegmentsS3: a table whose first segments exist only in
// S3 (tiered, then deleted locally) reads from earliest through `fluss
// scan` exactly as the Java client reads it.
func TestScannerRemoteSegmentsS3(t *testing.T) {
	env := requireS3Cluster(t)
	if !strings.HasPrefix(env["FLUSS_REMOTE_DATA_DIR"], "s3://") {
		t.Fatalf("the cluster's remote.data.dir is %q, not s3://", env["FLUSS_REMOTE_DATA_DIR"])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := fluss.NewClient(ctx, fluss.Bootstrap(env["FLUSS_BOOTSTRAP"]))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	info := writeTieredTable(ctx, t, c)
	rs := env.storage(t, c)

	remote := waitRemoteBatches(ctx, t, c, info, rs)
	t.Logf("batches read from S3 segments: %d", remote)
	table := info.Path.String()
	// The cluster's security token (STS AssumeRole on the S3 server) gives
	// the endpoint, path style and credentials: no options at all.
	tokens, err := c.RemoteStorage(fluss.RemoteStorageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tokens.Close()
	scan := func(st *fluss.RemoteStorage, columns ...string) string {
		var b strings.Builder
		opts := flusscmd.ScanOptions{Timeout: time.Minute, Columns: columns,
			ScanOptions: []fluss.ScanOption{fluss.ScanAllocator(checkedAlloc(t)), fluss.ScanRemoteStorage(st), fluss.FetchMaxBucketBytes(4 << 10)}}
		if err := flusscmd.Scan(ctx, c, info.Path, &b, opts); err != nil {
			t.Fatalf("fluss scan %s: %v", table, err)
		}
		return b.String()
	}
	java := javaS3Scan(t, env, table)
	sameLines(t, table, java, scan(rs))
	sameLines(t, table+" with the cluster's token", java, scan(tokens))
	sameLines(t, table+" projected", javaS3Scan(t, env, table, "--columns", "note,id"), scan(rs, "note", "id"))
}

// writeTieredTable creates a two-bucket log table that keeps one segment
// locally and appends 40 batches one by one (so they land in many 1 KiB
// segments).
func writeTieredTable(ctx context.Context, t *testing.T, c *fluss.Client) *fluss.TableInfo {
	t.Helper()
	db := flusstest.UniqueName("s3remote")
	if err := c.CreateDatabase(ctx, db, nil, false); err != nil {
		t.Fatal(err)
	}
	path := fluss.NewTablePath(db, "tiered")
	desc := &types.TableDescriptor{
		Schema: *types.MustSchema([]types.Column{
			types.NewColumn("id", types.BigInt().NotNull()),
			types.NewColumn("bucket", types.Int()),
			types.NewColumn("note", types.String()),
		}),
		BucketCount: 2,
		Properties:  map[string]string{"table.log.tiered.local-segments": "1"},
	}
	if err := c.CreateTable(ctx, path, desc, false); err != nil {
		t.Fatal(err)
	}
	info := waitTable(t, c, path)
	w, err := c.NewWriter(info)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 40; i++ {
		rec := failoverBatch(w.Schema(), int64(i*10), int32(i%2), 10)
		_, err := w.Append(ctx, fluss.NoPartition, int32(i%2), rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	return info
}

// waitRemoteBatches reads the table from earliest until some batches come
// from remote segments (tiering runs every second) and returns how many.
func waitRemoteBatches(ctx context.Context, t *testing.T, c *fluss.Client, info *fluss.TableInfo, rs *fluss.RemoteStorage) int {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(2 * time.Second) {
		s, err := c.NewScanner(info, fluss.ScanAllocator(checkedAlloc(t)), fluss.ScanRemoteStorage(rs))
		if err != nil {
			t.Fatal(err)
		}
		ranges, err := c.BucketRanges(ctx, info, "")
		if err != nil {
			t.Fatal(err)
		}
		remote := 0
		err = s.ReadRanges(ctx, ranges, func(b *fluss.ScanBatch) error {
			if b.Remote {
				remote++
			}
			return nil
		})
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		if remote > 0 {
			return remote
		}
		if time.Now().After(deadline) {
			t.Fatal("no batch was read from an S3 segment within 2 minutes")
		}
	}
}

// javaS3Scan is the Java tool's scan with the fluss-fs-s3 plugin on its
// class path; the client reads S3 with the cluster's security token.
func javaS3Scan(t *testing.T, env s3Cluster, table string, extra ...string) string {
	t.Helper()
	root, err := flusstest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("bash", filepath.Join(root, "scripts", "fluss-cluster.sh"), "classpath").Output()
	if err != nil {
		t.Fatalf("fluss-cluster.sh classpath: %v", err)
	}
	jars, _ := filepath.Glob(filepath.Join(env["FLUSS_CLUSTER_DIR"], "plugins", "s3", "*.jar"))
	cp := strings.TrimSpace(string(out))
	for _, j := range jars {
		if real, err := filepath.EvalSymlinks(j); err == nil {
			cp += ":" + real
		}
	}
	args := append([]string{"scan", table}, extra...)
	return flusstest.RunJavaEnv(t, []string{"FLUSS_BOOTSTRAP=" + env["FLUSS_BOOTSTRAP"], "FLUSS_TOOL_CLASSPATH=" + cp}, args...)
}
