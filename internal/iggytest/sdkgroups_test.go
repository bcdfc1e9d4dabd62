package iggytest_test

import (
	"slices"
	"testing"

	iggcon "github.com/apache/iggy/foreign/go/contracts"
	ierror "github.com/apache/iggy/foreign/go/errors"

	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
)

// TestConsumerGroupsSDK runs the unchanged 0.8 SDK's consumer group calls
// against the 0.8 test server: create, join from two clients (the second
// gets one partition, as server 0.8.0 hands a newcomer), partition-less
// polls that go round each member's partitions, group offsets, leave,
// delete, and the SDK's errors for the refusals.
func TestConsumerGroupsSDK(t *testing.T) {
	srv := startServer(t, iggytest.Options{})
	a, b := login(t, srv.Addr()), login(t, srv.Addr())
	setupTopic(t, a, "s", "t", 3)
	sid, tid, gid := id(t, "s"), id(t, "t"), id(t, "g")
	for p := range uint32(3) {
		if err := a.SendMessages(sid, tid, iggcon.PartitionId(p), []iggcon.IggyMessage{msg(t, "x"), msg(t, "y")}); err != nil {
			t.Fatal(err)
		}
	}
	g, err := a.CreateConsumerGroup(sid, tid, "g")
	if err != nil || g.Id != 0 || g.Name != "g" || g.PartitionsCount != 3 || len(g.Members) != 0 {
		t.Fatalf("create = %+v, %v", g, err)
	}
	_, err = a.CreateConsumerGroup(sid, tid, "g")
	mustIs(t, err, ierror.ErrConsumerGroupNameAlreadyExists)
	for _, c := range []iggcon.Client{a, b} {
		if err := c.JoinConsumerGroup(sid, tid, gid); err != nil {
			t.Fatalf("join: %v", err)
		}
	}
	d, err := a.GetConsumerGroup(sid, tid, gid)
	if err != nil || d.MembersCount != 2 || len(d.Members) != 2 ||
		!slices.Equal(d.Members[0].Partitions, []uint32{0, 1}) || !slices.Equal(d.Members[1].Partitions, []uint32{2}) {
		t.Fatalf("group = %+v, %v", d, err)
	}
	member := iggcon.NewGroupConsumer(gid)
	poll := func(c iggcon.Client) (uint32, int) {
		t.Helper()
		pm, err := c.PollMessages(sid, tid, member, iggcon.NextPollingStrategy(), 10, true, nil)
		if err != nil {
			t.Fatalf("group poll: %v", err)
		}
		return pm.PartitionId, len(pm.Messages)
	}
	for i, want := range []uint32{0, 1} {
		if p, n := poll(a); p != want || n != 2 {
			t.Fatalf("a's poll %d read %d messages of partition %d, want 2 of %d", i, n, p, want)
		}
	}
	if p, n := poll(b); p != 2 || n != 2 {
		t.Fatalf("b read %d messages of partition %d", n, p)
	}
	if p, n := poll(a); p != 0 || n != 0 {
		t.Fatalf("a's third poll read %d messages of partition %d, want none of 0 (committed)", n, p)
	}
	p2 := uint32(2)
	if info, err := a.GetConsumerOffset(member, sid, tid, &p2); err != nil || info == nil || info.StoredOffset != 1 {
		t.Fatalf("group offset of partition 2 = %+v, %v", info, err)
	}
	// b's partition: 3022 (ConsumerNotResolved), which the SDK does not
	// know and reports as its generic error.
	mustIs(t, a.StoreConsumerOffset(member, sid, tid, 0, &p2), ierror.ErrError)
	if err := b.LeaveConsumerGroup(sid, tid, gid); err != nil {
		t.Fatal(err)
	}
	mustIs(t, b.LeaveConsumerGroup(sid, tid, gid), ierror.ErrConsumerGroupMemberNotFound)
	if err := a.StoreConsumerOffset(member, sid, tid, 0, &p2); err != nil {
		t.Fatalf("a stores partition 2 after b left: %v", err)
	}
	if err := a.DeleteConsumerGroup(sid, tid, gid); err != nil {
		t.Fatal(err)
	}
	_, err = a.GetConsumerGroup(sid, tid, gid)
	mustIs(t, err, ierror.ErrConsumerGroupIdNotFound)
	mustIs(t, a.JoinConsumerGroup(sid, tid, gid), ierror.ErrConsumerGroupIdNotFound)
	_, err = a.PollMessages(sid, tid, member, iggcon.NextPollingStrategy(), 10, false, nil)
	mustIs(t, err, ierror.ErrConsumerGroupIdNotFound)
}
