// Package iggyoutput is the `iggy` batch output: it writes messages to
// Apache Iggy streams and topics with our own Iggy client (package iggy,
// Iggy server 0.8 and 0.9) and acknowledges a batch only once Iggy has
// confirmed every message of it (and, with ack_after, saved it).
//
// Connections come from a pool of max_in_flight logged-in connections, one
// request at a time each; a lost connection becomes service.ErrNotConnected
// so that Benthos reconnects (with our backoff) and sends the batch again; a
// message Iggy can never accept is rejected on its own with a
// service.BatchError naming the rule it broke.
package iggyoutput

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/OneOfOne/xxhash"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/iggy"
	"github.com/fluss-iggy/fluss-iggy/internal/iggyconn"
	"github.com/fluss-iggy/fluss-iggy/internal/stop"
)

// maxRequestBytes caps the messages carried by one SendMessages request; a
// larger group is sent in several requests.
const maxRequestBytes = 16 << 20

func hash64(b []byte) uint64 { return xxhash.Checksum64(b) }

// Output is the iggy batch output. Create it with NewFromConfig.
type Output struct {
	conf        outputConfig
	log         *service.Logger
	conn        *iggyconn.Connector
	pool        *iggy.Pool
	batchPolicy service.BatchPolicy
	maxInFlight int
	topics      topicCache // partition counts for messages_key and flushes
	durability  durabilityChecks
	creating    chan struct{} // held while a connection creates a keyed topic
	builders    builderPool
	left        undelivered
	inFlight    atomic.Int64 // messages inside WriteBatch
	unwatch     func()
	bytesOut    *service.MetricCounter // payload bytes Iggy confirmed
}

// NewFromConfig builds an iggy output from its parsed configuration. It does
// no I/O beyond reading configured TLS files; Connect opens connections.
func NewFromConfig(conf *service.ParsedConfig, mgr *service.Resources) (*Output, error) {
	c, err := parseConfig(conf)
	if err != nil {
		return nil, err
	}
	o := &Output{
		conf:        c,
		log:         mgr.Logger(),
		conn:        iggyconn.NewConnector(c.conn, mgr.Logger()),
		batchPolicy: c.batchPolicy,
		maxInFlight: c.maxInFlight,
		creating:    make(chan struct{}, 1),
		builders:    make(builderPool, c.maxInFlight),
		bytesOut:    mgr.Metrics().NewCounter("iggy_output_bytes"),
	}
	o.bytesOut.Incr(0) // exported from the start, so that rate() has a series
	return o, nil
}

// Connect makes sure a logged-in connection to Iggy is ready; the first
// call starts the connection pool. A failure asks Benthos to wait a backoff
// that grows to 30s; a server whose protocol we do not speak stops the
// pipeline, and so do max_login_attempts refused logins in a row.
func (o *Output) Connect(ctx context.Context) error {
	if o.pool == nil {
		o.pool = iggy.NewPool(o.maxInFlight, o.conf.conn.KeepAlive, o.conn.Dial)
		o.unwatch = stop.Watch(func() string { return stuck(o.conn, o.undelivered()) })
	}
	if err := o.pool.Ready(ctx); err != nil {
		if ctx.Err() != nil || errors.Is(err, iggy.ErrClosed) {
			return err
		}
		return o.conn.Failed(err)
	}
	o.conn.Succeeded()
	return nil
}

// group is the messages of a batch that share stream, topic and
// partitioning, in batch order.
type group struct {
	stream, topic string
	streamID      iggy.Identifier
	topicID       iggy.Identifier
	partitioning  iggy.Partitioning
	partition     uint32 // with a partition id, chosen or computed
	byKey         bool   // partitioning is a partition the output chose by message key
	where         string // for errors: stream, topic and partition or key
	size          int    // messages of the batch that go here
	idx           []int
	msgs          []iggy.Message
	landed        []iggy.Appended // where the group's requests landed, when the dialect says
}

// groupKey is where a message goes: a stream, a topic and either a
// partition or key as configured (part) or, for messages_key partitioning
// on a topic whose partition count is known, the partition the key hashes
// to (partition, with byKey set).
type groupKey struct {
	stream, topic, part string
	partition           uint32
	byKey               bool
}

type failure struct {
	i   int
	err error
}

// WriteBatch sends the batch and returns nil only once Iggy has confirmed
// every message (and, with ack_after, saved it). Messages Iggy can never
// accept are reported in a *service.BatchError while the others are
// delivered; a lost or hung connection returns service.ErrNotConnected so
// the batch is sent again after Connect.
func (o *Output) WriteBatch(ctx context.Context, batch service.MessageBatch) error {
	if len(batch) == 0 {
		return nil
	}
	o.inFlight.Add(int64(len(batch)))
	defer o.inFlight.Add(-int64(len(batch)))
	err := o.writeBatch(ctx, batch)
	var berr *service.BatchError
	if err == nil || errors.As(err, &berr) {
		o.left.delivered(batch)
	} else {
		o.left.failed(batch)
	}
	return err
}

func (o *Output) writeBatch(ctx context.Context, batch service.MessageBatch) error {
	c, err := o.pool.Acquire(ctx)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, iggy.ErrClosed) {
			return err
		}
		if iggy.IsPermanent(err) {
			return o.conn.Failed(err)
		}
		o.conn.Down(err)
		o.log.Warnf("Iggy connection failed: %v", err)
		return service.ErrNotConnected
	}
	var failed []failure
	fail := func(i int, err error) { failed = append(failed, failure{i, err}) }
	mb := o.builders.get(o.conf.headers, o.messageIDs(batch), len(batch))
	defer o.builders.put(mb) // after deliveredBytes, the last reader of the payloads
	groups, err := o.sendBatch(ctx, c, mb, batch, fail)
	if err == nil && o.conf.ackAfter != ackAfterSend {
		err = o.afterSend(ctx, c, groups)
	}
	o.pool.Release(c)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		o.log.Warnf("Lost the Iggy connection, reconnecting to send the batch again: %v", err)
		return service.ErrNotConnected
	}
	o.bytesOut.Incr(deliveredBytes(groups))
	return batchError(batch, failed)
}

// messageIDs evaluates message_id for the batch; nil when the server
// assigns ids.
func (o *Output) messageIDs(batch service.MessageBatch) *fieldExec {
	if o.conf.messageID.InterpolatedString == nil {
		return nil
	}
	return o.conf.messageID.forBatch(batch)
}

// sendBatch groups the batch and sends every group; it returns the groups
// and only a connection failure.
func (o *Output) sendBatch(ctx context.Context, c *iggy.Conn, mb *messageBuilder, batch service.MessageBatch, fail func(int, error)) ([]*group, error) {
	var partitions partitionsFunc
	if o.conf.partitioning == partitioningKey {
		partitions = func(stream, topic string) (uint32, error) {
			return o.keyedPartitions(ctx, c, stream, topic)
		}
	}
	groups, err := o.groupBatch(mb, batch, partitions, fail)
	if err != nil {
		return nil, err
	}
	for _, g := range groups {
		if err := o.sendGroup(ctx, c, g, fail); err != nil {
			return nil, err
		}
	}
	return groups, nil
}

// deliveredBytes adds up the payloads of the groups Iggy took whole
// (a group the server refused has its idx cleared).
func deliveredBytes(groups []*group) int64 {
	n := 0
	for _, g := range groups {
		if g.idx == nil {
			continue
		}
		for i := range g.msgs {
			n += len(g.msgs[i].Payload)
		}
	}
	return int64(n)
}

// batchError reports the messages Iggy rejected, or nil.
func batchError(batch service.MessageBatch, failed []failure) error {
	if len(failed) == 0 {
		return nil
	}
	slices.SortFunc(failed, func(a, b failure) int { return a.i - b.i })
	headline := fmt.Errorf("iggy rejected %d of %d messages, first: %w", len(failed), len(batch), failed[0].err)
	berr := service.NewBatchError(batch, headline)
	for _, f := range failed {
		berr.Failed(f.i, f.err)
	}
	return berr
}

// partitionsFunc returns the partition count of a topic, or
// errTopicUnknown when it cannot be read (the topic does not exist yet, for
// one). Any other error means the connection failed.
type partitionsFunc func(stream, topic string) (uint32, error)

// groupBatch works out every message's destination and builds the Iggy
// messages; messages that break a rule go to fail instead. With
// messages_key partitioning and partitions set, messages are grouped by the
// partition their key hashes to, the rule Iggy itself applies (xxHash32 of
// the key, seed 0, modulo the partition count), so that a batch needs one
// request per partition instead of one per key. The only error returned is
// a failed connection.
func (o *Output) groupBatch(mb *messageBuilder, batch service.MessageBatch, partitions partitionsFunc, fail func(int, error)) ([]*group, error) {
	r := o.newRouter(batch, partitions)
	// First every message's group, then the messages into groups sized
	// for them.
	dests := make([]*group, len(batch))
	for i := range batch {
		g, rejected, err := r.route(i)
		if err != nil {
			return nil, err
		}
		if rejected != nil {
			fail(i, rejected)
			continue
		}
		dests[i] = g
		g.size++
	}
	return o.fill(mb, batch, r.groups, dests, fail), nil
}

// fill builds each routed message into its group and returns the groups
// that got any.
func (o *Output) fill(mb *messageBuilder, batch service.MessageBatch, groups, dests []*group, fail func(int, error)) []*group {
	for _, g := range groups {
		g.idx = make([]int, 0, g.size)
		g.msgs = make([]iggy.Message, 0, g.size)
	}
	for i, g := range dests {
		if g == nil {
			continue
		}
		m, err := mb.build(batch[i], i)
		if err != nil {
			fail(i, err)
			continue
		}
		g.idx = append(g.idx, i)
		g.msgs = append(g.msgs, m)
	}
	kept := groups[:0]
	for _, g := range groups {
		if len(g.msgs) > 0 {
			kept = append(kept, g)
		}
	}
	return kept
}

// newGroup validates a destination. Errors name the rule that was broken.
func (o *Output) newGroup(k groupKey) (*group, error) {
	g := &group{stream: k.stream, topic: k.topic}
	var err error
	if g.streamID, err = iggy.ParseIdentifier(k.stream); err != nil {
		return nil, fmt.Errorf("stream %q: %w", k.stream, err)
	}
	if g.topicID, err = iggy.ParseIdentifier(k.topic); err != nil {
		return nil, fmt.Errorf("topic %q: %w", k.topic, err)
	}
	g.where = fmt.Sprintf("stream %q topic %q", k.stream, k.topic)
	switch {
	case k.byKey:
		g.partitioning, g.partition, g.byKey = iggy.PartitionID(k.partition), k.partition, true
		g.where += fmt.Sprintf(" partition %d (by message key)", k.partition)
	case o.conf.partitioning == partitioningBalanced:
		g.partitioning = iggy.Balanced()
	case o.conf.partitioning == partitioningPartition:
		p, err := strconv.ParseUint(k.part, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("partition %q is not a partition id (a number from 0 to 4294967295)", k.part)
		}
		g.partitioning, g.partition = iggy.PartitionID(uint32(p)), uint32(p)
		g.where += fmt.Sprintf(" partition %d", p)
	case o.conf.partitioning == partitioningKey:
		if g.partitioning, err = iggy.MessagesKey([]byte(k.part)); err != nil {
			return nil, err
		}
		g.where += fmt.Sprintf(" key %.64q", k.part)
	}
	return g, nil
}

// checkKey applies Iggy's rule for message keys.
func checkKey(key string) error {
	_, err := iggy.MessagesKey([]byte(key))
	return err
}

// sendGroup sends one group in requests of at most maxRequestBytes. An error
// the server answered with fails the group's remaining messages through
// fail; only a connection failure (or ctx) is returned.
func (o *Output) sendGroup(ctx context.Context, c *iggy.Conn, g *group, fail func(int, error)) error {
	start, size := 0, 0
	for i, m := range g.msgs {
		n := messageOverhead + len(m.Payload) + len(m.UserHeaders)
		if i > start && size+n > maxRequestBytes {
			if err := o.sendChunk(ctx, c, g, start, i, fail); err != nil {
				return err
			}
			start, size = i, 0
		}
		size += n
	}
	return o.sendChunk(ctx, c, g, start, len(g.msgs), fail)
}

// messageOverhead is the most a message costs on the wire beyond its payload
// and headers, in any dialect.
const messageOverhead = 80

// sendChunk sends g.msgs[from:to]. When the stream or topic is missing and
// may be created, it creates them and sends once more. When the server
// refuses, the chunk's messages and the rest of the group are failed.
func (o *Output) sendChunk(ctx context.Context, c *iggy.Conn, g *group, from, to int, fail func(int, error)) error {
	if from >= len(g.msgs) || g.idx == nil {
		return nil
	}
	b := iggy.Batch{Stream: g.streamID, Topic: g.topicID, Partitioning: g.partitioning,
		OriginTimestamp: o.now(), Messages: g.msgs[from:to]}
	landed, err := c.Send(ctx, &b)
	if err != nil && !isConnLost(err) && iggy.IsNotFound(err) && (o.conf.createStream || o.conf.createTopic) {
		// Send again whether this connection created the stream or topic or
		// found that another one just had: either way it may exist now.
		switch cerr := o.create(ctx, c, g); {
		case cerr != nil && isConnLost(cerr):
			return cerr
		case cerr != nil:
			err = fmt.Errorf("%w; then %v", err, cerr)
		default:
			landed, err = c.Send(ctx, &b)
		}
	}
	if err == nil {
		g.landed = append(g.landed, landed...)
		return nil
	}
	if isConnLost(err) || ctx.Err() != nil {
		return err
	}
	if g.byKey {
		// The topic may have changed: read its partitions again before
		// the messages come back.
		o.topics.forget(g.stream, g.topic)
	}
	err = o.explain(g, o.whichMissing(ctx, c, g, err))
	for _, i := range g.idx[from:] {
		fail(i, err)
	}
	g.idx = nil // the group is done
	return nil
}

// create makes the group's stream and topic when they are missing and the
// configuration allows it; one that another connection (or pipeline) made
// first is fine. It runs after a send failed for a missing stream or topic
// (and, with messages_key, before the first send to a topic not found), so
// a working pipeline pays nothing for it.
func (o *Output) create(ctx context.Context, c *iggy.Conn, g *group) error {
	if o.conf.createStream && g.streamID.Kind == iggy.KindName {
		switch err := c.CreateStream(ctx, g.stream); {
		case err == nil:
			o.log.Infof("Created Iggy stream %q", g.stream)
		case iggy.CodeOf(err) != iggy.CodeStreamNameAlreadyExists:
			return fmt.Errorf("creating stream %q: %w", g.stream, err)
		}
	}
	if o.conf.createTopic && g.topicID.Kind == iggy.KindName {
		spec := iggy.TopicSpec{Name: g.topic, Partitions: o.conf.partitions, MessageExpiry: o.conf.expiry, MaxTopicSize: o.conf.maxTopicSize}
		if o.conf.ackAfter != ackAfterSend {
			spec.Durability = iggy.DurabilityPersisted // what ack_after asks, on Iggy 0.9
		}
		switch err := c.CreateTopic(ctx, g.streamID, spec); {
		case err == nil:
			o.log.Infof("Created Iggy topic %q in stream %q with %d partitions", g.topic, g.stream, o.conf.partitions)
		case iggy.CodeOf(err) == iggy.CodeTopicNameAlreadyExists, iggy.IsNotFound(err):
			// Made by another, or the stream is missing and was not
			// created (the send says so).
		default:
			return fmt.Errorf("creating topic %q in stream %q: %w", g.topic, g.stream, err)
		}
	}
	return nil
}

// whichMissing turns Iggy 0.9's ResourceNotFound, which does not say what
// is missing, into the 0.8 code that does, by reading the stream and topic.
// For keyed groups it stays as it is: the partition is what went missing.
func (o *Output) whichMissing(ctx context.Context, c *iggy.Conn, g *group, err error) error {
	if iggy.CodeOf(err) != iggy.CodeResourceNotFound || g.byKey {
		return err
	}
	if ok, serr := c.StreamExists(ctx, g.streamID); serr == nil && !ok {
		return fmt.Errorf("%w (Iggy answered: %w)", &iggy.ServerError{Code: iggy.CodeStreamNameNotFound}, err)
	}
	if t, terr := c.GetTopic(ctx, g.streamID, g.topicID); terr == nil && t == nil {
		return fmt.Errorf("%w (Iggy answered: %w)", &iggy.ServerError{Code: iggy.CodeTopicNameNotFound}, err)
	}
	return err
}

// explain turns a server error into one that says which rule was broken.
func (o *Output) explain(g *group, err error) error {
	switch {
	case iggy.IsStreamNotFound(err):
		return fmt.Errorf("sending to %s: the stream does not exist and %s: %w", g.where, o.missingHint(o.conf.createStream, g.streamID, "create_stream"), err)
	case iggy.IsTopicNotFound(err):
		return fmt.Errorf("sending to %s: the topic does not exist and %s: %w", g.where, o.missingHint(o.conf.createTopic, g.topicID, "create_topic"), err)
	case iggy.CodeOf(err) == iggy.CodePartitionNotFound || iggy.CodeOf(err) == iggy.CodeResourceNotFound:
		if g.byKey {
			return fmt.Errorf("sending to %s: the topic has fewer partitions than it had when its count was read; the count will be read again: %w", g.where, err)
		}
		return fmt.Errorf("sending to %s: the topic has no such partition: %w", g.where, err)
	}
	return fmt.Errorf("sending to %s: %w", g.where, err)
}

func (o *Output) missingHint(enabled bool, id iggy.Identifier, field string) string {
	if !enabled {
		return field + " is off"
	}
	if id.Kind == iggy.KindNumeric {
		return field + " only creates entities given by name"
	}
	return field + " could not create it"
}

// undelivered counts the messages handed to the output and not delivered.
func (o *Output) undelivered() int { return o.left.count() + int(o.inFlight.Load()) }

// Close closes every connection, including ones with a request in flight.
// When messages were left undelivered (Iggy was unreachable at shutdown),
// it says how many and makes the process exit non-zero: they were not
// acknowledged, so the input has not committed their offsets.
func (o *Output) Close(ctx context.Context) error {
	if o.unwatch != nil {
		o.unwatch()
	}
	if n := o.undelivered(); n > 0 {
		err := fmt.Errorf("%d messages were %w (not acknowledged, so their offsets are not committed; they are read again on the next start)", n, errNotDelivered)
		o.log.Errorf("%v", err)
		stop.Fail(err)
	}
	if o.pool == nil {
		return nil
	}
	return o.pool.Close(ctx)
}
