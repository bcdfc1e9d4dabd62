package iggy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
)

// keepBufBytes caps the buffers a connection keeps between requests.
const keepBufBytes = 4 << 20

// maxReplyBytes caps one reply body: the largest is a poll, which the
// caller bounds by count.
const maxReplyBytes = 256 << 20

// wire is a Conn's socket and buffers. Only the goroutine holding the
// Conn's lock uses it.
type wire struct {
	nc   net.Conn
	addr string
	wbuf []byte // request being built, reused
	rbuf []byte // last read, reused
}

// buf returns the request buffer, empty, with room for n bytes.
func (w *wire) buf(n int) []byte {
	if cap(w.wbuf) < n {
		w.wbuf = make([]byte, 0, n)
	}
	return w.wbuf[:0]
}

// write sends one whole request and keeps b as the next request buffer.
func (w *wire) write(b []byte) error {
	if cap(b) <= keepBufBytes {
		w.wbuf = b[:0]
	} else {
		w.wbuf = nil
	}
	if _, err := w.nc.Write(b); err != nil {
		return fmt.Errorf("writing to Iggy at %s: %w", w.addr, err)
	}
	return nil
}

// read reads exactly n bytes. The result is valid until the next read.
func (w *wire) read(n int) ([]byte, error) {
	if n > maxReplyBytes {
		return nil, fmt.Errorf("iggy at %s sent a reply of %d bytes, more than the %d this client accepts", w.addr, n, maxReplyBytes)
	}
	if cap(w.rbuf) < n {
		w.rbuf = make([]byte, n)
	}
	b := w.rbuf[:n]
	if _, err := io.ReadFull(w.nc, b); err != nil {
		return nil, w.readErr(err)
	}
	if cap(w.rbuf) > keepBufBytes {
		w.rbuf = nil
	}
	return b, nil
}

// readOwned reads n bytes into a new slice.
func (w *wire) readOwned(n int) ([]byte, error) {
	if n > maxReplyBytes {
		return nil, fmt.Errorf("iggy at %s sent a reply of %d bytes, more than the %d this client accepts", w.addr, n, maxReplyBytes)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(w.nc, b); err != nil {
		return nil, w.readErr(err)
	}
	return b, nil
}

func (w *wire) readErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("reading from Iggy at %s: the server closed the connection", w.addr)
	}
	return fmt.Errorf("reading from Iggy at %s: %w", w.addr, err)
}

// isTimeout tells a deadline that ran out from other transport errors.
func isTimeout(err error) bool {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
