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

	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
	_ "github.com/fluss-iggy/fluss-iggy/output/iggy"

	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
)

const (
	payloadSize = 1024
	batchSize   = 100
)

// messages is how many messages each measurement sends
// (IGGY_BENCH_MESSAGES, default 100,000 = 100 MB of payload).
func messages() int {
	if n, err := strconv.Atoi(os.Getenv("IGGY_BENCH_MESSAGES")); err == nil && n > 0 {
		return n - n%batchSize
	}
	return 100_000
}

var payload = []byte(strings.Repeat("0123456789abcdef", payloadSize/16))

type target struct {
	name       string
	addr       string
	user, pass string
}

func targets(b *testing.B) []target {
	log.SetOutput(io.Discard) // the SDK logs every login
	srv, err := iggytest.Start(iggytest.Options{MaxMessagesPerPartition: 10_000})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Close() })
	// The same server with 1 ms added to every send, as a server on
	// another machine (or one that syncs to disk) answers: this is where
	// more connections in flight should pay off.
	slow, err := iggytest.Start(iggytest.Options{MaxMessagesPerPartition: 10_000})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = slow.Close() })
	slow.StallFor(iggytest.CmdSendMessages, time.Millisecond)
	ts := []target{
		{"testserver", srv.Addr(), iggytest.DefaultUsername, iggytest.DefaultPassword},
		{"testserver+1ms", slow.Addr(), iggytest.DefaultUsername, iggytest.DefaultPassword},
	}
	if addr := os.Getenv("IGGY_TCP_ADDRESS"); addr != "" {
		user, pass := os.Getenv("IGGY_USERNAME"), os.Getenv("IGGY_PASSWORD")
		if user == "" {
			user = "iggy"
		}
		if pass == "" {
			pass = "iggy"
		}
		ts = append(ts, target{"real", addr, user, pass})
	}
	return ts
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

// setup creates a fresh stream with one topic of 4 partitions.
func setup(b *testing.B, t target, name string) string {
	cl := sdk(b, t)
	defer cl.Close()
	stream := fmt.Sprintf("bench-%s-%d", name, time.Now().UnixNano()%1e9)
	if _, err := cl.CreateStream(stream); err != nil {
		b.Fatal(err)
	}
	sid, _ := iggcon.NewIdentifier(stream)
	if _, err := cl.CreateTopic(sid, "t", 4, iggcon.CompressionAlgorithmNone, iggcon.IggyExpiryServerDefault, 0, nil); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cl := sdk(b, t)
		defer cl.Close()
		_ = cl.DeleteStream(sid)
	})
	return stream
}

// rawSDK sends n messages with `conns` goroutines, each looping over
// SendMessages on its own client, building the messages of each request
// as a producer would.
func rawSDK(b *testing.B, t target, stream string, n, conns int) time.Duration {
	sid, _ := iggcon.NewIdentifier(stream)
	tid, _ := iggcon.NewIdentifier("t")
	clients := make([]iggcon.Client, conns)
	for i := range clients {
		clients[i] = sdk(b, t)
		defer clients[i].Close()
	}
	requests := make(chan struct{}, n/batchSize)
	for range n / batchSize {
		requests <- struct{}{}
	}
	close(requests)
	start := time.Now()
	var wg sync.WaitGroup
	for _, cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range requests {
				msgs := make([]iggcon.IggyMessage, batchSize)
				for i := range msgs {
					m, err := iggcon.NewIggyMessage(payload)
					if err != nil {
						b.Error(err)
						return
					}
					msgs[i] = m
				}
				if err := cl.SendMessages(sid, tid, iggcon.None(), msgs); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

// pipeline runs generate -> iggy for n messages in batches of batchSize;
// with maxInFlight 0 the output is drop, which measures the input alone.
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
  topic: t
  max_in_flight: %d
`, t.addr, t.user, t.pass, stream, maxInFlight)
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

// rounds is how many times each case is measured (IGGY_BENCH_ROUNDS,
// default 3); the cases take turns so that load from other processes hits
// them alike, and the best round of each is reported.
func rounds() int {
	if n, err := strconv.Atoi(os.Getenv("IGGY_BENCH_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 3
}

// BenchmarkIggyOutput measures msgs/s and MB/s of payload for each case.
// Every measurement sends messages() messages, so run it with -benchtime 1x.
func BenchmarkIggyOutput(b *testing.B) {
	n := messages()
	for _, t := range targets(b) {
		if only := os.Getenv("IGGY_BENCH_TARGETS"); only != "" && !slices.Contains(strings.Split(only, ","), t.name) {
			continue
		}
		cases := []struct {
			name string
			run  func(b *testing.B, stream string) time.Duration
		}{
			{"raw_sdk/conns=1", func(b *testing.B, s string) time.Duration { return rawSDK(b, t, s, n, 1) }},
			{"pipeline/max_in_flight=1", func(b *testing.B, s string) time.Duration { return pipeline(b, t, s, n, 1) }},
			{"raw_sdk/conns=4", func(b *testing.B, s string) time.Duration { return rawSDK(b, t, s, n, 4) }},
			{"pipeline/max_in_flight=4", func(b *testing.B, s string) time.Duration { return pipeline(b, t, s, n, 4) }},
			// The ceiling the generate input puts on any pipeline here.
			{"generate_to_drop", func(b *testing.B, s string) time.Duration { return pipeline(b, t, s, n, 0) }},
		}
		best := map[string]float64{}
		cpu := map[string]float64{}
		all := map[string][]string{}
		for range rounds() {
			for _, c := range cases {
				if only := os.Getenv("IGGY_BENCH_CASES"); only != "" && !strings.Contains(c.name, only) {
					continue
				}
				stream := setup(b, t, strings.NewReplacer("/", "-", "=", "").Replace(c.name))
				cpu0 := cpuTime()
				rate := float64(n) / c.run(b, stream).Seconds()
				us := float64((cpuTime() - cpu0).Microseconds()) / float64(n)
				if rate > best[c.name] {
					best[c.name], cpu[c.name] = rate, us
				}
				all[c.name] = append(all[c.name], fmt.Sprintf("%.0f", rate))
			}
		}
		for _, c := range cases {
			if best[c.name] == 0 {
				continue
			}
			b.Run(t.name+"/"+c.name, func(b *testing.B) {
				b.ReportMetric(best[c.name], "msgs/s")
				b.ReportMetric(best[c.name]*payloadSize/1e6, "MB/s")
				b.ReportMetric(cpu[c.name], "cpu-µs/msg")
				b.ReportMetric(0, "ns/op")
				b.Logf("msgs/s per round: %s", strings.Join(all[c.name], " "))
			})
		}
		r1, p1 := best["raw_sdk/conns=1"], best["pipeline/max_in_flight=1"]
		if r1 == 0 || p1 == 0 {
			continue
		}
		b.Logf("%s, %d messages of %d bytes in requests of %d, best of %d rounds: pipeline/raw SDK (one connection) %.2f×, pipeline max_in_flight 4/1 %.2f×, raw SDK 4/1 connections %.2f×, generate->drop %.0f msgs/s",
			t.name, n, payloadSize, batchSize, rounds(), p1/r1, best["pipeline/max_in_flight=4"]/p1, best["raw_sdk/conns=4"]/r1, best["generate_to_drop"])
	}
}
