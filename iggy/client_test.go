package iggy_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/iggy"
	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
	"github.com/fluss-iggy/fluss-iggy/internal/testnet"
)

var dialects = []struct {
	name   string
	server iggytest.Version
	client iggy.Version
}{
	{"0.8", iggytest.Version08, iggy.Version08},
	{"0.9", iggytest.Version09, iggy.Version09},
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func start(t *testing.T, opts iggytest.Options) *iggytest.Server {
	t.Helper()
	srv, err := iggytest.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

func options(addr string, v iggy.Version) iggy.Options {
	return iggy.Options{Addr: addr, Version: v, Timeout: 2 * time.Second,
		Credentials: iggy.Credentials{Username: iggytest.DefaultUsername, Password: iggytest.DefaultPassword}}
}

// TestDialFindsDialect: auto finds each dialect, a pinned one that matches
// works, and one that does not fails saying so.
func TestDialFindsDialect(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			srv := start(t, iggytest.Options{Version: d.server})
			for _, v := range []iggy.Version{iggy.VersionAuto, d.client} {
				c, err := iggy.Dial(ctxT(t, 5*time.Second), options(srv.Addr(), v))
				if err != nil {
					t.Fatalf("Dial with %v: %v", v, err)
				}
				if got := c.Info().Version; got != d.client {
					t.Errorf("Dial with %v found %v", v, got)
				}
				if err := c.Ping(ctxT(t, 5*time.Second)); err != nil {
					t.Errorf("ping: %v", err)
				}
				_ = c.Close()
			}
			other := iggy.Version08
			if d.client == iggy.Version08 {
				other = iggy.Version09
			}
			if _, err := iggy.Dial(ctxT(t, 5*time.Second), options(srv.Addr(), other)); err == nil {
				t.Errorf("Dial pinned to %v reached a %s server", other, d.name)
			}
		})
	}
}

// TestDialRefusesNewerServer: a 0.10 server is refused with its protocol
// and ours named, as an error retrying cannot cure.
func TestDialRefusesNewerServer(t *testing.T) {
	srv := start(t, iggytest.Options{Version: iggytest.Version010})
	_, err := iggy.Dial(ctxT(t, 5*time.Second), options(srv.Addr(), iggy.VersionAuto))
	var u *iggy.UnsupportedServerError
	if !errors.As(err, &u) || !iggy.IsPermanent(err) || !strings.Contains(err.Error(), "0.12") {
		t.Fatalf("Dial to a 0.10 server: %v", err)
	}
}

// TestDialNotIggy: a server that never answers, and one that answers like
// HTTP, are named as not Iggy, within the timeout.
func TestDialNotIggy(t *testing.T) {
	silent := testnet.Silent(t)
	web := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer web.Close()
	for _, addr := range []string{silent, strings.TrimPrefix(web.URL, "http://")} {
		for _, v := range []iggy.Version{iggy.VersionAuto, iggy.Version08, iggy.Version09} {
			o := options(addr, v)
			o.Timeout = 500 * time.Millisecond
			begin := time.Now()
			_, err := iggy.Dial(context.Background(), o)
			var n *iggy.NotIggyError
			if !errors.As(err, &n) {
				t.Errorf("%s with %v: want NotIggyError, got %v", addr, v, err)
			}
			if d := time.Since(begin); d > 2*time.Second {
				t.Errorf("%s with %v: took %v", addr, v, d)
			}
		}
	}
}

// TestDialWrongPassword: a refused login is a server error naming the
// server and the user, never the password; an unknown token too (0.8
// answers it with ResourceNotFound).
func TestDialWrongPassword(t *testing.T) {
	for _, d := range dialects {
		srv := start(t, iggytest.Options{Version: d.server})
		o := options(srv.Addr(), iggy.VersionAuto)
		o.Credentials.Password = "wrong"
		_, err := iggy.Dial(ctxT(t, 5*time.Second), o)
		want := fmt.Sprintf("the Iggy server at %s refused the login as \"iggy\"", srv.Addr())
		if !iggy.IsLoginRejected(err) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "wrong") {
			t.Errorf("%s: wrong password: %v", d.name, err)
		}
		o.Credentials = iggy.Credentials{Token: "no-such-token"}
		_, err = iggy.Dial(ctxT(t, 5*time.Second), o)
		if !iggy.IsLoginRejected(err) || !strings.Contains(err.Error(), "refused the login with a personal access token") {
			t.Errorf("%s: unknown token: %v", d.name, err)
		}
	}
}

// TestRequestDeadlineAndCancel: a request the server never answers ends at
// the timeout, or at once when its context is cancelled, and the
// connection is closed either way.
func TestRequestDeadlineAndCancel(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			srv := start(t, iggytest.Options{Version: d.server})
			o := options(srv.Addr(), d.client)
			o.Timeout = 300 * time.Millisecond
			c, err := iggy.Dial(ctxT(t, 5*time.Second), o)
			if err != nil {
				t.Fatal(err)
			}
			c2, err := iggy.Dial(ctxT(t, 5*time.Second), options(srv.Addr(), d.client))
			if err != nil {
				t.Fatal(err)
			}
			stall := srv.Stall(iggytest.CmdPing)
			defer stall.Release()
			begin := time.Now()
			err = c.Ping(context.Background())
			var te *iggy.TimeoutError
			if !errors.As(err, &te) || !c.Broken() || time.Since(begin) > time.Second {
				t.Errorf("stalled ping: %v after %v, broken %v", err, time.Since(begin), c.Broken())
			}
			c = c2
			ctx, cancel := context.WithCancel(context.Background())
			wctx := ctxT(t, 10*time.Second)
			go func() { // once the ping is on the wire, cancel it
				_ = stall.WaitFired(wctx, 2)
				cancel()
			}()
			begin = time.Now()
			if err := c.Ping(ctx); !errors.Is(err, context.Canceled) || time.Since(begin) > 5*time.Second {
				t.Errorf("cancelled ping: %v after %v", err, time.Since(begin))
			}
			if !c.Broken() {
				t.Error("a cancelled request left the connection open mid-reply")
			}
		})
	}
}

// TestPoolKeepAlive: idle pooled connections are pinged, and sends between
// the pings all succeed and arrive once each.
func TestPoolKeepAlive(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			srv := start(t, iggytest.Options{Version: d.server})
			if _, err := srv.CreateStream("s"); err != nil {
				t.Fatal(err)
			}
			if _, err := srv.CreateTopic("s", "t", 1); err != nil {
				t.Fatal(err)
			}
			p := iggy.NewPool(2, 100*time.Millisecond, func(ctx context.Context) (*iggy.Conn, error) {
				return iggy.Dial(ctx, options(srv.Addr(), d.client))
			})
			defer p.Close(context.Background())
			sid, _ := iggy.NameID("s")
			tid, _ := iggy.NameID("t")
			for i := range 5 {
				c, err := p.Acquire(ctxT(t, 5*time.Second))
				if err != nil {
					t.Fatal(err)
				}
				b := iggy.Batch{Stream: sid, Topic: tid, Partitioning: iggy.Balanced(), OriginTimestamp: 1,
					Messages: []iggy.Message{{Payload: []byte(fmt.Sprint(i))}}}
				_, err = c.Send(ctxT(t, 5*time.Second), &b)
				p.Release(c)
				if err != nil {
					t.Fatalf("send %d: %v", i, err)
				}
				time.Sleep(250 * time.Millisecond)
			}
			if n := srv.RequestCount(iggytest.CmdPing); n < 3 {
				t.Errorf("%d pings in 1.25s of idle time with keep-alive 100ms", n)
			}
			if n := srv.MessageCount("s", "t"); n != 5 {
				t.Errorf("stored %d messages, want 5", n)
			}
		})
	}
}
