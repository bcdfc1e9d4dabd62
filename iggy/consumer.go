package iggy

import (
	"context"
	"errors"
	"fmt"
)

// Consumers, stored offsets and consumer groups.
//
// Both dialects carry a consumer as [kind u8: 1 consumer, 2 consumer group]
// [Identifier] and lay out the bodies alike: poll [consumer][stream][topic]
// [has partition u8][partition u32][strategy u8][value u64][count u32]
// [auto commit u8]; get offset [consumer][stream][topic][has partition u8]
// [partition u32]; store offset the same then [offset u64]; delete offset
// like get; create group [stream][topic][len u8]name; get, join, leave and
// delete group [stream][topic][group]. A group reply is [id u32]
// [partitions u32][members u32][len u8]name, then per member [id u32]
// [count u32][partition u32]*; an offset reply is [partition u32]
// [current offset u64][stored offset u64], and an empty body when nothing is
// stored (both dialects: server-0.8.0 core/server/src/binary/handlers/
// consumer_offsets/get_consumer_offset_handler.rs; server-0.9.0-edge.5
// core/server/src/dispatch.rs handle_get_consumer_offset). A stored offset
// is the last message processed: PollNext reads from the one after it, or
// from the oldest message when none is stored. A single consumer's offsets
// are its own per partition; a group's offsets are shared by its members,
// kept under the group (a member that takes a partition over continues
// where the previous one committed).
//
// Iggy 0.8 (server-0.8.0: core/binary_protocol/src/codes.rs; core/server/
// src/shard/system/{consumer_offsets,consumer_groups,utils}.rs,
// metadata/{consumer_group,reader,absorb}.rs): codes 120 get, 121 store,
// 122 delete offset, 600 get group, 602 create, 603 delete, 604 join, 605
// leave. A member is the connection that joined; the server assigns the
// topic's partitions to members round robin (a join hands partitions to
// the newcomer cooperatively, one per idle member, holding back a
// partition whose polled messages are not committed yet until they are or
// 30 s pass; a leave or a disconnect redistributes all of them). A member
// polls with partition "none" and the server picks its partitions in turn;
// storing a group offset needs the member to own the partition (else 3022
// ConsumerNotResolved; 5006 for a connection that is not a member; without
// a partition it is the one of the member's current turn, so this package
// always names one). Group ids are slab keys: a deleted group's is reused.
//
// Iggy 0.9 (iggy_binary_protocol 0.11.0: codes.rs, consensus/operation.rs,
// requests/consumer_*, responses/consumer_*; iggy_common 0.11.0:
// traits/binary_impls/{messages,consumer_groups}.rs,
// consumer_group_client_state.rs; iggy 0.11.0 vsr.rs; server-0.9.0-edge.5
// core/server/src/{dispatch,responses,consumer_group}.rs,
// core/metadata/src/stm/{consumer_group,stream,result}.rs): get offset
// (120), get group (600) and sync group (606) are NonReplicated reads;
// store and delete offset are partition operations 161 and 162 (a new
// request number each, no request checksum, a result section in the reply,
// a trailing ack byte, 1 = quorum, and an explicit partition); create,
// delete, join and leave group are metadata operations 139, 140, 148, 149
// (a new request number, the checksum stamped, a result section; create
// answers the group). A join hands the newcomer its fair share at once,
// except partitions with polled, uncommitted messages, which wait for the
// commit or 30 s; group ids are never reused. The server never picks a
// partition for a poll: the
// client reads its assignment with sync group ([stream][topic][group] ->
// [generation u64][count u32][partition u32]*, an empty body for a
// non-member) and polls those partitions in turn with explicit ids, as the
// released SDK does; a poll of a partition the member no longer owns is
// answered with no messages and partition 4294967295, the sign to read the
// assignment again. Offsets of a group need a partition the member owns;
// anything that does not resolve, that included, is status 20. Members are
// evicted after 36 s without a request ([heartbeat], on by default), so a
// member must ping when idle.

// Consumer is who reads a partition: a single consumer, with offsets of its
// own, or a member of a consumer group, sharing the group's.
type Consumer struct {
	Kind uint8 // ConsumerKindSingle or ConsumerKindGroup
	ID   Identifier
}

// Consumer kinds on the wire.
const (
	ConsumerKindSingle uint8 = 1
	ConsumerKindGroup  uint8 = 2
)

// SingleConsumer is a consumer with offsets of its own.
func SingleConsumer(id Identifier) Consumer { return Consumer{Kind: ConsumerKindSingle, ID: id} }

// GroupConsumer is a member of the consumer group id.
func GroupConsumer(id Identifier) Consumer { return Consumer{Kind: ConsumerKindGroup, ID: id} }

// reader returns who reads for r: As, or single consumer r.Consumer.
func (r *PollRequest) reader() Consumer {
	if r.As.Kind == 0 && len(r.As.ID.Value) == 0 {
		return SingleConsumer(NumericID(r.Consumer))
	}
	return r.As
}

// String names the consumer for messages.
func (c Consumer) String() string {
	if c.Kind == ConsumerKindGroup {
		return "consumer group " + c.ID.String()
	}
	return "consumer " + c.ID.String()
}

func (c Consumer) appendTo(b []byte) []byte { return c.ID.appendTo(append(b, c.Kind)) }

func (c Consumer) wireLen() int { return 1 + c.ID.wireLen() }

// checkConsumer refuses a consumer the servers cannot decode.
func checkConsumer(c Consumer) error {
	if c.Kind != ConsumerKindSingle && c.Kind != ConsumerKindGroup {
		return fmt.Errorf("consumer kind %d: want 1 (consumer) or 2 (consumer group)", c.Kind)
	}
	return checkIDs(c.ID)
}

// checkIDs refuses identifiers the servers cannot decode.
func checkIDs(ids ...Identifier) error {
	for _, id := range ids {
		switch {
		case id.Kind == KindNumeric && len(id.Value) == 4:
		case id.Kind == KindName && len(id.Value) > 0 && len(id.Value) <= 255:
		default:
			return fmt.Errorf("invalid identifier (kind %d, %d bytes)", id.Kind, len(id.Value))
		}
	}
	return nil
}

// offsetTarget names a consumer's offset in one partition.
type offsetTarget struct {
	consumer      Consumer
	stream, topic Identifier
	partition     uint32
}

func (t *offsetTarget) wireLen() int {
	return t.consumer.wireLen() + t.stream.wireLen() + t.topic.wireLen() + 5
}

// appendTo appends [consumer][stream][topic][1][partition u32].
func (t *offsetTarget) appendTo(b []byte) []byte {
	b = t.topic.appendTo(t.stream.appendTo(t.consumer.appendTo(b)))
	return le.AppendUint32(append(b, 1), t.partition)
}

// appendPollBody appends a poll request's body; partition is sent as
// "none" when the server is to pick it (0.8 group members).
func appendPollBody(b []byte, r *PollRequest, partition uint32, none bool) []byte {
	b = r.Topic.appendTo(r.Stream.appendTo(r.reader().appendTo(b)))
	if none {
		b = le.AppendUint32(append(b, 0), 0)
	} else {
		b = le.AppendUint32(append(b, 1), partition)
	}
	b = le.AppendUint64(append(b, byte(r.Strategy)), r.Value)
	return append(le.AppendUint32(b, r.Count), boolByte(r.AutoCommit))
}

func pollBodyLen(r *PollRequest) int {
	return r.reader().wireLen() + r.Stream.wireLen() + r.Topic.wireLen() + 5 + 9 + 4 + 1
}

// checkPoll refuses a poll the servers cannot decode.
func checkPoll(r *PollRequest) error {
	if r.Strategy < PollOffset || r.Strategy > PollNext {
		return fmt.Errorf("unknown polling strategy %d", r.Strategy)
	}
	if r.Assigned && r.As.Kind != ConsumerKindGroup {
		return errors.New("only a consumer group member polls its assigned partitions")
	}
	if err := checkConsumer(r.reader()); err != nil {
		return err
	}
	return checkIDs(r.Stream, r.Topic)
}

// ConsumerGroup is a consumer group of a topic as the server reports it.
type ConsumerGroup struct {
	ID         uint32
	Name       string
	Partitions uint32 // the topic's partition count
	Members    []GroupMember
}

// GroupMember is one member of a consumer group and the partitions the
// server assigned it.
type GroupMember struct {
	ID         uint32
	Partitions []uint32
}

// decodeGroup reads [id u32][partitions u32][members u32][len u8]name and
// then, when withMembers, per member [id u32][count u32][partition u32]*.
// The layout is the same in both dialects.
func decodeGroup(b []byte, withMembers bool) (*ConsumerGroup, error) {
	if len(b) < 13 || len(b) < 13+int(b[12]) || b[12] == 0 {
		return nil, fmt.Errorf("a consumer group of %d bytes, too short", len(b))
	}
	g := &ConsumerGroup{ID: le.Uint32(b), Partitions: le.Uint32(b[4:]), Name: string(b[13 : 13+int(b[12])])}
	members := le.Uint32(b[8:])
	if !withMembers {
		return g, nil
	}
	pos := 13 + int(b[12])
	if uint64(members) > uint64(len(b)-pos)/8 {
		return nil, fmt.Errorf("consumer group %q: %d members cannot fit in %d bytes", g.Name, members, len(b)-pos)
	}
	g.Members = make([]GroupMember, members)
	for i := range g.Members {
		if len(b)-pos < 8 {
			return nil, fmt.Errorf("consumer group %q: member %d runs past the %d-byte reply", g.Name, i, len(b))
		}
		m := GroupMember{ID: le.Uint32(b[pos:])}
		n := le.Uint32(b[pos+4:])
		pos += 8
		if uint64(n) > uint64(len(b)-pos)/4 {
			return nil, fmt.Errorf("consumer group %q: member %d has %d partitions in %d bytes", g.Name, m.ID, n, len(b)-pos)
		}
		m.Partitions = make([]uint32, n)
		for j := range m.Partitions {
			m.Partitions[j] = le.Uint32(b[pos:])
			pos += 4
		}
		g.Members[i] = m
	}
	return g, nil
}

// decodeOffset reads an offset reply: [partition u32][current offset u64]
// [stored offset u64], or nothing when no offset is stored.
func decodeOffset(b []byte) (offset uint64, stored bool, err error) {
	switch len(b) {
	case 0:
		return 0, false, nil
	case 20:
		return le.Uint64(b[12:]), true, nil
	}
	return 0, false, fmt.Errorf("an offset reply of %d bytes, not 20", len(b))
}

// groupOp is a request on a consumer group that answers nothing.
type groupOp uint8

const (
	groupJoin groupOp = iota + 1
	groupLeave
	groupDelete
)

func (o groupOp) verb() string {
	switch o {
	case groupJoin:
		return "joining"
	case groupLeave:
		return "leaving"
	}
	return "deleting"
}

// StoreOffset stores offset as the last message consumer processed in a
// partition. A group member may store only for a partition assigned to it.
func (c *Conn) StoreOffset(ctx context.Context, consumer Consumer, stream, topic Identifier, partition uint32, offset uint64) error {
	t := offsetTarget{consumer: consumer, stream: stream, topic: topic, partition: partition}
	return c.onOffset(ctx, fmt.Sprintf("storing offset %d", offset), &t, func() error {
		return c.d.storeOffset(&c.w, &t, offset)
	})
}

// GetOffset reads the offset consumer stored in a partition; stored is
// false when there is none.
func (c *Conn) GetOffset(ctx context.Context, consumer Consumer, stream, topic Identifier, partition uint32) (offset uint64, stored bool, err error) {
	t := offsetTarget{consumer: consumer, stream: stream, topic: topic, partition: partition}
	err = c.onOffset(ctx, "reading the offset", &t, func() error {
		body, err := c.d.getOffset(&c.w, &t)
		if err != nil {
			return err
		}
		if offset, stored, err = decodeOffset(body); err != nil {
			return fmt.Errorf("iggy at %s: %w", c.w.addr, err)
		}
		return nil
	})
	return offset, stored, err
}

// DeleteOffset deletes the offset consumer stored in a partition (error
// 3021 when there is none).
func (c *Conn) DeleteOffset(ctx context.Context, consumer Consumer, stream, topic Identifier, partition uint32) error {
	t := offsetTarget{consumer: consumer, stream: stream, topic: topic, partition: partition}
	return c.onOffset(ctx, "deleting the offset", &t, func() error { return c.d.deleteOffset(&c.w, &t) })
}

// onOffset runs fn, a request on the offset t, after checking t; what says
// what it does.
func (c *Conn) onOffset(ctx context.Context, what string, t *offsetTarget, fn func() error) error {
	what = fmt.Sprintf("%s of %s in stream %s topic %s partition %d", what, t.consumer, t.stream, t.topic, t.partition)
	err := checkConsumer(t.consumer)
	if err == nil {
		err = checkIDs(t.stream, t.topic)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return c.do(ctx, what, fn)
}

// CreateConsumerGroup creates a consumer group in a topic and returns it
// (without members).
func (c *Conn) CreateConsumerGroup(ctx context.Context, stream, topic Identifier, name string) (*ConsumerGroup, error) {
	what := fmt.Sprintf("creating consumer group %s in stream %s topic %s", name, stream, topic)
	if len(name) == 0 || len(name) > 255 {
		return nil, fmt.Errorf("%s: names must be 1 to 255 bytes", what)
	}
	return c.readGroup(ctx, what, false, func() ([]byte, error) { return c.d.createGroup(&c.w, stream, topic, name) }, stream, topic)
}

// GetConsumerGroup reads a consumer group and its members; it returns
// (nil, nil) when the stream, the topic or the group does not exist.
func (c *Conn) GetConsumerGroup(ctx context.Context, stream, topic, group Identifier) (*ConsumerGroup, error) {
	what := fmt.Sprintf("reading consumer group %s of stream %s topic %s", group, stream, topic)
	g, err := c.readGroup(ctx, what, true, func() ([]byte, error) { return c.d.getGroup(&c.w, stream, topic, group) }, stream, topic, group)
	if IsNotFound(err) {
		return nil, nil // 0.9 answers a missing stream or topic so
	}
	return g, err
}

// readGroup checks ids, runs fn and decodes the group it answers (nil for
// an empty answer).
func (c *Conn) readGroup(ctx context.Context, what string, members bool, fn func() ([]byte, error), ids ...Identifier) (*ConsumerGroup, error) {
	if err := checkIDs(ids...); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var g *ConsumerGroup
	err := c.do(ctx, what, func() error {
		body, err := fn()
		if err != nil || len(body) == 0 {
			return err
		}
		if g, err = decodeGroup(body, members); err != nil {
			return fmt.Errorf("iggy at %s: consumer group reply: %w", c.w.addr, err)
		}
		return nil
	})
	return g, err
}

// JoinConsumerGroup makes this connection a member of a consumer group;
// joining again changes nothing. The membership is the connection's: poll
// and store the group's offsets on this Conn (not on any of a Pool's),
// ping it when idle (Iggy 0.9 drops members silent for 36 s), and closing
// it leaves the group.
func (c *Conn) JoinConsumerGroup(ctx context.Context, stream, topic, group Identifier) error {
	return c.groupOp(ctx, groupJoin, stream, topic, group)
}

// LeaveConsumerGroup ends this connection's membership (error 5006 when it
// is not a member).
func (c *Conn) LeaveConsumerGroup(ctx context.Context, stream, topic, group Identifier) error {
	return c.groupOp(ctx, groupLeave, stream, topic, group)
}

// DeleteConsumerGroup deletes a consumer group, its members' memberships
// and its stored offsets.
func (c *Conn) DeleteConsumerGroup(ctx context.Context, stream, topic, group Identifier) error {
	return c.groupOp(ctx, groupDelete, stream, topic, group)
}

func (c *Conn) groupOp(ctx context.Context, op groupOp, stream, topic, group Identifier) error {
	what := fmt.Sprintf("%s consumer group %s of stream %s topic %s", op.verb(), group, stream, topic)
	if err := checkIDs(stream, topic, group); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return c.do(ctx, what, func() error { return c.d.groupOp(&c.w, op, stream, topic, group) })
}
