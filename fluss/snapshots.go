package fluss

import (
	"context"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/fluss-iggy/fluss-iggy/fluss/internal/kvsnap"

	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/wire"
)

// NoSnapshot is the SnapshotID of a bucket that has no KV snapshot yet.
const NoSnapshot int64 = -1

// KVSnapshot is the latest KV snapshot of one bucket of a primary-key table:
// the bucket's state up to (not including) LogOffset of its changelog.
type KVSnapshot struct {
	Bucket TableBucket
	// SnapshotID is NoSnapshot when the bucket has none yet; read its
	// changelog from the start then.
	SnapshotID int64
	// LogOffset is the changelog offset the snapshot covers: the changelog
	// continues from here.
	LogOffset int64
}

// SnapshotFile is one file of a KV snapshot: where it is stored and the
// name RocksDB gives it in the snapshot's checkpoint (000008.sst, CURRENT,
// MANIFEST-000005, OPTIONS-000007, ...).
type SnapshotFile struct {
	RemotePath string
	LocalName  string
}

// KVSnapshotFiles lists the files of one KV snapshot.
type KVSnapshotFiles struct {
	SnapshotID int64
	LogOffset  int64
	Files      []SnapshotFile
}

// LatestKVSnapshots returns the latest KV snapshot of every bucket of a
// primary-key table (of one partition, for partitioned tables), ordered by
// bucket, with GET_LATEST_KV_SNAPSHOTS.
func (c *Client) LatestKVSnapshots(ctx context.Context, info *TableInfo, partition PartitionInfo) ([]KVSnapshot, error) {
	req := &pb.GetLatestKvSnapshotsRequest{TablePath: info.Path.pb()}
	partitionID := NoPartition
	if info.IsPartitioned() {
		req.PartitionName = &partition.Name
		partitionID = partition.ID
	}
	var resp pb.GetLatestKvSnapshotsResponse
	if err := c.callAny(ctx, wire.GetLatestKVSnapshots, req, &resp); err != nil {
		return nil, fmt.Errorf("fluss: latest KV snapshots of %s%s: %w", info.Path, partitionSuffix(partition.Name), err)
	}
	out := make([]KVSnapshot, 0, len(resp.GetLatestSnapshots()))
	for _, s := range resp.GetLatestSnapshots() {
		snap := KVSnapshot{
			Bucket:     TableBucket{TableID: resp.GetTableId(), PartitionID: partitionID, Bucket: s.GetBucketId()},
			SnapshotID: NoSnapshot,
		}
		if s.SnapshotId != nil {
			snap.SnapshotID, snap.LogOffset = s.GetSnapshotId(), s.GetLogOffset()
		}
		out = append(out, snap)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Bucket.Bucket < out[j].Bucket.Bucket })
	return out, nil
}

// KVSnapshotFiles returns the files of snapshot snapshotID of bucket b and
// the changelog offset it covers, with GET_KV_SNAPSHOT_METADATA. A snapshot
// that the server has deleted meanwhile gives an error (errcode
// KvSnapshotNotExist).
func (c *Client) KVSnapshotFiles(ctx context.Context, b TableBucket, snapshotID int64) (KVSnapshotFiles, error) {
	req := &pb.GetKvSnapshotMetadataRequest{TableId: &b.TableID, BucketId: &b.Bucket, SnapshotId: &snapshotID}
	if b.PartitionID != NoPartition {
		req.PartitionId = &b.PartitionID
	}
	var resp pb.GetKvSnapshotMetadataResponse
	if err := c.callAny(ctx, wire.GetKVSnapshotMetadata, req, &resp); err != nil {
		return KVSnapshotFiles{}, fmt.Errorf("fluss: files of KV snapshot %d of %s: %w", snapshotID, b, err)
	}
	out := KVSnapshotFiles{SnapshotID: snapshotID, LogOffset: resp.GetLogOffset()}
	for _, f := range resp.GetSnapshotFiles() {
		out.Files = append(out.Files, SnapshotFile{RemotePath: f.GetRemotePath(), LocalName: f.GetLocalFileName()})
	}
	return out, nil
}

// maxMetadataBytes bounds the _METADATA file read by KVSnapshotSize.
const maxMetadataBytes = 64 << 20

// KVSnapshotSize returns the stored size of a snapshot's files (shared SST
// files and private files) from the _METADATA file beside its private files
// in remote storage. A _METADATA file remote storage does not have is an
// error wrapping ErrSnapshotGone.
func (c *Client) KVSnapshotSize(ctx context.Context, b TableBucket, files KVSnapshotFiles) (int64, error) {
	what := fmt.Sprintf("KV snapshot %d of %s", files.SnapshotID, b)
	dir := ""
	for _, f := range files.Files {
		if !strings.HasSuffix(f.LocalName, ".sst") {
			dir = f.RemotePath[:strings.LastIndex(f.RemotePath, "/")+1]
			break
		}
	}
	if dir == "" {
		return 0, fmt.Errorf("fluss: %s: no private file tells where its %s is", what, kvsnap.MetadataFile)
	}
	storage, err := c.remoteStorage()
	if err != nil {
		return 0, fmt.Errorf("fluss: %s: remote storage: %w", what, err)
	}
	file := dir + kvsnap.MetadataFile
	rc, err := storage.Open(ctx, file, 0)
	if err == nil {
		defer rc.Close()
		var data []byte
		data, err = io.ReadAll(io.LimitReader(&ctxReader{ctx: ctx, r: rc}, maxMetadataBytes))
		if err == nil {
			var m *kvsnap.Metadata
			if m, err = kvsnap.Parse(data); err == nil {
				var n int64
				for _, f := range append(m.SharedFiles, m.PrivateFiles...) {
					n += f.Size
				}
				return n, nil
			}
		}
	}
	if isNotFound(err) {
		err = fmt.Errorf("%w: %v", ErrSnapshotGone, err)
	}
	return 0, fmt.Errorf("fluss: %s: %s: %w", what, path.Base(file), err)
}

// partitionSuffix is " partition NAME", or "" for no partition.
func partitionSuffix(name string) string {
	if name == "" {
		return ""
	}
	return " partition " + name
}
