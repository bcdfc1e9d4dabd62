package iggy_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/iggy"
	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
)

// The consumer tests run against the in-process test server in each
// dialect, or, unchanged, against the real Iggy server at IGGY_TCP_ADDRESS
// (IGGY_USERNAME, IGGY_PASSWORD; default iggy/iggy), whose dialect Dial
// finds. Parts that need the test server (its view of the assignment,
// timeouts) are skipped there.

// target is one server the consumer tests run against.
type target struct {
	name string
	srv  *iggytest.Server // nil: a real server
	opts iggy.Options
}

func targets(t *testing.T, opts iggytest.Options) []target {
	if addr := os.Getenv("IGGY_TCP_ADDRESS"); addr != "" {
		user, pass := os.Getenv("IGGY_USERNAME"), os.Getenv("IGGY_PASSWORD")
		if user == "" {
			user, pass = "iggy", "iggy"
		}
		o := iggy.Options{Addr: addr, Timeout: 10 * time.Second, Credentials: iggy.Credentials{Username: user, Password: pass}}
		return []target{{name: "real", opts: o}}
	}
	var out []target
	for _, d := range dialects {
		o := opts
		o.Version = d.server
		srv := start(t, o)
		out = append(out, target{name: d.name, srv: srv, opts: options(srv.Addr(), d.client)})
	}
	return out
}

// dial opens a connection to tg, closed at the end of the test.
func (tg target) dial(t *testing.T) *iggy.Conn {
	t.Helper()
	c, err := iggy.Dial(ctxT(t, 10*time.Second), tg.opts)
	if err != nil {
		t.Fatalf("dial %s: %v", tg.name, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

var streamSeq atomic.Int64

// topic creates a stream of its own with topic "t" of n partitions and
// deletes the stream at the end; it returns their identifiers and names.
func topic(t *testing.T, c *iggy.Conn, n uint32) (sid, tid iggy.Identifier, stream string) {
	t.Helper()
	stream = fmt.Sprintf("cg-%d-%d", time.Now().UnixNano()%1e9, streamSeq.Add(1))
	ctx := ctxT(t, 10*time.Second)
	if err := c.CreateStream(ctx, stream); err != nil {
		t.Fatal(err)
	}
	sid, _ = iggy.NameID(stream)
	tid, _ = iggy.NameID("t")
	t.Cleanup(func() { _ = c.DeleteStream(context.Background(), sid) })
	if err := c.CreateTopic(ctx, sid, iggy.TopicSpec{Name: "t", Partitions: n}); err != nil {
		t.Fatal(err)
	}
	return sid, tid, stream
}

// fill sends n messages "p<partition>-<i>" to a partition.
func fill(t *testing.T, c *iggy.Conn, sid, tid iggy.Identifier, partition uint32, n int) {
	t.Helper()
	b := iggy.Batch{Stream: sid, Topic: tid, Partitioning: iggy.PartitionID(partition), OriginTimestamp: 1}
	for i := range n {
		b.Messages = append(b.Messages, iggy.Message{Payload: fmt.Appendf(nil, "p%d-%d", partition, i)})
	}
	if _, err := c.Send(ctxT(t, 10*time.Second), &b); err != nil {
		t.Fatalf("send to partition %d: %v", partition, err)
	}
}

// offsets returns the offsets of polled messages.
func offsets(p *iggy.Polled) []uint64 {
	var out []uint64
	for _, m := range p.Messages {
		out = append(out, m.Offset)
	}
	return out
}

func name(t *testing.T, s string) iggy.Identifier {
	t.Helper()
	id, err := iggy.NameID(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestOffsets: offsets round trip per consumer and partition, "no offset"
// reads as not stored, PollNext resumes after a stored offset (and starts
// at the oldest message without one), auto-commit moves it, and the
// refusals (past the end, in an empty partition, deleting twice, a missing
// stream or topic).
func TestOffsets(t *testing.T) {
	for _, tg := range targets(t, iggytest.Options{}) {
		t.Run(tg.name, func(t *testing.T) {
			c := tg.dial(t)
			ctx := ctxT(t, 30*time.Second)
			sid, tid, _ := topic(t, c, 2)
			seven, reader := iggy.SingleConsumer(iggy.NumericID(7)), iggy.SingleConsumer(name(t, "reader"))
			if o, ok, err := c.GetOffset(ctx, seven, sid, tid, 1); err != nil || ok {
				t.Fatalf("offset before any: %d %v %v", o, ok, err)
			}
			if err := c.StoreOffset(ctx, seven, sid, tid, 1, 0); iggy.CodeOf(err) != iggy.CodeInvalidOffset {
				t.Fatalf("store in an empty partition: %v", err)
			}
			fill(t, c, sid, tid, 1, 10)
			if err := c.StoreOffset(ctx, seven, sid, tid, 1, 4); err != nil {
				t.Fatal(err)
			}
			if o, ok, err := c.GetOffset(ctx, seven, sid, tid, 1); err != nil || !ok || o != 4 {
				t.Fatalf("offset stored: %d %v %v", o, ok, err)
			}
			if _, ok, err := c.GetOffset(ctx, reader, sid, tid, 1); err != nil || ok {
				t.Fatalf("another consumer's offset: %v %v", ok, err)
			}
			if _, ok, err := c.GetOffset(ctx, seven, sid, tid, 0); err != nil || ok {
				t.Fatalf("another partition's offset: %v %v", ok, err)
			}
			if err := c.StoreOffset(ctx, seven, sid, tid, 1, 10); iggy.CodeOf(err) != iggy.CodeInvalidOffset {
				t.Fatalf("store past the end: %v", err)
			}
			poll := func(who iggy.Consumer, n uint32, commit bool) []uint64 {
				t.Helper()
				p, err := c.Poll(ctx, &iggy.PollRequest{Stream: sid, Topic: tid, Partition: 1, As: who, Strategy: iggy.PollNext, Count: n, AutoCommit: commit})
				if err != nil {
					t.Fatalf("poll next as %s: %v", who, err)
				}
				return offsets(p)
			}
			if got := poll(seven, 3, true); !slices.Equal(got, []uint64{5, 6, 7}) {
				t.Fatalf("next after stored 4: %v", got)
			}
			if o, _, err := c.GetOffset(ctx, seven, sid, tid, 1); err != nil || o != 7 {
				t.Fatalf("auto-committed offset: %d %v", o, err)
			}
			if got := poll(seven, 10, false); !slices.Equal(got, []uint64{8, 9}) {
				t.Fatalf("next after auto-commit: %v", got)
			}
			if got := poll(reader, 2, false); !slices.Equal(got, []uint64{0, 1}) {
				t.Fatalf("next without a stored offset: %v", got)
			}
			if err := c.DeleteOffset(ctx, seven, sid, tid, 1); err != nil {
				t.Fatal(err)
			}
			if _, ok, err := c.GetOffset(ctx, seven, sid, tid, 1); err != nil || ok {
				t.Fatalf("offset after delete: %v %v", ok, err)
			}
			if err := c.DeleteOffset(ctx, seven, sid, tid, 1); iggy.CodeOf(err) != iggy.CodeConsumerOffsetNotFound {
				t.Fatalf("delete again: %v", err)
			}
			missing := name(t, "no-such-stream-or-topic")
			for _, st := range [][2]iggy.Identifier{{missing, tid}, {sid, missing}} {
				if err := c.StoreOffset(ctx, seven, st[0], st[1], 0, 0); !iggy.IsNotFound(err) {
					t.Errorf("store in stream %s topic %s: %v", st[0], st[1], err)
				}
				if _, ok, err := c.GetOffset(ctx, seven, st[0], st[1], 0); err != nil || ok {
					t.Errorf("get in stream %s topic %s: %v %v", st[0], st[1], ok, err)
				}
			}
			if err := c.Ping(ctx); err != nil {
				t.Fatalf("the connection after the refusals: %v", err)
			}
		})
	}
}

// TestConsumerGroupLifecycle: create (a name twice refused), read, join
// (twice is one membership), leave (twice refused), delete (twice
// refused), and the answers for a missing stream, topic or group.
func TestConsumerGroupLifecycle(t *testing.T) {
	for _, tg := range targets(t, iggytest.Options{}) {
		t.Run(tg.name, func(t *testing.T) {
			a, b := tg.dial(t), tg.dial(t)
			ctx := ctxT(t, 30*time.Second)
			sid, tid, _ := topic(t, a, 3)
			gid := name(t, "g")
			g, err := a.CreateConsumerGroup(ctx, sid, tid, "g")
			if err != nil || g.Name != "g" || g.Partitions != 3 || len(g.Members) != 0 {
				t.Fatalf("create: %+v %v", g, err)
			}
			if _, err := a.CreateConsumerGroup(ctx, sid, tid, "g"); iggy.CodeOf(err) != iggy.CodeConsumerGroupNameAlreadyExists {
				t.Fatalf("create twice: %v", err)
			}
			get := func(group iggy.Identifier) *iggy.ConsumerGroup {
				t.Helper()
				got, err := a.GetConsumerGroup(ctx, sid, tid, group)
				if err != nil {
					t.Fatalf("get group %s: %v", group, err)
				}
				return got
			}
			if got := get(gid); got == nil || got.ID != g.ID || len(got.Members) != 0 {
				t.Fatalf("group before joins: %+v", got)
			}
			if got := get(iggy.NumericID(g.ID)); got == nil || got.Name != "g" {
				t.Fatalf("group by id %d: %+v", g.ID, got)
			}
			for range 2 {
				if err := a.JoinConsumerGroup(ctx, sid, tid, gid); err != nil {
					t.Fatal(err)
				}
			}
			if got := get(gid); len(got.Members) != 1 || !slices.Equal(sorted(got.Members[0].Partitions), []uint32{0, 1, 2}) {
				t.Fatalf("one member (joined twice): %+v", got)
			}
			if err := b.JoinConsumerGroup(ctx, sid, tid, gid); err != nil {
				t.Fatal(err)
			}
			checkSplit(t, get(gid), 2, 3)
			if err := a.LeaveConsumerGroup(ctx, sid, tid, gid); err != nil {
				t.Fatal(err)
			}
			if got := get(gid); len(got.Members) != 1 || !slices.Equal(sorted(got.Members[0].Partitions), []uint32{0, 1, 2}) {
				t.Fatalf("after a leave the other member holds every partition: %+v", got)
			}
			if err := a.LeaveConsumerGroup(ctx, sid, tid, gid); iggy.CodeOf(err) != iggy.CodeConsumerGroupMemberNotFound {
				t.Fatalf("leave twice: %v", err)
			}
			if err := a.DeleteConsumerGroup(ctx, sid, tid, gid); err != nil {
				t.Fatal(err)
			}
			if got := get(gid); got != nil {
				t.Fatalf("deleted group: %+v", got)
			}
			for what, err := range map[string]error{
				"delete twice":          a.DeleteConsumerGroup(ctx, sid, tid, gid),
				"join a deleted group":  a.JoinConsumerGroup(ctx, sid, tid, gid),
				"leave a deleted group": a.LeaveConsumerGroup(ctx, sid, tid, gid),
			} {
				if iggy.CodeOf(err) != iggy.CodeConsumerGroupIDNotFound {
					t.Errorf("%s: %v", what, err)
				}
			}
			checkMissingTopic(t, a, sid, tid, gid)
			if err := a.Ping(ctx); err != nil {
				t.Fatalf("the connection after the refusals: %v", err)
			}
		})
	}
}

// checkMissingTopic checks the group requests on a missing stream or
// topic: create and join are refused as not found, get reads nothing.
func checkMissingTopic(t *testing.T, c *iggy.Conn, sid, tid, gid iggy.Identifier) {
	t.Helper()
	ctx := ctxT(t, 30*time.Second)
	missing := name(t, "no-such-stream-or-topic")
	for _, st := range [][2]iggy.Identifier{{missing, tid}, {sid, missing}} {
		if _, err := c.CreateConsumerGroup(ctx, st[0], st[1], "g"); !iggy.IsNotFound(err) {
			t.Errorf("create in stream %s topic %s: %v", st[0], st[1], err)
		}
		if err := c.JoinConsumerGroup(ctx, st[0], st[1], gid); !iggy.IsNotFound(err) {
			t.Errorf("join in stream %s topic %s: %v", st[0], st[1], err)
		}
		if got, err := c.GetConsumerGroup(ctx, st[0], st[1], gid); got != nil || err != nil {
			t.Errorf("get in stream %s topic %s: %+v %v", st[0], st[1], got, err)
		}
	}
}

func sorted(ps []uint32) []uint32 {
	out := slices.Clone(ps)
	slices.Sort(out)
	return out
}

// checkSplit checks that g has members members whose partitions are
// disjoint, non-empty and cover all n.
func checkSplit(t *testing.T, g *iggy.ConsumerGroup, members int, n uint32) {
	t.Helper()
	if g == nil || len(g.Members) != members {
		t.Fatalf("want %d members: %+v", members, g)
	}
	seen := map[uint32]bool{}
	for _, m := range g.Members {
		if len(m.Partitions) == 0 {
			t.Errorf("member %d holds no partition: %+v", m.ID, g.Members)
		}
		for _, p := range m.Partitions {
			if seen[p] || p >= n {
				t.Errorf("partition %d held twice or out of range: %+v", p, g.Members)
			}
			seen[p] = true
		}
	}
	if len(seen) != int(n) {
		t.Errorf("%d of %d partitions held: %+v", len(seen), n, g.Members)
	}
}

// pollAssigned polls as a member of group eight times (two rounds of its
// partitions at most) and returns the offsets read per partition, each
// once, in order.
func pollAssigned(t *testing.T, c *iggy.Conn, sid, tid, group iggy.Identifier, commit bool) map[uint32][]uint64 {
	t.Helper()
	got := map[uint32][]uint64{}
	ctx := ctxT(t, 30*time.Second)
	for range 8 {
		p, err := c.Poll(ctx, &iggy.PollRequest{Stream: sid, Topic: tid, As: iggy.GroupConsumer(group),
			Assigned: true, Strategy: iggy.PollNext, Count: 100, AutoCommit: commit})
		if err != nil {
			t.Fatalf("poll as a member: %v", err)
		}
		for _, o := range offsets(p) {
			if !slices.Contains(got[p.Partition], o) {
				got[p.Partition] = append(got[p.Partition], o)
			}
		}
	}
	for _, offs := range got {
		slices.Sort(offs)
	}
	return got
}

// TestGroupMembersSplitPartitions: two members of a group are assigned
// disjoint partitions covering the topic, each reads exactly its own with
// partition-less polls, commits them as the group, cannot commit the
// other's, and when one disconnects the other takes its partitions over
// and resumes after what it had committed.
func TestGroupMembersSplitPartitions(t *testing.T) {
	for _, tg := range targets(t, iggytest.Options{}) {
		t.Run(tg.name, func(t *testing.T) {
			a, b := tg.dial(t), tg.dial(t)
			ctx := ctxT(t, 60*time.Second)
			sid, tid, stream := topic(t, a, 4)
			for p := range uint32(4) {
				fill(t, a, sid, tid, p, 5)
			}
			gid := name(t, "readers")
			if _, err := a.CreateConsumerGroup(ctx, sid, tid, "readers"); err != nil {
				t.Fatal(err)
			}
			for _, c := range []*iggy.Conn{a, b} {
				if err := c.JoinConsumerGroup(ctx, sid, tid, gid); err != nil {
					t.Fatal(err)
				}
			}
			g, err := a.GetConsumerGroup(ctx, sid, tid, gid)
			if err != nil {
				t.Fatal(err)
			}
			checkSplit(t, g, 2, 4)
			// Server 0.8.0 hands a newcomer one partition, 0.9 its fair share
			// (the last ones of the first member's list).
			want := map[iggy.Version][][]uint32{iggy.Version08: {{0, 1, 2}, {3}}, iggy.Version09: {{0, 1}, {3, 2}}}[a.Info().Version]
			if got := assignment(t, tg, a, sid, tid, gid, stream); !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("assignment %v, want %v", got, want)
			}
			mine := map[*iggy.Conn][]uint32{a: sorted(g.Members[0].Partitions), b: sorted(g.Members[1].Partitions)}
			for _, c := range []*iggy.Conn{a, b} {
				got := pollAssigned(t, c, sid, tid, gid, false)
				var parts []uint32
				for p, offs := range got {
					parts = append(parts, p)
					if !slices.Equal(offs, []uint64{0, 1, 2, 3, 4}) {
						t.Errorf("partition %d read %v", p, offs)
					}
				}
				slices.Sort(parts)
				if !slices.Equal(parts, mine[c]) && !slices.Equal(parts, mine[other(c, a, b)]) {
					t.Errorf("a member read partitions %v; the members hold %v", parts, mine)
				}
				for _, p := range parts {
					if err := c.StoreOffset(ctx, iggy.GroupConsumer(gid), sid, tid, p, 4); err != nil {
						t.Fatalf("store the group's offset of partition %d: %v", p, err)
					}
				}
			}
			bPart := mine[b][0]
			if bOwns := slices.Contains(mine[b], bPart); bOwns {
				// a member may not commit for a partition it does not hold
				if err := a.StoreOffset(ctx, iggy.GroupConsumer(gid), sid, tid, bPart, 4); err == nil {
					t.Errorf("member a stored the offset of member b's partition %d", bPart)
				}
			}
			if o, ok, err := a.GetOffset(ctx, iggy.GroupConsumer(gid), sid, tid, bPart); err != nil || !ok || o != 4 {
				t.Fatalf("the group's offset of partition %d read by another member: %d %v %v", bPart, o, ok, err)
			}
			_ = b.Close()
			waitFor(t, "member a to hold all four partitions", func() bool {
				g, err := a.GetConsumerGroup(ctx, sid, tid, gid)
				return err == nil && g != nil && len(g.Members) == 1 && len(g.Members[0].Partitions) == 4
			})
			fill(t, a, sid, tid, bPart, 2)
			got := pollAssigned(t, a, sid, tid, gid, true)
			if len(got) != 1 || !slices.Equal(got[bPart], []uint64{5, 6}) {
				t.Fatalf("after taking over partition %d: read %v, want offsets 5 and 6 there only", bPart, got)
			}
		})
	}
}

func other(c, a, b *iggy.Conn) *iggy.Conn {
	if c == a {
		return b
	}
	return a
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestGroupPollRefusals: a connection that is not a member gets
// ConsumerGroupMemberNotFound from a partition-less poll, and a poll of
// its assigned partitions needs a group consumer.
func TestGroupPollRefusals(t *testing.T) {
	for _, tg := range targets(t, iggytest.Options{}) {
		t.Run(tg.name, func(t *testing.T) {
			c := tg.dial(t)
			ctx := ctxT(t, 30*time.Second)
			sid, tid, _ := topic(t, c, 2)
			if _, err := c.CreateConsumerGroup(ctx, sid, tid, "g"); err != nil {
				t.Fatal(err)
			}
			_, err := c.Poll(ctx, &iggy.PollRequest{Stream: sid, Topic: tid, As: iggy.GroupConsumer(name(t, "g")),
				Assigned: true, Strategy: iggy.PollNext, Count: 1})
			if iggy.CodeOf(err) != iggy.CodeConsumerGroupMemberNotFound {
				t.Fatalf("poll by a non-member: %v", err)
			}
			_, err = c.Poll(ctx, &iggy.PollRequest{Stream: sid, Topic: tid, Assigned: true, Strategy: iggy.PollNext, Count: 1})
			if err == nil || !strings.Contains(err.Error(), "consumer group member") || c.Broken() {
				t.Fatalf("assigned poll of a single consumer: %v (broken %v)", err, c.Broken())
			}
		})
	}
}

// handover sets up a topic of two partitions (3 and n1 messages) and
// group "g" whose only member a polls both partitions without committing,
// then lets b join: partition 1 stays with a, on its way to b. It returns
// the connections, the stream and the topic and group identifiers.
func handover(t *testing.T, tg target, n1 int) (a, b *iggy.Conn, sid, tid, gid iggy.Identifier, stream string) {
	t.Helper()
	a, b = tg.dial(t), tg.dial(t)
	ctx := ctxT(t, 30*time.Second)
	sid, tid, stream = topic(t, a, 2)
	fill(t, a, sid, tid, 0, 3)
	fill(t, a, sid, tid, 1, n1)
	gid = name(t, "g")
	if _, err := a.CreateConsumerGroup(ctx, sid, tid, "g"); err != nil {
		t.Fatal(err)
	}
	if err := a.JoinConsumerGroup(ctx, sid, tid, gid); err != nil {
		t.Fatal(err)
	}
	if got := pollAssigned(t, a, sid, tid, gid, false); len(got) != 2 {
		t.Fatalf("the only member read %v", got)
	}
	if err := b.JoinConsumerGroup(ctx, sid, tid, gid); err != nil {
		t.Fatal(err)
	}
	if got := assignment(t, tg, a, sid, tid, gid, stream); !slices.EqualFunc(got, [][]uint32{{0, 1}, {}}, slices.Equal) {
		t.Fatalf("assignment while a's partition 1 is uncommitted: %v", got)
	}
	return a, b, sid, tid, gid, stream
}

// assignment returns the partitions of each member of group gid in the
// order they joined: the test server's own view,
// or a real server's group reply, which lists members in that order while
// none left and counts a partition on its way to another member as its
// current holder's.
func assignment(t *testing.T, tg target, c *iggy.Conn, sid, tid, gid iggy.Identifier, stream string) [][]uint32 {
	t.Helper()
	if tg.srv != nil {
		got, _ := tg.srv.ConsumerGroupAssignment(stream, "t", gid.String())
		return got
	}
	g, err := c.GetConsumerGroup(ctxT(t, 10*time.Second), sid, tid, gid)
	if err != nil || g == nil {
		t.Fatalf("reading group %s: %+v %v", gid, g, err)
	}
	out := make([][]uint32, len(g.Members))
	for i, m := range g.Members {
		out[i] = m.Partitions
	}
	return out
}

// TestGroupHandover: a partition a member has polled but not committed
// stays with it when another member joins (it no longer polls it, but may
// commit it); it moves on the commit (a real 0.9 server moves it on its
// reconciler's next pass, so the test waits for that).
func TestGroupHandover(t *testing.T) {
	for _, tg := range targets(t, iggytest.Options{}) {
		t.Run(tg.name, func(t *testing.T) {
			a, b, sid, tid, gid, stream := handover(t, tg, 3)
			fill(t, a, sid, tid, 1, 1)
			if got := pollAssigned(t, b, sid, tid, gid, false); len(got) != 0 {
				t.Fatalf("b read %v before the handover", got)
			}
			if got := pollAssigned(t, a, sid, tid, gid, false); len(got[1]) != 0 {
				t.Fatalf("a polled partition 1 it is handing over: %v", got)
			}
			if err := a.StoreOffset(ctxT(t, 10*time.Second), iggy.GroupConsumer(gid), sid, tid, 1, 2); err != nil {
				t.Fatalf("a commits the partition it is handing over: %v", err)
			}
			waitFor(t, "partition 1 to move to b after the commit", func() bool {
				return slices.EqualFunc(assignment(t, tg, a, sid, tid, gid, stream), [][]uint32{{0}, {1}}, slices.Equal)
			})
			if got := pollAssigned(t, b, sid, tid, gid, true); !slices.Equal(got[1], []uint64{3}) || len(got) != 1 {
				t.Fatalf("b after the handover read %v, want offset 3 of partition 1", got)
			}
		})
	}
}

// TestGroupHandoverTimeout: without a commit the partition moves after the
// rebalancing timeout, and its new member reads it from the group's offset
// (none: from the oldest message). A real server's timeout is 30 s unless
// it was started with a short one (IGGY_CONSUMER_GROUP_REBALANCING_TIMEOUT)
// and IGGY_REBALANCING_TIMEOUT tells the test so.
func TestGroupHandoverTimeout(t *testing.T) {
	timeout := time.Second
	if os.Getenv("IGGY_TCP_ADDRESS") != "" {
		d, err := time.ParseDuration(os.Getenv("IGGY_REBALANCING_TIMEOUT"))
		if err != nil || d <= 0 || d > 10*time.Second {
			t.Skip("IGGY_REBALANCING_TIMEOUT does not give the real server's rebalancing timeout, at most 10s")
		}
		timeout = d
	}
	for _, tg := range targets(t, iggytest.Options{RebalancingTimeout: timeout}) {
		t.Run(tg.name, func(t *testing.T) {
			_, b, sid, tid, gid, _ := handover(t, tg, 4)
			if got := pollAssigned(t, b, sid, tid, gid, false); len(got) != 0 {
				t.Fatalf("b read %v right after joining, before the rebalancing timeout (%v)", got, timeout)
			}
			var got map[uint32][]uint64
			for end := time.Now().Add(timeout + 10*time.Second); len(got) == 0 && time.Now().Before(end); {
				got = pollAssigned(t, b, sid, tid, gid, false)
			}
			if !slices.Equal(got[1], []uint64{0, 1, 2, 3}) || len(got) != 1 {
				t.Fatalf("b read %v after the rebalancing timeout (%v), want offsets 0 to 3 of partition 1", got, timeout)
			}
		})
	}
}
