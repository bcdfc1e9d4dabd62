package iggyoutput_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
)

// realServerBinEnv names an Iggy server binary (0.8.0 or 0.9, built from
// the public source) that TestRealServerCrash starts and kills itself.
const realServerBinEnv = "IGGY_SERVER_BIN"

// TestRealServerCrash starts the real Iggy server at IGGY_SERVER_BIN, writes
// with ack_after: fsync from four connections, SIGKILLs the server while
// batches are in flight, starts it again on the same data, and finds every
// message the output acknowledged. With ack_after: send, as a control, the
// same crash loses acknowledged messages (the server's defaults save every
// 1,024 messages), so the test can tell the settings apart.
func TestRealServerCrash(t *testing.T) {
	bin := os.Getenv(realServerBinEnv)
	if bin == "" {
		t.Skip(realServerBinEnv + " is not set (a real Iggy server binary to start and SIGKILL)")
	}
	if os.Getenv(iggytest.DialectEnv) != "" {
		t.Skip("with " + realServerBinEnv + " set this runs once, in the suite's first run: the test server's dialect does not matter to it")
	}
	for _, mode := range []string{"fsync", "send"} {
		t.Run(mode, func(t *testing.T) {
			srv := startRealServer(t, bin)
			out, logs := newLoggedOutput(t, fmt.Sprintf("address: %s\nusername: iggy\npassword: iggy\nstream: crash\ntopic: t\n"+
				"create_stream: true\ncreate_topic: true\npartitions: 3\nmax_in_flight: 4\ntimeout: 2s\nack_after: %s", srv.addr, mode))
			mustConnect(t, out)
			acked := writeUntilKilled(t, out, srv)
			srv.start(t)
			e := &env{t: t, addr: srv.addr, user: "iggy", pass: "iggy"}
			stored := map[string]bool{}
			for _, ms := range e.pollAll("crash", "t") {
				for _, m := range ms {
					stored[string(m.Payload)] = true
				}
			}
			lost := 0
			for _, p := range acked {
				if !stored[p] {
					lost++
				}
			}
			t.Logf("ack_after: %s: %d acknowledged, %d stored after the SIGKILL, %d acknowledged ones lost", mode, len(acked), len(stored), lost)
			switch {
			case mode == "fsync" && strings.Contains(logs.String(), "reports no durability option"):
				t.Logf("the server has no durability option (a 0.9 pre-release): no guarantee to check; %d lost", lost)
			case mode == "fsync" && lost > 0:
				t.Errorf("ack_after: fsync: %d of %d acknowledged messages lost", lost, len(acked))
			case mode == "send" && lost == 0:
				t.Errorf("ack_after: send lost nothing: the crash did not catch unsaved messages, so the test cannot tell the settings apart")
			}
		})
	}
}

// writeUntilKilled writes batches of 100 from four goroutines, SIGKILLs the
// server after 1,500 batches were acknowledged (or 20 s), and returns the
// payloads of every acknowledged batch.
func writeUntilKilled(t *testing.T, out interface {
	WriteBatch(context.Context, service.MessageBatch) error
}, srv *realIggy) []string {
	t.Helper()
	var mu sync.Mutex
	var acked []string
	batches := 0
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := 0; ; b++ {
				select {
				case <-done:
					return
				default:
				}
				batch := make(service.MessageBatch, 100)
				payloads := make([]string, 100)
				for i := range batch {
					payloads[i] = fmt.Sprintf("w%d-b%d-%d", w, b, i)
					batch[i] = service.NewMessage([]byte(payloads[i]))
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				err := out.WriteBatch(ctx, batch)
				cancel()
				if err != nil {
					return // the server is gone
				}
				mu.Lock()
				acked = append(acked, payloads...)
				batches++
				mu.Unlock()
			}
		}()
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n := batches
		mu.Unlock()
		if n >= 1500 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	srv.kill(t)
	close(done)
	wg.Wait()
	return acked
}

// realIggy is a real Iggy server process on a data directory of the test.
type realIggy struct {
	bin, dir, addr string
	cmd            *exec.Cmd
}

func startRealServer(t *testing.T, bin string) *realIggy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	s := &realIggy{bin: bin, dir: t.TempDir(), addr: addr}
	s.start(t)
	t.Cleanup(func() {
		s.kill(t)
		if t.Failed() {
			t.Logf("the server's log ends:\n%s", s.logTail())
		}
	})
	return s
}

// logTail returns the last 3,000 bytes of the server's log.
func (s *realIggy) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

// start runs the server on s's directory and address and waits until it
// accepts connections.
func (s *realIggy) start(t *testing.T) {
	t.Helper()
	cmd := exec.Command(s.bin)
	cmd.Dir = s.dir
	// A 0.9 server refuses to start with an IGGY_ variable it does not
	// know (IGGY_SERVER_BIN, IGGY_TCP_ADDRESS of the suite…): pass none.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "IGGY_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "IGGY_ROOT_USERNAME=iggy", "IGGY_ROOT_PASSWORD=iggy",
		"IGGY_SYSTEM_PATH="+filepath.Join(s.dir, "data"), "IGGY_TCP_ADDRESS="+s.addr,
		"IGGY_SYSTEM_SHARDING_CPU_ALLOCATION=1", "IGGY_QUIC_ENABLED=false", "IGGY_HTTP_ENABLED=false",
		"IGGY_WEBSOCKET_ENABLED=false")
	log, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", s.bin, err)
	}
	s.cmd = cmd
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", s.addr, time.Second); err == nil {
			_ = c.Close()
			time.Sleep(500 * time.Millisecond) // the login path comes up after the listener
			return
		}
	}
	s.kill(t)
	t.Fatalf("the Iggy server at %s did not accept connections within 60 s", s.addr)
}

// kill SIGKILLs the server's process group and waits for it.
func (s *realIggy) kill(t *testing.T) {
	t.Helper()
	if s.cmd == nil {
		return
	}
	if err := syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		t.Errorf("SIGKILL: %v", err)
	}
	_ = s.cmd.Wait()
	s.cmd = nil
}
