package iggyoutput_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
	"github.com/fluss-iggy/fluss-iggy/internal/stop"
)

// TestRejectedSendsNeverAcknowledged is the regression test of the stolen
// reply: with the Go SDK, its heartbeat goroutine pinged every 5s on the
// socket the output was sending on, read the reply to a rejected send and
// left the output the ping's OK, so a rejected batch was acknowledged (on
// the code before our own client this test fails within 11s). Here two
// senders write batches that Iggy rejects (the stream does not exist) for
// 12s, one back to back, the other pausing past keep_alive every 2s so
// that its idle connection is pinged between sends: every single batch
// must come back as rejected.
func TestRejectedSendsNeverAcknowledged(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	stream := e.stream() // never created
	out := e.output(fmt.Sprintf("stream: %s\ntopic: t\nkeep_alive: 1s\nmax_in_flight: 2", stream))
	mustConnect(t, out)
	deadline := time.Now().Add(12 * time.Second)
	var wg sync.WaitGroup
	var total atomic.Int64
	for sender, pause := range []bool{false, true} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lastPause := time.Now()
			for n := 0; time.Now().Before(deadline); n++ {
				err := out.WriteBatch(ctxT(t, 10*time.Second), service.MessageBatch{msg(fmt.Sprintf("%d-%d", sender, n))})
				var berr *service.BatchError
				if !errors.As(err, &berr) || !strings.Contains(err.Error(), "the stream does not exist") {
					t.Errorf("sender %d, send %d to a missing stream: want it rejected, got %v", sender, n, err)
					return
				}
				total.Add(1)
				if pause && time.Since(lastPause) > 2*time.Second {
					time.Sleep(1200 * time.Millisecond) // past keep_alive: the connection is pinged
					lastPause = time.Now()
				}
			}
		}()
	}
	wg.Wait()
	if !t.Failed() {
		t.Logf("%d rejected sends, every one reported as rejected", total.Load())
	}
}

// TestIdleGapsDeliverExactlyOnce sends with idle gaps of 4 to 6s between
// batches, around the keep-alive interval: every message arrives exactly
// once and in order.
func TestIdleGapsDeliverExactlyOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	stream := e.stream()
	e.createTopic(stream, "t", 1)
	out := e.output(fmt.Sprintf("stream: %s\ntopic: t", stream))
	mustConnect(t, out)
	var want []string
	for i, gap := range []time.Duration{4 * time.Second, 5 * time.Second, 6 * time.Second, 0} {
		batch := service.MessageBatch{msg(fmt.Sprintf("%d-a", i)), msg(fmt.Sprintf("%d-b", i))}
		if err := out.WriteBatch(ctxT(t, 10*time.Second), batch); err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		want = append(want, fmt.Sprintf("%d-a", i), fmt.Sprintf("%d-b", i))
		time.Sleep(gap)
	}
	if got := payloads(e.poll(stream, "t", 0)); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("stored %v, want %v", got, want)
	}
}

// TestConnectBackoff: failed connection attempts ask Benthos to wait a
// backoff that doubles from 1s, so the log gets one line per attempt at
// growing intervals instead of one a second forever. Each line reads as the
// fluss input's: what failed, naming the address, then "(attempt n; next
// in d)".
func TestConnectBackoff(t *testing.T) {
	out, err := newOutput("address: 127.0.0.1:1\nusername: iggy\npassword: iggy\nstream: s\ntopic: t\ntimeout: 1s")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = out.Close(ctxT(t, 5*time.Second)) }()
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second} {
		err := out.Connect(ctxT(t, 10*time.Second))
		var eb *service.ErrBackOff
		if !errors.As(err, &eb) || eb.Wait != want {
			t.Fatalf("attempt %d: want a backoff of %v, got %#v", i+1, want, err)
		}
		if !strings.HasPrefix(err.Error(), "connecting to Iggy at 127.0.0.1:1: ") ||
			!strings.HasSuffix(err.Error(), fmt.Sprintf(" (attempt %d; next in %v)", i+1, want)) {
			t.Errorf("attempt %d: %v", i+1, err)
		}
	}
}

// TestNotAnIggyServer: an address that answers like something else (an
// HTTP server) is named for what it is.
func TestNotAnIggyServer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	for _, v := range []string{"auto", "0.8", "0.9"} {
		out, err := newOutput(fmt.Sprintf("address: %s\nusername: iggy\npassword: iggy\nstream: s\ntopic: t\ntimeout: 2s\nserver_version: %q", addr, v))
		if err != nil {
			t.Fatal(err)
		}
		err = out.Connect(ctxT(t, 10*time.Second))
		if err == nil || !strings.Contains(err.Error(), addr+" is not an Iggy server") {
			t.Errorf("server_version %s: %v", v, err)
		}
		_ = out.Close(ctxT(t, 5*time.Second))
	}
}

// TestServerVersions: auto finds the test server's dialect, a pinned one
// that matches works, and a pinned one that does not says so.
func TestServerVersions(t *testing.T) {
	if _, _, _, ok := realServer(); ok {
		t.Skip("starts test servers of each dialect")
	}
	for _, tc := range []struct {
		name  string
		v     iggytest.Version
		right string
		wrong string
	}{
		{"0.8", iggytest.Version08, "0.8", "0.9"},
		{"0.9", iggytest.Version09, "0.9", "0.8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startWithTopic(t, iggytest.Options{Version: tc.v})
			base := fmt.Sprintf("address: %s\nusername: iggy\npassword: iggy\nstream: s\ntopic: t\ntimeout: 2s\n", srv.Addr())
			for _, v := range []string{"auto", tc.right} {
				out, err := newOutput(base + "server_version: " + v)
				if err != nil {
					t.Fatal(err)
				}
				mustConnect(t, out)
				if err := out.WriteBatch(ctxT(t, 10*time.Second), service.MessageBatch{msg(v)}); err != nil {
					t.Fatalf("server_version %s: %v", v, err)
				}
				_ = out.Close(ctxT(t, time.Second))
			}
			if n := len(srv.Messages("s", "t")); n != 2 {
				t.Errorf("stored %d messages, want 2", n)
			}
			out, err := newOutput(base + "server_version: " + tc.wrong)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			err = out.Connect(ctxT(t, 10*time.Second))
			if err == nil {
				t.Fatalf("server_version %s against a %s server connected", tc.wrong, tc.name)
			}
			t.Logf("server_version %s against a %s server, after %v: %v", tc.wrong, tc.name, time.Since(start).Round(time.Millisecond), err)
		})
	}
}

// TestUnsupportedServerStops: a server of a protocol we do not speak (a
// 0.10 server evicts the 0.9 login and names its protocol window) gets one
// clear error, and the output asks the process to stop instead of
// retrying.
func TestUnsupportedServerStops(t *testing.T) {
	if _, _, _, ok := realServer(); ok {
		t.Skip("needs a simulated Iggy 0.10 server")
	}
	// A 0.10 server evicts the login with its protocol window; a server
	// that cannot decode the login body answers status 4 (InvalidFormat),
	// which is reported as a likely version mismatch, not retried.
	for name, tc := range map[string]struct {
		invalidFormat bool
		says          string
	}{
		"eviction":       {false, "protocol 0.12"},
		"invalid_format": {true, "InvalidFormat (status 4)"},
	} {
		t.Run(name, func(t *testing.T) {
			stop.Reset()
			defer stop.Reset()
			srv, err := iggytest.Start(iggytest.Options{Version: iggytest.Version010, LoginInvalidFormat: tc.invalidFormat})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			out, err := newOutput(fmt.Sprintf("address: %s\nusername: iggy\npassword: iggy\nstream: s\ntopic: t\ntimeout: 2s", srv.Addr()))
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			err = out.Connect(ctxT(t, 10*time.Second))
			if err == nil || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), "this build speaks") {
				t.Fatalf("Connect to a 0.10 server: %v", err)
			}
			if stop.Err() == nil {
				t.Error("the output did not ask the process to stop")
			}
			t.Logf("after %v: %v", time.Since(start).Round(time.Millisecond), err)
		})
	}
}

// TestCloseReportsUndelivered: messages that could not be delivered because
// Iggy is down when the output is closed are counted, and the process is
// asked to exit non-zero.
func TestCloseReportsUndelivered(t *testing.T) {
	e := newEnv(t)
	srv := e.needFaults()
	stop.Reset()
	defer stop.Reset()
	e.createTopic("down", "t", 1)
	out := e.output("stream: down\ntopic: t\ntimeout: 500ms")
	mustConnect(t, out)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	batch := service.MessageBatch{msg("1"), msg("2"), msg("3")}
	for range 2 { // Benthos writes the same batch again after reconnecting
		if err := out.WriteBatch(ctxT(t, 10*time.Second), batch); !errors.Is(err, service.ErrNotConnected) {
			t.Fatalf("WriteBatch with the server down: %v", err)
		}
	}
	if err := out.Close(ctxT(t, 2*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := stop.Err(); err == nil || !strings.Contains(err.Error(), "3 messages were not delivered to Iggy") {
		t.Errorf("after Close: %v", err)
	}
}

// TestCleanServerStopResends: a 0.8 server shutting down cleanly answers
// the next request with Disconnected (8); the batch is sent again after
// reconnecting, not nacked as messages Iggy refused.
func TestCleanServerStopResends(t *testing.T) {
	e := newEnvOpts(t, iggytest.Options{GracefulStop: true})
	srv := e.needFaults()
	e.createTopic("clean", "t", 1)
	out := e.output("stream: clean\ntopic: t\ntimeout: 1s")
	mustConnect(t, out)
	if err := out.WriteBatch(ctxT(t, 10*time.Second), service.MessageBatch{msg("before")}); err != nil {
		t.Fatalf("WriteBatch: %v", err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	after := service.MessageBatch{msg("after")}
	err := out.WriteBatch(ctxT(t, 10*time.Second), after)
	for try := 0; err != nil; try++ {
		if try == 3 {
			t.Fatalf("not delivered after 3 reconnections: %v", err)
		}
		if !errors.Is(err, service.ErrNotConnected) {
			t.Fatalf("WriteBatch after a clean restart: %v, want service.ErrNotConnected", err)
		}
		mustConnect(t, out)
		err = out.WriteBatch(ctxT(t, 10*time.Second), after)
	}
	if g := payloads(e.poll("clean", "t", 0)); !slices.Equal(g, []string{"before", "after"}) {
		t.Errorf("stored %v", g)
	}
}
