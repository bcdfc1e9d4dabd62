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

// RemoteLogStorage opens remote log segment files. Implement it for object
// stores; LocalRemoteStorage reads remote data dirs that are local paths.
type RemoteLogStorage interface {
	// Open returns the file at path (a path or URI as the servers'
	// remote.data.dir makes it) positioned at byte offset pos.
	Open(ctx context.Context, path string, pos int64) (io.ReadCloser, error)
}

// ErrRemoteStorageUnsupported is returned by LocalRemoteStorage for URIs
// that are not local files.
var ErrRemoteStorageUnsupported = errors.New("fluss: remote log storage not supported; configure a RemoteLogStorage for it")

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

// readRemote reads the remote segments a fetch response pointed at, from
// t.offset, about one bucket fetch's worth of bytes (at least one batch),
// into r.
func (s *Scanner) readRemote(t fetchTarget, info *pb.PbRemoteLogFetchInfo, r *fetchResult) {
	segs := append([]*pb.PbRemoteLogSegment(nil), info.GetRemoteLogSegments()...)
	sort.SliceStable(segs, func(i, j int) bool { return segs[i].GetRemoteLogStartOffset() < segs[j].GetRemoteLogStartOffset() })
	budget := int(s.cfg.maxBucketBytes)
	pos := int64(info.GetFirstStartPos())
	for i, seg := range segs {
		if i > 0 {
			pos = 0
		}
		// End offsets are exclusive; segments wholly below the position
		// (already read from an overlapping one) add nothing.
		if seg.GetRemoteLogEndOffset() <= r.next {
			continue
		}
		path := RemoteSegmentPath(info.GetRemoteLogTabletDir(), seg.GetRemoteLogSegmentId(), seg.GetRemoteLogStartOffset())
		done, err := s.readSegment(t, path, pos, r, &budget)
		if err != nil {
			r.err = fmt.Errorf("remote log segment %s: %w", path, err)
			return
		}
		if r.err != nil || done {
			return
		}
	}
	if r.next <= t.offset && r.err == nil {
		r.err = fmt.Errorf("the remote log segments listed for offset %d (dir %s) hold no batch at or after it",
			t.offset, info.GetRemoteLogTabletDir())
	}
}

// readSegment decodes one segment file from pos in chunks. It reports done
// when the byte budget is used up after some progress.
func (s *Scanner) readSegment(t fetchTarget, path string, pos int64, r *fetchResult, budget *int) (bool, error) {
	rc, err := s.cfg.remote.Open(s.ctx, path, pos)
	if err != nil {
		return false, err
	}
	defer rc.Close()
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
			return false, fmt.Errorf("batch of %d bytes exceeds the %d-byte limit", need, records.DefaultMaxBatchBytes)
		}
		// A fresh buffer per chunk: decoded arrays alias it.
		buf := make([]byte, need)
		copy(buf, pending)
		n, rerr := io.ReadFull(rc, buf[len(pending):])
		buf = buf[:len(pending)+n]
		eof := errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF)
		if rerr != nil && !eof {
			return false, rerr
		}
		consumed := s.decodeInto(t, buf, r, true)
		r.bytes += consumed
		if r.err != nil {
			return true, nil
		}
		pending = buf[consumed:]
		*budget -= consumed
		if *budget <= 0 && r.next > t.offset {
			return true, nil
		}
		if eof {
			return false, nil
		}
	}
}
