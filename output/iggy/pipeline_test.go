package iggyoutput_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
)

func indent(yaml string) string {
	return "    " + strings.ReplaceAll(strings.TrimSpace(yaml), "\n", "\n    ")
}

// pipeline runs a stream whose input is a batch producer function and whose
// output is the iggy output configured by yaml. produce blocks until the
// batch is acknowledged (nil) or nacked.
func pipeline(t *testing.T, yaml string) (produce service.MessageBatchHandlerFunc, stop func()) {
	t.Helper()
	b := service.NewStreamBuilder()
	if err := b.SetLoggerYAML("level: off"); err != nil {
		t.Fatal(err)
	}
	produce, err := b.AddBatchProducerFunc()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.AddOutputYAML("iggy:\n" + indent(yaml)); err != nil {
		t.Fatalf("output config: %v", err)
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = s.StopWithin(10 * time.Second)
			cancel()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				t.Error("the stream did not stop within 15s")
			}
		})
	}
	t.Cleanup(stop)
	return produce, stop
}

// checkAll asserts that every payload in want is stored (at least once, or
// exactly once when exact) and nothing else.
func (e *env) checkAll(stream, topic string, want []string, exact bool) {
	e.t.Helper()
	count := map[string]int{}
	for _, p := range sortedPayloads(e.pollAll(stream, topic)) {
		count[p]++
	}
	missing, dups := 0, 0
	for _, w := range want {
		switch n := count[w]; {
		case n == 0:
			missing++
			if missing <= 5 {
				e.t.Errorf("%s is missing", w)
			}
		case n > 1:
			dups++
		}
		delete(count, w)
	}
	if missing > 0 {
		e.t.Errorf("%d of %d messages missing", missing, len(want))
	}
	if exact && dups > 0 {
		e.t.Errorf("%d messages stored more than once", dups)
	}
	if len(count) > 0 {
		e.t.Errorf("%d unexpected messages stored", len(count))
	}
	e.t.Logf("%d messages checked, %d stored more than once", len(want), dups)
}

// TestPipelineServerRestart restarts the server, and drops connections,
// while a pipeline is writing: every message is acknowledged and stored.
func TestPipelineServerRestart(t *testing.T) {
	for _, mif := range []int{1, 4} {
		t.Run(fmt.Sprintf("max_in_flight=%d", mif), func(t *testing.T) {
			e := newEnv(t)
			srv := e.needFaults()
			e.createTopic("restart", "t", 2)
			produce, stop := pipeline(t, e.outputYAML(fmt.Sprintf("stream: restart\ntopic: t\nmax_in_flight: %d\ntimeout: 2s", mif)))

			const producers, batches, size = 4, 30, 10
			var want []string
			var mu sync.Mutex
			var wg sync.WaitGroup
			var sent atomic.Int64
			errs := make(chan error, producers)
			// Every producer stops before these batches until the fault
			// is in place, so each fault meets traffic whatever the speed.
			gates := map[int]chan struct{}{8: make(chan struct{}), 15: make(chan struct{}), 22: make(chan struct{})}
			for p := range producers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for b := range batches {
						if g, ok := gates[b]; ok {
							<-g
						}
						var batch service.MessageBatch
						for i := range size {
							payload := fmt.Sprintf("p%d-b%02d-m%d", p, b, i)
							batch = append(batch, msg(payload))
							mu.Lock()
							want = append(want, payload)
							mu.Unlock()
						}
						ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
						err := produce(ctx, batch)
						cancel()
						if err != nil {
							errs <- fmt.Errorf("producer %d batch %d: %w", p, b, err)
							return
						}
						sent.Add(1)
					}
				}()
			}
			waitFor(t, func() bool { return sent.Load() == producers*8 })
			if err := srv.Restart(); err != nil {
				t.Fatal(err)
			}
			close(gates[8])
			waitFor(t, func() bool { return sent.Load() == producers*15 })
			srv.DropConnections()
			close(gates[15])
			waitFor(t, func() bool { return sent.Load() == producers*22 })
			drop := srv.DropAfter(iggytest.CmdAny, 3) // the 4th request of any kind loses its connection
			close(gates[22])
			wg.Wait()
			if drop.Fired() != 1 {
				t.Errorf("the connection drop never fired")
			}
			// One login at start, and at least one after each of the
			// three faults.
			if n := srv.RequestCount(iggytest.CmdLoginUser); n < 4 {
				t.Errorf("%d logins: the output did not reconnect after each fault", n)
			} else {
				t.Logf("%d logins", n)
			}
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			stop()
			e.checkAll("restart", "t", want, false)
		})
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 60s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestPipelineMaxInFlight writes from many producers at once with
// max_in_flight 1 and 8 (run it with -race): every message is stored exactly
// once, and the output never holds more connections than max_in_flight.
func TestPipelineMaxInFlight(t *testing.T) {
	for _, mif := range []int{1, 8} {
		t.Run(fmt.Sprintf("max_in_flight=%d", mif), func(t *testing.T) {
			e := newEnv(t)
			stream := e.stream()
			e.createTopic(stream, "t", 3)
			loginsBefore := 0
			if e.srv != nil {
				loginsBefore = e.srv.RequestCount(iggytest.CmdLoginUser)
			}
			produce, stop := pipeline(t, e.outputYAML(fmt.Sprintf(`
stream: %s
topic: t
partitioning: messages_key
key: '${! @k }'
max_in_flight: %d
`, stream, mif)))

			const producers, batches, size = 16, 20, 10
			want := make([]string, 0, producers*batches*size)
			var mu sync.Mutex
			var wg sync.WaitGroup
			for p := range producers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for b := range batches {
						var batch service.MessageBatch
						for i := range size {
							payload := fmt.Sprintf("p%02d-b%02d-m%d", p, b, i)
							batch = append(batch, msg(payload, "k", fmt.Sprint(p)))
							mu.Lock()
							want = append(want, payload)
							mu.Unlock()
						}
						if err := produce(context.Background(), batch); err != nil {
							t.Errorf("producer %d batch %d: %v", p, b, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			stop()
			logins := 0
			if e.srv != nil {
				logins = e.srv.RequestCount(iggytest.CmdLoginUser) - loginsBefore
			}
			e.checkAll(stream, "t", want, true)
			if e.srv != nil {
				// Without faults every connection logs in once.
				if logins > mif {
					t.Errorf("%d connections logged in with max_in_flight %d", logins, mif)
				}
				if mif > 1 && logins < 2 {
					t.Errorf("only %d connection with max_in_flight %d", logins, mif)
				}
				t.Logf("connections: %d", logins)
			}
		})
	}
}

// TestPipelineGenerate runs generate -> iggy until the input ends.
func TestPipelineGenerate(t *testing.T) {
	e := newEnv(t)
	stream := e.stream()
	b := service.NewStreamBuilder()
	if err := b.SetLoggerYAML("level: off"); err != nil {
		t.Fatal(err)
	}
	if err := b.AddInputYAML(`
generate:
  count: 500
  interval: ""
  batch_size: 50
  mapping: 'root = "msg-%04d".format(counter())'
`); err != nil {
		t.Fatal(err)
	}
	if err := b.AddOutputYAML("iggy:\n" + indent(e.outputYAML(fmt.Sprintf(`
stream: %s
topic: gen
create_stream: true
create_topic: true
partitions: 2
max_in_flight: 4
batching:
  count: 100
`, stream)))); err != nil {
		t.Fatal(err)
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(ctxT(t, time.Minute)); err != nil {
		t.Fatalf("Run: %v", err)
	}
	var want []string
	for i := 1; i <= 500; i++ {
		want = append(want, fmt.Sprintf("msg-%04d", i))
	}
	e.checkAll(stream, "gen", want, true)
}
