package iggyoutput

import (
	"errors"
	"fmt"

	"github.com/OneOfOne/xxhash"
	"github.com/redpanda-data/benthos/v4/public/service"
)

// dest is a stream and topic.
type dest struct{ stream, topic string }

// router works out the group of each message of one batch: its stream,
// topic and partition or key, from the configuration's interpolations,
// and with messages_key the partition Iggy's rule gives the key.
type router struct {
	o                               *Output
	stream, topic                   string // static values, when not interpolated
	streamExec, topicExec, partExec *fieldExec
	partField                       string
	partitions                      partitionsFunc // nil unless messages_key
	counts                          map[dest]uint32
	lastDest                        dest
	lastCount                       uint32
	haveLast                        bool
	groups                          []*group
	byKey                           map[groupKey]*group
	last                            *group // consecutive messages mostly share a group
	lastKey                         groupKey
}

// newRouter prepares one executor per interpolated field and batch:
// TryInterpolatedString would rebuild the batch on every call.
func (o *Output) newRouter(batch service.MessageBatch, partitions partitionsFunc) *router {
	conf := &o.conf
	r := &router{o: o, partitions: partitions, counts: map[dest]uint32{}, byKey: map[groupKey]*group{}}
	var static bool
	if r.stream, static = conf.stream.Static(); !static {
		r.streamExec = conf.stream.forBatch(batch)
	}
	if r.topic, static = conf.topic.Static(); !static {
		r.topicExec = conf.topic.forBatch(batch)
	}
	switch conf.partitioning {
	case partitioningPartition:
		r.partExec, r.partField = conf.partition.forBatch(batch), ioFieldPartition
	case partitioningKey:
		r.partExec, r.partField = conf.key.forBatch(batch), ioFieldKey
	}
	return r
}

// route returns message i's group, or why the message is rejected, or a
// failed connection (err) from reading a partition count.
func (r *router) route(i int) (g *group, rejected, err error) {
	k, rejected := r.key(i)
	if rejected != nil {
		return nil, rejected, nil
	}
	if r.partitions != nil {
		if rejected, err = r.byPartition(&k); rejected != nil || err != nil {
			return nil, rejected, err
		}
	}
	if g, ok := r.last, r.last != nil && k == r.lastKey; ok {
		return g, nil, nil
	}
	g, ok := r.byKey[k]
	if !ok {
		if g, rejected = r.o.newGroup(k); rejected != nil {
			return nil, rejected, nil
		}
		r.byKey[k] = g
		r.groups = append(r.groups, g)
	}
	r.last, r.lastKey = g, k
	return g, nil, nil
}

// key interpolates message i's stream, topic and partition or key.
func (r *router) key(i int) (k groupKey, err error) {
	k = groupKey{stream: r.stream, topic: r.topic}
	if r.streamExec != nil {
		if k.stream, err = r.streamExec.value(i); err != nil {
			return k, fmt.Errorf("interpolating stream: %w", err)
		}
	}
	if r.topicExec != nil {
		if k.topic, err = r.topicExec.value(i); err != nil {
			return k, fmt.Errorf("interpolating topic: %w", err)
		}
	}
	if r.partExec != nil {
		if k.part, err = r.partExec.value(i); err != nil {
			return k, fmt.Errorf("interpolating %s: %w", r.partField, err)
		}
	}
	return k, nil
}

// byPartition turns a message key into the partition Iggy's rule gives it
// (xxHash32 of the key, seed 0, modulo the partition count), so that a
// batch needs one request per partition instead of one per key. A topic
// whose count cannot be read keeps its keys, for Iggy to place.
func (r *router) byPartition(k *groupKey) (rejected, err error) {
	if err := checkKey(k.part); err != nil {
		return err, nil
	}
	n, err := r.partitionCount(dest{k.stream, k.topic})
	if err != nil {
		return nil, err
	}
	switch n {
	case unknownCount:
		// Leave the key to Iggy: one request per key.
	case 0:
		return fmt.Errorf("stream %q topic %q has no partitions: messages_key partitioning needs at least one", k.stream, k.topic), nil
	default:
		k.partition, k.byKey, k.part = xxhash.ChecksumString32(k.part)%n, true, ""
	}
	return nil, nil
}

// partitionCount returns a topic's partition count (unknownCount when it
// cannot be read), read once per batch.
func (r *router) partitionCount(d dest) (uint32, error) {
	if r.haveLast && d == r.lastDest {
		return r.lastCount, nil
	}
	n, known := r.counts[d]
	if !known {
		var err error
		switch n, err = r.partitions(d.stream, d.topic); {
		case errors.Is(err, errTopicUnknown):
			n = unknownCount
		case err != nil:
			return 0, err
		}
		r.counts[d] = n
	}
	r.lastDest, r.lastCount, r.haveLast = d, n, true
	return n, nil
}
