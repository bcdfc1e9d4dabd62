package flusscmd

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/jsonrow"
)

func snapshotsCommand(common []cli.Flag) *cli.Command {
	return tableCommand("snapshots", "Print the latest KV snapshot of every bucket of a primary-key table as JSON lines", common, Snapshots)
}

// partitionsOf lists the partitions to read: every partition of a
// partitioned table (sorted by name) or only the one named, and for other
// tables one entry with NoPartition.
func partitionsOf(ctx context.Context, c *fluss.Client, info *fluss.TableInfo, only string) ([]fluss.PartitionInfo, error) {
	if !info.IsPartitioned() {
		if only != "" {
			return nil, fmt.Errorf("table %s is not partitioned; drop --partition", info.Path)
		}
		return []fluss.PartitionInfo{{ID: fluss.NoPartition}}, nil
	}
	all, err := c.Partitions(ctx, info)
	if err != nil {
		return nil, err
	}
	var out []fluss.PartitionInfo
	for _, p := range all {
		if only == "" || p.Name == only {
			out = append(out, p)
		}
	}
	if only != "" && len(out) == 0 {
		return nil, fmt.Errorf("table %s has no partition named %q", info.Path, only)
	}
	sortPartitions(out)
	return out, nil
}

// sortPartitions orders partitions by name (bytes of the UTF-8 name).
func sortPartitions(ps []fluss.PartitionInfo) {
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && ps[j].Name < ps[j-1].Name; j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
}

// Snapshots writes one line per bucket, ordered by partition name and
// bucket: {"partition":…,"bucket":…,"snapshot_id":…,"log_offset":…,
// "files":…,"bytes":…}. A bucket without a snapshot has snapshot_id -1 and
// log_offset, files and bytes 0; bytes is the stored size of all the
// snapshot's files (from its _METADATA).
func Snapshots(ctx context.Context, c *fluss.Client, path fluss.TablePath, partition string, w io.Writer) error {
	info, err := c.RefreshTable(ctx, path)
	if err != nil {
		return err
	}
	if !info.HasPrimaryKey() {
		return fmt.Errorf("table %s has no primary key, so no KV snapshots", path)
	}
	parts, err := partitionsOf(ctx, c, info, partition)
	if err != nil {
		return err
	}
	var line []byte
	for _, p := range parts {
		snaps, err := c.LatestKVSnapshots(ctx, info, p)
		if err != nil {
			return err
		}
		for _, s := range snaps {
			var files, size int64
			if s.SnapshotID != fluss.NoSnapshot {
				fs, err := c.KVSnapshotFiles(ctx, s.Bucket, s.SnapshotID)
				if err != nil {
					return err
				}
				files = int64(len(fs.Files))
				if size, err = c.KVSnapshotSize(ctx, s.Bucket, fs); err != nil {
					return err
				}
			}
			line = appendPartition(line[:0], p)
			line = append(line, `,"bucket":`...)
			line = strconv.AppendInt(line, int64(s.Bucket.Bucket), 10)
			line = append(line, `,"snapshot_id":`...)
			line = strconv.AppendInt(line, s.SnapshotID, 10)
			line = append(line, `,"log_offset":`...)
			line = strconv.AppendInt(line, s.LogOffset, 10)
			line = append(line, `,"files":`...)
			line = strconv.AppendInt(line, files, 10)
			line = append(line, `,"bytes":`...)
			line = strconv.AppendInt(line, size, 10)
			line = append(line, "}\n"...)
			if _, err := w.Write(line); err != nil {
				return err
			}
		}
	}
	return nil
}

// appendPartition appends {"partition":NAME or null.
func appendPartition(dst []byte, p fluss.PartitionInfo) []byte {
	dst = append(dst, `{"partition":`...)
	if p.ID == fluss.NoPartition {
		return append(dst, "null"...)
	}
	return jsonrow.AppendString(dst, p.Name)
}
