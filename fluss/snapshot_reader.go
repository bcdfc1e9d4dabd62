package fluss

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss/internal/sst"
	"github.com/fluss-iggy/fluss-iggy/fluss/records"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// DefaultSnapshotBatchRows is the default of SnapshotBatchRows.
const DefaultSnapshotBatchRows = 1024

// SnapshotOption configures OpenKVSnapshot.
type SnapshotOption func(*snapshotConfig)

type snapshotConfig struct {
	dir       string
	maxDisk   int64
	columns   []string
	batchRows int
	skip      int64
	mem       memory.Allocator
}

// SnapshotDir sets the directory snapshot files are downloaded to (default
// os.TempDir()/fluss-snapshots). Each open snapshot gets its own
// subdirectory, removed by Close; subdirectories left by a process that
// died are removed when a reader opens.
func SnapshotDir(dir string) SnapshotOption { return func(c *snapshotConfig) { c.dir = dir } }

// SnapshotMaxDisk bounds the bytes downloaded for one snapshot (default: no
// bound). A larger snapshot fails OpenKVSnapshot with ErrSnapshotTooLarge.
func SnapshotMaxDisk(bytes int64) SnapshotOption {
	return func(c *snapshotConfig) { c.maxDisk = bytes }
}

// SnapshotColumns projects the rows to the named columns, in the given
// order, with the same rules and errors as ScanColumns.
func SnapshotColumns(names ...string) SnapshotOption {
	return func(c *snapshotConfig) { c.columns = append([]string{}, names...) }
}

// SnapshotBatchRows sets the rows per record batch (default
// DefaultSnapshotBatchRows).
func SnapshotBatchRows(n int) SnapshotOption { return func(c *snapshotConfig) { c.batchRows = n } }

// SnapshotSkipRows skips the first n rows of the key-ordered iteration
// without decoding their values: resume a snapshot read after n rows.
func SnapshotSkipRows(n int64) SnapshotOption { return func(c *snapshotConfig) { c.skip = n } }

// SnapshotAllocator sets the allocator of the returned records (default
// memory.DefaultAllocator).
func SnapshotAllocator(mem memory.Allocator) SnapshotOption {
	return func(c *snapshotConfig) { c.mem = mem }
}

// SnapshotReader reads the rows of one KV snapshot of one bucket of a
// primary-key table, in primary-key order (the bytes of the encoded key),
// which is the same for every read of the same snapshot. Not safe for
// concurrent use.
type SnapshotReader struct {
	info   *TableInfo
	snap   KVSnapshot
	files  KVSnapshotFiles
	what   string // "table db.t bucket 3 snapshot 7", for errors
	dir    string
	disk   int64
	tables []*sst.Table
	open   []*os.File
	it     sst.Iterator
	dec    *records.ValueDecoder
	schema *types.Schema
	arrow  *arrow.Schema
	batch  int
	skip   int64
	rows   int64
	err    error           // sticky
	ctx    context.Context // of the running call, for schema lookups
}

// OpenKVSnapshot downloads the SST files of a bucket's KV snapshot (snap as
// LatestKVSnapshots returns it) and opens them for reading. A snapshot the
// server no longer has fails with an error wrapping errcode
// KvSnapshotNotExist; a file missing from remote storage with one wrapping
// ErrSnapshotGone. Close the reader to remove the downloaded files.
func (c *Client) OpenKVSnapshot(ctx context.Context, info *TableInfo, snap KVSnapshot, opts ...SnapshotOption) (*SnapshotReader, error) {
	cfg := snapshotConfig{dir: filepath.Join(os.TempDir(), "fluss-snapshots"), batchRows: DefaultSnapshotBatchRows, mem: memory.DefaultAllocator}
	for _, o := range opts {
		o(&cfg)
	}
	r := &SnapshotReader{info: info, snap: snap, batch: cfg.batchRows, skip: cfg.skip,
		what: fmt.Sprintf("table %s %s snapshot %d", info.Path, bucketName(snap.Bucket), snap.SnapshotID)}
	if err := r.check(cfg); err != nil {
		return nil, err
	}
	if err := r.openDecoder(ctx, c, cfg); err != nil {
		return nil, err
	}
	files, err := c.KVSnapshotFiles(ctx, snap.Bucket, snap.SnapshotID)
	if err != nil {
		r.dec.Release()
		return nil, fmt.Errorf("fluss: %s: %w", r.what, err)
	}
	r.files = files
	if err := r.download(ctx, c, cfg); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// bucketName names a bucket without the table id: "bucket 3" or
// "partition 12 bucket 3".
func bucketName(b TableBucket) string {
	if b.PartitionID == NoPartition {
		return fmt.Sprintf("bucket %d", b.Bucket)
	}
	return fmt.Sprintf("partition %d bucket %d", b.PartitionID, b.Bucket)
}

// check validates the options and the snapshot.
func (r *SnapshotReader) check(cfg snapshotConfig) error {
	switch {
	case !r.info.HasPrimaryKey():
		return fmt.Errorf("fluss: %s: not a primary-key table, it has no KV snapshots", r.what)
	case r.snap.SnapshotID == NoSnapshot || r.snap.SnapshotID < 0:
		return fmt.Errorf("fluss: table %s %s has no KV snapshot", r.info.Path, bucketName(r.snap.Bucket))
	case r.snap.Bucket.TableID != r.info.TableID:
		return fmt.Errorf("fluss: %s: the snapshot is of table id %d, the table's id is %d", r.what, r.snap.Bucket.TableID, r.info.TableID)
	case cfg.batchRows <= 0:
		return fmt.Errorf("fluss: %s: batch rows %d must be positive", r.what, cfg.batchRows)
	case cfg.skip < 0:
		return fmt.Errorf("fluss: %s: skip rows %d must not be negative", r.what, cfg.skip)
	case cfg.maxDisk < 0:
		return fmt.Errorf("fluss: %s: max disk %d must not be negative", r.what, cfg.maxDisk)
	case cfg.mem == nil:
		return fmt.Errorf("fluss: %s: no allocator", r.what)
	}
	return nil
}

// openDecoder sets the output schema (the projected current schema) and
// the value decoder, for the table's row format and value layout.
func (r *SnapshotReader) openDecoder(ctx context.Context, c *Client, cfg snapshotConfig) error {
	info := r.info
	format, err := records.ParseKVFormat(tableProperty(info, types.PropKVFormat))
	if err != nil {
		return fmt.Errorf("fluss: %s: %w", r.what, err)
	}
	layout, err := records.ParseKVValueLayout(tableProperty(info, types.PropKVValueLayout))
	if err != nil {
		return fmt.Errorf("fluss: %s: %w", r.what, err)
	}
	r.schema = info.Schema
	decOpts := []records.Option{records.WithAllocator(cfg.mem), records.WithKVValueLayout(layout)}
	if cfg.columns != nil {
		idx, err := info.Schema.ProjectionIndices(cfg.columns)
		if err != nil {
			return fmt.Errorf("fluss: %s: %w", r.what, err)
		}
		if len(idx) == 0 {
			return fmt.Errorf("fluss: %s: the projection selects no column", r.what)
		}
		if r.schema, err = info.Schema.ProjectIndices(idx); err != nil {
			return fmt.Errorf("fluss: %s: %w", r.what, err)
		}
		decOpts = append(decOpts, records.WithProjection(idx))
	}
	if r.arrow, err = r.schema.ArrowSchema(); err != nil {
		return fmt.Errorf("fluss: %s: %w", r.what, err)
	}
	r.ctx = ctx
	lookup := func(id int16) (*types.Schema, error) {
		if int32(id) == info.SchemaID {
			return info.Schema, nil
		}
		return c.Schema(r.ctx, info, int32(id))
	}
	if r.dec, err = records.NewValueDecoder(lookup, int16(info.SchemaID), format, decOpts...); err != nil {
		return fmt.Errorf("fluss: %s: %w", r.what, err)
	}
	return nil
}

// tableProperty is the table's property key, "" when the descriptor does
// not set it (the parsers of the properties take "" for the default).
func tableProperty(info *TableInfo, key string) string {
	if info.Descriptor == nil {
		return ""
	}
	return info.Descriptor.Property(key, "")
}

// download fetches the SST files into a new directory and opens them.
func (r *SnapshotReader) download(ctx context.Context, c *Client, cfg snapshotConfig) error {
	storage, err := c.remoteStorage()
	if err != nil {
		return fmt.Errorf("fluss: %s: remote storage: %w", r.what, err)
	}
	if r.dir, err = newSnapshotDir(cfg.dir); err != nil {
		return fmt.Errorf("fluss: %s: download directory: %w", r.what, err)
	}
	files := sstFiles(r.files.Files)
	if len(files) == 0 && len(r.files.Files) > 0 {
		return fmt.Errorf("fluss: %s: none of its %d files is an SST file", r.what, len(r.files.Files))
	}
	d := &downloader{c: c, storage: storage, dir: r.dir, limit: cfg.maxDisk, what: r.what}
	for _, f := range files {
		path, err := d.download(ctx, f)
		r.disk = d.used
		if err != nil {
			if errors.Is(err, ErrSnapshotTooLarge) {
				return fmt.Errorf("%w (%d SST files; %d bytes so far)", err, len(files), d.used)
			}
			return err
		}
		if err := r.openTable(path, f); err != nil {
			return err
		}
	}
	r.it = sst.Merge(r.tables...)
	return nil
}

// openTable opens one downloaded SST file.
func (r *SnapshotReader) openTable(path string, f SnapshotFile) error {
	fh, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("fluss: %s: file %s: %w", r.what, f.LocalName, err)
	}
	r.open = append(r.open, fh)
	st, err := fh.Stat()
	if err != nil {
		return fmt.Errorf("fluss: %s: file %s: %w", r.what, f.LocalName, err)
	}
	t, err := sst.Open(fh, st.Size(), f.LocalName)
	if err != nil {
		return fmt.Errorf("fluss: %s: file %s (%s): %w", r.what, f.LocalName, f.RemotePath, err)
	}
	if p := t.Properties(); p.NumRangeDeletions != 0 {
		return fmt.Errorf("fluss: %s: file %s has %d range deletions, which this reader does not apply", r.what, f.LocalName, p.NumRangeDeletions)
	}
	r.tables = append(r.tables, t)
	return nil
}

// Schema returns the schema of the returned rows: the table's current
// schema, or the projected columns in projection order.
func (r *SnapshotReader) Schema() *types.Schema { return r.schema }

// ArrowSchema returns the Arrow schema of the returned records.
func (r *SnapshotReader) ArrowSchema() *arrow.Schema { return r.arrow }

// Snapshot returns the snapshot being read.
func (r *SnapshotReader) Snapshot() KVSnapshot { return r.snap }

// LogOffset is the changelog offset the snapshot covers (the metadata's):
// the bucket's changelog continues from here.
func (r *SnapshotReader) LogOffset() int64 { return r.files.LogOffset }

// DiskBytes is the size of the downloaded files.
func (r *SnapshotReader) DiskBytes() int64 { return r.disk }

// Rows returns the number of rows returned so far, skipped rows included.
func (r *SnapshotReader) Rows() int64 { return r.rows }

// Next returns the next rows (at most SnapshotBatchRows) in key order, or
// io.EOF after the last. The caller releases the record.
func (r *SnapshotReader) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.it == nil {
		return nil, fmt.Errorf("fluss: %s: reader closed", r.what)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.ctx = ctx
	defer func() { r.ctx = context.Background() }()
	if err := r.skipRows(ctx); err != nil {
		r.err = err
		return nil, err
	}
	for int(r.dec.Len()) < r.batch && r.it.Next() {
		if err := r.dec.Append(r.it.Value()); err != nil {
			r.err = fmt.Errorf("fluss: %s: row %d (key %x): %w", r.what, r.rows+r.dec.Len(), r.it.Key(), err)
			return nil, r.err
		}
	}
	if err := r.it.Err(); err != nil {
		r.err = fmt.Errorf("fluss: %s: %w", r.what, err)
		return nil, r.err
	}
	if r.dec.Len() == 0 {
		return nil, io.EOF
	}
	rec, err := r.dec.Flush()
	if err != nil {
		r.err = fmt.Errorf("fluss: %s: %w", r.what, err)
		return nil, r.err
	}
	r.rows += rec.NumRows()
	return rec, nil
}

// skipRows steps over the rows SnapshotSkipRows asked to skip, once.
func (r *SnapshotReader) skipRows(ctx context.Context) error {
	for ; r.skip > 0; r.skip-- {
		if r.skip%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if !r.it.Next() {
			if err := r.it.Err(); err != nil {
				return fmt.Errorf("fluss: %s: %w", r.what, err)
			}
			return fmt.Errorf("fluss: %s: cannot skip %d rows, the snapshot has %d", r.what, r.rows+r.skip, r.rows)
		}
		r.rows++
	}
	return nil
}

// Close releases the decoder, closes the files and removes the download
// directory.
func (r *SnapshotReader) Close() error {
	var errs []error
	for _, f := range r.open {
		errs = append(errs, f.Close())
	}
	r.open, r.tables, r.it = nil, nil, nil
	if r.dec != nil {
		r.dec.Release()
		r.dec = nil
	}
	if r.dir != "" {
		if err := os.RemoveAll(r.dir); err != nil {
			errs = append(errs, fmt.Errorf("fluss: %s: remove %s: %w", r.what, r.dir, err))
		}
		r.dir = ""
	}
	return errors.Join(errs...)
}
