package bbolt_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/internal/cachetest"
)

const (
	crashKey    = "checkpoint"
	crashRounds = 20
)

// crashValue is a ~1 KiB checkpoint-like value whose completeness can be
// verified: a sequence number, padding that depends on it, and a CRC of both.
func crashValue(seq uint64) []byte {
	body := fmt.Sprintf(`{"seq":%d,"pad":"%s"`, seq, strings.Repeat(string(rune('a'+seq%26)), 1000))
	return fmt.Appendf(nil, `%s,"crc":"%08x"}`, body, crc32.ChecksumIEEE([]byte(body)))
}

// parseCrashValue returns the sequence number of a complete value.
func parseCrashValue(b []byte) (uint64, bool) {
	i := bytes.LastIndex(b, []byte(`,"crc":"`))
	if i < 0 || len(b) != i+len(`,"crc":"`)+8+2 {
		return 0, false
	}
	var seq uint64
	if _, err := fmt.Sscanf(string(b[:i]), `{"seq":%d,`, &seq); err != nil {
		return 0, false
	}
	return seq, bytes.Equal(b, crashValue(seq))
}

// crashChild writes crashValue(from+1), crashValue(from+2), ... under crashKey
// as fast as it can, printing "ack N" after each Set returns, until killed.
func crashChild() int {
	from, err := strconv.ParseUint(os.Getenv(envChildFrom), 10, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad start sequence:", err)
		return 2
	}
	c, err := cachetest.NewFromYAML(os.Getenv(envChildConf))
	if err != nil {
		fmt.Fprintln(os.Stderr, "opening cache:", err)
		return 3
	}
	ctx := context.Background()
	deadline := time.Now().Add(60 * time.Second)
	line := make([]byte, 0, 32)
	for seq := from + 1; time.Now().Before(deadline); seq++ {
		if err := c.Set(ctx, crashKey, crashValue(seq), nil); err != nil {
			fmt.Fprintln(os.Stderr, "set:", err)
			return 4
		}
		// One write(2) per acknowledgement: nothing acknowledged is left in a
		// user-space buffer when the kill comes.
		line = strconv.AppendUint(append(line[:0], "ack "...), seq, 10)
		if _, err := os.Stdout.Write(append(line, '\n')); err != nil {
			return 5
		}
	}
	return 6
}

// crashOutcome classifies what a reopened cache held after one kill.
type crashOutcome string

const (
	outcomeAcked    crashOutcome = "last acknowledged value"
	outcomeInFlight crashOutcome = "in-flight value (committed, not yet acknowledged)"
	outcomeEmpty    crashOutcome = "torn: empty"
	outcomePartial  crashOutcome = "torn: partial"
	outcomeStale    crashOutcome = "stale: older than acknowledged"
	outcomeMissing  crashOutcome = "lost: key missing"
	outcomeFuture   crashOutcome = "impossible: newer than written"
)

type crashReport struct {
	kind     string
	outcomes map[crashOutcome]int
	acks     uint64
	details  []string
}

func (r crashReport) torn() int {
	return r.outcomes[outcomeEmpty] + r.outcomes[outcomePartial]
}

func (r crashReport) bad() int {
	return crashRounds - r.outcomes[outcomeAcked] - r.outcomes[outcomeInFlight]
}

func (r crashReport) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s cache: %d SIGKILLs, %d acknowledged writes; torn %d/%d, bad %d/%d:", r.kind, crashRounds, r.acks, r.torn(), crashRounds, r.bad(), crashRounds)
	for _, o := range []crashOutcome{outcomeAcked, outcomeInFlight, outcomeEmpty, outcomePartial, outcomeStale, outcomeMissing, outcomeFuture} {
		if n := r.outcomes[o]; n > 0 {
			fmt.Fprintf(&sb, " [%s: %d]", o, n)
		}
	}
	return sb.String()
}

// runCrashTest starts a writer child on the cache described by conf, kills it
// with SIGKILL at a random moment once it is writing, reopens the cache and
// classifies the value; crashRounds times.
func runCrashTest(t *testing.T, kind, conf string) crashReport {
	rep := crashReport{kind: kind, outcomes: map[crashOutcome]int{}}
	var last uint64 // highest sequence known to be stored
	for round := range crashRounds {
		lastAck, acks := crashRound(t, conf, last)
		rep.acks += acks

		c, err := cachetest.NewFromYAML(conf)
		if err != nil {
			t.Fatalf("round %d: reopening %s cache after SIGKILL: %v", round, kind, err)
		}
		v, err := c.Get(context.Background(), crashKey)
		if cerr := c.Close(context.Background()); cerr != nil {
			t.Fatalf("round %d: closing: %v", round, cerr)
		}
		var o crashOutcome
		seq, complete := parseCrashValue(v)
		switch {
		case errors.Is(err, service.ErrKeyNotFound):
			o = outcomeMissing
		case err != nil:
			t.Fatalf("round %d: reading %s cache after SIGKILL: %v", round, kind, err)
		case len(v) == 0:
			o = outcomeEmpty
		case !complete:
			o = outcomePartial
		case seq < lastAck:
			o = outcomeStale
		case seq == lastAck:
			o = outcomeAcked
		case seq == lastAck+1:
			o = outcomeInFlight
		default:
			o = outcomeFuture
		}
		rep.outcomes[o]++
		rep.details = append(rep.details, fmt.Sprintf("round %2d: %5d acks, last ack %7d, read %d bytes seq %d: %s", round, acks, lastAck, len(v), seq, o))
		last = lastAck
		if complete && seq > last {
			last = seq
		}
	}
	return rep
}

// crashRound runs one writer child from sequence from, kills it, and returns
// the last sequence it acknowledged (from if none) and how many it did.
func crashRound(t *testing.T, conf string, from uint64) (lastAck, acks uint64) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChild+"=crash", envChildConf+"="+conf, envChildFrom+"="+strconv.FormatUint(from, 10))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	firstAck := make(chan struct{})
	readDone := make(chan struct{})
	lastAck = from
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			seq, err := strconv.ParseUint(strings.TrimPrefix(sc.Text(), "ack "), 10, 64)
			if err != nil {
				continue
			}
			if acks == 0 {
				close(firstAck)
			}
			acks++
			lastAck = seq
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()

	select {
	case <-firstAck:
	case <-readDone:
		_ = cmd.Wait()
		t.Fatalf("writer child exited before its first acknowledgement: %s", stderr.String())
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("writer child acknowledged nothing in 60s: %s", stderr.String())
	}
	time.Sleep(time.Duration(rand.Int64N(int64(50 * time.Millisecond))))
	if err := cmd.Process.Kill(); err != nil {
		t.Fatalf("SIGKILL: %v", err)
	}
	<-readDone
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != -1 {
		t.Fatalf("writer child was not killed (%v): %s", err, stderr.String())
	}
	return lastAck, acks
}

// TestCrashSafety kills a bbolt writer (sync on) 20 times at random moments:
// after each kill the reopened value must be complete and not older than the
// last acknowledged write.
func TestCrashSafety(t *testing.T) {
	conf := yamlConf(filepath.Join(t.TempDir(), "crash.db"))
	rep := runCrashTest(t, "bbolt", conf)
	t.Log(rep)
	if rep.bad() > 0 {
		t.Fatalf("%s\n%s", rep, strings.Join(rep.details, "\n"))
	}
	if rep.acks == 0 {
		t.Fatal("no write was acknowledged")
	}
}

// TestCrashFileCacheComparison runs the same kill loop against Benthos's file
// cache and reports how often the checkpoint tears. It asserts nothing about
// tearing: it documents why the bbolt cache exists.
func TestCrashFileCacheComparison(t *testing.T) {
	conf := fmt.Sprintf("file:\n  directory: %q\n", t.TempDir())
	rep := runCrashTest(t, "file", conf)
	t.Log(rep)
	for _, d := range rep.details {
		t.Log(d)
	}
}
