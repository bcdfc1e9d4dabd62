package iggyconn

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/iggy"
	"github.com/fluss-iggy/fluss-iggy/internal/stop"
)

// Connector dials connections, logs once which Iggy it found, spaces out
// failed attempts and gives up on a login the server keeps refusing. It is
// safe for concurrent use.
type Connector struct {
	opts      iggy.Options
	log       *service.Logger
	maxLogins int

	mu        sync.Mutex
	backoff   iggy.Backoff
	found     iggy.ServerInfo
	attempts  int
	refused   int       // logins refused since the last successful one
	downSince time.Time // zero while connected
	lastErr   error
}

// NewConnector returns a connector for c that logs to log.
func NewConnector(c Config, log *service.Logger) *Connector {
	return &Connector{opts: c.Options, log: log, maxLogins: c.MaxLogins}
}

// Addr is the server's address.
func (k *Connector) Addr() string { return k.opts.Addr }

// Dial connects and logs in; the first connection, and one to a server
// other than the last, is logged.
func (k *Connector) Dial(ctx context.Context) (*iggy.Conn, error) {
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

// Failed turns a failed connection attempt into what a component's
// Connect returns: a server we cannot speak with stops the pipeline, and
// so does a login the server refused max_login_attempts times in a row;
// anything else waits a backoff that grows to a limit, so the log gets one
// line per attempt at growing intervals. The line reads as the fluss
// input's: what failed (which names the address), then the attempt and the
// wait.
func (k *Connector) Failed(err error) error {
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
		return k.giveUp(fmt.Errorf("%w; refused %d times in a row (%s: %d)", err, refused, FieldMaxLogins, k.maxLogins))
	}
	return service.NewErrBackOff(fmt.Errorf("%w (attempt %d; next in %v; the pipeline stops after %d refused logins in a row, %s)",
		err, n, wait, k.maxLogins, FieldMaxLogins), wait)
}

// giveUp stops the pipeline for err, which no retry is expected to cure.
func (k *Connector) giveUp(err error) error {
	k.log.Errorf("%v; stopping the pipeline", err)
	stop.Fail(err)
	return service.NewErrBackOff(err, time.Hour)
}

// Succeeded records a connection had: the backoff starts again.
func (k *Connector) Succeeded() {
	k.mu.Lock()
	k.backoff.Succeeded()
	k.downSince, k.lastErr, k.attempts, k.refused = time.Time{}, nil, 0, 0
	k.mu.Unlock()
}

// Down records that a connection could not be had, or was lost.
func (k *Connector) Down(err error) {
	k.mu.Lock()
	k.markDownLocked(err)
	k.mu.Unlock()
}

func (k *Connector) markDownLocked(err error) {
	if k.downSince.IsZero() {
		k.downSince = time.Now()
	}
	k.lastErr = err
}

// Outage says, while Iggy cannot be reached or refuses the login, since
// when and why ("Iggy at … has been unreachable for 1m0s (4 attempts,
// last: …)"); "" while connected.
func (k *Connector) Outage() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.downSince.IsZero() {
		return ""
	}
	state := "has been unreachable"
	if iggy.IsLoginRejected(k.lastErr) {
		state = "has refused the login"
	}
	return fmt.Sprintf("Iggy at %s %s for %v (%d attempts, last: %v)",
		k.opts.Addr, state, time.Since(k.downSince).Round(time.Second), max(k.attempts, 1), k.lastErr)
}
