package iggytest

import (
	"encoding/binary"
	"time"
)

// slab hands out IDs like the Rust slab the server keeps its streams and
// topics in: the lowest never-used index, unless an ID was freed, in which
// case the most recently freed one.
type slab[T any] struct {
	items []*T
	free  []uint32
}

func (s *slab[T]) next() uint32 {
	if n := len(s.free); n > 0 {
		return s.free[n-1]
	}
	return uint32(len(s.items))
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

type topic struct {
	id                uint32
	streamID          uint32
	name              string
	createdAt         uint64
	partitions        []*partition
	messageExpiry     uint64
	maxTopicSize      uint64
	compression       uint8
	replicationFactor uint8
	roundRobin        uint64
}

type partition struct {
	id        uint32
	createdAt uint64
	msgs      []storedMessage // contiguous offsets from first
	first     uint64          // offset of msgs[0] (next offset when empty)
	next      uint64          // offset the next message gets
	sizeBytes uint64
	offsets   map[uint64]uint64 // consumer ID -> stored offset
}

// storedMessage is one message exactly as the server keeps and returns it:
// 64-byte header, payload, user headers.
type storedMessage []byte

func (m storedMessage) offset() uint64    { return binary.LittleEndian.Uint64(m[24:32]) }
func (m storedMessage) timestamp() uint64 { return binary.LittleEndian.Uint64(m[32:40]) }

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
	return &partition{id: id, createdAt: nowMicros(), offsets: map[uint64]uint64{}}
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

func (d *store) stream(id ident) *stream {
	if id.numeric {
		return d.streams.get(id.id)
	}
	n, ok := d.byName[id.name]
	if !ok {
		return nil
	}
	return d.streams.get(n)
}

func (st *stream) topic(id ident) *topic {
	if id.numeric {
		return st.topics.get(id.id)
	}
	n, ok := st.byName[id.name]
	if !ok {
		return nil
	}
	return st.topics.get(n)
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

func (st *stream) createTopic(name string, partitions uint32, compression uint8, expiry, maxSize uint64, replication uint8) *topic {
	t := &topic{
		streamID:          st.id,
		name:              name,
		createdAt:         nowMicros(),
		messageExpiry:     expiry,
		maxTopicSize:      maxSize,
		compression:       compression,
		replicationFactor: replication,
	}
	t.id = st.topics.insert(t)
	st.byName[name] = t.id
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
// already set) and applies the retention cap.
func (p *partition) append(msgs []storedMessage, keep int) {
	for _, m := range msgs {
		p.msgs = append(p.msgs, m)
		p.sizeBytes += uint64(len(m))
		p.next++
	}
	if keep > 0 && len(p.msgs) > keep {
		drop := len(p.msgs) - keep
		for _, m := range p.msgs[:drop] {
			p.sizeBytes -= uint64(len(m))
		}
		p.msgs = append([]storedMessage(nil), p.msgs[drop:]...)
		p.first += uint64(drop)
	}
}

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
		if m.timestamp() >= ts {
			j := min(uint64(i)+uint64(count), uint64(len(p.msgs)))
			return p.msgs[i:j]
		}
	}
	return nil
}
