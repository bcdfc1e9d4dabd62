package cachetest

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// RedisPackage is the Debian package that provides redis-server.
const RedisPackage = "redis-server"

// RedisOptions configures a test redis-server.
type RedisOptions struct {
	// AppendOnly turns on the append-only file with appendfsync always, so
	// acknowledged writes survive a SIGKILL of the server. Off by default:
	// the server then keeps nothing across restarts (--save "" --appendonly no).
	AppendOnly bool
	// TLSCertFile and TLSKeyFile, when set, make the server listen with TLS
	// only (no plain port); clients are not asked for certificates.
	TLSCertFile, TLSKeyFile string
}

// RedisServer is a redis-server process on a loopback port, owned by a test.
// It is stopped when the test ends.
type RedisServer struct {
	tb   testing.TB
	opts RedisOptions
	bin  string
	dir  string
	port int

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// RedisServerPath finds redis-server. When it is missing the test is skipped,
// or fails when the environment variable CI is set, since CI must run every
// test.
func RedisServerPath(tb testing.TB) string {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err == nil {
		return bin
	}
	msg := fmt.Sprintf("redis-server not found in PATH (install the Debian package %q: apt-get install -y %s): %v", RedisPackage, RedisPackage, err)
	if os.Getenv("CI") != "" {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
	return ""
}

// StartRedis starts a redis-server on a free loopback port with its data in a
// temporary directory, waits until it answers PING, and stops it (SIGKILL)
// when the test ends.
func StartRedis(tb testing.TB, opts RedisOptions) *RedisServer {
	tb.Helper()
	s := &RedisServer{tb: tb, opts: opts, bin: RedisServerPath(tb), dir: tb.TempDir()}
	tb.Cleanup(s.Kill)
	var lastErr error
	for range 5 {
		port, err := freePort()
		if err != nil {
			tb.Fatalf("finding a free loopback port: %v", err)
		}
		s.port = port
		if lastErr = s.start(); lastErr == nil {
			return s
		}
	}
	tb.Fatalf("starting redis-server: %v", lastErr)
	return nil
}

// Addr is the server's host:port.
func (s *RedisServer) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// URL is a redis:// (or rediss:// with TLS) URL for the server's database 0.
func (s *RedisServer) URL() string {
	if s.opts.TLSCertFile != "" {
		return "rediss://" + s.Addr() + "/0"
	}
	return "redis://" + s.Addr() + "/0"
}

// Start starts the server again on the same port after Kill or Stop.
func (s *RedisServer) Start() {
	s.tb.Helper()
	if err := s.start(); err != nil {
		s.tb.Fatalf("restarting redis-server on %s: %v", s.Addr(), err)
	}
}

// Kill sends SIGKILL and waits for the process to exit. It is a no-op when
// the server is not running.
func (s *RedisServer) Kill() { s.signal(syscall.SIGKILL) }

// Stop sends SIGTERM (a clean shutdown) and waits for the process to exit.
func (s *RedisServer) Stop() { s.signal(syscall.SIGTERM) }

func (s *RedisServer) signal(sig syscall.Signal) {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

func (s *RedisServer) start() error {
	args := []string{
		"--bind", "127.0.0.1",
		"--dir", s.dir,
		"--logfile", filepath.Join(s.dir, "redis.log"),
		"--save", "",
		"--daemonize", "no",
		"--protected-mode", "no",
	}
	if s.opts.AppendOnly {
		args = append(args, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		args = append(args, "--appendonly", "no")
	}
	if s.opts.TLSCertFile != "" {
		args = append(args, "--port", "0", "--tls-port", strconv.Itoa(s.port),
			"--tls-cert-file", s.opts.TLSCertFile, "--tls-key-file", s.opts.TLSKeyFile,
			"--tls-auth-clients", "no")
	} else {
		args = append(args, "--port", strconv.Itoa(s.port))
	}
	cmd := exec.Command(s.bin, args...)
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()

	deadline := time.Now().Add(15 * time.Second)
	for {
		select {
		case <-done:
			s.mu.Lock()
			s.cmd = nil
			s.mu.Unlock()
			return fmt.Errorf("redis-server on port %d exited during start-up: %s", s.port, s.logTail())
		default:
		}
		err := s.ping()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			s.Kill()
			return fmt.Errorf("redis-server on port %d not ready after 15s: %v; log: %s", s.port, err, s.logTail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ping sends a PING over a fresh connection and expects +PONG.
func (s *RedisServer) ping() error {
	conn, err := net.DialTimeout("tcp", s.Addr(), time.Second)
	if err != nil {
		return err
	}
	if s.opts.TLSCertFile != "" {
		conn = tls.Client(conn, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // readiness probe of our own test server
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return errors.New("PING answered " + strings.TrimSpace(line))
	}
	return nil
}

func (s *RedisServer) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
