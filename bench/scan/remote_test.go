package scan_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/bench/benchtable"
	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/internal/e2e"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

// envRemoteChild makes BenchmarkScanRemoteS3 the measuring child: it scans
// the ranges in the value (JSON remoteChildJob) and prints one
// remoteResultPrefix line.
const envRemoteChild = "FLUSS_SCAN_REMOTE_CHILD"

const remoteResultPrefix = "scan-remote-result: "

// remoteChildJob is what the child scans: the parts one after the other,
// each with one ReadRanges call.
type remoteChildJob struct {
	Bootstrap string                `json:"bootstrap"`
	Table     string                `json:"table"`
	Parts     [][]fluss.BucketRange `json:"parts"`
}

// remoteResult is one measured scan of the child.
type remoteResult struct {
	result
	// RemoteRows and RemoteBatches came from S3 segments.
	RemoteRows    int64 `json:"remote_rows"`
	RemoteBatches int64 `json:"remote_batches"`
	Batches       int64 `json:"batches"`
}

// BenchmarkScanRemoteS3 measures our scanner over a table of which about
// half the rows exist only in S3: the benchmark table's 10 columns (ZSTD,
// 4 buckets, FLUSS_BENCH_ROWS rows, default 2,000,000) written with our
// writer in batches of 8,192 rows on an S3-tiered cluster
// (flusstest.RequireS3Cluster: 1 KiB segments, so each batch is a segment,
// tiering every second), with table.log.tiered.local-segments set to half
// of each bucket's segments. Once the first half of every bucket is only in
// S3 (its local log start is the middle), it scans, each in a child
// process (for its peak RSS and CPU time):
//
//   - half-S3: the S3 half, then the local half (one scanner, one process):
//     the table read half from S3, half from the tablet server;
//   - S3-half and local-half: each alone;
//   - earliest: the whole table with one ReadRanges from earliest. A fetch
//     below the local log start is answered with every segment already
//     copied to S3, local or not, so this reads all but each bucket's
//     active segment from S3.
//
// after one unmeasured read of both halves, and reports rows/s, MB/s, CPU
// µs per row and peak RSS. The scanner reads S3 with the cluster's
// security token, 2 MiB read-ahead.
//
//	FLUSS_S3_START=1 go test -run '^$' -bench ScanRemoteS3 -benchtime 1x -timeout 30m ./bench/scan
//
// (or FLUSS_S3_CLUSTER_ENV=DIR/cluster.env of a running
// `scripts/fluss-cluster.sh up --remote-storage s3 --dir DIR`).
func BenchmarkScanRemoteS3(b *testing.B) {
	if job := os.Getenv(envRemoteChild); job != "" {
		remoteChild(b, job)
		return
	}
	s3 := flusstest.RequireS3Cluster(b)
	ctx := context.Background()
	c, err := fluss.NewClient(ctx, fluss.Bootstrap(s3.Bootstrap))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	rows := benchtable.Rows()
	per := (rows + benchtable.Buckets - 1) / benchtable.Buckets
	segments := (per + benchtable.BatchRows - 1) / benchtable.BatchRows
	if segments < 2 {
		b.Fatalf("FLUSS_BENCH_ROWS=%d gives %d batch per bucket; need at least 2 to tier half of them", rows, segments)
	}
	local := (segments + 1) / 2
	db := flusstest.UniqueName("bench_remote")
	if err := c.CreateDatabase(ctx, db, nil, false); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = c.DropDatabase(context.Background(), db, true, true) }()
	path := fluss.NewTablePath(db, "scan_remote")
	start := time.Now()
	info := createTieredTable(b, c, path, rows, local)
	b.Logf("wrote %d rows to %s (%d segments per bucket, %d kept locally) in %s", rows, path, segments, local, time.Since(start).Round(time.Millisecond))

	// The S3 part of each bucket: its first segments-local batches.
	full, err := c.BucketRanges(ctx, info, "")
	if err != nil {
		b.Fatal(err)
	}
	var s3Part, localPart []fluss.BucketRange
	remoteRows := int64(0)
	for _, r := range full {
		split := r.Start + int64((segments-local)*benchtable.BatchRows)
		if split >= r.End {
			b.Fatalf("bucket %d: range %d..%d, expected its S3 part to end at %d", r.Bucket.Bucket, r.Start, r.End, split)
		}
		remoteRows += split - r.Start
		s3Part = append(s3Part, fluss.BucketRange{Bucket: r.Bucket, Start: r.Start, End: split})
		localPart = append(localPart, fluss.BucketRange{Bucket: r.Bucket, Start: split, End: r.End})
	}
	start = time.Now()
	waitLocalStart(b, c, info, full, s3Part)
	waitCopied(b, s3, info, segments)
	b.Logf("the first %d of %d rows (%.1f%%) only in S3, the rest copied too, after %s more", remoteRows, rows, 100*float64(remoteRows)/float64(rows), time.Since(start).Round(time.Millisecond))
	// One unmeasured read of both halves first: the first read of freshly
	// uploaded objects is slower (SeaweedFS), which would count against
	// whichever case came first.
	warm := runRemoteChild(b, remoteChildJob{Bootstrap: s3.Bootstrap, Table: path.String(), Parts: [][]fluss.BucketRange{s3Part, localPart}})
	b.Logf("warm-up read: %d rows in %.3f s", warm.Rows, warm.Seconds)

	cases := []struct {
		name  string
		parts [][]fluss.BucketRange
		// remote is how many rows must come from S3 at least, and at most.
		remoteMin, remoteMax int64
	}{
		{"half-S3", [][]fluss.BucketRange{s3Part, localPart}, remoteRows, remoteRows},
		{"S3-half", [][]fluss.BucketRange{s3Part}, remoteRows, remoteRows},
		{"local-half", [][]fluss.BucketRange{localPart}, 0, 0},
		{"earliest", [][]fluss.BucketRange{full}, remoteRows, int64(rows)},
	}
	var report strings.Builder
	fmt.Fprintf(&report, "\nscan of %s (%d rows, %d buckets, ZSTD, %d segments of 8,192 rows per bucket, the first %d only in S3), our scanner\n",
		path, rows, benchtable.Buckets, segments, segments-local)
	fmt.Fprintf(&report, "%-10s %10s %8s %8s %12s %9s %12s %10s\n", "case", "rows", "from S3", "seconds", "rows/s", "MB/s", "CPU µs/row", "peak RSS")
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				r := runRemoteChild(b, remoteChildJob{Bootstrap: s3.Bootstrap, Table: path.String(), Parts: tc.parts})
				want := int64(0)
				for _, part := range tc.parts {
					for _, rg := range part {
						want += rg.End - rg.Start
					}
				}
				if r.Rows != want {
					b.Errorf("%s: scanned %d rows, want %d", tc.name, r.Rows, want)
				}
				if r.RemoteRows < tc.remoteMin || r.RemoteRows > tc.remoteMax {
					b.Errorf("%s: %d rows came from S3, want %d to %d", tc.name, r.RemoteRows, tc.remoteMin, tc.remoteMax)
				}
				perRow := r.CPUSeconds / float64(r.Rows) * 1e6
				b.ReportMetric(float64(r.Rows)/r.Seconds, "rows/s")
				b.ReportMetric(perRow, "cpu-us/row")
				b.ReportMetric(float64(r.PeakRSSKB)/1024, "peak-RSS-MB")
				fmt.Fprintf(&report, "%-10s %10d %7.1f%% %8.3f %12.0f %9.1f %12.3f %8.1fMB\n", tc.name, r.Rows,
					100*float64(r.RemoteRows)/float64(r.Rows), r.Seconds, float64(r.Rows)/r.Seconds,
					float64(r.Bytes)/1e6/r.Seconds, perRow, float64(r.PeakRSSKB)/1024)
			}
		})
	}
	fmt.Print(report.String())
}

// createTieredTable creates and fills the benchmark table with the given
// table.log.tiered.local-segments.
func createTieredTable(b *testing.B, c *fluss.Client, path fluss.TablePath, rows, localSegments int) *fluss.TableInfo {
	ctx := context.Background()
	err := benchtable.Create(ctx, c, path, rows, map[string]string{"table.log.tiered.local-segments": strconv.Itoa(localSegments)})
	if err != nil {
		b.Fatal(err)
	}
	info, err := c.RefreshTable(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	return info
}

// waitLocalStart waits until every bucket's local log start is the end of
// its S3 part (tiering every second, local-segments keeps the rest).
func waitLocalStart(b *testing.B, c *fluss.Client, info *fluss.TableInfo, full, s3Part []fluss.BucketRange) {
	ctx := context.Background()
	want := map[int32]int64{}
	for _, r := range s3Part {
		want[r.Bucket.Bucket] = r.End
	}
	for deadline := time.Now().Add(10 * time.Minute); ; time.Sleep(2 * time.Second) {
		starts, err := e2e.LocalLogStarts(ctx, c, info, full)
		if err != nil {
			b.Fatal(err)
		}
		done := true
		for bk, w := range want {
			if starts[bk] > w {
				b.Fatalf("bucket %d: the local log starts at %d, after the expected %d (local log starts %v)", bk, starts[bk], w, starts)
			}
			done = done && starts[bk] == w
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("the first half of %s was not tiered within 10 minutes: local logs start at %v, want %v", info.Path, starts, want)
		}
	}
}

// waitCopied waits until every segment but the active one (each bucket's
// last batch) was copied to S3, so that no upload runs during the scans. It
// counts the segment files (.log) under each bucket's remote log directory,
// remote.data.dir/log/DB/TABLE-ID/BUCKET/, listed with curl (SigV4).
func waitCopied(b *testing.B, s3 *flusstest.S3Cluster, info *fluss.TableInfo, segments int) {
	rest, ok := strings.CutPrefix(s3.RemoteDataDir, "s3://")
	if !ok {
		b.Fatalf("remote.data.dir %q is not s3://", s3.RemoteDataDir)
	}
	bucket, dir, _ := strings.Cut(rest, "/")
	if dir != "" {
		dir = strings.TrimSuffix(dir, "/") + "/"
	}
	count := func(bk int) int {
		prefix := fmt.Sprintf("%slog/%s/%s-%d/%d/", dir, info.Path.Database, info.Path.Table, info.TableID, bk)
		u := fmt.Sprintf("%s/%s?list-type=2&prefix=%s", strings.TrimSuffix(s3.Endpoint, "/"), bucket, url.QueryEscape(prefix))
		out, err := exec.Command("curl", "-sSf", "--aws-sigv4", "aws:amz:"+s3.Region+":s3", "--user", s3.AccessKey+":"+s3.SecretKey, u).Output()
		if err != nil {
			b.Fatalf("listing %s: %v", u, err)
		}
		if bytes.Contains(out, []byte("<IsTruncated>true</IsTruncated>")) {
			b.Fatalf("listing %s: more than one page", u)
		}
		return bytes.Count(out, []byte(".log</Key>"))
	}
	for deadline := time.Now().Add(10 * time.Minute); ; time.Sleep(time.Second) {
		var copied []int
		done := true
		for bk := 0; bk < benchtable.Buckets; bk++ {
			n := count(bk)
			copied = append(copied, n)
			done = done && n >= segments-1
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("the segments of %s were not copied to S3 within 10 minutes: %v of %d per bucket", info.Path, copied, segments-1)
		}
	}
}

func runRemoteChild(b *testing.B, job remoteChildJob) remoteResult {
	spec, err := json.Marshal(job)
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^BenchmarkScanRemoteS3$", "-test.benchtime=1x")
	cmd.Env = append(os.Environ(), envRemoteChild+"="+string(spec))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		b.Fatalf("scan child: %v\n%s\n%s", err, out.String(), errb.String())
	}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), remoteResultPrefix); ok {
			var r remoteResult
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				b.Fatalf("scan child printed %q: %v", line, err)
			}
			return r
		}
	}
	b.Fatalf("scan child printed no result:\n%s\n%s", out.String(), errb.String())
	return remoteResult{}
}

// remoteChild scans the job's ranges with our scanner, counting rows, and
// prints a remoteResultPrefix line.
func remoteChild(b *testing.B, spec string) {
	var job remoteChildJob
	if err := json.Unmarshal([]byte(spec), &job); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	path, err := fluss.ParseTablePath(job.Table)
	if err != nil {
		b.Fatal(err)
	}
	c, err := fluss.NewClient(ctx, fluss.Bootstrap(job.Bootstrap))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	info, err := c.RefreshTable(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	s, err := c.NewScanner(info)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var r remoteResult
	cpu0 := cpuSeconds()
	start := time.Now()
	for _, part := range job.Parts {
		err = s.ReadRanges(ctx, part, func(sb *fluss.ScanBatch) error {
			n := int64(sb.NumRows())
			r.Rows += n
			r.Batches++
			if sb.Remote {
				r.RemoteRows += n
				r.RemoteBatches++
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	r.Seconds = time.Since(start).Seconds()
	r.CPUSeconds = cpuSeconds() - cpu0
	r.Bytes = s.Stats().RecordsBytes
	r.PeakRSSKB = benchtable.PeakRSSKB()
	out, _ := json.Marshal(r)
	fmt.Println(remoteResultPrefix + string(out))
}
