package iggytest

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// conn is one client connection and its session.
type conn struct {
	r      io.Reader
	w      io.Writer
	closer io.Closer // nil for in-memory tests

	done      chan struct{} // closed when the connection is dropped
	closeOnce sync.Once
	stopCh    chan struct{} // the server's stop channel at accept time

	wmu         sync.Mutex  // serialises writes
	busy        atomic.Bool // a request is being handled
	stopping    atomic.Bool // a graceful stop is pending
	goodbyeOnce sync.Once
	// goodbye is the frame a server shutting down cleanly sends before it
	// closes the connection (0.8: error response 8); nil sends nothing.
	goodbye []byte

	// Session, guarded by Server.mu (written only by the connection's own
	// goroutine).
	clientID uint32
	addr     string
	userID   uint32
	authed   bool
	// vsrClient and session are the 0.9 login bound to the connection (the
	// client id of its Register and the session it was given).
	vsrClient u128
	session   uint64
}

// u128 is a little-endian 128-bit value as it travels on the wire.
type u128 [16]byte

func (v u128) isZero() bool { return v == u128{} }

func newConn(r io.Reader, w io.Writer, c io.Closer) *conn {
	return &conn{r: r, w: w, closer: c, done: make(chan struct{})}
}

// stop ends the connection the way a server shutting down cleanly does: the
// goodbye frame, then close. A request being handled is answered first.
func (c *conn) stop() {
	c.stopping.Store(true)
	if !c.busy.Load() {
		c.sayGoodbye()
	}
}

// sayGoodbye writes the goodbye frame (once, if any) and closes.
func (c *conn) sayGoodbye() {
	c.goodbyeOnce.Do(func() {
		c.wmu.Lock()
		defer c.wmu.Unlock()
		if c.goodbye != nil {
			if d, ok := c.closer.(interface{ SetWriteDeadline(time.Time) error }); ok {
				_ = d.SetWriteDeadline(time.Now().Add(time.Second))
			}
			_, _ = c.w.Write(c.goodbye)
		}
		c.close()
	})
}

// send writes the answer to the request being handled, made of parts.
// When a graceful stop is pending it then says goodbye and closes. It
// returns false when the connection is finished.
func (c *conn) send(parts ...[]byte) bool {
	c.wmu.Lock()
	err := writeParts(c.w, parts)
	c.wmu.Unlock()
	c.busy.Store(false)
	if err != nil {
		return false
	}
	if c.stopping.Load() {
		c.sayGoodbye()
		return false
	}
	return true
}

// idle ends the request being handled without an answer (a 0.9 server
// drops some requests silently). It returns false when the connection is
// finished.
func (c *conn) idle() bool {
	c.busy.Store(false)
	if c.stopping.Load() {
		c.sayGoodbye()
		return false
	}
	return true
}

// writeParts writes parts as one frame: copied into one buffer when small,
// handed to the kernel as a vector otherwise.
func writeParts(w io.Writer, parts [][]byte) error {
	if len(parts) == 1 {
		_, err := w.Write(parts[0])
		return err
	}
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if n < 4096 {
		buf := make([]byte, 0, n)
		for _, p := range parts {
			buf = append(buf, p...)
		}
		_, err := w.Write(buf)
		return err
	}
	bufs := net.Buffers(append([][]byte(nil), parts...))
	_, err := bufs.WriteTo(w)
	return err
}

func (c *conn) isClosed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func (c *conn) close() {
	c.closeOnce.Do(func() {
		close(c.done)
		if c.closer != nil {
			_ = c.closer.Close()
		}
	})
}

// readPayload reads n bytes, growing the buffer as data arrives so that a
// bogus length does not allocate it all up front.
func readPayload(r io.Reader, n int) ([]byte, error) {
	const chunk = 1 << 20
	if n <= chunk {
		buf := make([]byte, n)
		_, err := io.ReadFull(r, buf)
		return buf, err
	}
	buf := make([]byte, 0, chunk)
	for len(buf) < n {
		step := min(n-len(buf), chunk)
		buf = append(buf, make([]byte, step)...)
		if _, err := io.ReadFull(r, buf[len(buf)-step:]); err != nil {
			return nil, err
		}
	}
	return buf, nil
}
