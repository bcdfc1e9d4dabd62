package iggyinput

import (
	"context"

	"github.com/fluss-iggy/fluss-iggy/iggy"
)

// settle records the outcome of a batch and stores the partition's offset
// when the acknowledged run from the start grew. A batch that was not
// delivered (a nack with auto_replay_nacks off) stops the partition's
// commits: its messages are read again after a restart.
func (in *input) settle(ctx context.Context, s *span, err error) {
	in.mu.Lock()
	p := s.p
	if p == nil { // the partition was read again from the server meanwhile
		in.mu.Unlock()
		return
	}
	moved := p.settle(s, err == nil)
	in.mu.Unlock()
	if err != nil {
		in.log.Errorf("Partition %d of topic %s: offsets %d to %d were not delivered (%v); no offset of the partition is stored past %d from now on, so they are read again after a restart",
			p.id, in.names[1], s.first, s.last, err, s.first)
		return
	}
	if moved {
		in.store(ctx, p)
	}
}

// store tells the server the partition's committed offset, when it is
// ahead of what the server was told.
func (in *input) store(ctx context.Context, p *partition) {
	in.storeMu.Lock()
	defer in.storeMu.Unlock()
	in.mu.Lock()
	conn, offset, due := in.conn, p.committed, p.unstored()
	in.mu.Unlock()
	if conn == nil || !due {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), in.conf.conn.Options.Timeout)
	defer cancel()
	c := &in.conf
	if err := conn.StoreOffset(ctx, c.reader(), c.stream, c.topic, p.id, offset); err != nil {
		in.mStoreErr.Incr(1)
		in.log.Warnf("Partition %d of topic %s: storing offset %d of %s: %v (stored again with the next acknowledgement or connection; until then a restart reads those messages again)",
			p.id, in.names[1], offset, c.reader(), err)
		if iggy.EndsConnection(err) {
			in.connector.Down(err)
		}
		return
	}
	in.mu.Lock()
	p.stored, p.hasStored = offset, true
	in.mu.Unlock()
}

// storeAll stores every partition's committed offset the server was not
// told yet (after a reconnection, and at close).
func (in *input) storeAll(ctx context.Context) {
	in.mu.Lock()
	var due []*partition
	for _, p := range in.parts {
		if p.unstored() {
			due = append(due, p)
		}
	}
	in.mu.Unlock()
	for _, p := range due {
		in.store(ctx, p)
	}
}
