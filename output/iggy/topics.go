package iggyoutput

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"

	"github.com/fluss-iggy/fluss-iggy/iggy"
)

// partitionCountTTL is how long a topic's partition count is trusted before
// it is read again, so that partitions added to a topic are used soon.
const partitionCountTTL = 10 * time.Second

// unknownCount marks a topic whose partition count could not be read: its
// messages are sent with their keys and Iggy places them.
const unknownCount = math.MaxUint32

// errTopicUnknown says that a topic's partition count could not be read for
// a reason other than a failed connection (most often: it does not exist
// yet, and sending will create it when the configuration allows).
var errTopicUnknown = errors.New("the topic's partition count is unknown")

// topicCache remembers the partition counts of the topics messages_key
// partitioning sends to.
type topicCache struct {
	mu sync.Mutex
	m  map[[2]string]topicEntry
}

type topicEntry struct {
	partitions uint32
	read       time.Time
}

// partitions returns the partition count of a topic, reading it with c when
// it is not known or too old. It returns errTopicUnknown when the server
// answered with an error and the error itself when the connection failed.
func (t *topicCache) partitions(ctx context.Context, c *iggy.Conn, stream, topic string) (uint32, error) {
	key := [2]string{stream, topic}
	t.mu.Lock()
	e, ok := t.m[key]
	t.mu.Unlock()
	if ok && time.Since(e.read) < partitionCountTTL {
		return e.partitions, nil
	}
	sid, err := iggy.ParseIdentifier(stream)
	if err != nil {
		return 0, errTopicUnknown
	}
	tid, err := iggy.ParseIdentifier(topic)
	if err != nil {
		return 0, errTopicUnknown
	}
	td, err := c.GetTopic(ctx, sid, tid)
	switch {
	case err != nil && (isConnLost(err) || ctx.Err() != nil):
		return 0, err
	case err != nil || td == nil:
		return 0, errTopicUnknown
	}
	t.mu.Lock()
	if t.m == nil {
		t.m = map[[2]string]topicEntry{}
	}
	t.m[key] = topicEntry{partitions: td.Partitions, read: time.Now()}
	t.mu.Unlock()
	return td.Partitions, nil
}

// forget drops what is known about a topic, after a send found that it
// changed.
func (t *topicCache) forget(stream, topic string) {
	t.mu.Lock()
	delete(t.m, [2]string{stream, topic})
	t.mu.Unlock()
}

// keyedPartitions returns a topic's partition count for messages_key
// partitioning. A topic that does not exist yet is created first, when
// create_topic allows, by one connection at a time: keyed messages then go
// to the partition the output picks, never to Iggy to place in a topic that
// another connection is still creating, which a 0.8.0 server answered by
// panicking (remainder by zero).
func (o *Output) keyedPartitions(ctx context.Context, c *iggy.Conn, stream, topic string) (uint32, error) {
	n, err := o.topics.partitions(ctx, c, stream, topic)
	if !errors.Is(err, errTopicUnknown) || !o.conf.createTopic {
		return n, err
	}
	select {
	case o.creating <- struct{}{}:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	defer func() { <-o.creating }()
	// Another connection may have created it while this one waited.
	if n, err = o.topics.partitions(ctx, c, stream, topic); !errors.Is(err, errTopicUnknown) {
		return n, err
	}
	sid, serr := iggy.ParseIdentifier(stream)
	tid, terr := iggy.ParseIdentifier(topic)
	if serr != nil || terr != nil {
		return 0, errTopicUnknown // the send reports the bad name
	}
	g := &group{stream: stream, topic: topic, streamID: sid, topicID: tid}
	if err := o.create(ctx, c, g); err != nil {
		if isConnLost(err) || ctx.Err() != nil {
			return 0, err
		}
		return 0, errTopicUnknown // the send meets the same refusal and reports it
	}
	return o.topics.partitions(ctx, c, stream, topic)
}
