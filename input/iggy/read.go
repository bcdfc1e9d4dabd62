package iggyinput

import (
	"context"
	"math"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/iggy"
)

// ReadBatch returns the messages of the next poll that found any, one
// partition's, as one batch.
//
// ctx is checked between requests, never during one: the server answers a
// poll at once, and a request cut off midway breaks the connection, which
// would take the group membership with it and leave the acknowledgements
// that arrive meanwhile unstored until a reconnection (a real server is
// slow enough for a short ctx to land mid-request). The connection's
// timeout bounds each request.
func (in *input) ReadBatch(ctx context.Context) (service.MessageBatch, service.AckFunc, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		conn := in.current()
		if conn == nil {
			return nil, nil, service.ErrNotConnected
		}
		poll := in.pollSingle
		if in.conf.grouped() {
			poll = in.pollGroup
		}
		p, msgs, err := poll(context.WithoutCancel(ctx), conn)
		if err == nil && ctx.Err() != nil {
			return nil, nil, ctx.Err() // msgs were not handed out: read again later
		}
		if err != nil {
			if iggy.EndsConnection(err) || conn.Broken() {
				return nil, nil, in.lost(conn, err)
			}
			return nil, nil, err
		}
		if len(msgs) == 0 {
			if in.roundEmpty() {
				if err := sleep(ctx, in.conf.interval); err != nil {
					return nil, nil, err
				}
			}
			continue
		}
		return in.handOut(p, msgs)
	}
}

// handOut builds the batch of msgs and tracks it until it is settled.
func (in *input) handOut(p *partition, msgs []iggy.PolledMessage) (service.MessageBatch, service.AckFunc, error) {
	batch := in.build(p.id, msgs)
	in.mu.Lock()
	in.empties = 0
	p.next = msgs[len(msgs)-1].Offset + 1
	s := p.track(msgs[0].Offset, msgs[len(msgs)-1].Offset, len(msgs))
	in.mu.Unlock()
	in.mRead.Incr(int64(len(msgs)))
	return batch, func(ctx context.Context, err error) error {
		in.settle(ctx, s, err)
		return nil
	}, nil
}

// roundEmpty counts a poll that found nothing and tells whether a whole
// round of the partitions did.
func (in *input) roundEmpty() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.empties++
	if in.empties < max(len(in.order), len(in.parts), 1) {
		return false
	}
	in.empties = 0
	return true
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// part returns the state of partition id, made on first use; in.mu held.
func (in *input) partLocked(id uint32) *partition {
	p := in.parts[id]
	if p == nil {
		p = &partition{id: id}
		in.parts[id] = p
	}
	return p
}

// pollSingle polls the next partition in turn from where the input reads
// it, unless it has checkpoint_limit messages in flight.
func (in *input) pollSingle(ctx context.Context, conn *iggy.Conn) (*partition, []iggy.PolledMessage, error) {
	in.mu.Lock()
	if len(in.order) == 0 {
		in.mu.Unlock()
		return nil, nil, nil
	}
	p := in.partLocked(in.order[in.cursor%len(in.order)])
	in.cursor++
	full, known, next := p.inFlight >= in.conf.limit, p.known, p.next
	in.mu.Unlock()
	if full {
		return p, nil, nil
	}
	if !known {
		var err error
		if next, err = in.startOf(ctx, conn, p); err != nil {
			return nil, nil, err
		}
	}
	msgs, err := in.pollFrom(ctx, conn, p.id, next)
	return p, msgs, err
}

// pollFrom polls partition id from offset next and drops what comes
// before it; nil when the partition is not this group member's (any
// more).
func (in *input) pollFrom(ctx context.Context, conn *iggy.Conn, id uint32, next uint64) ([]iggy.PolledMessage, error) {
	polled, err := conn.Poll(ctx, &iggy.PollRequest{
		Stream: in.conf.stream, Topic: in.conf.topic, Partition: id, As: in.conf.reader(),
		Strategy: iggy.PollOffset, Value: next, Count: in.conf.pollCount,
	})
	if err != nil || polled.Partition == math.MaxUint32 {
		return nil, err
	}
	return from(polled.Messages, next), nil
}

// from drops the messages before offset next.
func from(msgs []iggy.PolledMessage, next uint64) []iggy.PolledMessage {
	for len(msgs) > 0 && msgs[0].Offset < next {
		msgs = msgs[1:]
	}
	return msgs
}

// startOf finds where a partition is read from: after the consumer's
// stored offset, else at the oldest message or after the newest one.
func (in *input) startOf(ctx context.Context, conn *iggy.Conn, p *partition) (uint64, error) {
	c := &in.conf
	stored, ok, err := conn.GetOffset(ctx, c.reader(), c.stream, c.topic, p.id)
	if err != nil {
		return 0, err
	}
	next := stored + 1
	switch {
	case ok:
		in.log.Infof("Partition %d of topic %s: resuming after the stored offset %d of %s", p.id, in.names[1], stored, c.reader())
	case c.latest:
		last, err := conn.Poll(ctx, &iggy.PollRequest{Stream: c.stream, Topic: c.topic, Partition: p.id, As: c.reader(), Strategy: iggy.PollLast, Count: 1})
		if err != nil {
			return 0, err
		}
		next = 0
		if len(last.Messages) > 0 {
			next = last.Messages[len(last.Messages)-1].Offset + 1
		}
		in.log.Infof("Partition %d of topic %s: no stored offset for %s; starting at offset %d, after the newest message", p.id, in.names[1], c.reader(), next)
	default:
		next = 0
		in.log.Infof("Partition %d of topic %s: no stored offset for %s; starting at the oldest message", p.id, in.names[1], c.reader())
	}
	in.mu.Lock()
	p.known, p.next = true, next
	if ok {
		p.committed, p.hasCommitted, p.stored, p.hasStored = stored, true, stored, true
	}
	in.mu.Unlock()
	return next, nil
}

// pollGroup polls the member's next assigned partition as the server
// chooses it. The server reads from the group's stored offset, so while
// messages are in flight, or just acknowledged and not stored yet (a poll
// that crossed the store), the poll repeats some: those are dropped and
// the partition is polled again from where the input reads it. Only a
// stored offset past that (another member read on) moves the input.
func (in *input) pollGroup(ctx context.Context, conn *iggy.Conn) (*partition, []iggy.PolledMessage, error) {
	c := &in.conf
	polled, err := conn.Poll(ctx, &iggy.PollRequest{
		Stream: c.stream, Topic: c.topic, As: c.reader(), Assigned: true, Strategy: iggy.PollNext, Count: c.pollCount,
	})
	if iggy.CodeOf(err) == iggy.CodeConsumerGroupMemberNotFound {
		in.log.Warnf("Consumer group %s no longer counts this input as a member (idle too long?); joining again", c.group)
		return nil, nil, in.join(ctx, conn)
	}
	if err != nil || len(polled.Messages) == 0 || polled.Partition == math.MaxUint32 {
		return nil, nil, err
	}
	msgs, first := polled.Messages, polled.Messages[0].Offset
	in.mu.Lock()
	p := in.partLocked(polled.Partition)
	switch {
	case !p.known || first > p.next:
		if p.inFlight > 0 {
			in.log.Warnf("Partition %d of topic %s: the group's stored offset moved to %d past this input's %d (another member read it meanwhile); reading on from there",
				p.id, in.names[1], first-1, p.next)
		}
		p.forget()
		p.known, p.next = true, first
	case p.inFlight >= c.limit:
		msgs = nil
	default:
		msgs = from(msgs, p.next)
	}
	next, again := p.next, len(msgs) == 0 && p.inFlight < c.limit
	in.mu.Unlock()
	if again {
		msgs, err = in.pollFrom(ctx, conn, p.id, next)
	}
	return p, msgs, err
}

// build turns polled messages into a batch with the input's metadata.
func (in *input) build(partition uint32, msgs []iggy.PolledMessage) service.MessageBatch {
	batch := make(service.MessageBatch, len(msgs))
	for i := range msgs {
		batch[i] = newMessage(in.names, partition, &msgs[i])
		if e, ok := batch[i].MetaGet(MetaHeaderError); ok {
			in.log.Warnf("Topic %s of stream %s partition %d offset %d: delivered without its user headers (%s): %s",
				in.names[1], in.names[0], partition, msgs[i].Offset, MetaHeaderError, e)
		}
	}
	return batch
}
