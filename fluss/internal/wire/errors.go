package wire

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
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

// Error implements error. Each part is said once: a cause that names the
// server already (net errors do: "dial tcp 127.0.0.1:9123: connect:
// connection refused") is not prefixed with the address again.
func (e *ConnError) Error() string {
	// Our own errors inside the cause start with "fluss: " too: once is
	// enough.
	cause := strings.ReplaceAll(strings.TrimPrefix(e.Err.Error(), "fluss: "), ": fluss: ", ": ")
	if e.Op == "dial" && errors.Is(e.Err, syscall.ECONNREFUSED) {
		cause += connRefusedHint
	}
	switch {
	case errors.Is(e.Err, ErrNotFluss):
		return fmt.Sprintf("fluss: %s %s", e.Addr, cause)
	case strings.Contains(cause, e.Addr) && strings.HasPrefix(cause, e.Op+" "):
		return "fluss: " + cause
	case strings.Contains(cause, e.Addr):
		return fmt.Sprintf("fluss: %s: %s", e.Op, cause)
	}
	return fmt.Sprintf("fluss: connection to %s: %s: %s", e.Addr, e.Op, cause)
}

// Unwrap returns the cause.
func (e *ConnError) Unwrap() error { return e.Err }

// Retriable reports whether a new connection may succeed: true for network
// failures, false after Close, for authentication failures and for server
// failures with a non-retriable code, and for servers that are not Fluss
// servers.
func (e *ConnError) Retriable() bool {
	if errors.Is(e.Err, ErrConnClosed) || errors.Is(e.Err, ErrNotFluss) {
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
	return fmt.Sprintf("%s request to %s: no response within %s", e.API, e.Addr, e.After)
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
	return fmt.Sprintf("%s request to %s: %v", e.API, e.Addr, e.Err)
}

// Unwrap returns the cause.
func (e *RequestError) Unwrap() error { return e.Err }

// ErrNotFluss is wrapped by the error of a connection whose first answer is
// not a Fluss frame (an absurd length prefix, or text such as an HTTP
// response): the address belongs to another kind of server. Retrying does
// not help.
var ErrNotFluss = errors.New("did not answer as a Fluss server")

// notFlussError is ErrNotFluss with the start of what the server sent and
// the frame error it caused.
type notFlussError struct {
	answer []byte
	cause  error // ErrFrameTooLarge, ErrMalformedFrame or a *noAnswerError
}

// Error implements error.
func (e *notFlussError) Error() string {
	var na *noAnswerError
	switch {
	case errors.As(e.cause, &na):
		return fmt.Sprintf("%v: %v; is it ZooKeeper's or Iggy's port?", ErrNotFluss, na)
	case len(e.answer) == 0:
		return ErrNotFluss.Error()
	}
	return fmt.Sprintf("%v (its answer starts with %q)", ErrNotFluss, e.answer)
}

// Unwrap returns ErrNotFluss and the frame error or the ErrNoAnswer.
func (e *notFlussError) Unwrap() []error { return []error{ErrNotFluss, e.cause} }

// answerPrefixLen is the most of a foreign server's answer an error quotes.
const answerPrefixLen = 64

// ErrNoAnswer is wrapped by the error of a connection whose peer closed or
// reset it, or sent nothing for the handshake time, instead of answering
// the first request (ApiVersions), which a Fluss server always answers.
// ZooKeeper closes the connection on it; an Iggy server reads its length
// as hundreds of megabytes and waits for the rest. A server the cluster's
// metadata names may simply be going down, so on its own it is retriable;
// at an address the user gave, NotFlussIfUnanswered makes it the verdict
// that the address is not a Fluss server.
var ErrNoAnswer = errors.New("no answer to the first request")

// noAnswerError is ErrNoAnswer with how the peer failed to answer.
type noAnswerError struct {
	how   string // "closed the connection", "sent nothing within 5s", …
	cause error  // the read error or the timeout
}

// Error implements error.
func (e *noAnswerError) Error() string {
	return fmt.Sprintf("it %s instead of answering %s", e.how, APIVersions)
}

// Unwrap returns ErrNoAnswer and the read error or timeout.
func (e *noAnswerError) Unwrap() []error { return []error{ErrNoAnswer, e.cause} }

// NotFlussIfUnanswered turns the error of a dial whose first request went
// unanswered (ErrNoAnswer) into the verdict that the address is not a
// Fluss server (ErrNotFluss, not retriable), naming the usual suspects.
// Callers use it for the addresses a user gave, where a Fluss server that
// is merely starting refuses connections instead. Other errors are
// returned unchanged.
func NotFlussIfUnanswered(err error) error {
	var ce *ConnError
	var na *noAnswerError
	if !errors.As(err, &ce) || !errors.As(ce.Err, &na) {
		return err
	}
	return &ConnError{Addr: ce.Addr, Op: ce.Op, Err: &notFlussError{cause: na}}
}

// connRefusedHint follows a refused dial: the port is closed, which is
// what a Fluss server that is still starting looks like too.
const connRefusedHint = "; nothing listens there (is Fluss still starting?)"
