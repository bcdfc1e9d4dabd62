package e2e

import (
	"fmt"
	"io"
	"log"
	"sort"
	"sync"

	"github.com/apache/iggy/foreign/go/client"
	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"

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
// (ServerReader) or a real server through the Go SDK (SDKReader).
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

// SDKReader reads a real Iggy 0.8 server with the Go SDK.
type SDKReader struct {
	mu sync.Mutex
	cl iggcon.Client
}

var quietSDK sync.Once

// NewSDKReader connects to addr and logs in.
func NewSDKReader(addr, user, password string) (*SDKReader, error) {
	// The SDK logs every login through the standard logger.
	quietSDK.Do(func() { log.SetOutput(io.Discard) })
	cl, err := client.NewIggyClient(client.WithTcp(tcp.WithServerAddress(addr)))
	if err != nil {
		return nil, fmt.Errorf("connecting to Iggy at %s: %w", addr, err)
	}
	if _, err := cl.LoginUser(user, password); err != nil {
		_ = cl.Close()
		return nil, fmt.Errorf("logging in to Iggy at %s as %q: %w", addr, user, err)
	}
	return &SDKReader{cl: cl}, nil
}

func (r *SDKReader) topic(stream, topic string) (*iggcon.TopicDetails, iggcon.Identifier, iggcon.Identifier, error) {
	sid, err := iggcon.NewIdentifier(stream)
	if err != nil {
		return nil, sid, sid, fmt.Errorf("stream %q: %w", stream, err)
	}
	tid, err := iggcon.NewIdentifier(topic)
	if err != nil {
		return nil, sid, tid, fmt.Errorf("topic %q: %w", topic, err)
	}
	td, err := r.cl.GetTopic(sid, tid)
	if err != nil || td == nil || td.Name == "" {
		// A missing stream or topic: nothing arrived yet.
		return nil, sid, tid, nil
	}
	return td, sid, tid, nil
}

// Counts implements Reader.
func (r *SDKReader) Counts(stream, topic string) (map[uint32]uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[uint32]uint64{}
	td, _, _, err := r.topic(stream, topic)
	if err != nil || td == nil {
		return out, err
	}
	for _, p := range td.Partitions {
		out[p.Id] = p.MessagesCount
	}
	return out, nil
}

// pollBatch is how many messages one poll asks for.
const pollBatch = 5000

// Messages implements Reader.
func (r *SDKReader) Messages(stream, topic string) ([]Message, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	td, sid, tid, err := r.topic(stream, topic)
	if err != nil || td == nil {
		return nil, err
	}
	var out []Message
	for _, p := range td.Partitions {
		pid := p.Id
		next := uint64(0)
		for next < p.MessagesCount {
			pm, err := r.cl.PollMessages(sid, tid, iggcon.DefaultConsumer(), iggcon.OffsetPollingStrategy(next), pollBatch, false, &pid)
			if err != nil {
				return nil, fmt.Errorf("polling stream %q topic %q partition %d at offset %d: %w", stream, topic, pid, next, err)
			}
			if pm == nil || len(pm.Messages) == 0 {
				break
			}
			for _, m := range pm.Messages {
				msg := Message{Partition: pid, Offset: m.Header.Offset, ID: m.Header.Id, Payload: m.Payload}
				if len(m.UserHeaders) > 0 {
					hs, herr := iggytest.ParseUserHeaders(m.UserHeaders)
					msg.HeadersErr = herr
					msg.Headers = map[string]iggytest.HeaderField{}
					for _, h := range hs {
						if h.Key.Kind == iggytest.HeaderString {
							msg.Headers[string(h.Key.Value)] = h.Value
						}
					}
				}
				out = append(out, msg)
				next = m.Header.Offset + 1
			}
		}
	}
	sortMessages(out)
	return out, nil
}

// DeleteStream deletes a stream (for cleaning up after a test on a real server).
func (r *SDKReader) DeleteStream(stream string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	sid, err := iggcon.NewIdentifier(stream)
	if err != nil {
		return err
	}
	return r.cl.DeleteStream(sid)
}

// Close implements Reader.
func (r *SDKReader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cl == nil {
		return nil
	}
	err := r.cl.Close()
	r.cl = nil
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

// Topics lists the topics of a stream (nil when the stream does not exist).
func (r *SDKReader) Topics(stream string) ([]TopicCount, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sid, err := iggcon.NewIdentifier(stream)
	if err != nil {
		return nil, fmt.Errorf("stream %q: %w", stream, err)
	}
	ts, err := r.cl.GetTopics(sid)
	if err != nil {
		return nil, nil
	}
	out := make([]TopicCount, 0, len(ts))
	for _, t := range ts {
		out = append(out, TopicCount{Name: t.Name, Messages: t.MessagesCount})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
