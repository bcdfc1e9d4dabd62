package prometheus

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/push"
	"github.com/redpanda-data/benthos/v4/public/service"
)

// PushOptions configure pushing to a Prometheus Pushgateway.
type PushOptions struct {
	// URL is the gateway's base URL; empty turns pushing off.
	URL string
	// Job is the pushed group's job label (required when URL is set).
	Job string
	// Grouping holds more labels of the group's key.
	Grouping map[string]string
	// Interval is the time between pushes while running; 0 pushes only at
	// shutdown.
	Interval time.Duration
	// Timeout bounds each push (0 means 10s).
	Timeout time.Duration
	// Username and Password enable HTTP basic auth when Username is set.
	Username, Password string
}

type pusher struct {
	p       *push.Pusher
	url     string
	timeout time.Duration
	log     *service.Logger

	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex // serialises pushes
}

func newPusher(opts PushOptions, g prom.Gatherer, log *service.Logger) (*pusher, error) {
	if opts.Job == "" {
		return nil, errors.New("push.job must not be empty when push.url is set")
	}
	if opts.Interval < 0 {
		return nil, fmt.Errorf("push.interval %v is negative", opts.Interval)
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	p := push.New(opts.URL, opts.Job).Gatherer(g).Client(&http.Client{Timeout: timeout})
	for k, v := range opts.Grouping {
		p = p.Grouping(k, v)
	}
	if opts.Username != "" {
		p = p.BasicAuth(opts.Username, opts.Password)
	}
	if err := p.Error(); err != nil {
		return nil, fmt.Errorf("push to %s: %w", opts.URL, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ps := &pusher{p: p, url: opts.URL, timeout: timeout, log: log, cancel: cancel, done: make(chan struct{})}
	if opts.Interval > 0 {
		go ps.loop(ctx, opts.Interval)
	} else {
		close(ps.done)
	}
	return ps, nil
}

func (ps *pusher) loop(ctx context.Context, interval time.Duration) {
	defer close(ps.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := ps.push(ctx); err != nil && ctx.Err() == nil && ps.log != nil {
				ps.log.Warnf("%v", err)
			}
		}
	}
}

func (ps *pusher) push(ctx context.Context) error {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, ps.timeout)
	defer cancel()
	if err := ps.p.PushContext(ctx); err != nil {
		return fmt.Errorf("pushing metrics to %s: %w", ps.url, err)
	}
	return nil
}

// close stops the loop and pushes one last time.
func (ps *pusher) close(ctx context.Context) error {
	ps.cancel()
	select {
	case <-ps.done:
	case <-ctx.Done():
		return fmt.Errorf("stopping pushes to %s: %w", ps.url, ctx.Err())
	}
	return ps.push(ctx)
}
