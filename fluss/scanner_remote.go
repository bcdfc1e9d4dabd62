package fluss

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"sort"
	"strings"

	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
	"github.com/fluss-iggy/fluss-iggy/fluss/records"
)

// Remote (tiered) log: when a fetch offset lies below a bucket's local log
// start but in segments the servers uploaded to remote storage, the fetch
// response names those segments instead of carrying records. The scanner
// reads them itself: each is a plain Fluss log segment (back-to-back
// unprojected batches with valid CRCs) at
//
//	{remote_log_tablet_dir}/{remote_log_segment_id}/{start offset, 20 digits}.log
//
// starting at first_start_pos in the first one (a batch boundary at or
// before the fetch offset). The projection is applied locally.

// RemoteLogStorage opens remote log segment files. LocalRemoteStorage reads
// remote data dirs that are local paths; RemoteStorage (Client.RemoteStorage)
// also reads S3.
type RemoteLogStorage interface {
	// Open returns the file at path (a path or URI as the servers'
	// remote.data.dir makes it) positioned at byte offset pos.
	Open(ctx context.Context, path string, pos int64) (io.ReadCloser, error)
}

// ErrRemoteStorageUnsupported is returned by LocalRemoteStorage for URIs
// that are not local files; a RemoteStorage (the scanner's default) reads
// object stores (s3://, s3a://) too.
var ErrRemoteStorageUnsupported = errors.New("fluss: remote log storage not supported by LocalRemoteStorage; use the client's RemoteStorage for s3:// remote data dirs")

// LocalRemoteStorage reads remote log segments from the local file system:
// bare paths and file: URIs. It works when the servers' remote.data.dir is
// visible at the same path to the client.
type LocalRemoteStorage struct{}

// Open implements RemoteLogStorage.
func (LocalRemoteStorage) Open(ctx context.Context, path string, pos int64) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := localPath(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	if pos > 0 {
		if _, err := f.Seek(pos, io.SeekStart); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// localPath turns a bare path or a file: URI into a file-system path.
func localPath(p string) (string, error) {
	if !strings.Contains(p, ":") || strings.HasPrefix(p, "/") {
		return p, nil
	}
	u, err := url.Parse(p)
	if err != nil {
		return "", fmt.Errorf("remote log path %q: %w", p, err)
	}
	if u.Scheme != "file" {
		return "", fmt.Errorf("%w (path %q, scheme %q)", ErrRemoteStorageUnsupported, p, u.Scheme)
	}
	if u.Path != "" {
		return u.Path, nil
	}
	return u.Opaque, nil
}

// RemoteSegmentPath returns the file of a remote log segment.
func RemoteSegmentPath(tabletDir, segmentID string, startOffset int64) string {
	return strings.TrimRight(tabletDir, "/") + "/" + segmentID + "/" + fmt.Sprintf("%020d", startOffset) + ".log"
}

// remoteCursors is implemented by storages that keep a segment's stream
// open between fetches and prefetch segments (RemoteStorage).
type remoteCursors interface {
	// resume returns the stream of path parked at the batch starting at
	// offset, bound to ctx.
	resume(ctx context.Context, path string, offset int64) (io.ReadCloser, bool)
	// park keeps rc, positioned at the batch starting at offset, for a
	// later fetch (or closes it).
	park(path string, offset int64, rc io.ReadCloser)
	// prefetch starts downloading the segment path, which starts at offset.
	prefetch(path string, offset int64)
}

// segmentRead is one segment to read in readRemote.
type segmentRead struct {
	path  string
	pos   int64 // byte position to open at
	start int64 // the segment's first offset
	first bool  // the first listed segment (read from the fetch offset)
}

// readRemote reads the remote segments a fetch response pointed at, from
// t.offset, about one bucket fetch's worth of bytes (at least one batch),
// into r. With a storage that supports it, the next segment is prefetched
// while one is read and a stream stopped mid-segment is parked for the
// next fetch.
func (s *Scanner) readRemote(t fetchTarget, info *pb.PbRemoteLogFetchInfo, r *fetchResult) {
	segs := append([]*pb.PbRemoteLogSegment(nil), info.GetRemoteLogSegments()...)
	sort.SliceStable(segs, func(i, j int) bool { return segs[i].GetRemoteLogStartOffset() < segs[j].GetRemoteLogStartOffset() })
	dir := info.GetRemoteLogTabletDir()
	cur, _ := s.cfg.remote.(remoteCursors)
	budget := int(s.cfg.maxBucketBytes)
	for i, seg := range segs {
		// End offsets are exclusive; segments wholly below the position
		// (already read from an overlapping one) add nothing.
		if seg.GetRemoteLogEndOffset() <= r.next {
			continue
		}
		sr := segmentRead{
			path:  RemoteSegmentPath(dir, seg.GetRemoteLogSegmentId(), seg.GetRemoteLogStartOffset()),
			start: seg.GetRemoteLogStartOffset(),
			first: i == 0,
		}
		if i == 0 {
			sr.pos = int64(info.GetFirstStartPos())
		}
		if cur != nil && i+1 < len(segs) {
			next := segs[i+1]
			cur.prefetch(RemoteSegmentPath(dir, next.GetRemoteLogSegmentId(), next.GetRemoteLogStartOffset()), next.GetRemoteLogStartOffset())
		}
		done, err := s.readSegment(t, sr, cur, r, &budget)
		if err != nil {
			r.err = fmt.Errorf("remote log segment %s (%s, offset %d): %w", sr.path, t.st.tb, r.next, err)
			return
		}
		if r.err != nil || done {
			return
		}
	}
	if r.next <= t.offset && r.err == nil {
		r.err = fmt.Errorf("the remote log segments listed for offset %d (dir %s) hold no batch at or after it",
			t.offset, dir)
	}
}

// openSegment resumes a parked or prefetched stream of the segment, or
// opens it.
func (s *Scanner) openSegment(t fetchTarget, sr segmentRead, cur remoteCursors) (io.ReadCloser, error) {
	if cur != nil {
		if sr.first {
			if rc, ok := cur.resume(s.ctx, sr.path, t.offset); ok {
				return rc, nil
			}
		}
		if sr.pos == 0 {
			if rc, ok := cur.resume(s.ctx, sr.path, sr.start); ok {
				return rc, nil
			}
		}
	}
	return s.cfg.remote.Open(s.ctx, sr.path, sr.pos)
}

// readSegment decodes one segment file from sr.pos in chunks. It reports
// done when the byte budget is used up after some progress; the stream is
// then parked at the next batch when the storage can keep it.
func (s *Scanner) readSegment(t fetchTarget, sr segmentRead, cur remoteCursors, r *fetchResult, budget *int) (bool, error) {
	rc, err := s.openSegment(t, sr, cur)
	if err != nil {
		return false, err
	}
	done, pending, err := s.decodeStream(t, rc, r, budget)
	if done && !pending.eof && err == nil && r.err == nil && cur != nil {
		cur.park(sr.path, r.next, withPrefix(pending.b, rc))
		return true, nil
	}
	rc.Close()
	return done, err
}

// leftover is what decodeStream read past the last batch it decoded.
type leftover struct {
	b   []byte
	eof bool
}

// decodeStream decodes batches from rc until EOF or the budget is used up.
func (s *Scanner) decodeStream(t fetchTarget, rc io.Reader, r *fetchResult, budget *int) (bool, leftover, error) {
	chunk := *budget
	if chunk < 64<<10 {
		chunk = 64 << 10
	}
	var pending []byte
	for {
		need := chunk
		if len(pending) >= records.LogOverhead {
			if size := int(int32(binary.LittleEndian.Uint32(pending[8:]))) + records.LogOverhead; size > need {
				need = size
			}
		}
		if need > records.DefaultMaxBatchBytes+records.LogOverhead {
			return false, leftover{}, fmt.Errorf("batch of %d bytes exceeds the %d-byte limit", need, records.DefaultMaxBatchBytes)
		}
		// A fresh buffer per chunk: decoded arrays alias it.
		buf := make([]byte, need)
		copy(buf, pending)
		n, rerr := io.ReadFull(rc, buf[len(pending):])
		buf = buf[:len(pending)+n]
		eof := errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF)
		if rerr != nil && !eof {
			return false, leftover{}, rerr
		}
		consumed := s.decodeInto(t, buf, r, true)
		r.bytes += consumed
		if r.err != nil {
			return true, leftover{}, nil
		}
		pending = buf[consumed:]
		*budget -= consumed
		if *budget <= 0 && r.next > t.offset {
			return true, leftover{b: pending, eof: eof}, nil
		}
		if eof {
			return false, leftover{eof: true}, nil
		}
	}
}
