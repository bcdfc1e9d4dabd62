package iggyoutput_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
	"github.com/fluss-iggy/fluss-iggy/internal/stop"
)

// A login the server refuses is reported as such, naming the address and
// the user but never the password, and after max_login_attempts refusals
// in a row the pipeline stops; 0 retries forever, and a user created
// before the limit is reached lets the output recover.

const wrongPassword = "not-the-password-42"

// refusedLogin is what every Connect error of a refused login must say.
func refusedLogin(t *testing.T, e *env, user string, err error) {
	t.Helper()
	if err == nil {
		t.Fatal("Connect succeeded with a login the server refuses")
	}
	want := fmt.Sprintf("the Iggy server at %s refused the login as %q", e.addr, user)
	if !strings.Contains(err.Error(), want) {
		t.Errorf("Connect: %v\nwant it to say %q", err, want)
	}
	if strings.Contains(err.Error(), wrongPassword) {
		t.Errorf("Connect's error shows the password: %v", err)
	}
}

// TestRefusedLoginStops: with a wrong password, the first
// max_login_attempts-1 refusals are retried and say when the pipeline will
// stop; the last one stops it with the reason, and the report of a stuck
// shutdown says the login is refused, not that Iggy is unreachable.
func TestRefusedLoginStops(t *testing.T) {
	stop.Reset()
	defer stop.Reset()
	e := newEnv(t)
	out, logs := newLoggedOutput(t, fmt.Sprintf("address: %s\nusername: %q\npassword: %q\nstream: s\ntopic: t\nmax_login_attempts: 3", e.addr, e.user, wrongPassword))
	for i := 1; i <= 3; i++ {
		err := out.Connect(ctxT(t, 15*time.Second))
		refusedLogin(t, e, e.user, err)
		if i < 3 {
			if stop.Err() != nil {
				t.Fatalf("stopped after %d refused logins, want 3: %v", i, stop.Err())
			}
			if want := fmt.Sprintf("(attempt %d; next in", i); !strings.Contains(err.Error(), want) {
				t.Errorf("attempt %d: %v\nwant it to say %q", i, err, want)
			}
			continue
		}
		if stop.Err() == nil || !strings.Contains(stop.Err().Error(), "refused 3 times in a row (max_login_attempts: 3)") {
			t.Fatalf("after 3 refused logins: stop.Err() = %v", stop.Err())
		}
		refusedLogin(t, e, e.user, stop.Err())
	}
	if !strings.Contains(logs.String(), "stopping the pipeline") {
		t.Errorf("no error line says the pipeline stops:\n%s", logs)
	}
	// The report is process-wide: other tests' outputs may be in it too.
	var ours []string
	for _, line := range stop.Stuck() {
		if strings.Contains(line, e.addr) {
			ours = append(ours, line)
		}
	}
	stuck := strings.Join(ours, "\n")
	if !strings.Contains(stuck, "Iggy at "+e.addr+" has refused the login for") || strings.Contains(stuck, "unreachable") {
		t.Errorf("stuck report of %s: %q", e.addr, stuck)
	}
}

// TestRefusedLoginZeroRetriesForever: max_login_attempts 0 keeps retrying
// a refused login and never stops the pipeline.
func TestRefusedLoginZeroRetriesForever(t *testing.T) {
	stop.Reset()
	defer stop.Reset()
	e := newEnv(t)
	out := e.output(fmt.Sprintf("username: %q\npassword: %q\nstream: s\ntopic: t\nmax_login_attempts: 0", e.user, wrongPassword))
	for i := 1; i <= 6; i++ {
		err := out.Connect(ctxT(t, 15*time.Second))
		refusedLogin(t, e, e.user, err)
		if want := fmt.Sprintf("(attempt %d; next in", i); !strings.Contains(err.Error(), want) {
			t.Errorf("attempt %d: %v\nwant it to say %q", i, err, want)
		}
	}
	if err := stop.Err(); err != nil {
		t.Fatalf("max_login_attempts 0 stopped the pipeline: %v", err)
	}
}

// TestRefusedLoginRecovers: a user the server does not know yet is
// refused twice; once it is created, the next attempt logs in, the count of
// refusals starts again, and batches are delivered.
func TestRefusedLoginRecovers(t *testing.T) {
	stop.Reset()
	defer stop.Reset()
	e := newEnv(t)
	srv := e.needFaults() // creating a user on a real server needs the user commands, which the client has not
	stream := e.stream()
	e.createTopic(stream, "t", 1)
	user := iggytest.User{Username: "late-user", Password: "late-password"}
	out := e.output(fmt.Sprintf("username: %q\npassword: %q\nstream: %s\ntopic: t\nmax_login_attempts: 3", user.Username, user.Password, stream))
	for range 2 {
		refusedLogin(t, e, user.Username, out.Connect(ctxT(t, 15*time.Second)))
	}
	if err := srv.AddUser(user); err != nil {
		t.Fatal(err)
	}
	mustConnect(t, out)
	if err := out.WriteBatch(ctxT(t, 10*time.Second), service.MessageBatch{msg("after-login")}); err != nil {
		t.Fatalf("WriteBatch: %v", err)
	}
	if g := payloads(e.poll(stream, "t", 0)); len(g) != 1 || g[0] != "after-login" {
		t.Errorf("stored %v", g)
	}
	if err := stop.Err(); err != nil {
		t.Fatalf("the pipeline was stopped: %v", err)
	}
}

// TestRefusedLoginStopsPipeline: in a running stream, Benthos's own
// reconnection loop reaches max_login_attempts and the output asks the
// process to stop; the batch waiting for the output is not acknowledged.
func TestRefusedLoginStopsPipeline(t *testing.T) {
	stop.Reset()
	defer stop.Reset()
	stopped := make(chan struct{})
	var once sync.Once
	stop.Install(func() { once.Do(func() { close(stopped) }) })
	e := newEnv(t)
	produce, end := pipeline(t, e.outputYAML(fmt.Sprintf("username: %q\npassword: %q\nstream: s\ntopic: t\nmax_login_attempts: 2", e.user, wrongPassword)))
	acked := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { acked <- produce(ctx, service.MessageBatch{msg("never")}) }()
	start := time.Now()
	select {
	case <-stopped:
	case err := <-acked:
		t.Fatalf("the batch was answered before the pipeline stopped: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the pipeline did not stop within 30s of refused logins")
	}
	t.Logf("stopped after %v: %v", time.Since(start).Round(time.Millisecond), stop.Err())
	refusedLogin(t, e, e.user, stop.Err())
	end()
	cancel() // a batch the stream never answered returns with the context
	if err := <-acked; err == nil {
		t.Fatal("the batch was acknowledged though nothing was delivered")
	}
}
