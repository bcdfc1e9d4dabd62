package iggyoutput

import (
	"context"
	"fmt"
	"time"

	"github.com/fluss-iggy/fluss-iggy/iggy"
)

// Settings of ack_after.
const (
	ackAfterSend  = "send"
	ackAfterFlush = "flush"
	ackAfterFsync = "fsync"
)

func (o *Output) now() uint64 { return uint64(time.Now().UnixMicro()) }

// flushTarget is a partition a batch wrote to, or every partition of a
// topic (all) when the dialect did not say which one a balanced send or a
// key left to Iggy went to.
type flushTarget struct {
	stream, topic string
	partition     uint32
	all           bool
}

// flush makes Iggy save (ack_after: flush) or save and fsync (fsync) every
// partition the batch wrote to, before the batch is acknowledged. Only a
// connection failure is returned; a flush the server refuses fails the
// batch as a connection failure too, since its messages are in Iggy but not
// known to be saved.
func (o *Output) flush(ctx context.Context, c *iggy.Conn, groups []*group) error {
	fsync := o.conf.ackAfter == ackAfterFsync
	seen := map[flushTarget]bool{}
	for _, g := range groups {
		for _, t := range flushTargets(g) {
			if seen[t] {
				continue
			}
			seen[t] = true
			if err := o.flushTarget(ctx, c, g, t, fsync); err != nil {
				return err
			}
		}
	}
	return nil
}

// flushTargets lists where a group's delivered messages are.
func flushTargets(g *group) []flushTarget {
	if g.idx == nil || len(g.msgs) == 0 { // rejected: nothing stored
		return nil
	}
	base := flushTarget{stream: g.stream, topic: g.topic}
	if len(g.landed) > 0 {
		out := make([]flushTarget, 0, len(g.landed))
		for _, a := range g.landed {
			t := base
			t.partition = a.Partition
			out = append(out, t)
		}
		return out
	}
	if g.partitioning.Kind == iggy.PartitionByID {
		base.partition = g.partition
		return []flushTarget{base}
	}
	base.all = true
	return []flushTarget{base}
}

func (o *Output) flushTarget(ctx context.Context, c *iggy.Conn, g *group, t flushTarget, fsync bool) error {
	if !t.all {
		return o.flushOne(ctx, c, g, t.partition, fsync)
	}
	topic, err := c.GetTopic(ctx, g.streamID, g.topicID)
	if err != nil {
		return err
	}
	if topic == nil {
		return fmt.Errorf("flushing %s: the topic is gone", g.where)
	}
	for p := range topic.Partitions {
		if err := o.flushOne(ctx, c, g, p, fsync); err != nil {
			return err
		}
	}
	return nil
}

func (o *Output) flushOne(ctx context.Context, c *iggy.Conn, g *group, partition uint32, fsync bool) error {
	err := c.Flush(ctx, g.streamID, g.topicID, partition, fsync)
	if err != nil && !isConnLost(err) {
		return fmt.Errorf("iggy stored the batch but refused to flush stream %q topic %q partition %d (ack_after: %s): %w", g.stream, g.topic, partition, o.conf.ackAfter, err)
	}
	return err
}
