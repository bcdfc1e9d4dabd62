// Package kvsnap reads the _METADATA file of a Fluss KV snapshot: the JSON
// that names the RocksDB checkpoint's files in remote storage (shared SST
// files, reused by later snapshots, and the snapshot's private CURRENT,
// MANIFEST and OPTIONS files) and the changelog offset the snapshot covers.
package kvsnap

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
)

// MetadataFile is the name of the metadata file in a snapshot directory.
const MetadataFile = "_METADATA"

// Metadata is one KV snapshot of one bucket
// (KvSnapshotHandle / CompletedSnapshot JSON, version 1).
type Metadata struct {
	Version     int
	TableID     int64
	PartitionID *int64 // nil for a non-partitioned table
	BucketID    int32
	SnapshotID  int64
	Location    string // the snapshot directory
	// SharedFiles are the SST files, which later snapshots may reuse.
	SharedFiles []File
	// PrivateFiles belong to this snapshot: CURRENT, MANIFEST-*, OPTIONS-*.
	PrivateFiles    []File
	IncrementalSize int64
	// LogOffset is the changelog offset the snapshot covers: the bucket's
	// log continues from here.
	LogOffset int64
	// RowCount is the number of rows, -1 when the file does not say.
	RowCount int64
}

// File is one stored file of a snapshot.
type File struct {
	Path      string // in remote storage
	Size      int64
	LocalPath string // its name in the RocksDB directory, e.g. 000008.sst
}

type jsonFile struct {
	Handle struct {
		Path *string `json:"path"`
		Size int64   `json:"size"`
	} `json:"kv_file_handle"`
	LocalPath string `json:"local_path"`
}

type jsonMetadata struct {
	Version    *int   `json:"version"`
	TableID    *int64 `json:"table_id"`
	Partition  *int64 `json:"partition_id"`
	BucketID   *int32 `json:"bucket_id"`
	SnapshotID *int64 `json:"snapshot_id"`
	Location   string `json:"snapshot_location"`
	LogOffset  *int64 `json:"log_offset"`
	RowCount   *int64 `json:"row_count"`
	Handle     *struct {
		Shared  []jsonFile `json:"shared_file_handles"`
		Private []jsonFile `json:"private_file_handles"`
		Size    int64      `json:"snapshot_incremental_size"`
	} `json:"kv_snapshot_handle"`
}

// Parse decodes a _METADATA file. Unknown fields are ignored; missing
// required ones and a version other than 1 are errors.
func Parse(data []byte) (*Metadata, error) {
	var j jsonMetadata
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&j); err != nil {
		return nil, fmt.Errorf("kv snapshot metadata: %w", err)
	}
	if err := j.check(); err != nil {
		return nil, fmt.Errorf("kv snapshot metadata: %w", err)
	}
	m := &Metadata{
		Version: *j.Version, TableID: *j.TableID, PartitionID: j.Partition,
		BucketID: *j.BucketID, SnapshotID: *j.SnapshotID, Location: j.Location,
		IncrementalSize: j.Handle.Size, LogOffset: *j.LogOffset, RowCount: -1,
	}
	if j.RowCount != nil {
		m.RowCount = *j.RowCount
	}
	var err error
	if m.SharedFiles, err = files(j.Handle.Shared, "shared"); err == nil {
		m.PrivateFiles, err = files(j.Handle.Private, "private")
	}
	if err != nil {
		return nil, fmt.Errorf("kv snapshot metadata of snapshot %d: %w", m.SnapshotID, err)
	}
	return m, nil
}

func (j *jsonMetadata) check() error {
	switch {
	case j.Version == nil:
		return errors.New("no version")
	case *j.Version != 1:
		return fmt.Errorf("version %d (want 1)", *j.Version)
	case j.TableID == nil || j.BucketID == nil || j.SnapshotID == nil:
		return errors.New("no table_id, bucket_id or snapshot_id")
	case j.LogOffset == nil || *j.LogOffset < 0:
		return errors.New("no log_offset")
	case j.Handle == nil:
		return errors.New("no kv_snapshot_handle")
	}
	return nil
}

// files converts file handles; a local path must be a plain file name.
func files(in []jsonFile, kind string) ([]File, error) {
	out := make([]File, 0, len(in))
	for i, f := range in {
		lp := f.LocalPath
		if f.Handle.Path == nil || *f.Handle.Path == "" || lp == "" || lp != path.Base(lp) ||
			lp == "." || lp == ".." || strings.Contains(lp, "\\") || f.Handle.Size < 0 {
			return nil, fmt.Errorf("%s file %d: bad handle (path, size %d, local_path %q)", kind, i, f.Handle.Size, lp)
		}
		out = append(out, File{Path: *f.Handle.Path, Size: f.Handle.Size, LocalPath: lp})
	}
	return out, nil
}

// SSTFiles returns the snapshot's SST files (local name ending in .sst),
// newest first: RocksDB numbers files in creation order, and Fluss's local
// names carry that number.
func (m *Metadata) SSTFiles() []File {
	var out []File
	for _, f := range append(append([]File(nil), m.SharedFiles...), m.PrivateFiles...) {
		if strings.HasSuffix(f.LocalPath, ".sst") {
			out = append(out, f)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].LocalPath, out[j].LocalPath
		if len(a) != len(b) {
			return len(a) > len(b)
		}
		return a > b
	})
	return out
}
