package iggy

import (
	"bytes"
	"slices"
	"testing"

	"github.com/zeebo/xxh3"
)

// TestV09OffsetAndGroupFrames: store and delete offset go out as partition
// operations 161 and 162 with a new request number each, no request
// checksum and a trailing quorum ack; join and leave as metadata
// operations 148 and 149, numbered and checksummed; reads (get offset, get
// group) as NonReplicated codes 120 and 600 carrying the current number;
// a refusal in the result section is the server's error.
func TestV09OffsetAndGroupFrames(t *testing.T) {
	var reqs [7][]byte
	group := t09Framed(0, nil)
	details := append(tle.AppendUint32(tle.AppendUint32(tle.AppendUint32(nil, 3), 2), 1), 1, 'g')
	details = append(tle.AppendUint32(tle.AppendUint32(details, 5), 1), 1, 0, 0, 0)
	w := t09Serve(t,
		t09Capture(&reqs[0], t09Ok(group)),
		t09Capture(&reqs[1], t09Ok(t09Framed(CodeConsumerOffsetNotFound, nil))),
		t09Capture(&reqs[2], t09Ok(group)),
		t09Capture(&reqs[3], t09Ok(group)),
		t09Capture(&reqs[4], t09Ok(tle.AppendUint64(tle.AppendUint64(tle.AppendUint32(nil, 1), 9), 4))),
		t09Capture(&reqs[5], t09Ok(details)),
		t09Capture(&reqs[6], t09Ok(nil)),
	)
	v := t09LoggedIn()
	s, tp := NumericID(1), mustName(t, "t")
	target := offsetTarget{consumer: GroupConsumer(mustName(t, "g")), stream: s, topic: tp, partition: 1}
	if err := v.storeOffset(w, &target, 4); err != nil {
		t.Fatal(err)
	}
	if err := v.deleteOffset(w, &target); CodeOf(err) != CodeConsumerOffsetNotFound {
		t.Fatalf("delete refused in the result section: %v", err)
	}
	if err := v.groupOp(w, groupJoin, s, tp, mustName(t, "g")); err != nil {
		t.Fatal(err)
	}
	if err := v.groupOp(w, groupLeave, s, tp, mustName(t, "g")); err != nil {
		t.Fatal(err)
	}
	body, err := v.getOffset(w, &target)
	if o, ok, derr := decodeOffset(body); err != nil || derr != nil || !ok || o != 4 {
		t.Fatalf("get offset: %d %v %v %v", o, ok, err, derr)
	}
	body, err = v.getGroup(w, s, tp, mustName(t, "g"))
	g, derr := decodeGroup(body, true)
	if err != nil || derr != nil || g.ID != 3 || g.Name != "g" || len(g.Members) != 1 || g.Members[0].ID != 5 || len(g.Members[0].Partitions) != 1 {
		t.Fatalf("get group: %+v %v %v", g, err, derr)
	}
	if body, err := v.getGroup(w, s, tp, mustName(t, "g")); len(body) != 0 || err != nil {
		t.Fatalf("a missing group: % x %v", body, err)
	}
	path := []byte{1, 4, 1, 0, 0, 0, 2, 1, 't', 2, 1, 'g'}
	offsetBody := append([]byte{2, 2, 1, 'g', 1, 4, 1, 0, 0, 0, 2, 1, 't', 1}, tle.AppendUint32(nil, 1)...)
	for i, want := range []struct {
		op      uint8
		code    uint32
		request uint64
		stamped bool
		body    []byte
	}{
		{161, 0, 1, false, append(tle.AppendUint64(bytes.Clone(offsetBody), 4), 1)},
		{162, 0, 2, false, append(bytes.Clone(offsetBody), 1)},
		{148, 0, 3, true, path},
		{149, 0, 4, true, path},
		{2, 120, 5, false, offsetBody},
		{2, 600, 5, false, path},
	} {
		r := reqs[i]
		sum := tle.Uint64(r[144:])
		if r[176] != want.op || tle.Uint64(r[168:]) != want.request || tle.Uint32(r[196:]) != want.code ||
			!bytes.Equal(r[256:], want.body) || (sum == xxh3.Hash(r[256:])) != want.stamped || !want.stamped && sum != 0 {
			t.Errorf("request %d: op %d request %d code %d checksum %x body % x; want %+v",
				i, r[176], tle.Uint64(r[168:]), tle.Uint32(r[196:]), sum, r[256:], want)
		}
	}
}

// t09Polled is a poll reply of partition with one message at offset.
func t09Polled(partition uint32, offset uint64) []byte {
	b := tle.AppendUint32(tle.AppendUint64(tle.AppendUint32(nil, partition), offset), 1)
	return append(b, t09StoredBatch(offset, 1, 1, t09Frame([16]byte{1}, 0, []byte("m"), nil))...)
}

// t09Assignment is a sync group reply.
func t09Assignment(generation uint64, partitions ...uint32) []byte {
	b := tle.AppendUint32(tle.AppendUint64(nil, generation), uint32(len(partitions)))
	for _, p := range partitions {
		b = tle.AppendUint32(b, p)
	}
	return b
}

// TestV09PollAssigned: a group member's partition-less polls read its
// assignment (sync group, code 606), poll its partitions in turn with
// explicit ids, read it again after each round (a new generation starts
// the turn over), and after a fenced poll (partition 4294967295) read it
// again and poll once more; a non-member is refused with 5006 and a
// member without partitions gets nothing.
func TestV09PollAssigned(t *testing.T) {
	var reqs []*[]byte
	capture := func(reply []byte) t09Step {
		r := new([]byte)
		reqs = append(reqs, r)
		return t09Capture(r, t09Ok(reply))
	}
	fenced := tle.AppendUint32(tle.AppendUint64(tle.AppendUint32(nil, v09ResyncPartition), 0), 0)
	w := t09Serve(t,
		capture(t09Assignment(1, 0, 2)), capture(t09Polled(0, 7)), capture(t09Polled(2, 8)),
		capture(t09Assignment(2, 2)), capture(fenced),
		capture(t09Assignment(3, 1)), capture(t09Polled(1, 9)),
		capture(t09Assignment(3)),
		capture(nil),
	)
	v := t09LoggedIn()
	r := &PollRequest{Stream: NumericID(1), Topic: mustName(t, "t"), As: GroupConsumer(mustName(t, "g")),
		Assigned: true, Strategy: PollNext, Count: 10}
	for i, want := range []uint32{0, 2, 1} {
		p, err := v.poll(w, r)
		if err != nil || p.Partition != want || len(p.Messages) != 1 {
			t.Fatalf("poll %d: %+v %v, want partition %d", i, p, err, want)
		}
	}
	if p, err := v.poll(w, r); err != nil || len(p.Messages) != 0 {
		t.Fatalf("a member without partitions: %+v %v", p, err)
	}
	if _, err := v.poll(w, r); CodeOf(err) != CodeConsumerGroupMemberNotFound {
		t.Fatalf("a non-member: %v", err)
	}
	var codes []uint32
	var parts []byte
	for _, r := range reqs {
		codes = append(codes, tle.Uint32((*r)[196:]))
		if tle.Uint32((*r)[196:]) == 100 {
			parts = append(parts, (*r)[269], (*r)[270]) // after consumer, stream, topic: has partition, partition
		}
	}
	if want := []uint32{606, 100, 100, 606, 100, 606, 100, 606, 606}; !slices.Equal(codes, want) {
		t.Errorf("request codes %v, want %v", codes, want)
	}
	if want := []byte{1, 0, 1, 2, 1, 2, 1, 1}; !bytes.Equal(parts, want) {
		t.Errorf("polled partitions (flag, id) % x, want % x", parts, want)
	}
}
