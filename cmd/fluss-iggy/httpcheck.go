package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/internal/stop"
)

// Benthos starts its HTTP server (metrics, /ping, /ready) in a goroutine
// and, when the address cannot be listened on (another instance has the
// port), only logs "HTTP Server error: ..." and runs on without it. The
// process then has no metrics and no probes, which nothing but that line
// says. httpCheck turns that into a stop with exit 1 and what to change.

// httpServerError is how Benthos v4.60.0 logs a failure of its HTTP server
// (internal/cli/common/manager.go, newStoppableManager).
const httpServerError = "HTTP Server error: "

// httpListenWait bounds how long the start waits to see whether the HTTP
// server listens before the pipeline starts.
const httpListenWait = 2 * time.Second

// httpFailureGrace is how long the start waits, once the address accepts
// connections, for our server's failure to take it; a failure after that
// stops the running process.
const httpFailureGrace = 100 * time.Millisecond

// httpCheck watches the log for Benthos's HTTP server error (it is a
// slog.Handler teed to Benthos's logger).
type httpCheck struct {
	failed chan string // Benthos's error text; the first one only
}

func newHTTPCheck() *httpCheck {
	return &httpCheck{failed: make(chan string, 1)}
}

// cliOptions are the CLI options that install the check.
func (h *httpCheck) cliOptions() []service.CLIOptFunc {
	return []service.CLIOptFunc{
		service.CLIOptAddTeeLogger(slog.New(h)),
		service.CLIOptOnConfigParse(h.onConfig),
	}
}

// onConfig runs once Benthos has read the config and started its HTTP
// server, before the pipeline starts: when http is enabled it waits until
// the server listens (the error, if any, comes at once), and fails the
// start when it could not. A failure seen later stops the process.
func (h *httpCheck) onConfig(conf *service.ParsedConfig) error {
	enabled, err := conf.FieldBool("http", "enabled")
	if err != nil || !enabled {
		return nil
	}
	addr, err := conf.FieldString("http", "address")
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), httpListenWait)
	defer cancel()
	listening := make(chan struct{})
	go func() {
		defer close(listening)
		if _, port, err := net.SplitHostPort(addr); err == nil && port != "0" { // port 0: any free one
			waitListening(ctx, addr)
		}
	}()
	select {
	case msg := <-h.failed:
		return httpBindError(addr, msg)
	case <-listening:
	}
	// What listens may be another process, whose port our server fails to
	// take in a moment: wait for that failure a little before the start.
	select {
	case msg := <-h.failed:
		return httpBindError(addr, msg)
	case <-time.After(httpFailureGrace):
	}
	go func() { stop.Fail(httpBindError(addr, <-h.failed)) }()
	return nil
}

// waitListening returns once something accepts connections at addr, or
// when ctx ends.
func waitListening(ctx context.Context, addr string) {
	var d net.Dialer
	for ctx.Err() == nil {
		if c, err := d.DialContext(ctx, "tcp", addr); err == nil {
			_ = c.Close()
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// httpBindError says which address could not be listened on and how to
// choose another.
func httpBindError(addr, msg string) error {
	return fmt.Errorf("the HTTP server (metrics, /ping, /ready) cannot listen on http.address %s: %s; "+
		"is another fluss-iggy running on this host? Give this one another address: http.address in the config "+
		"(FLUSS_IGGY_HTTP_ADDRESS=127.0.0.1:4196 in the shipped configs and in those `create` prints), "+
		"or http.enabled: false", addr, msg)
}

// Enabled implements slog.Handler: only errors matter.
func (h *httpCheck) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelError }

// Handle implements slog.Handler: it keeps Benthos's HTTP server error.
func (h *httpCheck) Handle(_ context.Context, r slog.Record) error {
	if msg, ok := strings.CutPrefix(r.Message, httpServerError); ok {
		select {
		case h.failed <- strings.TrimSpace(msg):
		default:
		}
	}
	return nil
}

// WithAttrs implements slog.Handler; attributes do not matter here.
func (h *httpCheck) WithAttrs([]slog.Attr) slog.Handler { return h }

// WithGroup implements slog.Handler; groups do not matter here.
func (h *httpCheck) WithGroup(string) slog.Handler { return h }
