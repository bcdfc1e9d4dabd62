package kvsnap

import (
	"os"
	"strings"
	"testing"
)

func TestParseRealMetadata(t *testing.T) {
	data, err := os.ReadFile("testdata/kv1-snap-4.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != 1 || m.TableID != 0 || m.PartitionID != nil || m.BucketID != 0 || m.SnapshotID != 4 ||
		m.LogOffset != 655 || m.RowCount != 245 || m.IncrementalSize <= 0 {
		t.Fatalf("metadata %+v", m)
	}
	if !strings.HasSuffix(m.Location, "/kv1-0/0/snap-4") {
		t.Errorf("location %q", m.Location)
	}
	ssts := m.SSTFiles()
	if len(ssts) != 2 || ssts[0].LocalPath != "000013.sst" || ssts[1].LocalPath != "000012.sst" {
		t.Fatalf("SST files %+v", ssts)
	}
	if ssts[0].Size != 2120 || !strings.Contains(ssts[0].Path, "/kv1-0/0/shared/") {
		t.Errorf("SST file %+v", ssts[0])
	}
	var names []string
	for _, f := range m.PrivateFiles {
		names = append(names, f.LocalPath)
	}
	if got := strings.Join(names, ","); got != "CURRENT,MANIFEST-000004,OPTIONS-000007" {
		t.Errorf("private files %s", got)
	}
}

func TestParseSnapshots(t *testing.T) {
	for name, want := range map[string][3]int64{ // snapshot, log offset, SST files
		"kv1-snap-1.json":   {1, 550, 2},
		"kvidx-snap-2.json": {2, 550, 3},
	} {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if m.SnapshotID != want[0] || m.LogOffset != want[1] || int64(len(m.SSTFiles())) != want[2] {
			t.Errorf("%s: snapshot %d, log offset %d, %d SST files; want %v",
				name, m.SnapshotID, m.LogOffset, len(m.SSTFiles()), want)
		}
	}
}

func TestParseOptionalFields(t *testing.T) {
	const doc = `{"version":1,"table_id":1,"partition_id":10,"bucket_id":1,"snapshot_id":1,
	"snapshot_location":"oss://b/s","kv_snapshot_handle":{"shared_file_handles":[
	{"kv_file_handle":{"path":"oss://b/s/shared/t1","size":1},"local_path":"000009.sst"},
	{"kv_file_handle":{"path":"oss://b/s/shared/t2","size":2},"local_path":"000010.sst"}],
	"private_file_handles":[],"snapshot_incremental_size":3},"log_offset":10,
	"auto_inc_id_range":[{"column_id":2,"start":1,"end":2}]}`
	m, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if m.PartitionID == nil || *m.PartitionID != 10 || m.RowCount != -1 || m.LogOffset != 10 {
		t.Fatalf("metadata %+v", m)
	}
	if s := m.SSTFiles(); s[0].LocalPath != "000010.sst" {
		t.Errorf("order %+v", s)
	}
}

func TestParseErrors(t *testing.T) {
	for name, doc := range map[string]string{
		"not json":     `{`,
		"version 2":    `{"version":2}`,
		"no offset":    `{"version":1,"table_id":1,"bucket_id":0,"snapshot_id":1,"kv_snapshot_handle":{}}`,
		"no handle":    `{"version":1,"table_id":1,"bucket_id":0,"snapshot_id":1,"log_offset":1}`,
		"path escapes": `{"version":1,"table_id":1,"bucket_id":0,"snapshot_id":1,"log_offset":1,"kv_snapshot_handle":{"shared_file_handles":[{"kv_file_handle":{"path":"x","size":1},"local_path":"../x.sst"}]}}`,
		"no path":      `{"version":1,"table_id":1,"bucket_id":0,"snapshot_id":1,"log_offset":1,"kv_snapshot_handle":{"shared_file_handles":[{"kv_file_handle":{"size":1},"local_path":"1.sst"}]}}`,
	} {
		if _, err := Parse([]byte(doc)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
