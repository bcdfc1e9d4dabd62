package fluss

import (
	"context"
	"io"
	"strings"
)

// DefaultRemoteReadAhead is the default of RemoteStorageOptions.ReadAhead.
const DefaultRemoteReadAhead = 2 << 20

// RemoteStorageOptions configures a RemoteStorage.
type RemoteStorageOptions struct {
	// S3 configures s3:// and s3a:// remote data dirs.
	S3 S3Options
	// ReadAhead bounds the bytes downloaded ahead of the decoder per open
	// object-store stream (default DefaultRemoteReadAhead). At most 16
	// streams wait between fetches (parked or prefetched), so a storage
	// holds about (16 + reading buckets) × ReadAhead bytes at most.
	ReadAhead int
}

// RemoteStorage reads remote (tiered) log segments wherever the cluster's
// remote.data.dir puts them, chosen by the path's scheme: local paths and
// file: URIs, and S3 (s3://, s3a://). Object-store segments are streamed,
// never buffered whole: a goroutine downloads at most ReadAhead bytes ahead
// of the decoder, the next segment of a fetch is prefetched while one is
// decoded, and a segment's stream stays open between fetches. Create one
// per Client (Client.RemoteStorage), pass it to scanners with
// ScanRemoteStorage, and Close it after them. Safe for concurrent use.
type RemoteStorage struct {
	local     LocalRemoteStorage
	s3        *s3Backend
	readAhead int
	cursors   *cursorCache
	ctx       context.Context // the life of downloads; cancelled by Close
	cancel    context.CancelFunc
}

// RemoteStorage returns a RemoteStorage that asks c for object-store
// credentials when opts.S3 has none.
func (c *Client) RemoteStorage(opts RemoteStorageOptions) (*RemoteStorage, error) {
	s3, err := newS3Backend(c, opts.S3)
	if err != nil {
		return nil, err
	}
	if opts.ReadAhead <= 0 {
		opts.ReadAhead = DefaultRemoteReadAhead
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &RemoteStorage{s3: s3, readAhead: opts.ReadAhead, cursors: newCursorCache(), ctx: ctx, cancel: cancel}, nil
}

// isS3 reports whether p is an s3:// or s3a:// URI.
func isS3(p string) bool {
	scheme, _, ok := strings.Cut(p, "://")
	return ok && (strings.EqualFold(scheme, "s3") || strings.EqualFold(scheme, "s3a"))
}

// Open implements RemoteLogStorage.
func (r *RemoteStorage) Open(ctx context.Context, path string, pos int64) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !isS3(path) {
		return r.local.Open(ctx, path, pos)
	}
	if _, _, err := splitS3Path(path); err != nil {
		return nil, err
	}
	ar := r.startS3(path, pos)
	ar.bind(ctx)
	return ar, nil
}

// startS3 starts the download of an S3 object from pos.
func (r *RemoteStorage) startS3(path string, pos int64) *aheadReader {
	open := func(ctx context.Context, at int64) (io.ReadCloser, error) { return r.s3.open(ctx, path, at) }
	return newAheadReader(r.ctx, open, pos, r.readAhead)
}

// resume implements remoteCursors.
func (r *RemoteStorage) resume(ctx context.Context, path string, offset int64) (io.ReadCloser, bool) {
	rc, ok := r.cursors.take(cursorKey{path, offset})
	if !ok {
		return nil, false
	}
	if ar, ok := unprefixed(rc).(*aheadReader); ok {
		ar.bind(ctx)
	}
	return rc, true
}

// park implements remoteCursors.
func (r *RemoteStorage) park(path string, offset int64, rc io.ReadCloser) {
	if ar, ok := unprefixed(rc).(*aheadReader); ok {
		ar.unbindCaller()
	}
	r.cursors.put(cursorKey{path, offset}, rc)
}

// prefetch implements remoteCursors: object-store segments only (a local
// file opens at once).
func (r *RemoteStorage) prefetch(path string, offset int64) {
	if !isS3(path) || r.ctx.Err() != nil {
		return
	}
	key := cursorKey{path, offset}
	if r.cursors.has(key) {
		return
	}
	r.cursors.put(key, r.startS3(path, 0))
}

// Close stops downloads and closes the streams kept between fetches.
// Scanners using r must be closed first.
func (r *RemoteStorage) Close() error {
	r.cancel()
	r.cursors.close()
	return nil
}

// unprefixed returns the stream under a prefixedReader.
func unprefixed(rc io.ReadCloser) io.ReadCloser {
	if p, ok := rc.(*prefixedReader); ok {
		return p.rc
	}
	return rc
}
