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
// and spaces out failed attempts.
type connector struct {
	opts iggy.Options
	log  *service.Logger

	mu        sync.Mutex
	backoff   iggy.Backoff
	found     iggy.ServerInfo
	attempts  int
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
// server we cannot speak with stops the pipeline; anything else waits a
// backoff that grows to a limit, so the log gets one line per attempt at
// growing intervals.
func (k *connector) failed(err error) error {
	if iggy.IsPermanent(err) {
		k.log.Errorf("%v; stopping the pipeline", err)
		stop.Fail(err)
		return service.NewErrBackOff(err, time.Hour)
	}
	k.mu.Lock()
	n, wait := k.backoff.Failed()
	k.markDownLocked(err)
	k.attempts = n
	k.mu.Unlock()
	return service.NewErrBackOff(fmt.Errorf("attempt %d: %w (next attempt in %v)", n, err, wait), wait)
}

func (k *connector) succeeded() {
	k.mu.Lock()
	k.backoff.Succeeded()
	k.downSince, k.lastErr, k.attempts = time.Time{}, nil, 0
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

// stuck says, while Iggy cannot be reached, since when and why, and how
// many messages that leaves undelivered; "" while connected.
func (k *connector) stuck(undelivered int) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.downSince.IsZero() {
		return ""
	}
	return fmt.Sprintf("Iggy at %s has been unreachable for %v (%d attempts, last: %v); %d messages handed to the iggy output were not delivered "+
		"(not acknowledged, so the input has not committed their offsets; they are read again on the next start)",
		k.opts.Addr, time.Since(k.downSince).Round(time.Second), max(k.attempts, 1), k.lastErr, undelivered)
}

// isConnLost tells a failed connection from an error the server answered
// with, after which the connection is still usable.
func isConnLost(err error) bool {
	return err != nil && iggy.CodeOf(err) == 0
}

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
