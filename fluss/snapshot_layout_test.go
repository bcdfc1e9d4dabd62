package fluss

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss/internal/kvsnap"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/sst"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// kv1Dir holds a KV snapshot a Fluss 0.9.1 cluster wrote (internal/sst
// tests): a table (id INT primary key, v STRING, n BIGINT).
const kv1Dir = "internal/sst/testdata/kv1"

// taggedIter gives the values of it in the TAGGED layout of Fluss 1.0 (a
// big-endian int64 tag before the plain value), as a TTL table's RocksDB
// holds them.
type taggedIter struct {
	sst.Iterator
	n int64
}

func (t *taggedIter) Value() []byte {
	t.n++
	return append(binary.BigEndian.AppendUint64(nil, uint64(1796018035906+t.n)), t.Iterator.Value()...)
}

// kv1Reader returns a snapshot reader of snapshot snap of kv1 for a table
// with the given properties, its files opened from testdata (no cluster:
// the download is skipped), its values tagged when tag is set.
func kv1Reader(t *testing.T, mem memory.Allocator, props map[string]string, snap string, tag bool) (*SnapshotReader, error) {
	t.Helper()
	cols, err := types.ParseColumns("id INT NOT NULL, v STRING, n BIGINT")
	if err != nil {
		t.Fatal(err)
	}
	schema, err := types.NewSchema(cols, "id")
	if err != nil {
		t.Fatal(err)
	}
	info := &TableInfo{Path: NewTablePath("db", "kv1"), TableID: 1, SchemaID: 1, Schema: schema, PrimaryKey: []string{"id"},
		Descriptor: &types.TableDescriptor{Schema: *schema, Properties: props}, NumBuckets: 1}
	r := &SnapshotReader{info: info, batch: 100, what: "table db.kv1 bucket 0 snapshot 4"}
	cfg := snapshotConfig{batchRows: 100, mem: mem}
	if err := r.openDecoder(context.Background(), nil, cfg); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(kv1Dir, snap, kvsnap.MetadataFile))
	if err != nil {
		t.Fatal(err)
	}
	m, err := kvsnap.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range m.SSTFiles() {
		if err := r.openTable(filepath.Join(kv1Dir, "shared", path.Base(f.Path)), SnapshotFile{LocalName: f.LocalPath}); err != nil {
			t.Fatal(err)
		}
	}
	r.it = sst.Merge(r.tables...)
	if tag {
		r.it = &taggedIter{Iterator: r.it}
	}
	return r, nil
}

// readAll reads a snapshot reader to the end.
func readAll(t *testing.T, r *SnapshotReader) []arrow.RecordBatch {
	t.Helper()
	var out []arrow.RecordBatch
	for {
		rec, err := r.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
}

// TestSnapshotValueLayout reads a snapshot's values as a Fluss 1.0 table
// with table.kv.value-layout-version 2 stores them (tag first): the reader
// takes the layout from the table's properties and returns the rows of the
// plain values. An unknown layout version is an error naming the table and
// the property.
func TestSnapshotValueLayout(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	plain, err := kv1Reader(t, mem, map[string]string{}, "snap-4", false)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	want := readAll(t, plain)
	tagged, err := kv1Reader(t, mem, map[string]string{types.PropKVValueLayout: "2"}, "snap-4", true)
	if err != nil {
		t.Fatal(err)
	}
	defer tagged.Close()
	got := readAll(t, tagged)
	if len(want) == 0 || len(got) != len(want) {
		t.Fatalf("%d plain records, %d tagged", len(want), len(got))
	}
	for i := range want {
		if !array.RecordEqual(want[i], got[i]) {
			t.Fatalf("record %d: plain\n%v\ntagged\n%v", i, want[i], got[i])
		}
		want[i].Release()
		got[i].Release()
	}
	if plain.Rows() == 0 || tagged.Rows() != plain.Rows() {
		t.Fatalf("rows: plain %d, tagged %d", plain.Rows(), tagged.Rows())
	}

	_, err = kv1Reader(t, mem, map[string]string{types.PropKVValueLayout: "3"}, "snap-4", false)
	if err == nil || !strings.Contains(err.Error(), "table db.kv1") || !strings.Contains(err.Error(), types.PropKVValueLayout) {
		t.Fatalf("layout 3: %v", err)
	}

}
