package oracle

import (
	"fmt"
	"math"
	"strings"

	"github.com/OneOfOne/xxhash"
)

// Option keys and the defaults the peer derives for keys a create-topic
// request leaves out (iggy_common-0.11.0 src/types/options/mod.rs:
// topic_option_keys, DEFAULT_*; durability.rs). Derived blocks are sorted
// by key, as the server's BTreeMap keeps them.
var derivedDefaults = []struct {
	key   string
	kind  byte
	value []byte
}{
	{"compression_algorithm", headerKindString, []byte("none")},
	{"consumer_offset_durability", headerKindString, []byte("replicated")},
	{"durability", headerKindString, []byte("replicated")},
	{"max_topic_size", headerKindUint64, le.AppendUint64(nil, math.MaxUint64)},
	{"message_expiry", headerKindUint64, le.AppendUint64(nil, math.MaxUint64)},
	{"segment_size", headerKindUint64, le.AppendUint64(nil, 1<<30)},
}

// createTopic answers operation 132 with the new topic; the reply echoes
// operation 64 (CreateTopicWithAssignments), as a 0.9 server replicates it.
func (p *peer) createTopic(r *request) []byte {
	s := p.findStream(r)
	if s == nil {
		return p.replicated(r, opCreateTopicAssignment, nil, errStreamIDNotFound)
	}
	name := string(r.get("topic.name"))
	for _, t := range s.topics {
		if t.name == name {
			return p.replicated(r, opCreateTopicAssignment, nil, errTopicNameExists)
		}
	}
	t := &peerTopic{id: uint32(len(s.topics) + 1), name: name, expiry: math.MaxUint64, maxSize: math.MaxUint64}
	for i := le.Uint32(r.get("topic.partitions")); i > 0; i-- {
		t.parts = append(t.parts, &peerPartition{})
	}
	if f := firstOption(r); f >= 0 {
		t.explicit = r.raw[f:]
	}
	for _, d := range derivedDefaults {
		v := r.get("options[" + d.key + "].value")
		switch {
		case v == nil:
			t.derived = appendOption(t.derived, d.key, d.kind, d.value)
		case d.key == "message_expiry" && len(v) == 8:
			t.expiry = le.Uint64(v)
		case d.key == "max_topic_size" && len(v) == 8:
			t.maxSize = le.Uint64(v)
		}
	}
	s.topics = append(s.topics, t)
	return p.replicated(r, opCreateTopicAssignment, appendTopic(resultOK(), t), 0)
}

// firstOption returns where the options of a create request start, or -1.
func firstOption(r *request) int {
	for _, f := range r.fields {
		if strings.HasPrefix(f.name, "options[") {
			return f.off
		}
	}
	return -1
}

// send answers operation 160: it stores the batch in the partition the
// partitioning names (Balanced round robin from 0, MessagesKey by
// XXH32(key) % partitions, as the SDK resolves them) and returns the
// receipt. The n-th request of the connection is named in problems.
func (p *peer) send(r *request, n int) []byte {
	s := p.findStream(r)
	if s == nil {
		return p.replicated(r, opSendMessages, nil, errStreamIDNotFound)
	}
	t := findTopic(r, s)
	if t == nil {
		return p.replicated(r, opSendMessages, nil, errTopicIDNotFound)
	}
	part, err := t.partitionFor(r)
	if err != nil {
		p.problems = append(p.problems, fmt.Sprintf("request %d, %s: %v", n, r, err))
		return p.replicated(r, opSendMessages, nil, errPartitionNotFound)
	}
	batch := batchOf(r)
	if err := checkSums(batch); err != nil {
		p.problems = append(p.problems, fmt.Sprintf("request %d, %s: %v", n, r, err))
		return p.replicated(r, opSendMessages, nil, errInvalidFormat)
	}
	client := string(r.raw[offClient : offClient+16])
	if last, ok := p.sends[client]; ok && r.number() <= last {
		p.problems = append(p.problems, fmt.Sprintf(
			"request %d, %s: reuses a request number at or below %d, an earlier send's; the 0.11.0 SDK takes a new number for every send "+
				"(vsr.rs: \"Partition dedup needs each new write to carry a distinct id\"), and a 0.9.0 server may answer it as a duplicate with an empty body",
			n, r, last))
	}
	p.sends[client] = max(p.sends[client], r.number())
	pp := t.parts[part]
	base := pp.next
	pp.batches = append(pp.batches, storeBatch(batch, part, base, peerCreated))
	pp.next += uint64(le.Uint32(batch[batchCount:]))
	return p.replicated(r, opSendMessages, sendReceipt(s.id, t.id, part, base), 0)
}

// partitionFor resolves the partitioning of a send to a partition index.
func (t *peerTopic) partitionFor(r *request) (uint32, error) {
	kind, value := r.get("partitioning.kind"), r.get("partitioning.value")
	var part uint32
	switch {
	case len(kind) == 1 && kind[0] == 1 && len(value) == 0:
		part = t.balanced % uint32(len(t.parts))
		t.balanced++
	case len(kind) == 1 && kind[0] == 2 && len(value) == 4:
		part = le.Uint32(value)
	case len(kind) == 1 && kind[0] == 3 && len(value) > 0:
		part = xxhash.Checksum32(value) % uint32(len(t.parts))
	default:
		return 0, fmt.Errorf("partitioning kind %v with %d value bytes", kind, len(value))
	}
	if int(part) >= len(t.parts) {
		return 0, fmt.Errorf("partition %d of a topic with %d", part, len(t.parts))
	}
	return part, nil
}

// poll answers code 100 with the stored batches of the partition from the
// polled offset on, whole batches up to count messages.
func (p *peer) poll(r *request) []byte {
	s := p.findStream(r)
	if s == nil {
		return replyHeader(r, opNonReplicated, 0, errStreamIDNotFound, 0)
	}
	t := findTopic(r, s)
	if t == nil {
		return replyHeader(r, opNonReplicated, 0, errTopicIDNotFound, 0)
	}
	part := le.Uint32(r.get("partition.id"))
	if r.get("partition.present")[0] == 0 {
		part = 0
	}
	if int(part) >= len(t.parts) {
		return replyHeader(r, opNonReplicated, 0, errPartitionNotFound, 0)
	}
	from := le.Uint64(r.get("strategy.value"))
	if r.get("strategy.kind")[0] != 1 { // only Offset is part of the scenario
		from = 0
	}
	pp, limit := t.parts[part], le.Uint32(r.get("count"))
	var batches [][]byte
	var count uint32
	for _, b := range pp.batches {
		if le.Uint64(b[batchBaseOffset:]) >= from && count < limit {
			batches = append(batches, b)
			count += le.Uint32(b[batchCount:])
		}
	}
	body := pollReply(part, pp.currentOffset(), count, batches)
	return append(replyHeader(r, opNonReplicated, 0, 0, len(body)), body...)
}

// sum adds f over xs.
func sum[T any](xs []T, f func(T) uint64) uint64 {
	var n uint64
	for _, x := range xs {
		n += f(x)
	}
	return n
}

func (s *peerStream) messages() uint64 { return sum(s.topics, (*peerTopic).messages) }

func (t *peerTopic) messages() uint64 {
	return sum(t.parts, func(p *peerPartition) uint64 { return p.next })
}

func (t *peerTopic) size() uint64 { return sum(t.parts, (*peerPartition).size) }

func (pp *peerPartition) size() uint64 {
	return sum(pp.batches, func(b []byte) uint64 { return uint64(len(b)) })
}

// currentOffset is the offset of the partition's last message, 0 when empty.
func (pp *peerPartition) currentOffset() uint64 {
	if pp.next == 0 {
		return 0
	}
	return pp.next - 1
}
