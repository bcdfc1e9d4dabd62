package wire

import (
	"errors"
	"fmt"
	"time"

	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
)

// ErrConnClosed is wrapped by errors of requests made on a connection that was
// closed by Close.
var ErrConnClosed = errors.New("connection closed")

// ConnError is a connection-level failure: dialing, the handshake, writing,
// reading, a malformed or oversized frame, or a SERVER_FAILURE frame. Every
// request pending on the connection fails with it and the connection is
// dropped; callers reconnect (the client does so with backoff).
type ConnError struct {
	// Addr is the server address.
	Addr string
	// Op is what failed: "dial", "handshake", "write", "read",
	// "server failure" or "closed".
	Op string
	// Err is the cause. For a SERVER_FAILURE it is an *errcode.ServerError.
	Err error
}

// Error implements error.
func (e *ConnError) Error() string {
	return fmt.Sprintf("fluss: connection to %s: %s: %v", e.Addr, e.Op, e.Err)
}

// Unwrap returns the cause.
func (e *ConnError) Unwrap() error { return e.Err }

// Retriable reports whether a new connection may succeed: true for network
// failures, false after Close, for authentication failures and for server
// failures with a non-retriable code.
func (e *ConnError) Retriable() bool {
	if errors.Is(e.Err, ErrConnClosed) {
		return false
	}
	var se *errcode.Error
	if errors.As(e.Err, &se) {
		return se.Retriable
	}
	return true
}

// InvalidatesMetadata is true: after a lost connection the leaders cached for
// that server may be stale.
func (e *ConnError) InvalidatesMetadata() bool { return true }

// TimeoutError is returned when a server did not answer a request within the
// request timeout. Fluss servers never answer requests they cannot parse or
// whose API they do not serve, so this is also the symptom of such requests.
// The connection stays open.
type TimeoutError struct {
	Addr  string
	API   APIKey
	After time.Duration
}

// Error implements error.
func (e *TimeoutError) Error() string {
	return fmt.Sprintf("fluss: %s request to %s: no response within %s", e.API, e.Addr, e.After)
}

// Timeout reports true (net.Error style).
func (e *TimeoutError) Timeout() bool { return true }

// Retriable reports true: the server may have been busy.
func (e *TimeoutError) Retriable() bool { return true }

// RequestError is a request-level failure (an ERROR_RESPONSE frame, or a
// response body that does not decode). It wraps the server error, so
// errors.Is(err, errcode.TableNotExist) works on it.
type RequestError struct {
	Addr string
	API  APIKey
	Err  error
}

// Error implements error.
func (e *RequestError) Error() string {
	return fmt.Sprintf("fluss: %s request to %s: %v", e.API, e.Addr, e.Err)
}

// Unwrap returns the cause.
func (e *RequestError) Unwrap() error { return e.Err }
