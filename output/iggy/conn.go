package iggyoutput

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/iggy"
	"github.com/fluss-iggy/fluss-iggy/internal/stop"
)

// connector dials the pool's connections, logs once which Iggy it found,
// spaces out failed attempts and gives up on a login the server keeps
// refusing.
type connector struct {
	opts iggy.Options
	log  *service.Logger
	// maxLogins is how many refused logins in a row stop the pipeline
	// (max_login_attempts); 0 never stops.
	maxLogins int

	mu        sync.Mutex
	backoff   iggy.Backoff
	found     iggy.ServerInfo
	attempts  int
	refused   int       // logins refused since the last successful one
	downSince time.Time // zero while connected
	lastErr   error
}

func (k *connector) dial(ctx context.Context) (*iggy.Conn, error) {
	c, err := iggy.Dial(ctx, k.opts)
	if err != nil {
		return nil, err
	}
	info := c.Info()
	k.mu.Lock()
	changed := info != k.found
	k.found = info
	k.mu.Unlock()
	if changed {
		k.log.Infof("Connected to %s", describe(k.opts.Addr, info))
	}
	return c, nil
}

// describe names the server as a log line should.
func describe(addr string, info iggy.ServerInfo) string {
	s := fmt.Sprintf("Iggy %s at %s", info.Version, addr)
	if info.Server != "" {
		s += fmt.Sprintf(" (server %s, protocol %s)", info.Server, info.Protocol)
	}
	return s
}

// failed turns a failed connection attempt into what Connect returns: a
// server we cannot speak with stops the pipeline, and so does a login the
// server refused maxLogins times in a row; anything else waits a backoff
// that grows to a limit, so the log gets one line per attempt at growing
// intervals. The line reads as the fluss input's: what failed (which names
// the address), then the attempt and the wait.
func (k *connector) failed(err error) error {
	if iggy.IsPermanent(err) {
		return k.giveUp(err)
	}
	k.mu.Lock()
	n, wait := k.backoff.Failed()
	k.markDownLocked(err)
	k.attempts = n
	if iggy.IsLoginRejected(err) {
		k.refused++
	}
	refused := k.refused
	k.mu.Unlock()
	if !iggy.IsLoginRejected(err) || k.maxLogins == 0 {
		return service.NewErrBackOff(fmt.Errorf("%w (attempt %d; next in %v)", err, n, wait), wait)
	}
	if refused >= k.maxLogins {
		return k.giveUp(fmt.Errorf("%w; refused %d times in a row (%s: %d)", err, refused, ioFieldMaxLogins, k.maxLogins))
	}
	return service.NewErrBackOff(fmt.Errorf("%w (attempt %d; next in %v; the pipeline stops after %d refused logins in a row, %s)",
		err, n, wait, k.maxLogins, ioFieldMaxLogins), wait)
}

// giveUp stops the pipeline for err, which no retry is expected to cure.
// Nothing is acknowledged on the way: the messages not delivered are read
// again on the next start.
func (k *connector) giveUp(err error) error {
	k.log.Errorf("%v; stopping the pipeline", err)
	stop.Fail(err)
	return service.NewErrBackOff(err, time.Hour)
}

func (k *connector) succeeded() {
	k.mu.Lock()
	k.backoff.Succeeded()
	k.downSince, k.lastErr, k.attempts, k.refused = time.Time{}, nil, 0, 0
	k.mu.Unlock()
}

// down records that a connection could not be had.
func (k *connector) down(err error) {
	k.mu.Lock()
	k.markDownLocked(err)
	k.mu.Unlock()
}

func (k *connector) markDownLocked(err error) {
	if k.downSince.IsZero() {
		k.downSince = time.Now()
	}
	k.lastErr = err
}

// stuck says, while Iggy cannot be reached or refuses the login, since
// when and why, and how many messages that leaves undelivered; "" while
// connected.
func (k *connector) stuck(undelivered int) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.downSince.IsZero() {
		return ""
	}
	state := "has been unreachable"
	if iggy.IsLoginRejected(k.lastErr) {
		state = "has refused the login"
	}
	return fmt.Sprintf("Iggy at %s %s for %v (%d attempts, last: %v); %d messages handed to the iggy output were not delivered "+
		"(not acknowledged, so the input has not committed their offsets; they are read again on the next start)",
		k.opts.Addr, state, time.Since(k.downSince).Round(time.Second), max(k.attempts, 1), k.lastErr, undelivered)
}

// isConnLost tells a failed connection (or one the server ended, as a 0.8
// server shutting down cleanly does with Disconnected) from an error the
// server answered with, after which the connection is still usable.
func isConnLost(err error) bool { return iggy.EndsConnection(err) }

// undelivered counts the messages of batches that could not be delivered
// for want of a connection and have not been delivered since: Benthos
// keeps such a batch and writes it again after reconnecting. A batch is
// recognised by its size and the hash of its first and last payloads.
type undelivered struct {
	mu      sync.Mutex
	pending map[[3]uint64]int
}

func batchPrint(b service.MessageBatch) [3]uint64 {
	first, _ := b[0].AsBytes()
	last, _ := b[len(b)-1].AsBytes()
	return [3]uint64{uint64(len(b)), hash64(first), hash64(last)}
}

func (u *undelivered) failed(b service.MessageBatch) {
	u.mu.Lock()
	if u.pending == nil {
		u.pending = map[[3]uint64]int{}
	}
	u.pending[batchPrint(b)] = len(b)
	u.mu.Unlock()
}

func (u *undelivered) delivered(b service.MessageBatch) {
	u.mu.Lock()
	if len(u.pending) > 0 {
		delete(u.pending, batchPrint(b))
	}
	u.mu.Unlock()
}

func (u *undelivered) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	n := 0
	for _, c := range u.pending {
		n += c
	}
	return n
}

// errNotDelivered is what Close reports when messages were left behind.
var errNotDelivered = errors.New("not delivered to Iggy")
