package iggyoutput

import (
	"context"
	"fmt"
	"sync"
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

// afterSend does what ack_after asks once a batch is sent. Iggy 0.8 flushes
// on request; Iggy 0.9 has no flush (it refuses FlushUnsavedBuffer) and
// saves by each topic's durability option instead, which the output sets
// to persisted on the topics it creates and checks, once per topic, on the
// others.
func (o *Output) afterSend(ctx context.Context, c *iggy.Conn, groups []*group) error {
	if c.Info().Version == iggy.Version09 {
		o.checkDurability(ctx, c, groups)
		return nil
	}
	return o.flush(ctx, c, groups)
}

// durabilityChecks remembers the Iggy 0.9 topics whose durability was read.
type durabilityChecks struct {
	mu      sync.Mutex
	checked map[[2]string]bool
}

// claim reports whether a topic still needs its check; a claimed topic is
// not checked again, unless it is released because its reading failed.
func (d *durabilityChecks) claim(stream, topic string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	key := [2]string{stream, topic}
	if d.checked[key] {
		return false
	}
	if d.checked == nil {
		d.checked = map[[2]string]bool{}
	}
	d.checked[key] = true
	return true
}

func (d *durabilityChecks) release(stream, topic string) {
	d.mu.Lock()
	delete(d.checked, [2]string{stream, topic})
	d.mu.Unlock()
}

// checkDurability reads the durability option of each Iggy 0.9 topic the
// batch went to, the first time, and warns once when it cannot give what
// ack_after asks: a replicated topic answers sends once they are committed,
// possibly only in memory, so a crash of the server can lose acknowledged
// messages. The batch is delivered either way; a failed reading is tried
// again with a later batch.
func (o *Output) checkDurability(ctx context.Context, c *iggy.Conn, groups []*group) {
	for _, g := range groups {
		if g.idx == nil || !o.durability.claim(g.stream, g.topic) {
			continue
		}
		t, err := c.GetTopic(ctx, g.streamID, g.topicID)
		if err != nil || t == nil {
			o.durability.release(g.stream, g.topic)
			continue
		}
		switch t.Durability {
		case iggy.DurabilityPersisted.String():
		case "":
			o.log.Warnf("ack_after: %s: Iggy at %s reports no durability option for topic %q of stream %q (an Iggy 0.9 pre-release?), "+
				"so whether it saves messages before acknowledging them cannot be told; Iggy 0.9.0 has the topic option durability: persisted", o.conf.ackAfter, c.Addr(), g.topic, g.stream)
		default:
			o.log.Warnf("ack_after: %s cannot be honoured for topic %q of stream %q: its durability is %q, so Iggy 0.9 acknowledges its messages once "+
				"committed, possibly only in memory, and a crash of the server can lose them; create the topic with durability persisted "+
				"(create_topic does so with ack_after: flush or fsync) or use ack_after: send to say that this is accepted", o.conf.ackAfter, g.topic, g.stream, t.Durability)
		}
	}
}

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
