package iggy

import (
	"fmt"
	"math"
	"time"
)

// Stored offsets and consumer groups in the 0.9 dialect (see consumer.go).

// Operations and NonReplicated codes of offsets and groups
// (consensus/operation.rs, codes.rs).
const (
	v09OpCreateGroup  = 139
	v09OpDeleteGroup  = 140
	v09OpJoinGroup    = 148
	v09OpLeaveGroup   = 149
	v09OpStoreOffset  = 161
	v09OpDeleteOffset = 162
	v09CodeGetOffset  = 120
	v09CodeGetGroup   = 600
	v09CodeSyncGroup  = 606
)

// v09AckQuorum is the ack byte that ends store and delete offset requests:
// AckLevel::Quorum, what the released SDK sends.
const v09AckQuorum = 1

// v09ResyncPartition is the partition an empty poll reply names when the
// member polled a partition it no longer owns
// (iggy_common RESYNC_REQUIRED_PARTITION_SENTINEL).
const v09ResyncPartition = math.MaxUint32

// v09GroupSyncTTL bounds how long an assignment is trusted before a poll
// reads it again (the released SDK re-reads it on its 5 s heartbeat); it is
// also read again after every round of polls over its partitions, so that
// partitions a rebalance gave this member are polled in the next round.
const v09GroupSyncTTL = 5 * time.Second

// v09Assignment is what a session knows of its membership in one group.
type v09Assignment struct {
	member     bool
	generation uint64
	partitions []uint32
	cursor     int // the position of the next poll in partitions
	polls      int // polls since it was read
	synced     time.Time
}

// stale tells whether the assignment must be read before the next poll:
// a round of polls is over (or there are no partitions to poll) or it is
// older than v09GroupSyncTTL.
func (a *v09Assignment) stale() bool {
	return a.polls >= len(a.partitions) || time.Since(a.synced) > v09GroupSyncTTL
}

// storeOffset stores a consumer offset (operation 161, body
// [offset target][offset u64][ack u8]).
func (v *v09) storeOffset(w *wire, t *offsetTarget, offset uint64) error {
	return v.offsetWrite(w, v09OpStoreOffset, t, offset)
}

// deleteOffset deletes a consumer offset (operation 162, body
// [offset target][ack u8]).
func (v *v09) deleteOffset(w *wire, t *offsetTarget) error {
	return v.offsetWrite(w, v09OpDeleteOffset, t, 0)
}

// offsetWrite sends a partition operation on an offset: a new request
// number, no checksum, and a reply that is a result section. Status 58
// (nothing applied) is retried once with the same bytes.
func (v *v09) offsetWrite(w *wire, op uint8, t *offsetTarget, offset uint64) error {
	if v.session == 0 {
		return errV09NoSession
	}
	b := v.appendHeader(w.buf(v09HeaderBytes+t.wireLen()+9), op, 0, v.claim())
	b = t.appendTo(b)
	if op == v09OpStoreOffset {
		b = v09le.AppendUint64(b, offset)
	}
	req := v09Seal(append(b, v09AckQuorum), false)
	body, err := v.exchange(w, req, false)
	if v09RetryNotAccepted.shouldRetry(err) {
		time.Sleep(v09RetryPause)
		body, err = v.exchange(w, req, false)
	}
	if err != nil {
		return err
	}
	_, err = v09Result(body)
	return err
}

// getOffset reads a consumer offset (code 120, body [offset target]).
func (v *v09) getOffset(w *wire, t *offsetTarget) ([]byte, error) {
	b := v.appendHeader(w.buf(v09HeaderBytes+t.wireLen()), v09OpNonReplicated, v09CodeGetOffset, v.next)
	return v.exchange(w, v09Seal(t.appendTo(b), false), false)
}

// createGroup creates a group (operation 139, body [stream][topic]
// [len u8]name); the reply's payload is the group.
func (v *v09) createGroup(w *wire, stream, topic Identifier, name string) ([]byte, error) {
	b, err := v.startMetadata(w, v09OpCreateGroup, stream.wireLen()+topic.wireLen()+1+len(name))
	if err != nil {
		return nil, err
	}
	b = v09AppendName(topic.appendTo(stream.appendTo(b)), name)
	return v.metadata(w, v09Seal(b, true), v09RetryTransient)
}

// getGroup reads a group (code 600, body [stream][topic][group]): an
// empty body for a missing group, status 1009 or 2010 for a missing stream
// or topic.
func (v *v09) getGroup(w *wire, stream, topic, group Identifier) ([]byte, error) {
	b := v.appendHeader(w.buf(v09HeaderBytes+groupPathLen(stream, topic, group)), v09OpNonReplicated, v09CodeGetGroup, v.next)
	return v.exchange(w, v09Seal(appendGroupPath(b, stream, topic, group), false), false)
}

// groupOp joins, leaves or deletes a group (operations 148, 149, 140, body
// [stream][topic][group]); what this session knew of its assignment there
// is dropped.
func (v *v09) groupOp(w *wire, op groupOp, stream, topic, group Identifier) error {
	code := uint8(v09OpJoinGroup)
	switch op {
	case groupLeave:
		code = v09OpLeaveGroup
	case groupDelete:
		code = v09OpDeleteGroup
	}
	b, err := v.startMetadata(w, code, groupPathLen(stream, topic, group))
	if err != nil {
		return err
	}
	delete(v.groups, v09GroupKey(stream, topic, group))
	_, err = v.metadata(w, v09Seal(appendGroupPath(b, stream, topic, group), true), v09RetryTransient)
	return err
}

// v09GroupKey keys a session's assignments.
func v09GroupKey(stream, topic, group Identifier) string {
	var b [3 * 257]byte
	return string(appendGroupPath(b[:0], stream, topic, group))
}

// pollAssigned polls the next partition of the member's assignment, as
// the released SDK does (iggy_common 0.11.0 poll_group_messages): the
// assignment is read with sync group when not known or stale, its
// partitions are polled in turn, and a poll the
// server fences (the partition moved to another member) reads the
// assignment again and polls once more. A connection that is not a member
// gets ConsumerGroupMemberNotFound (5006), as from a 0.8 server; a member
// without partitions gets no messages.
func (v *v09) pollAssigned(w *wire, r *PollRequest) (*Polled, error) {
	key := v09GroupKey(r.Stream, r.Topic, r.As.ID)
	for attempt := 0; attempt < 2; attempt++ {
		a := v.groups[key]
		if a == nil || attempt > 0 || a.stale() {
			var err error
			if a, err = v.syncGroup(w, key, r.Stream, r.Topic, r.As.ID); err != nil {
				return nil, err
			}
		}
		if !a.member {
			return nil, &ServerError{Code: CodeConsumerGroupMemberNotFound}
		}
		if len(a.partitions) == 0 {
			return &Polled{}, nil
		}
		partition := a.partitions[a.cursor%len(a.partitions)]
		a.cursor++
		a.polls++
		p, err := v.pollPartition(w, r, partition)
		switch {
		case CodeOf(err) == CodeConsumerGroupPartitionNotOwned:
		case err != nil || !v09Fenced(p):
			return p, err
		}
	}
	return &Polled{}, nil // fenced twice in a row: a rebalance is under way
}

// v09Fenced tells a poll the server refused because the member does not
// own the partition (any more); a server may say so with error 5009 as
// well.
func v09Fenced(p *Polled) bool { return len(p.Messages) == 0 && p.Partition == v09ResyncPartition }

// syncGroup reads this session's assignment in a group (code 606, body
// [stream][topic][group]; reply [generation u64][count u32]
// [partition u32]*, empty for a non-member) and keeps it under key. A new
// generation starts the turn from the first partition again.
func (v *v09) syncGroup(w *wire, key string, stream, topic, group Identifier) (*v09Assignment, error) {
	b := v.appendHeader(w.buf(v09HeaderBytes+groupPathLen(stream, topic, group)), v09OpNonReplicated, v09CodeSyncGroup, v.next)
	body, err := v.exchange(w, v09Seal(appendGroupPath(b, stream, topic, group), false), false)
	if err != nil {
		return nil, err
	}
	a := v.groups[key]
	if a == nil {
		a = &v09Assignment{}
	}
	gen, parts, member, err := v09DecodeAssignment(body)
	if err != nil {
		return nil, fmt.Errorf("iggy at %s: consumer group %s assignment: %w", w.addr, group, err)
	}
	if gen != a.generation {
		a.cursor = 0
	}
	a.member, a.generation, a.partitions, a.synced, a.polls = member, gen, parts, time.Now(), 0
	if v.groups == nil {
		v.groups = map[string]*v09Assignment{}
	}
	v.groups[key] = a
	return a, nil
}

// v09DecodeAssignment reads a sync group reply.
func v09DecodeAssignment(b []byte) (generation uint64, partitions []uint32, member bool, err error) {
	if len(b) == 0 {
		return 0, nil, false, nil
	}
	if len(b) < 12 {
		return 0, nil, false, fmt.Errorf("%d bytes, at least 12 expected", len(b))
	}
	n := v09le.Uint32(b[8:])
	if uint64(len(b)-12) != uint64(n)*4 {
		return 0, nil, false, fmt.Errorf("%d partitions in %d bytes", n, len(b)-12)
	}
	partitions = make([]uint32, n)
	for i := range partitions {
		partitions[i] = v09le.Uint32(b[12+4*i:])
	}
	return v09le.Uint64(b), partitions, true, nil
}
