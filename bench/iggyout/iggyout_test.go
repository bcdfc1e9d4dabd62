package iggyout_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/iggy/foreign/go/client"
	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/iggy"
	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
	_ "github.com/fluss-iggy/fluss-iggy/output/iggy"

	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
)

const (
	payloadSize = 1024
	batchSize   = 100
	topicName   = "t"
)

// messages is how many messages each measurement sends
// (IGGY_BENCH_MESSAGES, default 100,000 = 100 MB of payload).
func messages() int {
	if n, err := strconv.Atoi(os.Getenv("IGGY_BENCH_MESSAGES")); err == nil && n > 0 {
		return max(batchSize, n-n%batchSize)
	}
	return 100_000
}

// rounds is how many times each case is measured (IGGY_BENCH_ROUNDS,
// default 3); the cases take turns so that load from other processes hits
// them alike, and the best round of each is reported.
func rounds() int {
	if n, err := strconv.Atoi(os.Getenv("IGGY_BENCH_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 3
}

var payload = []byte(strings.Repeat("0123456789abcdef", payloadSize/16))

// target is a server to measure against, in one dialect.
type target struct {
	name       string
	addr       string
	user, pass string
	version    iggy.Version
	server     string // what the server says it is, when it says
	// ref names the 0.8 target whose raw SDK loop this target's pipeline is
	// held against (the SDK speaks only 0.8); itself for a 0.8 target.
	ref string
}

func (t target) sdk() bool { return t.version == iggy.Version08 }

// targets are the in-process test server, plain and with 1 ms added to
// every send, in both dialects (0.8 first, as the 0.9 targets are held
// against their raw SDK figures), then the real servers (realTargets).
// IGGY_BENCH_TARGETS (a comma list of names) keeps only some.
func targets(b *testing.B) []target {
	log.SetOutput(io.Discard) // the SDK logs every login through the std logger
	var ts []target
	for _, v := range []iggy.Version{iggy.Version08, iggy.Version09} {
		for _, stall := range []time.Duration{0, time.Millisecond} {
			ts = append(ts, testServer(b, v, stall))
		}
	}
	ts = append(ts, realTargets(b)...)
	only := os.Getenv("IGGY_BENCH_TARGETS")
	return slices.DeleteFunc(ts, func(t target) bool {
		return only != "" && !slices.Contains(strings.Split(only, ","), t.name)
	})
}

// testServer starts an in-process server in dialect v. With stall, every
// send is answered that much later, as a server on another machine (or
// one that syncs to disk) answers: the rate is then set by each request's
// round trip rather than by two cores shared with the server, and more
// connections in flight pay off. The server keeps every message (no
// MaxMessagesPerPartition): each measurement's stream is deleted right
// after it, and a cap of 10,000 made the server copy the whole kept window
// on every send, most of the process's CPU.
func testServer(b *testing.B, v iggy.Version, stall time.Duration) target {
	tv, tag := iggytest.Version08, "08"
	if v == iggy.Version09 {
		tv, tag = iggytest.Version09, "09"
	}
	srv, err := iggytest.Start(iggytest.Options{Version: tv})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Close() })
	name := "testserver" + tag
	if stall > 0 {
		srv.StallFor(iggytest.CmdSendMessages, stall)
		name += "+" + stall.String()
	}
	return target{name: name, addr: srv.Addr(), user: iggytest.DefaultUsername, pass: iggytest.DefaultPassword,
		version: v, server: "internal/iggytest", ref: strings.Replace(name, "testserver09", "testserver08", 1)}
}

// realTargets are the servers at IGGY_TCP_ADDRESS, IGGY08_TCP_ADDRESS and
// IGGY09_TCP_ADDRESS (the names package iggy's real-server tests read),
// each address once, logged in with IGGY_USERNAME and IGGY_PASSWORD
// (default iggy / iggy) and named real08 or real09 by the dialect they
// answer in.
func realTargets(b *testing.B) []target {
	user, pass := os.Getenv("IGGY_USERNAME"), os.Getenv("IGGY_PASSWORD")
	if user == "" {
		user = "iggy"
	}
	if pass == "" {
		pass = "iggy"
	}
	var ts []target
	for _, env := range []string{"IGGY_TCP_ADDRESS", "IGGY08_TCP_ADDRESS", "IGGY09_TCP_ADDRESS"} {
		addr := os.Getenv(env)
		if addr == "" || slices.ContainsFunc(ts, func(o target) bool { return o.addr == addr }) {
			continue
		}
		t := target{addr: addr, user: user, pass: pass}
		c := dial(b, t)
		t.version, t.server = c.Info().Version, c.Info().Server
		_ = c.Close()
		if t.server == "" {
			t.server = "not told" // a 0.8 login does not say
		}
		t.name = "real08"
		if t.version == iggy.Version09 {
			t.name = "real09"
		}
		if slices.ContainsFunc(ts, func(o target) bool { return o.name == t.name }) {
			t.name += "b"
		}
		t.ref = "real08"
		ts = append(ts, t)
	}
	return ts
}

// dial logs a connection of our own client in, in t's dialect (found at
// connect when t.version is not known yet).
func dial(b *testing.B, t target) *iggy.Conn {
	c, err := iggy.Dial(context.Background(), iggy.Options{
		Addr:        t.addr,
		Credentials: iggy.Credentials{Username: t.user, Password: t.pass},
		Version:     t.version,
		Timeout:     30 * time.Second,
	})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func sdk(b *testing.B, t target) iggcon.Client {
	cl, err := client.NewIggyClient(client.WithTcp(tcp.WithServerAddress(t.addr)))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := cl.LoginUser(t.user, t.pass); err != nil {
		b.Fatal(err)
	}
	return cl
}

// setup creates a fresh stream with one topic of 4 partitions, and
// returns its name and a function that deletes it (right after the
// measurement, so that a real server does not keep every round's data).
func setup(b *testing.B, t target, name string) (string, func()) {
	c := dial(b, t)
	defer c.Close()
	ctx := context.Background()
	stream := fmt.Sprintf("bench-%s-%d", name, time.Now().UnixNano()%1e9)
	sid, err := iggy.NameID(stream)
	if err != nil {
		b.Fatal(err)
	}
	if err := c.CreateStream(ctx, stream); err != nil {
		b.Fatal(err)
	}
	if err := c.CreateTopic(ctx, sid, iggy.TopicSpec{Name: topicName, Partitions: 4}); err != nil {
		b.Fatal(err)
	}
	return stream, func() {
		c := dial(b, t)
		defer c.Close()
		if err := c.DeleteStream(ctx, sid); err != nil {
			b.Logf("deleting stream %s on %s: %v", stream, t.name, err)
		}
	}
}

// loop sends n/batchSize requests with one goroutine per worker, each
// calling send(worker) until the requests run out, and returns how long
// that took.
func loop(b *testing.B, workers, n int, send func(worker int) error) time.Duration {
	requests := make(chan struct{}, n/batchSize)
	for range n / batchSize {
		requests <- struct{}{}
	}
	close(requests)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range requests {
				if err := send(w); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}

// rawSDK sends n messages over `conns` Iggy Go SDK clients, each request's
// messages built with NewIggyMessage as a producer would.
func rawSDK(b *testing.B, t target, stream string, n, conns int) time.Duration {
	sid, _ := iggcon.NewIdentifier(stream)
	tid, _ := iggcon.NewIdentifier(topicName)
	clients := make([]iggcon.Client, conns)
	for i := range clients {
		clients[i] = sdk(b, t)
		defer clients[i].Close()
	}
	return loop(b, conns, n, func(w int) error {
		msgs := make([]iggcon.IggyMessage, batchSize)
		for i := range msgs {
			m, err := iggcon.NewIggyMessage(payload)
			if err != nil {
				return err
			}
			msgs[i] = m
		}
		return clients[w].SendMessages(sid, tid, iggcon.None(), msgs)
	})
}

// rawClient is rawSDK on connections of our own client (package iggy), in
// t's dialect: the same payloads, request size and balanced partitioning,
// each request's messages built afresh.
func rawClient(b *testing.B, t target, stream string, n, conns int) time.Duration {
	sid, _ := iggy.NameID(stream)
	tid, _ := iggy.NameID(topicName)
	cs := make([]*iggy.Conn, conns)
	for i := range cs {
		cs[i] = dial(b, t)
		defer cs[i].Close()
	}
	ctx := context.Background()
	return loop(b, conns, n, func(w int) error {
		msgs := make([]iggy.Message, batchSize)
		for i := range msgs {
			msgs[i] = iggy.Message{Payload: payload}
		}
		_, err := cs[w].Send(ctx, &iggy.Batch{Stream: sid, Topic: tid, Partitioning: iggy.Balanced(),
			OriginTimestamp: uint64(time.Now().UnixMicro()), Messages: msgs})
		return err
	})
}

// pipeline runs generate -> iggy for n messages in batches of batchSize;
// with maxInFlight 0 the output is drop, which measures the input alone.
// The output finds the dialect itself (server_version: auto, one probe per
// connection; each target speaks only one): pinning "0.8" or "0.9" does
// not pass the stream builder's lint, whose enum check reads the option as
// a Bloblang path.
func pipeline(b *testing.B, t target, stream string, n, maxInFlight int) time.Duration {
	sb := service.NewStreamBuilder()
	if err := sb.SetLoggerYAML("level: off"); err != nil {
		b.Fatal(err)
	}
	if err := sb.AddInputYAML(fmt.Sprintf(`
generate:
  count: %d
  interval: ""
  batch_size: %d
  mapping: 'root = %q'
`, n, batchSize, payload)); err != nil {
		b.Fatal(err)
	}
	output := fmt.Sprintf(`
iggy:
  address: %s
  username: %q
  password: %q
  stream: %s
  topic: %s
  server_version: auto
  max_in_flight: %d
`, t.addr, t.user, t.pass, stream, topicName, maxInFlight)
	if maxInFlight == 0 {
		output = "drop: {}"
	}
	if err := sb.AddOutputYAML(output); err != nil {
		b.Fatal(err)
	}
	s, err := sb.Build()
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	if err := s.Run(ctx); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// cpuTime is the user and system CPU time this process has used (the
// in-process test server included).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Case names.
const (
	sdk1, sdk4       = "raw_sdk/conns=1", "raw_sdk/conns=4"
	client1, client4 = "raw_client/conns=1", "raw_client/conns=4"
	pipe1, pipe4     = "pipeline/max_in_flight=1", "pipeline/max_in_flight=4"
	genDrop          = "generate_to_drop"
)

type benchCase struct {
	name string
	run  func(b *testing.B, stream string) time.Duration
}

// cases are what runs against t: the raw SDK loop (0.8 only), the raw
// loop on our client, the pipeline, and generate -> drop, the ceiling the
// generate input puts on any pipeline here. IGGY_BENCH_CASES (a
// substring) keeps only some.
func cases(t target, n int) []benchCase {
	var cs []benchCase
	for _, conns := range []int{1, 4} {
		if t.sdk() {
			cs = append(cs, benchCase{fmt.Sprintf("raw_sdk/conns=%d", conns),
				func(b *testing.B, s string) time.Duration { return rawSDK(b, t, s, n, conns) }})
		}
		cs = append(cs,
			benchCase{fmt.Sprintf("raw_client/conns=%d", conns),
				func(b *testing.B, s string) time.Duration { return rawClient(b, t, s, n, conns) }},
			benchCase{fmt.Sprintf("pipeline/max_in_flight=%d", conns),
				func(b *testing.B, s string) time.Duration { return pipeline(b, t, s, n, conns) }})
	}
	cs = append(cs, benchCase{genDrop, func(b *testing.B, s string) time.Duration { return pipeline(b, t, s, n, 0) }})
	only := os.Getenv("IGGY_BENCH_CASES")
	return slices.DeleteFunc(cs, func(c benchCase) bool { return only != "" && !strings.Contains(c.name, only) })
}

// result is a case's best round (msgs/s and the CPU µs per message of that
// round) and the msgs/s of every round.
type result struct {
	rate, cpu float64
	rounds    []string
}

// measure runs every case rounds() times, taking turns.
func measure(b *testing.B, t target, cs []benchCase, n int) map[string]*result {
	res := map[string]*result{}
	for range rounds() {
		for _, c := range cs {
			stream, drop := setup(b, t, strings.NewReplacer("/", "-", "=", "").Replace(c.name))
			cpu0 := cpuTime()
			rate := float64(n) / c.run(b, stream).Seconds()
			us := float64((cpuTime() - cpu0).Microseconds()) / float64(n)
			drop()
			r := res[c.name]
			if r == nil {
				r = &result{}
				res[c.name] = r
			}
			if rate > r.rate {
				r.rate, r.cpu = rate, us
			}
			r.rounds = append(r.rounds, fmt.Sprintf("%.0f", rate))
		}
	}
	return res
}

// report reports each case of t as a sub-benchmark.
func report(b *testing.B, t target, cs []benchCase, res map[string]*result) {
	for _, c := range cs {
		r := res[c.name]
		b.Run(t.name+"/"+c.name, func(b *testing.B) {
			b.ReportMetric(r.rate, "msgs/s")
			b.ReportMetric(r.rate*payloadSize/1e6, "MB/s")
			b.ReportMetric(r.cpu, "cpu-µs/msg")
			b.ReportMetric(0, "ns/op")
			b.Logf("msgs/s per round: %s", strings.Join(r.rounds, " "))
		})
	}
}

// ratio is a/b, 0 when either is missing.
func ratio(a, b float64) float64 {
	if a == 0 || b == 0 {
		return 0
	}
	return a / b
}

// x renders a ratio as "0.93×", or "-" when it is missing.
func x(r float64) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", r)
}

// figures are the best msgs/s of every case on every target, by target
// and case name.
type figures map[string]map[string]*result

// rate is the best msgs/s of a case on a target, 0 if it did not run.
func (f figures) rate(target, c string) float64 {
	if r := f[target][c]; r != nil {
		return r.rate
	}
	return 0
}

// summary reports t's ratios as a sub-benchmark <target>/summary (so they
// show without -v): the pipeline against the raw SDK loop (on t, or for a
// 0.9 target on its 0.8 twin) and against the raw loop on our own client,
// on 1 and on 4 connections.
func summary(b *testing.B, t target, f figures, n int) {
	r := f.rate
	sdk, client := ratio(r(t.name, pipe1), r(t.ref, sdk1)), ratio(r(t.name, pipe1), r(t.name, client1))
	b.Run(t.name+"/summary", func(b *testing.B) {
		b.ReportMetric(sdk, "pipeline/raw_sdk")
		b.ReportMetric(client, "pipeline/raw_client")
		b.ReportMetric(0, "ns/op")
		b.Logf("%s (Iggy %s, server %q), %d messages of %d bytes in requests of %d, best of %d rounds: "+
			"pipeline/raw SDK on %s %s (4 conns: %s), pipeline/raw_client %s (4: %s), raw_client/raw SDK %s (4: %s), "+
			"pipeline max_in_flight 4/1 %s, generate->drop %.0f msgs/s",
			t.name, t.version, t.server, n, payloadSize, batchSize, rounds(),
			t.ref, x(sdk), x(ratio(r(t.name, pipe4), r(t.ref, sdk4))),
			x(client), x(ratio(r(t.name, pipe4), r(t.name, client4))),
			x(ratio(r(t.name, client1), r(t.ref, sdk1))), x(ratio(r(t.name, client4), r(t.ref, sdk4))),
			x(ratio(r(t.name, pipe4), r(t.name, pipe1))), r(t.name, genDrop))
	})
}

// keyFigure reports the figure as the sub-benchmark key_figure:
// the pipeline on our client in each dialect against the 1 ms test
// server, over the raw SDK loop on 0.8 (target ≥ 0.95× on 0.8; the 0.9
// figure beside it).
func keyFigure(b *testing.B, f figures) {
	const ref, t09 = "testserver08+1ms", "testserver09+1ms"
	r := f.rate
	k08, k09 := ratio(r(ref, pipe1), r(ref, sdk1)), ratio(r(t09, pipe1), r(ref, sdk1))
	if k08 == 0 && k09 == 0 {
		return
	}
	b.Run("key_figure", func(b *testing.B) {
		b.ReportMetric(k08, "pipeline08/raw_sdk08")
		b.ReportMetric(k09, "pipeline09/raw_sdk08")
		b.ReportMetric(0, "ns/op")
		b.Logf("1 ms test server, max_in_flight 1 / conns 1: pipeline(0.8,+1ms)/raw_sdk(0.8,+1ms) = %s (target ≥ 0.95×), "+
			"pipeline(0.9,+1ms)/raw_sdk(0.8,+1ms) = %s; max_in_flight 4 / conns 4: %s and %s",
			x(k08), x(k09), x(ratio(r(ref, pipe4), r(ref, sdk4))), x(ratio(r(t09, pipe4), r(ref, sdk4))))
	})
}

// BenchmarkIggyOutput measures msgs/s, MB/s of payload and CPU per message
// for each case on each target. Every measurement sends messages()
// messages, so run it with -benchtime 1x.
func BenchmarkIggyOutput(b *testing.B) {
	n := messages()
	all := figures{}
	for _, t := range targets(b) {
		cs := cases(t, n)
		if len(cs) == 0 {
			continue
		}
		all[t.name] = measure(b, t, cs, n)
		report(b, t, cs, all[t.name])
		summary(b, t, all, n)
	}
	keyFigure(b, all)
}
