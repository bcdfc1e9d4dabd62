package iggyinput

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/iggy"
	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
)

func single(name string) iggy.Consumer { id, _ := iggy.NameID(name); return iggy.SingleConsumer(id) }

func want(parts, from, n int) []string {
	var out []string
	for p := 0; p < parts; p++ {
		for i := from; i < from+n; i++ {
			out = append(out, fmt.Sprintf("p%d-%d", p, i))
		}
	}
	sort.Strings(out)
	return out
}

func sorted(ps []string) []string { ps = slices.Clone(ps); sort.Strings(ps); return ps }

// TestSingleConsumerReadsAndResumes: a single consumer reads every
// partition once, stores nothing before the acknowledgements and each
// partition's last offset after them, and a new input of the same
// consumer reads only what came after.
func TestSingleConsumerReadsAndResumes(t *testing.T) {
	e := newEnv(t, 3)
	for p := range uint32(3) {
		e.send(p, 0, 250)
	}
	in := e.newTestInput("consumer: c1\npoll_count: 100\n")
	rs := readN(t, in, 750)
	if got := sorted(payloads(rs)); !slices.Equal(got, want(3, 0, 250)) {
		t.Fatalf("read %d messages, not each of the 750 once", len(got))
	}
	for p := range uint32(3) {
		if o := e.stored(single("c1"), p); o != -1 {
			t.Errorf("partition %d: offset %d stored before any acknowledgement", p, o)
		}
	}
	ackAll(t, rs)
	for p := range uint32(3) {
		if o := e.stored(single("c1"), p); o != 249 {
			t.Errorf("partition %d: stored %d after the acknowledgements, want 249", p, o)
		}
	}
	_ = in.Close(context.Background())
	e.send(1, 250, 10)
	again := e.newTestInput("consumer: c1\n")
	rs = readN(t, again, 10)
	if got := sorted(payloads(rs)); !slices.Equal(got, sorted(want(1, 250, 10))) && !strings.HasPrefix(got[0], "p1-25") {
		t.Fatalf("resumed with %v", got)
	}
	if n := hasPrefixCount(payloads(rs), "p1-"); n != 10 {
		t.Fatalf("resumed with %v, want p1-250..259", payloads(rs))
	}
	noMore(t, again, 500*time.Millisecond)
}

// TestAcksOutOfOrder: the stored offset moves only over an acknowledged
// run from the start.
func TestAcksOutOfOrder(t *testing.T) {
	e := newEnv(t, 1)
	e.send(0, 0, 300)
	in := e.newTestInput("consumer: c2\npoll_count: 100\n")
	rs := readN(t, in, 300)
	if len(rs) != 3 {
		t.Fatalf("%d batches, want 3 of 100", len(rs))
	}
	ctx := context.Background()
	_ = rs[2].ack(ctx, nil)
	_ = rs[1].ack(ctx, nil)
	if o := e.stored(single("c2"), 0); o != -1 {
		t.Fatalf("stored %d while the first batch is in flight", o)
	}
	_ = rs[0].ack(ctx, nil)
	if o := e.stored(single("c2"), 0); o != 299 {
		t.Fatalf("stored %d after every batch was acknowledged, want 299", o)
	}
}

// TestNackStopsCommits: a batch that was not delivered is never stored
// past, so a new input reads it again.
func TestNackStopsCommits(t *testing.T) {
	e := newEnv(t, 1)
	e.send(0, 0, 300)
	in := e.newTestInput("consumer: c3\npoll_count: 100\n")
	rs := readN(t, in, 300)
	ctx := context.Background()
	_ = rs[0].ack(ctx, nil)
	_ = rs[1].ack(ctx, fmt.Errorf("the output failed"))
	_ = rs[2].ack(ctx, nil)
	if o := e.stored(single("c3"), 0); o != 99 {
		t.Fatalf("stored %d, want 99 (the end of the batch before the nack)", o)
	}
	_ = in.Close(ctx)
	again := e.newTestInput("consumer: c3\n")
	if got := payloads(readN(t, again, 200)); got[0] != "p0-100" || got[len(got)-1] != "p0-299" {
		t.Fatalf("read again from %s to %s, want p0-100 to p0-299", got[0], got[len(got)-1])
	}
}

// TestCheckpointLimit: a partition with checkpoint_limit messages in
// flight is not polled until some are acknowledged.
func TestCheckpointLimit(t *testing.T) {
	e := newEnv(t, 1)
	e.send(0, 0, 400)
	in := e.newTestInput("consumer: c4\npoll_count: 100\ncheckpoint_limit: 150\npoll_interval: 10ms\n")
	rs := readN(t, in, 200)
	noMore(t, in, 300*time.Millisecond)
	_ = rs[0].ack(context.Background(), nil)
	if got := payloads(readN(t, in, 100)); got[0] != "p0-200" {
		t.Fatalf("after an acknowledgement read from %s, want p0-200", got[0])
	}
}

// TestStartLatest: without a stored offset, start_from latest reads only
// what arrives after the input first polled the partition.
func TestStartLatest(t *testing.T) {
	e := newEnv(t, 2)
	e.send(0, 0, 50)
	in := e.newTestInput("consumer: c5\nstart_from: latest\npoll_interval: 10ms\n")
	noMore(t, in, 300*time.Millisecond)
	e.send(0, 50, 5)
	e.send(1, 0, 3)
	if got := sorted(payloads(readN(t, in, 8))); !slices.Equal(got, sorted([]string{"p0-50", "p0-51", "p0-52", "p0-53", "p0-54", "p1-0", "p1-1", "p1-2"})) {
		t.Fatalf("read %v", got)
	}
}

// TestMetadata: a message carries where it came from and its user headers,
// typed.
func TestMetadata(t *testing.T) {
	e := newEnv(t, 2)
	e.send(1, 0, 2)
	in := e.newTestInput("consumer: c6\npartitions: [1]\n")
	b, _, err := in.ReadBatch(ctxT(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	m := b[1]
	check := func(key string, want any) {
		t.Helper()
		got, ok := m.MetaGetMut(key)
		if !ok || fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprintf("%T", got) != fmt.Sprintf("%T", want) {
			t.Errorf("metadata %s = %#v, want %#v", key, got, want)
		}
	}
	check(MetaStream, e.stream)
	check(MetaTopic, "t")
	check(MetaPartition, int64(1))
	check(MetaOffset, int64(1))
	check("fluss_change_type", "+I")
	check("n", int64(1))
	for _, k := range []string{MetaTimestamp, MetaOriginTimestamp} {
		if v, _ := m.MetaGetMut(k); v.(int64) < time.Now().Add(-time.Minute).UnixMicro() {
			t.Errorf("%s = %v, not a recent µs timestamp", k, v)
		}
	}
	id, _ := m.MetaGet(MetaMessageID)
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`).MatchString(id) || id == "00000000-0000-0000-0000-000000000000" {
		t.Errorf("message id %q", id)
	}
}

// TestGroupMembersShare: two members of one group read disjoint
// partitions, every message once; when one leaves, the other reads its
// partitions on from the group's stored offsets.
func TestGroupMembersShare(t *testing.T) {
	e := newEnv(t, 4)
	for p := range uint32(4) {
		e.send(p, 0, 100)
	}
	conf := "consumer_group: g1\npoll_count: 30\npoll_interval: 10ms\n"
	a, b := e.newTestInput(conf), e.newTestInput(conf)
	who := map[string]map[*input]bool{}
	var all []string
	deadline := time.Now().Add(30 * time.Second)
	for len(all) < 400 && time.Now().Before(deadline) {
		for _, in := range []*input{a, b} {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			batch, ack, err := in.ReadBatch(ctx)
			cancel()
			if err != nil {
				continue
			}
			for _, m := range batch {
				all = append(all, payload(m))
				p, _ := m.MetaGet(MetaPartition)
				if who[p] == nil {
					who[p] = map[*input]bool{}
				}
				who[p][in] = true
			}
			_ = ack(context.Background(), nil)
		}
	}
	if got := sorted(all); !slices.Equal(got, want(4, 0, 100)) {
		t.Fatalf("the members read %d messages, not each of the 400 once", len(got))
	}
	var aParts, bParts int
	for p, ins := range who {
		if len(ins) != 1 {
			t.Errorf("partition %s read by both members", p)
		}
		if ins[a] {
			aParts++
		} else {
			bParts++
		}
	}
	if aParts == 0 || bParts == 0 {
		t.Fatalf("partitions split %d/%d: one member read nothing", aParts, bParts)
	}
	if err := b.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for p := range uint32(4) {
		e.send(p, 100, 5)
	}
	rs := readN(t, a, 20)
	ackAll(t, rs)
	if got := sorted(payloads(rs)); !slices.Equal(got, want(4, 100, 5)) {
		t.Fatalf("after the other member left, read %v", got)
	}
	gid, _ := iggy.NameID("g1")
	for p := range uint32(4) {
		if o := e.stored(iggy.GroupConsumer(gid), p); o != 104 {
			t.Errorf("group offset of partition %d: %d, want 104", p, o)
		}
	}
}

// TestReconnects: connections the server drops mid-read are made again,
// a group joined again, and nothing is lost or read twice.
func TestReconnects(t *testing.T) {
	for _, conf := range []string{"consumer: c7\n", "consumer_group: g2\n"} {
		t.Run(strings.Fields(conf)[0], func(t *testing.T) {
			e := newEnv(t, 2)
			if e.srv == nil {
				t.Skip("drops connections, which only the in-process test server can")
			}
			e.send(0, 0, 300)
			e.send(1, 0, 300)
			in := e.newTestInput(conf + "poll_count: 50\npoll_interval: 10ms\n")
			first := readN(t, in, 200)
			ackAll(t, first)
			if n := e.srv.DropConnections(); n == 0 {
				t.Fatal("no connection dropped")
			}
			rest := readN(t, in, 400)
			ackAll(t, rest)
			if got := sorted(append(payloads(first), payloads(rest)...)); !slices.Equal(got, want(2, 0, 300)) {
				t.Fatalf("read %d messages, not each of the 600 once", len(got))
			}
			noMore(t, in, 300*time.Millisecond)
		})
	}
}

// TestConfigErrors: what cannot work is refused naming the field.
func TestConfigErrors(t *testing.T) {
	base := "address: 127.0.0.1:8090\nusername: u\npassword: p\nstream: s\ntopic: t\n"
	cases := map[string]string{
		"consumer_group: g\npartitions: [0]\n": "field partitions is for a single consumer",
		"partitions: [1, 1]\n":                 "given twice",
		"poll_count: 0\n":                      "field poll_count",
		"start_from: middle\n":                 "field start_from",
		"checkpoint_limit: 0\n":                "field checkpoint_limit",
		"consumer: \"\"\n":                     "field consumer must not be empty",
	}
	for yaml, msg := range cases {
		conf, err := Spec().ParseYAML(base+yaml, nil)
		if err == nil {
			_, err = parseConfig(conf)
		}
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v, want %q", yaml, err, msg)
		}
	}
	conf, err := Spec().ParseYAML("stream: s\ntopic: t\n", nil)
	if err == nil {
		_, err = parseConfig(conf)
	}
	if err == nil || !strings.Contains(err.Error(), "username and password") {
		t.Errorf("no credentials: %v", err)
	}
}

// TestLint: the spec's lint rules catch values at their line.
func TestLint(t *testing.T) {
	env := service.NewEnvironment()
	linter := env.NewComponentConfigLinter()
	lints, err := linter.LintInputYAML([]byte("iggy:\n  stream: s\n  topic: t\n  poll_count: 0\n  start_from: middle\n"))
	if err != nil {
		t.Fatal(err)
	}
	var text []string
	for _, l := range lints {
		text = append(text, l.Error())
	}
	joined := strings.Join(text, "\n")
	for _, want := range []string{"poll_count", "start_from"} {
		if !strings.Contains(joined, want) {
			t.Errorf("lints %q lack %s", joined, want)
		}
	}
}

// TestGroupReadsAhead: a group member reads past what it has not
// acknowledged yet (the server polls from the group's stored offset, so
// it answers messages already in flight, which the input drops) and
// stores the group's offset once they are acknowledged.
func TestGroupReadsAhead(t *testing.T) {
	e := newEnv(t, 2)
	e.send(0, 0, 300)
	e.send(1, 0, 300)
	in := e.newTestInput("consumer_group: g3\npoll_count: 100\npoll_interval: 10ms\n")
	rs := readN(t, in, 600)
	if got := sorted(payloads(rs)); !slices.Equal(got, want(2, 0, 300)) {
		t.Fatalf("read %d messages, not each of the 600 once", len(got))
	}
	noMore(t, in, 300*time.Millisecond)
	gid, _ := iggy.NameID("g3")
	if o := e.stored(iggy.GroupConsumer(gid), 0); o != -1 {
		t.Fatalf("group offset %d stored before any acknowledgement", o)
	}
	ackAll(t, rs)
	for p := range uint32(2) {
		if o := e.stored(iggy.GroupConsumer(gid), p); o != 299 {
			t.Errorf("group offset of partition %d: %d, want 299", p, o)
		}
	}
}

// TestReadCancelledMidPoll: a ReadBatch whose context ends while a poll is
// on its way keeps the connection (and a group membership), so what is
// acknowledged afterwards is stored at once. A real server is slow enough
// for this to happen to a short context; the test server stalls the poll.
func TestReadCancelledMidPoll(t *testing.T) {
	for _, conf := range []string{"consumer: c8\n", "consumer_group: g4\n"} {
		t.Run(strings.Fields(conf)[0], func(t *testing.T) {
			e := newEnv(t, 1)
			if e.srv == nil {
				t.Skip("stalls polls, which only the in-process test server can")
			}
			e.send(0, 0, 50)
			in := e.newTestInput(conf + "poll_count: 50\n")
			rs := readN(t, in, 50)
			stall := e.srv.StallFor(iggytest.CmdPollMessages, 300*time.Millisecond)
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			_, _, err := in.ReadBatch(ctx)
			cancel()
			stall.Release()
			if err == nil {
				t.Fatal("ReadBatch read past its context")
			}
			ackAll(t, rs)
			c := single("c8")
			if strings.HasPrefix(conf, "consumer_group") {
				gid, _ := iggy.NameID("g4")
				c = iggy.GroupConsumer(gid)
			}
			if o := e.stored(c, 0); o != 49 {
				t.Fatalf("stored %d after the acknowledgement, want 49 (ReadBatch returned %v)", o, err)
			}
		})
	}
}

// TestGroupPollRacingAnAcknowledgement: a group poll on its way while the
// messages before it are acknowledged is answered from the group's stored
// offset as it was, before the acknowledgement's store: the messages just
// acknowledged. The input has nothing in flight by then, and must still
// drop them (they were delivered) rather than hand them out again.
func TestGroupPollRacingAnAcknowledgement(t *testing.T) {
	e := newEnv(t, 1)
	if e.srv == nil {
		t.Skip("stalls polls, which only the in-process test server can")
	}
	e.send(0, 0, 100)
	in := e.newTestInput("consumer_group: g6\npoll_count: 50\n")
	rs := readN(t, in, 50)
	stall := e.srv.Stall(iggytest.CmdPollMessages)
	type result struct {
		batch service.MessageBatch
		err   error
	}
	done := make(chan result, 1)
	go func() {
		b, _, err := in.ReadBatch(ctxT(t, 20*time.Second))
		done <- result{b, err}
	}()
	if err := stall.WaitFired(ctxT(t, 10*time.Second), 1); err != nil {
		t.Fatal(err)
	}
	acked := make(chan struct{})
	go func() { // the stores wait behind the poll
		defer close(acked)
		for _, r := range rs {
			if err := r.ack(context.Background(), nil); err != nil {
				t.Error(err)
			}
		}
	}()
	for settled := false; !settled; time.Sleep(5 * time.Millisecond) {
		in.mu.Lock()
		settled = in.parts[0] != nil && in.parts[0].inFlight == 0
		in.mu.Unlock()
	}
	stall.Release()
	r := <-done
	<-acked
	if r.err != nil {
		t.Fatal(r.err)
	}
	var got []string
	for _, m := range r.batch {
		got = append(got, payload(m))
	}
	if !slices.Equal(got, want(1, 50, 50)) {
		t.Fatalf("after the acknowledgement of p0-0..p0-49 the input handed out %v, want p0-50..p0-99", got)
	}
}
