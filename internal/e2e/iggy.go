package e2e

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/fluss-iggy/fluss-iggy/iggy"
	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
)

// Message is a message read back from an Iggy topic.
type Message struct {
	Partition uint32
	Offset    uint64
	// ID is the message id as its 16 wire bytes (a little-endian u128).
	ID      [16]byte
	Payload []byte
	// Headers are the user headers with string keys, by key.
	Headers map[string]iggytest.HeaderField
	// HeadersErr is set when the user headers do not parse.
	HeadersErr error
}

// Reader reads what arrived in an Iggy topic: the in-process test server
// (ServerReader) or a real server, 0.8 or 0.9, through this repository's
// client (ClientReader).
type Reader interface {
	// Counts returns the number of messages per partition id; an empty map
	// when the stream or topic does not exist (yet).
	Counts(stream, topic string) (map[uint32]uint64, error)
	// Messages returns every message of the topic, partition by partition
	// (ascending id), each partition in offset order; nil when the topic
	// does not exist.
	Messages(stream, topic string) ([]Message, error)
	// Close releases the reader's connections.
	Close() error
}

// ServerReader reads an in-process iggytest server directly.
type ServerReader struct{ Srv *iggytest.Server }

// Counts implements Reader.
func (r ServerReader) Counts(stream, topic string) (map[uint32]uint64, error) {
	out := map[uint32]uint64{}
	ti, ok := r.Srv.Topic(stream, topic)
	if !ok {
		return out, nil
	}
	if ti.Messages == 0 {
		return out, nil
	}
	for p := uint32(0); p < ti.Partitions; p++ { // 0-based in Iggy 0.8
		if msgs := r.Srv.PartitionMessages(stream, topic, p); msgs != nil {
			out[p] = uint64(len(msgs))
		}
	}
	return out, nil
}

// Total returns the number of messages in a topic (0 when it does not exist).
func (r ServerReader) Total(stream, topic string) int { return r.Srv.MessageCount(stream, topic) }

// Messages implements Reader.
func (r ServerReader) Messages(stream, topic string) ([]Message, error) {
	msgs := r.Srv.Messages(stream, topic)
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, Message{
			Partition: m.PartitionID, Offset: m.Offset, ID: m.ID, Payload: m.Payload,
			Headers: m.HeaderMap(), HeadersErr: m.HeadersErr,
		})
	}
	sortMessages(out)
	return out, nil
}

// Close implements Reader.
func (ServerReader) Close() error { return nil }

// ClientReader reads a real Iggy server, 0.8 or 0.9, with this repository's
// own client (package iggy), which finds the server's protocol at connect.
type ClientReader struct {
	mu   sync.Mutex
	opts iggy.Options
	c    *iggy.Conn // nil until dialled; redialled once broken
	info iggy.ServerInfo
	// closed is set by Close; later calls fail.
	closed bool
}

// errReaderClosed is returned by a ClientReader's methods after Close.
var errReaderClosed = errors.New("the Iggy reader is closed")

// readerTimeout bounds connecting and every request of a ClientReader.
const readerTimeout = 30 * time.Second

// NewClientReader connects to addr and logs in.
func NewClientReader(addr, user, password string) (*ClientReader, error) {
	r := &ClientReader{opts: iggy.Options{
		Addr:        addr,
		Credentials: iggy.Credentials{Username: user, Password: password},
		Version:     iggy.VersionAuto,
		Timeout:     readerTimeout,
	}}
	if _, err := r.conn(); err != nil {
		return nil, err
	}
	return r, nil
}

// Info says what the login told about the server (its protocol version).
func (r *ClientReader) Info() iggy.ServerInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.info
}

// conn returns the connection, dialling again after a transport failure
// (which leaves an iggy.Conn closed). Call with r.mu held, or before r is
// shared.
func (r *ClientReader) conn() (*iggy.Conn, error) {
	if r.closed {
		return nil, errReaderClosed
	}
	if r.c != nil && !r.c.Broken() {
		return r.c, nil
	}
	if r.c != nil {
		_ = r.c.Close()
		r.c = nil
	}
	c, err := iggy.Dial(context.Background(), r.opts)
	if err != nil {
		return nil, err // it names the address (and the user)
	}
	r.c, r.info = c, c.Info()
	return c, nil
}

func ids(stream, topic string) (sid, tid iggy.Identifier, err error) {
	if sid, err = iggy.ParseIdentifier(stream); err != nil {
		return sid, tid, fmt.Errorf("stream %q: %w", stream, err)
	}
	if tid, err = iggy.ParseIdentifier(topic); err != nil {
		return sid, tid, fmt.Errorf("topic %q: %w", topic, err)
	}
	return sid, tid, nil
}

// topic reads a topic; nil (and no error) when the stream or the topic does
// not exist (yet).
func (r *ClientReader) topic(c *iggy.Conn, sid, tid iggy.Identifier) (*iggy.Topic, error) {
	t, err := c.GetTopic(context.Background(), sid, tid)
	if iggy.IsNotFound(err) {
		return nil, nil
	}
	return t, err
}

// partitionCount is the number of messages in a partition: the partition's
// current offset + 1, as a poll of one message from offset 0 reports it, or
// 0 when that poll finds nothing. (Neither protocol's topic reply, as package
// iggy decodes it, carries per-partition message counts.) It assumes that
// the partition's messages start at offset 0: nothing expired or deleted.
func partitionCount(c *iggy.Conn, sid, tid iggy.Identifier, p uint32) (uint64, error) {
	pm, err := c.Poll(context.Background(), &iggy.PollRequest{
		Stream: sid, Topic: tid, Partition: p, Strategy: iggy.PollOffset, Value: 0, Count: 1,
	})
	if err != nil {
		return 0, err
	}
	if pm == nil || len(pm.Messages) == 0 {
		return 0, nil
	}
	return pm.CurrentOffset + 1, nil
}

// Counts implements Reader. Every partition of an existing topic has an
// entry, 0 for an empty one.
func (r *ClientReader) Counts(stream, topic string) (map[uint32]uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[uint32]uint64{}
	sid, tid, err := ids(stream, topic)
	if err != nil {
		return out, err
	}
	c, err := r.conn()
	if err != nil {
		return out, err
	}
	t, err := r.topic(c, sid, tid)
	if err != nil || t == nil {
		return out, err
	}
	for p := uint32(0); p < t.Partitions; p++ { // 0-based in 0.8 and 0.9
		n, err := partitionCount(c, sid, tid, p)
		if err != nil {
			return out, fmt.Errorf("counting stream %q topic %q partition %d: %w", stream, topic, p, err)
		}
		out[p] = n
	}
	return out, nil
}

// pollBatch is how many messages one poll asks for.
const pollBatch = 5000

// Messages implements Reader.
func (r *ClientReader) Messages(stream, topic string) ([]Message, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sid, tid, err := ids(stream, topic)
	if err != nil {
		return nil, err
	}
	c, err := r.conn()
	if err != nil {
		return nil, err
	}
	t, err := r.topic(c, sid, tid)
	if err != nil || t == nil {
		return nil, err
	}
	var out []Message
	for p := uint32(0); p < t.Partitions; p++ {
		next := uint64(0)
		for {
			pm, err := c.Poll(context.Background(), &iggy.PollRequest{
				Stream: sid, Topic: tid, Partition: p, Strategy: iggy.PollOffset, Value: next, Count: pollBatch,
			})
			if err != nil {
				return nil, fmt.Errorf("polling stream %q topic %q partition %d at offset %d: %w", stream, topic, p, next, err)
			}
			if pm == nil || len(pm.Messages) == 0 {
				break
			}
			for i := range pm.Messages {
				m := &pm.Messages[i]
				if m.Offset < next {
					return nil, fmt.Errorf("polling stream %q topic %q partition %d at offset %d: got offset %d",
						stream, topic, p, next, m.Offset)
				}
				out = append(out, newMessage(p, m.Offset, m.ID, m.Payload, m.UserHeaders))
				next = m.Offset + 1
			}
			if next > pm.CurrentOffset {
				break
			}
		}
	}
	sortMessages(out)
	return out, nil
}

// newMessage makes a Message of a polled one, parsing its user headers.
func newMessage(p uint32, offset uint64, id [16]byte, payload, headers []byte) Message {
	m := Message{Partition: p, Offset: offset, ID: id, Payload: payload}
	if len(headers) > 0 {
		hs, err := iggytest.ParseUserHeaders(headers)
		m.HeadersErr = err
		m.Headers = map[string]iggytest.HeaderField{}
		for _, h := range hs {
			if h.Key.Kind == iggytest.HeaderString {
				m.Headers[string(h.Key.Value)] = h.Value
			}
		}
	}
	return m
}

// DeleteStream deletes a stream (for cleaning up after a test on a real
// server).
func (r *ClientReader) DeleteStream(stream string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	sid, err := iggy.ParseIdentifier(stream)
	if err != nil {
		return fmt.Errorf("stream %q: %w", stream, err)
	}
	c, err := r.conn()
	if err != nil {
		return err
	}
	return c.DeleteStream(context.Background(), sid)
}

// Close implements Reader.
func (r *ClientReader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if r.c == nil {
		return nil
	}
	err := r.c.Close()
	r.c = nil
	return err
}

func sortMessages(ms []Message) {
	sort.SliceStable(ms, func(i, j int) bool {
		if ms[i].Partition != ms[j].Partition {
			return ms[i].Partition < ms[j].Partition
		}
		return ms[i].Offset < ms[j].Offset
	})
}

// TotalCount sums per-partition counts.
func TotalCount(counts map[uint32]uint64) uint64 {
	var n uint64
	for _, c := range counts {
		n += c
	}
	return n
}

// TopicCount is a topic's name and message count.
type TopicCount struct {
	Name     string
	Messages uint64
}

// topicProbeGap is how many missing topic ids in a row end Topics' search.
const topicProbeGap = 8

// Topics lists the topics of a stream with their message counts, by name
// (nil when the stream does not exist). Package iggy has no request that
// lists topics, so Topics asks for topic ids 0, 1, 2, ... (0.9 numbers
// topics from 0, 0.8 from 1) until topicProbeGap ids in a row do not exist:
// topics behind a longer run of deleted ones are missed.
func (r *ClientReader) Topics(stream string) ([]TopicCount, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sid, err := iggy.ParseIdentifier(stream)
	if err != nil {
		return nil, fmt.Errorf("stream %q: %w", stream, err)
	}
	c, err := r.conn()
	if err != nil {
		return nil, err
	}
	var out []TopicCount
	for id, misses := uint32(0), 0; misses < topicProbeGap; id++ {
		t, err := r.topic(c, sid, iggy.NumericID(id))
		if iggy.CodeOf(err) != 0 || (err == nil && t == nil) {
			// A server error (0.8 may refuse id 0) or no such topic.
			if id > 0 {
				misses++
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		misses = 0
		tid := iggy.NumericID(id)
		n := uint64(0)
		for p := uint32(0); p < t.Partitions; p++ {
			k, err := partitionCount(c, sid, tid, p)
			if err != nil {
				return nil, fmt.Errorf("counting stream %q topic %q partition %d: %w", stream, t.Name, p, err)
			}
			n += k
		}
		out = append(out, TopicCount{Name: t.Name, Messages: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
