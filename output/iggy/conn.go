package iggyoutput

import (
	"errors"
	"fmt"
	"sync"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/iggy"
	"github.com/fluss-iggy/fluss-iggy/internal/iggyconn"
)

// stuck says, while Iggy cannot be reached or refuses the login, since
// when and why, and how many messages that leaves undelivered; "" while
// connected.
func stuck(k *iggyconn.Connector, undelivered int) string {
	outage := k.Outage()
	if outage == "" {
		return ""
	}
	return fmt.Sprintf("%s; %d messages handed to the iggy output were not delivered "+
		"(not acknowledged, so the input has not committed their offsets; they are read again on the next start)",
		outage, undelivered)
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
