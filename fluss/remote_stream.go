package fluss

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// aheadChunkSize is the size of one read-ahead chunk.
const aheadChunkSize = 256 << 10

// aheadReopens is how often a stream cut short is reopened at the byte it
// stopped at before the failure is returned.
const aheadReopens = 3

// opener opens an object at a byte position.
type opener func(ctx context.Context, pos int64) (io.ReadCloser, error)

type aheadChunk struct {
	b   []byte
	err error
}

// aheadReader reads an object in a goroutine, at most about limit bytes
// ahead of its reader, so the download of a segment overlaps its decoding
// (and, for a prefetched segment, the decoding of the one before). It
// reopens the object where it stopped when the stream breaks. Memory is
// bounded by limit plus two chunks.
type aheadReader struct {
	ch     chan aheadChunk
	cancel context.CancelFunc
	done   chan struct{}

	cur []byte
	err error

	mu     sync.Mutex
	unbind func() bool // stops the AfterFunc of the reading caller's context
}

// newAheadReader starts reading from pos; ctx bounds the reader's life.
func newAheadReader(ctx context.Context, open opener, pos int64, limit int) *aheadReader {
	chunk := aheadChunkSize
	if limit < chunk {
		chunk = max(limit, 4<<10)
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &aheadReader{
		ch:     make(chan aheadChunk, max(1, limit/chunk)),
		cancel: cancel,
		done:   make(chan struct{}),
	}
	go r.pump(ctx, open, pos, chunk)
	return r
}

// pump copies the object into chunks until EOF, an error or cancellation.
func (r *aheadReader) pump(ctx context.Context, open opener, pos int64, chunk int) {
	defer close(r.done)
	var body io.ReadCloser
	defer func() {
		if body != nil {
			body.Close()
		}
	}()
	reopens := 0
	for {
		if body == nil {
			b, err := open(ctx, pos)
			if err != nil {
				r.send(ctx, aheadChunk{err: err})
				return
			}
			body = b
		}
		buf := make([]byte, chunk)
		n, err := io.ReadAtLeast(body, buf, 1)
		pos += int64(n)
		if n > 0 && !r.send(ctx, aheadChunk{b: buf[:n]}) {
			return
		}
		switch {
		case err == nil:
			continue
		case errors.Is(err, io.EOF):
			r.send(ctx, aheadChunk{err: io.EOF})
			return
		case ctx.Err() == nil && reopens < aheadReopens:
			// A broken stream (an idle connection the server closed):
			// continue from the byte it stopped at.
			reopens++
			body.Close()
			body = nil
			continue
		}
		r.send(ctx, aheadChunk{err: brokenStream(err, pos, reopens)})
		return
	}
}

// brokenStream reports a stream that failed for good. It must not read as
// the end of the object (io.ErrUnexpectedEOF ends a segment early for the
// decoder), so the cause is kept as text only; network failures are
// retriable.
func brokenStream(err error, pos int64, reopens int) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return &remoteIOError{err: fmt.Errorf("stream broke at byte %d after %d reopens: %v", pos, reopens, err), retriable: true}
	}
	return markTransient(err)
}

// send hands a chunk over; false when the reader was closed.
func (r *aheadReader) send(ctx context.Context, c aheadChunk) bool {
	select {
	case r.ch <- c:
		return true
	case <-ctx.Done():
		return false
	}
}

// Read implements io.Reader.
func (r *aheadReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		select {
		case c := <-r.ch:
			r.cur, r.err = c.b, c.err
		case <-r.done:
			// The pump ended without a final chunk: it was cancelled.
			select {
			case c := <-r.ch:
				r.cur, r.err = c.b, c.err
			default:
				r.err = markTransient(context.Canceled)
			}
		}
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// bind closes the reader when ctx ends (the scanner reading it closed);
// unbindCaller undoes it when the stream is parked.
func (r *aheadReader) bind(ctx context.Context) {
	stop := context.AfterFunc(ctx, r.cancel)
	r.mu.Lock()
	r.unbind = stop
	r.mu.Unlock()
}

func (r *aheadReader) unbindCaller() {
	r.mu.Lock()
	if r.unbind != nil {
		r.unbind()
		r.unbind = nil
	}
	r.mu.Unlock()
}

// Close stops the download and waits for the goroutine.
func (r *aheadReader) Close() error {
	r.unbindCaller()
	r.cancel()
	<-r.done
	return nil
}

// prefixedReader reads prefix, then rc: a stream parked with bytes the
// scanner had read past the last batch it decoded.
type prefixedReader struct {
	prefix []byte
	rc     io.ReadCloser
}

func (p *prefixedReader) Read(b []byte) (int, error) {
	if len(p.prefix) > 0 {
		n := copy(b, p.prefix)
		p.prefix = p.prefix[n:]
		return n, nil
	}
	return p.rc.Read(b)
}

func (p *prefixedReader) Close() error { return p.rc.Close() }

// withPrefix returns rc preceded by prefix, unwrapping a used-up prefix.
func withPrefix(prefix []byte, rc io.ReadCloser) io.ReadCloser {
	if p, ok := rc.(*prefixedReader); ok && len(p.prefix) == 0 {
		rc = p.rc
	}
	if len(prefix) == 0 {
		return rc
	}
	return &prefixedReader{prefix: append([]byte(nil), prefix...), rc: rc}
}
