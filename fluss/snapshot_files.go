package fluss

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
)

// ErrSnapshotGone is wrapped by the error of a KV snapshot file that remote
// storage no longer has: the snapshot was deleted (Fluss keeps only the
// latest snapshots of a bucket) while it was being read. Ask for the latest
// snapshot again, or fall back to the changelog.
var ErrSnapshotGone = errors.New("fluss: KV snapshot file is gone from remote storage")

// ErrSnapshotTooLarge is wrapped by the error of a snapshot whose files
// exceed SnapshotMaxDisk.
var ErrSnapshotTooLarge = errors.New("fluss: KV snapshot exceeds the disk bound")

// snapshotDirPrefix starts the name of every snapshot's download directory;
// ownerFile in it holds the pid of the process that downloads into it.
const (
	snapshotDirPrefix = "snap-"
	ownerFile         = "owner.pid"
)

// snapshotMaxAttempts bounds the downloads of one file after retriable
// remote storage failures.
const snapshotMaxAttempts = 3

// newSnapshotDir removes the download directories of dead processes under
// base, then creates one for this snapshot, owned by this process.
func newSnapshotDir(base string) (string, error) {
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", err
	}
	removeOrphanDirs(base)
	dir, err := os.MkdirTemp(base, snapshotDirPrefix+"*")
	if err != nil {
		return "", err
	}
	pid := strconv.Itoa(os.Getpid())
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(pid), 0o600); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// removeOrphanDirs removes the snapshot directories under base whose owner
// process is dead. Directories without a readable owner (being created) and
// those of live processes are kept; errors are ignored (another reader may
// remove the same directory).
func removeOrphanDirs(base string) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), snapshotDirPrefix) {
			continue
		}
		dir := filepath.Join(base, e.Name())
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		os.RemoveAll(dir)
	}
}

// sstFiles returns the SST files of a snapshot, newest first (RocksDB
// numbers files in creation order and the local names carry the number),
// which sst.Merge needs for entries of equal sequence numbers.
func sstFiles(files []SnapshotFile) []SnapshotFile {
	var out []SnapshotFile
	for _, f := range files {
		if strings.HasSuffix(f.LocalName, ".sst") {
			out = append(out, f)
		}
	}
	num := func(name string) int64 {
		n, err := strconv.ParseInt(strings.TrimSuffix(name, ".sst"), 10, 64)
		if err != nil {
			return -1
		}
		return n
	}
	sort.SliceStable(out, func(i, j int) bool { return num(out[i].LocalName) > num(out[j].LocalName) })
	return out
}

// downloader copies snapshot files from remote storage to a directory,
// counting the bytes against a bound.
type downloader struct {
	c       *Client
	storage *RemoteStorage
	dir     string
	used    int64
	limit   int64 // 0: none
	what    string
}

// download copies f to d.dir/f.LocalName and returns its path. A file
// remote storage does not have is ErrSnapshotGone; retriable failures are
// retried with the client's backoff.
func (d *downloader) download(ctx context.Context, f SnapshotFile) (string, error) {
	if f.LocalName == "" || f.LocalName != filepath.Base(f.LocalName) || f.LocalName == "." || f.LocalName == ".." {
		return "", fmt.Errorf("fluss: %s: file %s has an invalid local name %q", d.what, f.RemotePath, f.LocalName)
	}
	dst := filepath.Join(d.dir, f.LocalName)
	for attempt := 0; ; attempt++ {
		n, err := d.copyOnce(ctx, f.RemotePath, dst)
		if err == nil {
			d.used += n
			return dst, nil
		}
		switch {
		case isNotFound(err):
			return "", fmt.Errorf("fluss: %s: file %s (%s): %w: %v", d.what, f.RemotePath, f.LocalName, ErrSnapshotGone, err)
		case errors.Is(err, ErrSnapshotTooLarge):
			return "", fmt.Errorf("fluss: %s: file %s (%s): %w", d.what, f.RemotePath, f.LocalName, err)
		case ctx.Err() != nil || !IsRetriable(err) || attempt+1 >= snapshotMaxAttempts:
			return "", fmt.Errorf("fluss: %s: download of %s (%s): %w", d.what, f.RemotePath, f.LocalName, err)
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("fluss: %s: download of %s (%s): %w", d.what, f.RemotePath, f.LocalName, ctx.Err())
		case <-time.After(d.c.backoff().Delay(attempt)):
		}
	}
}

// copyOnce downloads path to dst once and returns the bytes written.
func (d *downloader) copyOnce(ctx context.Context, path, dst string) (int64, error) {
	rc, err := d.storage.Open(ctx, path, 0)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, err
	}
	src := io.Reader(&ctxReader{ctx: ctx, r: rc})
	room := int64(-1)
	if d.limit > 0 {
		room = d.limit - d.used
		src = io.LimitReader(src, room+1)
	}
	n, err := io.CopyBuffer(out, src, make([]byte, 256<<10))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && room >= 0 && n > room {
		err = fmt.Errorf("%w: more than %d bytes downloaded, SnapshotMaxDisk is %d", ErrSnapshotTooLarge, d.used+n, d.limit)
	}
	if err != nil {
		os.Remove(dst)
		return 0, err
	}
	return n, nil
}

// ctxReader fails reads once ctx is done (local files do not watch it).
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (r *ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

// isNotFound reports whether err says a remote file does not exist.
func isNotFound(err error) bool {
	if errors.Is(err, os.ErrNotExist) {
		return true
	}
	var er minio.ErrorResponse
	return errors.As(err, &er) && (er.Code == "NoSuchKey" || er.StatusCode == 404)
}
