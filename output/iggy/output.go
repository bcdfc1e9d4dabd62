// Package iggy is the `iggy` batch output: it writes messages to Apache Iggy
// streams and topics with the Iggy Go SDK v0.8.0 (Iggy server 0.8.x) and
// acknowledges a batch only once Iggy has confirmed every message of it.
//
// The SDK blocks forever when the server is down, never reconnects, sets no
// deadlines and runs one request at a time per connection. This package
// bounds every SDK call with a timeout (closing the socket when it runs out),
// keeps a pool of max_in_flight logged-in connections, turns a lost
// connection into service.ErrNotConnected so that Benthos reconnects and
// sends the batch again, and rejects a message Iggy can never accept on its
// own with a service.BatchError naming the rule it broke.
package iggy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/OneOfOne/xxhash"
	iggcon "github.com/apache/iggy/foreign/go/contracts"
	ierror "github.com/apache/iggy/foreign/go/errors"
	"github.com/redpanda-data/benthos/v4/public/service"
)

// maxRequestBytes caps the messages carried by one SendMessages request; a
// larger group is sent in several requests.
const maxRequestBytes = 16 << 20

// Output is the iggy batch output. Create it with NewFromConfig.
type Output struct {
	conf        outputConfig
	log         *service.Logger
	dialer      *dialer
	pool        *pool
	batchPolicy service.BatchPolicy
	maxInFlight int
	topics      topicCache // partition counts for messages_key
}

// NewFromConfig builds an iggy output from its parsed configuration. It does
// no I/O beyond reading a configured CA file; Connect opens connections.
func NewFromConfig(conf *service.ParsedConfig, mgr *service.Resources) (*Output, error) {
	c, err := parseConfig(conf)
	if err != nil {
		return nil, err
	}
	o := &Output{
		conf:        c,
		log:         mgr.Logger(),
		batchPolicy: c.batchPolicy,
		maxInFlight: c.maxInFlight,
	}
	o.dialer = &dialer{conf: &o.conf}
	o.pool = newPool(c.maxInFlight, o.dialer.dial)
	return o, nil
}

// Connect makes sure a logged-in connection to Iggy is ready. It never
// blocks longer than the configured timeout, so a server that is down only
// makes Benthos retry it with back-off.
func (o *Output) Connect(ctx context.Context) error {
	if err := o.pool.ready(ctx); err != nil {
		return err
	}
	o.log.Debugf("Connected to Iggy at %s", o.conf.address)
	return nil
}

// group is the messages of a batch that share stream, topic and
// partitioning, in batch order.
type group struct {
	stream, topic string
	streamID      iggcon.Identifier
	topicID       iggcon.Identifier
	partitioning  iggcon.Partitioning
	byKey         bool   // partitioning is a partition the output chose by message key
	where         string // for errors: stream, topic and partition or key
	size          int    // messages of the batch that go here
	idx           []int
	msgs          []iggcon.IggyMessage
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
// every message. Messages Iggy can never accept are reported in a
// *service.BatchError while the others are delivered; a lost or hung
// connection returns service.ErrNotConnected so the batch is sent again
// after Connect.
func (o *Output) WriteBatch(ctx context.Context, batch service.MessageBatch) error {
	if len(batch) == 0 {
		return nil
	}
	c, err := o.pool.acquire(ctx)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, errClosed) {
			return err
		}
		o.log.Warnf("Iggy connection failed: %v", err)
		return service.ErrNotConnected
	}
	var failed []failure
	fail := func(i int, err error) { failed = append(failed, failure{i, err}) }
	var partitions partitionsFunc
	if o.conf.partitioning == partitioningKey {
		partitions = func(stream, topic string) (uint32, error) {
			return o.topics.partitions(ctx, c, stream, topic)
		}
	}
	groups, err := o.groupBatch(batch, partitions, fail)
	if err == nil {
		for _, g := range groups {
			if err = o.sendGroup(ctx, c, g, fail); err != nil {
				break
			}
		}
	}
	o.pool.release(c)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if o.pool.isClosed() {
			return errClosed
		}
		o.log.Warnf("Lost the Iggy connection, reconnecting to send the batch again: %v", err)
		return service.ErrNotConnected
	}

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
func (o *Output) groupBatch(batch service.MessageBatch, partitions partitionsFunc, fail func(int, error)) ([]*group, error) {
	conf := &o.conf
	staticStream, streamStatic := conf.stream.Static()
	staticTopic, topicStatic := conf.topic.Static()
	// An executor per field and batch: TryInterpolatedString rebuilds the
	// batch on every call.
	var streamExec, topicExec, partExec, idExec *service.MessageBatchInterpolationExecutor
	if !streamStatic {
		streamExec = batch.InterpolationExecutor(conf.stream)
	}
	if !topicStatic {
		topicExec = batch.InterpolationExecutor(conf.topic)
	}
	partField := ""
	switch conf.partitioning {
	case partitioningPartition:
		partExec, partField = batch.InterpolationExecutor(conf.partition), ioFieldPartition
	case partitioningKey:
		partExec, partField = batch.InterpolationExecutor(conf.key), ioFieldKey
	}
	if conf.messageID != nil {
		idExec = batch.InterpolationExecutor(conf.messageID)
	}
	mb := newMessageBuilder(conf.headers, idExec, len(batch))
	mb.flussID = conf.flussID && idExec != nil

	var groups []*group
	byKey := map[groupKey]*group{}
	var last *group // consecutive messages mostly share a destination
	var lastKey groupKey
	// Partition counts of the topics met in this batch.
	type dest struct{ stream, topic string }
	counts := map[dest]uint32{}
	var lastDest dest
	lastCount, haveLast := uint32(0), false
	// First every message's group, then the messages into groups sized
	// for them.
	dests := make([]*group, len(batch))
	for i := range batch {
		k := groupKey{stream: staticStream, topic: staticTopic}
		var err error
		if streamExec != nil {
			if k.stream, err = streamExec.TryString(i); err != nil {
				fail(i, fmt.Errorf("interpolating stream: %w", err))
				continue
			}
		}
		if topicExec != nil {
			if k.topic, err = topicExec.TryString(i); err != nil {
				fail(i, fmt.Errorf("interpolating topic: %w", err))
				continue
			}
		}
		if partExec != nil {
			if k.part, err = partExec.TryString(i); err != nil {
				fail(i, fmt.Errorf("interpolating %s: %w", partField, err))
				continue
			}
		}
		if partitions != nil {
			if err := checkKey(k.part); err != nil {
				fail(i, err)
				continue
			}
			d := dest{k.stream, k.topic}
			n, known := lastCount, haveLast && d == lastDest
			if !known {
				if n, known = counts[d]; !known {
					switch n, err = partitions(d.stream, d.topic); {
					case err == nil:
						known = true
					case errors.Is(err, errTopicUnknown):
						n, known = unknownCount, true
					default:
						return nil, err
					}
					counts[d] = n
				}
				lastDest, lastCount, haveLast = d, n, true
			}
			switch n {
			case unknownCount:
				// Leave the key to Iggy: one request per key.
			case 0:
				fail(i, fmt.Errorf("stream %q topic %q has no partitions: messages_key partitioning needs at least one", k.stream, k.topic))
				continue
			default:
				k.partition, k.byKey, k.part = xxhash.ChecksumString32(k.part)%n, true, ""
			}
		}
		g, exists := last, last != nil && k == lastKey
		if !exists {
			g, exists = byKey[k]
		}
		if !exists {
			if g, err = o.newGroup(k); err != nil {
				fail(i, err)
				continue
			}
			byKey[k] = g
			groups = append(groups, g)
		}
		last, lastKey = g, k
		dests[i] = g
		g.size++
	}
	for _, g := range groups {
		g.idx = make([]int, 0, g.size)
		g.msgs = make([]iggcon.IggyMessage, 0, g.size)
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
	return kept, nil
}

// newGroup validates a destination. Errors name the rule that was broken.
func (o *Output) newGroup(k groupKey) (*group, error) {
	g := &group{stream: k.stream, topic: k.topic}
	var err error
	if g.streamID, err = identifier(k.stream); err != nil {
		return nil, fmt.Errorf("stream %q: %w", k.stream, err)
	}
	if g.topicID, err = identifier(k.topic); err != nil {
		return nil, fmt.Errorf("topic %q: %w", k.topic, err)
	}
	g.where = fmt.Sprintf("stream %q topic %q", k.stream, k.topic)
	switch {
	case k.byKey:
		g.partitioning = iggcon.PartitionId(k.partition)
		g.byKey = true
		g.where += fmt.Sprintf(" partition %d (by message key)", k.partition)
	case o.conf.partitioning == partitioningBalanced:
		g.partitioning = iggcon.None()
	case o.conf.partitioning == partitioningPartition:
		p, err := strconv.ParseUint(k.part, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("partition %q is not a partition id (a number from 0 to 4294967295)", k.part)
		}
		g.partitioning = iggcon.PartitionId(uint32(p))
		g.where += fmt.Sprintf(" partition %d", p)
	case o.conf.partitioning == partitioningKey:
		if err := checkKey(k.part); err != nil {
			return nil, err
		}
		if g.partitioning, err = iggcon.EntityIdBytes([]byte(k.part)); err != nil {
			return nil, fmt.Errorf("message key: %w", err)
		}
		g.where += fmt.Sprintf(" key %.64q", k.part)
	}
	return g, nil
}

// checkKey applies Iggy's rule for message keys.
func checkKey(key string) error {
	if len(key) == 0 || len(key) > maxKeyBytes {
		return fmt.Errorf("message key is %d bytes: Iggy message keys must be 1 to %d bytes", len(key), maxKeyBytes)
	}
	return nil
}

// identifier reads a stream or topic: digits are a numeric id, anything
// else a name.
func identifier(s string) (iggcon.Identifier, error) {
	if isDecimal(s) {
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return iggcon.Identifier{}, errors.New("numeric ids must fit in 32 bits")
		}
		return iggcon.NewIdentifier(uint32(n))
	}
	if len(s) == 0 || len(s) > 255 {
		return iggcon.Identifier{}, fmt.Errorf("names must be 1 to 255 bytes, got %d", len(s))
	}
	return iggcon.NewIdentifier(s)
}

// sendGroup sends one group in requests of at most maxRequestBytes. An error
// the server answered with fails the group's remaining messages through
// fail; only a connection failure (or ctx) is returned.
func (o *Output) sendGroup(ctx context.Context, c *conn, g *group, fail func(int, error)) error {
	start, size := 0, 0
	for i, m := range g.msgs {
		n := iggcon.MessageHeaderSize + len(m.Payload) + len(m.UserHeaders) + 16
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

// sendChunk sends g.msgs[from:to]. When the stream or topic is missing and
// may be created, it creates them and sends once more. When the server
// refuses, the chunk's messages and the rest of the group are failed.
func (o *Output) sendChunk(ctx context.Context, c *conn, g *group, from, to int, fail func(int, error)) error {
	if from >= len(g.msgs) || g.idx == nil {
		return nil
	}
	send := func() error {
		return c.do(ctx, "sending messages to "+g.where, func(iggcon.Client) error {
			return c.sendMessages(g.streamID, g.topicID, g.partitioning, g.msgs[from:to])
		})
	}
	err := send()
	if err != nil && !isTransportError(err) && ctx.Err() == nil && (o.conf.createStream || o.conf.createTopic) {
		created, cerr := o.create(ctx, c, g)
		switch {
		case cerr != nil && isTransportError(cerr):
			return cerr
		case cerr != nil:
			err = fmt.Errorf("%w; then %v", err, cerr)
		case created:
			err = send()
		}
	}
	if err == nil {
		return nil
	}
	// Everything but an answer from the server (timeouts, a closed or
	// broken connection, ctx) means the connection is gone.
	if isTransportError(err) || ctx.Err() != nil {
		return err
	}
	if g.byKey {
		// The topic may have changed: read its partitions again before
		// the messages come back.
		o.topics.forget(g.stream, g.topic)
	}
	err = o.explain(g, err)
	for _, i := range g.idx[from:] {
		fail(i, err)
	}
	g.idx = nil // the group is done
	return nil
}

// create makes the group's stream and topic when they are missing and the
// configuration allows it, and says whether it created anything. It only
// runs after a send failed, so a working pipeline pays nothing for it.
func (o *Output) create(ctx context.Context, c *conn, g *group) (created bool, err error) {
	if o.conf.createStream && g.streamID.Kind == iggcon.StringId {
		err = c.do(ctx, "creating stream "+g.stream, func(cl iggcon.Client) error {
			_, err := cl.CreateStream(g.stream)
			return err
		})
		switch {
		case err == nil:
			created = true
			o.log.Infof("Created Iggy stream %q", g.stream)
		case errors.Is(err, ierror.ErrStreamNameAlreadyExists):
			err = nil
		default:
			return false, fmt.Errorf("creating stream %q: %w", g.stream, err)
		}
	}
	if o.conf.createTopic && g.topicID.Kind == iggcon.StringId {
		err = c.do(ctx, "creating topic "+g.topic, func(cl iggcon.Client) error {
			_, err := cl.CreateTopic(g.streamID, g.topic, o.conf.partitions, iggcon.CompressionAlgorithmNone,
				o.conf.expiry, o.conf.maxTopicSize, nil)
			return err
		})
		switch {
		case err == nil:
			created = true
			o.log.Infof("Created Iggy topic %q in stream %q with %d partitions", g.topic, g.stream, o.conf.partitions)
		case errors.Is(err, ierror.ErrTopicNameAlreadyExists):
			err = nil
		case isNotFound(err):
			// The stream is missing and was not created; explain says so.
			err = nil
		default:
			return false, fmt.Errorf("creating topic %q in stream %q: %w", g.topic, g.stream, err)
		}
	}
	return created, err
}

func isNotFound(err error) bool {
	var ie ierror.IggyError
	if !errors.As(err, &ie) {
		return false
	}
	switch ie.Code() {
	case ierror.StreamIdNotFoundCode, ierror.StreamNameNotFoundCode, ierror.TopicIdNotFoundCode, ierror.TopicNameNotFoundCode:
		return true
	}
	return false
}

// explain turns a server error into one that says which rule was broken.
func (o *Output) explain(g *group, err error) error {
	var ie ierror.IggyError
	if !errors.As(err, &ie) {
		return fmt.Errorf("sending to %s: %w", g.where, err)
	}
	switch ie.Code() {
	case ierror.StreamIdNotFoundCode, ierror.StreamNameNotFoundCode:
		return fmt.Errorf("sending to %s: the stream does not exist and %s: %w", g.where, o.missingHint(o.conf.createStream, g.streamID, "create_stream"), err)
	case ierror.TopicIdNotFoundCode, ierror.TopicNameNotFoundCode:
		return fmt.Errorf("sending to %s: the topic does not exist and %s: %w", g.where, o.missingHint(o.conf.createTopic, g.topicID, "create_topic"), err)
	case ierror.PartitionNotFoundCode:
		if g.byKey {
			return fmt.Errorf("sending to %s: the topic has fewer partitions than it had when its count was read; the count will be read again: %w", g.where, err)
		}
		return fmt.Errorf("sending to %s: the topic has no such partition: %w", g.where, err)
	}
	return fmt.Errorf("sending to %s: %w", g.where, err)
}

func (o *Output) missingHint(enabled bool, id iggcon.Identifier, field string) string {
	if !enabled {
		return field + " is off"
	}
	if id.Kind == iggcon.NumericId {
		return field + " only creates entities given by name"
	}
	return field + " could not create it"
}

// Close closes every connection, including ones with a request in flight,
// and returns by ctx's deadline even when the SDK is stuck.
func (o *Output) Close(ctx context.Context) error {
	return o.pool.close(ctx)
}
