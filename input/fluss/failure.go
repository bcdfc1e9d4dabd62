package flussinput

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/internal/stop"
)

// permanentError is a start-up failure that no retry cures: the table is
// missing (without wait_for_table), is not what table_type says, lacks a
// column of `columns`, has no partitions for `partitions`, or the servers
// are not Fluss servers or refuse the credentials. Connect stops the
// pipeline with it.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// waitingError is a missing database or table that wait_for_table waits
// for.
type waitingError struct{ err error }

func (e *waitingError) Error() string { return e.err.Error() }
func (e *waitingError) Unwrap() error { return e.err }

// Back-off between failed Connects: it doubles from retryFirst to
// retryMax (waitMax while waiting for a table), and Benthos logs one line
// per attempt, so the log grows sparser.
const (
	retryFirst = time.Second
	retryMax   = 30 * time.Second
	waitMax    = time.Minute
	// permanentWait is what Connect asks Benthos to wait after stopping
	// the pipeline: it shuts down meanwhile.
	permanentWait = time.Hour
)

// connectFailed turns a failed Connect into its result. A permanent error
// stops the pipeline (stop.Fail: the binary exits non-zero with it);
// anything else is retried after a growing back-off, the attempt and the
// wait appended to the message Benthos logs.
func (in *input) connectFailed(ctx context.Context, err error) error {
	if ctx.Err() == nil && isPermanent(err) {
		stop.Fail(err)
		return service.NewErrBackOff(err, permanentWait)
	}
	in.connectFailures++
	limit := retryMax
	if errors.As(err, new(*waitingError)) {
		limit = waitMax
	}
	wait := min(retryFirst<<min(in.connectFailures-1, 10), limit)
	return service.NewErrBackOff(fmt.Errorf("%w (attempt %d; next in %v)", err, in.connectFailures, wait), wait)
}

// isPermanent reports whether a Connect error cannot be cured by retrying.
func isPermanent(err error) bool {
	if errors.As(err, new(*permanentError)) {
		return true
	}
	var ce *clientError
	return errors.As(err, &ce) && !fluss.IsRetriable(ce.err)
}

// clientError is a failure to create the Fluss client (no bootstrap server
// answered). The client says whether retrying can help: not for servers
// that are not Fluss servers or refuse the credentials. Its message drops
// the client's "fluss: " prefix: Benthos's log line already names the
// fluss input ("Failed to connect to fluss: …").
type clientError struct{ err error }

func (e *clientError) Error() string { return strings.TrimPrefix(e.err.Error(), "fluss: ") }
func (e *clientError) Unwrap() error { return e.err }
