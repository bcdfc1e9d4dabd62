package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// BuildBinary builds cmd/fluss-iggy of the repository at root into dir and
// returns the binary's path. It uses the flags of `make build` (static,
// -trimpath) so that the build cache `make build` filled is reused.
func BuildBinary(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "fluss-iggy")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, "./cmd/fluss-iggy")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/fluss-iggy: %w\n%s", err, out)
	}
	return bin, nil
}

// lockedBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Proc is a running child process (the fluss-iggy binary) whose output is
// kept in memory.
type Proc struct {
	peak  atomic.Int64 // highest VmHWM seen, KiB
	cmd   *exec.Cmd
	out   lockedBuffer
	done  chan struct{}
	err   error
	start time.Time
	end   time.Time
}

// Start runs bin with args; env entries (KEY=VALUE) are added to the
// current environment. Stdout and stderr are collected together.
func Start(bin string, env []string, args ...string) (*Proc, error) {
	p := &Proc{done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout = &p.out
	p.cmd.Stderr = &p.out
	// Its own process group, so that a signal sent to the test's group
	// (Ctrl-C) reaches it only through us.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.start = time.Now()
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	go p.sampleRSS()
	go func() {
		p.err = p.cmd.Wait()
		p.end = time.Now()
		close(p.done)
	}()
	return p, nil
}

// Pid returns the process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Err is the process's exit error (nil for exit status 0); only meaningful
// after Done.
func (p *Proc) Err() error { return p.err }

// Output returns what the process wrote so far (stdout and stderr).
func (p *Proc) Output() string { return p.out.String() }

// Tail returns the last n lines of the output.
func (p *Proc) Tail(n int) string {
	lines := strings.Split(strings.TrimRight(p.Output(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Elapsed is the wall time from start to exit (or to now while it runs).
func (p *Proc) Elapsed() time.Duration {
	if p.Exited() {
		return p.end.Sub(p.start)
	}
	return time.Since(p.start)
}

// Kill sends SIGKILL and waits for the process to be gone.
func (p *Proc) Kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// Stop sends SIGTERM, waits up to grace for a clean exit, then kills. It
// returns the exit error of a process that exited by itself after SIGTERM.
func (p *Proc) Stop(grace time.Duration) error {
	if p.Exited() {
		return p.err
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return p.err
	case <-time.After(grace):
		p.Kill()
		return fmt.Errorf("no exit within %s of SIGTERM; killed", grace)
	}
}

// Wait waits for the process to exit by itself for at most timeout (then
// kills it and returns an error).
func (p *Proc) Wait(timeout time.Duration) error {
	select {
	case <-p.done:
		return p.err
	case <-time.After(timeout):
		p.Kill()
		return fmt.Errorf("still running after %s; killed", timeout)
	}
}

// rssInterval is how often the child's peak RSS is sampled.
const rssInterval = 20 * time.Millisecond

// sampleRSS reads the child's VmHWM from /proc until it exits. (The
// ru_maxrss that wait4 reports is no use: Linux folds the high-water mark of
// the memory the child shared with the parent before exec into it, so it
// shows the test process's size.)
func (p *Proc) sampleRSS() {
	path := fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid)
	t := time.NewTicker(rssInterval)
	defer t.Stop()
	for {
		if kb := readHWM(path); kb > p.peak.Load() {
			p.peak.Store(kb)
		}
		select {
		case <-p.done:
			return
		case <-t.C:
		}
	}
}

func readHWM(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// PeakRSSKB is the process's peak resident set size in KiB (VmHWM), as
// last sampled while it ran (every 20 ms, so a peak in its last moments
// can be missed).
func (p *Proc) PeakRSSKB() int64 { return p.peak.Load() }

// CPUTime is the user+system CPU time the process used, once it has exited.
func (p *Proc) CPUTime() time.Duration {
	if !p.Exited() || p.cmd.ProcessState == nil {
		return 0
	}
	return p.cmd.ProcessState.UserTime() + p.cmd.ProcessState.SystemTime()
}

// ErrTimeout is returned by WaitFor when the condition does not hold in time.
var ErrTimeout = errors.New("timed out")

// WaitFor polls cond every interval until it returns true, an error, or
// timeout passes.
func WaitFor(timeout, interval time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return ErrTimeout
		}
		time.Sleep(interval)
	}
}
