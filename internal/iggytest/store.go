package iggytest

import "time"

// slab hands out IDs like the Rust slab the server keeps its streams and
// topics in: the lowest never-used index, unless an ID was freed, in which
// case the most recently freed one.
type slab[T any] struct {
	items []*T
	free  []uint32
}

func (s *slab[T]) insert(v *T) uint32 {
	if n := len(s.free); n > 0 {
		id := s.free[n-1]
		s.free = s.free[:n-1]
		s.items[id] = v
		return id
	}
	s.items = append(s.items, v)
	return uint32(len(s.items) - 1)
}

// retire removes id for good: it is never handed out again (0.9 consumer
// group ids).
func (s *slab[T]) retire(id uint32) {
	if s.get(id) != nil {
		s.items[id] = nil
	}
}

func (s *slab[T]) get(id uint32) *T {
	if int64(id) >= int64(len(s.items)) {
		return nil
	}
	return s.items[id]
}

func (s *slab[T]) remove(id uint32) {
	if s.get(id) == nil {
		return
	}
	s.items[id] = nil
	s.free = append(s.free, id)
}

// each calls f for every entry in ID order.
func (s *slab[T]) each(f func(id uint32, v *T)) {
	for i, v := range s.items {
		if v != nil {
			f(uint32(i), v)
		}
	}
}

func (s *slab[T]) len() int {
	n := 0
	for _, v := range s.items {
		if v != nil {
			n++
		}
	}
	return n
}

type store struct {
	streams slab[stream]
	byName  map[string]uint32
}

func newStore() *store { return &store{byName: map[string]uint32{}} }

type stream struct {
	id        uint32
	name      string
	createdAt uint64
	topics    slab[topic]
	byName    map[string]uint32
}

// topicConfig is a topic's name and resolved settings.
type topicConfig struct {
	name              string
	compression       uint8  // 1 none, 2 gzip
	messageExpiry     uint64 // microseconds; u64::MAX: never
	maxTopicSize      uint64 // bytes; u64::MAX: unlimited
	replicationFactor uint8  // 0.8 only
	// The per-topic settings of a 0.9 server (topic options).
	segmentSize uint64
	// persisted is the durability policy persisted: the server saves every
	// message before it answers its send, so a crash loses none.
	persisted              bool
	offsetsPersisted       bool   // consumer_offset_durability: persisted
	messagesRequiredToSave uint32 // 0: Options.MessagesRequiredToSave
	sizeToSave             uint64 // size_of_messages_required_to_save
	preallocate            bool
	// explicitOptions is the options block a 0.9 CreateTopic set, as the
	// server stores it; the other options are reported as derived.
	explicitOptions []byte
}

type topic struct {
	topicConfig
	id          uint32
	streamID    uint32
	createdAt   uint64
	partitions  []*partition
	roundRobin  uint64
	groups      slab[group]
	groupByName map[string]uint32
}

type partition struct {
	id        uint32
	createdAt uint64
	msgs      []storedMessage // contiguous offsets from first
	first     uint64          // offset of msgs[0] (next offset when empty)
	next      uint64          // offset the next message gets
	sizeBytes uint64
	offsets   map[uint64]uint64 // consumer ID -> stored offset
	// groupOffsets are the consumer groups' stored offsets and
	// groupPolled the offset of the last message each group polled, by
	// group ID.
	groupOffsets map[uint64]uint64
	groupPolled  map[uint32]uint64
	// unsaved is how many of the newest messages are still in the unsaved
	// buffer: a crash loses them.
	unsaved int
}

// storedMessage is one message as the server keeps it: in the wire form
// of the dialect that sent it, with the fields the server set.
type storedMessage struct {
	// raw is the 0.8 message (64-byte header, payload, user headers) or,
	// when batch is set, the 0.9 frame (48-byte header, payload, user
	// headers) exactly as sent and returned by polls.
	raw       []byte
	batch     *batchInfo // the 0.9 batch the message came in; nil for 0.8
	offset    uint64
	timestamp uint64 // set by the server, microseconds
}

// batchInfo is what a 0.9 server stamps on a stored batch.
type batchInfo struct {
	partitionID   uint32
	baseOffset    uint64
	baseTimestamp uint64
	origin        uint64 // origin timestamp of the batch (the smallest)
	count         uint32
}

// currentOffset is the partition's offset as the server reports it: the
// offset of the last message, 0 when there has never been one.
func (p *partition) currentOffset() uint64 {
	if p.next == 0 {
		return 0
	}
	return p.next - 1
}

func (p *partition) messagesCount() uint64 { return uint64(len(p.msgs)) }

func nowMicros() uint64 { return uint64(time.Now().UnixMicro()) }

func newPartition(id uint32) *partition {
	return &partition{id: id, createdAt: nowMicros(), offsets: map[uint64]uint64{},
		groupOffsets: map[uint64]uint64{}, groupPolled: map[uint32]uint64{}}
}

func (st *stream) stats() (size, count uint64) {
	st.topics.each(func(_ uint32, t *topic) {
		s, c := t.stats()
		size += s
		count += c
	})
	return size, count
}

func (t *topic) stats() (size, count uint64) {
	for _, p := range t.partitions {
		size += p.sizeBytes
		count += p.messagesCount()
	}
	return size, count
}

// ident is a decoded Iggy identifier: a numeric ID or a name.
type ident struct {
	numeric bool
	id      uint32
	name    string
}

func (d *store) stream(id ident) *stream { return lookup(&d.streams, d.byName, id) }

func (st *stream) topic(id ident) *topic { return lookup(&st.topics, st.byName, id) }

// lookup finds an entry of s by its ID or, through byName, its name.
func lookup[T any](s *slab[T], byName map[string]uint32, id ident) *T {
	if id.numeric {
		return s.get(id.id)
	}
	n, ok := byName[id.name]
	if !ok {
		return nil
	}
	return s.get(n)
}

func (d *store) createStream(name string) *stream {
	st := &stream{name: name, createdAt: nowMicros(), byName: map[string]uint32{}}
	st.id = d.streams.insert(st)
	d.byName[name] = st.id
	return st
}

func (d *store) deleteStream(st *stream) {
	delete(d.byName, st.name)
	d.streams.remove(st.id)
}

// defaultTopicConfig is a topic with the server's default settings: no
// compression, no expiry, unlimited size, 1 GiB segments.
func defaultTopicConfig(name string) topicConfig {
	return topicConfig{
		name: name, compression: 1, messageExpiry: unlimited, maxTopicSize: unlimited,
		replicationFactor: 1, segmentSize: defaultSegmentSize, sizeToSave: defaultSizeToSave,
	}
}

func (st *stream) createTopic(cfg topicConfig, partitions uint32) *topic {
	t := &topic{topicConfig: cfg, streamID: st.id, createdAt: nowMicros()}
	t.id = st.topics.insert(t)
	st.byName[cfg.name] = t.id
	t.addPartitions(partitions)
	return t
}

func (st *stream) deleteTopic(t *topic) {
	delete(st.byName, t.name)
	st.topics.remove(t.id)
}

func (t *topic) addPartitions(n uint32) {
	for i := uint32(0); i < n; i++ {
		t.partitions = append(t.partitions, newPartition(uint32(len(t.partitions))))
	}
}

func (t *topic) partition(id uint32) *partition {
	if int64(id) >= int64(len(t.partitions)) {
		return nil
	}
	return t.partitions[id]
}

// append stores prepared messages (offsets, timestamps, IDs and checksums
// already set), applies the retention cap and saves the unsaved buffer
// once saveAt messages wait in it (0: at once).
func (p *partition) append(msgs []storedMessage, keep, saveAt int) {
	for _, m := range msgs {
		p.msgs = append(p.msgs, m)
		p.sizeBytes += uint64(len(m.raw))
		p.next++
	}
	p.unsaved += len(msgs)
	if saveAt <= 0 || p.unsaved >= saveAt {
		p.unsaved = 0
	}
	if keep > 0 && len(p.msgs) > keep {
		drop := len(p.msgs) - keep
		for _, m := range p.msgs[:drop] {
			p.sizeBytes -= uint64(len(m.raw))
		}
		// A reslice, not a copy: the next append that outgrows the array
		// copies only the kept window, so trimming costs O(1) per message.
		clear(p.msgs[:drop])
		p.msgs = p.msgs[drop:]
		p.first += uint64(drop)
	}
}

// dropUnsaved loses the unsaved buffer, as a crash does: the next message
// gets the offset after the last saved one.
func (p *partition) dropUnsaved() {
	if p.unsaved == 0 {
		return
	}
	lost := min(p.unsaved, len(p.msgs))
	for _, m := range p.msgs[len(p.msgs)-lost:] {
		p.sizeBytes -= uint64(len(m.raw))
	}
	p.msgs = p.msgs[:len(p.msgs)-lost]
	p.next -= uint64(p.unsaved)
	p.first = min(p.first, p.next)
	p.unsaved = 0
}

// eachPartition calls f for every partition of every topic.
func (d *store) eachPartition(f func(*partition)) {
	d.streams.each(func(_ uint32, st *stream) {
		st.topics.each(func(_ uint32, t *topic) {
			for _, p := range t.partitions {
				f(p)
			}
		})
	})
}

// saveAll saves every unsaved message (a clean shutdown).
func (d *store) saveAll() { d.eachPartition(func(p *partition) { p.unsaved = 0 }) }

// dropUnsaved loses every unsaved message (a crash).
func (d *store) dropUnsaved() { d.eachPartition((*partition).dropUnsaved) }

// from returns up to count messages starting at offset (clamped to the
// oldest kept message).
func (p *partition) from(offset uint64, count uint32) []storedMessage {
	if offset < p.first {
		offset = p.first
	}
	if offset >= p.next || count == 0 {
		return nil
	}
	i := offset - p.first
	j := min(i+uint64(count), uint64(len(p.msgs)))
	return p.msgs[i:j]
}

// fromTimestamp returns up to count messages whose timestamp is at least ts.
func (p *partition) fromTimestamp(ts uint64, count uint32) []storedMessage {
	for i, m := range p.msgs {
		if m.timestamp >= ts {
			j := min(uint64(i)+uint64(count), uint64(len(p.msgs)))
			return p.msgs[i:j]
		}
	}
	return nil
}
