package iggy

import (
	"context"
	"sync"
	"time"
)

// DefaultKeepAlive is how long a pooled connection may sit idle before the
// pool pings it.
const DefaultKeepAlive = 5 * time.Second

// Pool keeps up to Max logged-in connections, one per concurrent user: an
// Iggy connection serves one request at a time. A connection that broke
// makes every idle one dialled before it suspect (a restarted server breaks
// them all), so they are dropped instead of failing one by one. Idle
// connections are pinged every KeepAlive, taken out of the pool while they
// are, so a ping never shares a socket with a request.
type Pool struct {
	dial      func(context.Context) (*Conn, error)
	keepAlive time.Duration
	slots     chan struct{}

	mu     sync.Mutex
	idle   []*Conn
	gens   map[*Conn]uint64
	gen    uint64
	closed bool

	stop chan struct{}
	done chan struct{}
}

// NewPool starts a pool of at most max connections made by dial, and its
// keep-alive goroutine (keepAlive 0 means DefaultKeepAlive). Close stops it.
func NewPool(max int, keepAlive time.Duration, dial func(context.Context) (*Conn, error)) *Pool {
	if keepAlive <= 0 {
		keepAlive = DefaultKeepAlive
	}
	p := &Pool{
		dial: dial, keepAlive: keepAlive, slots: make(chan struct{}, max),
		gens: map[*Conn]uint64{}, stop: make(chan struct{}), done: make(chan struct{}),
	}
	go p.keepAliveLoop()
	return p
}

// Ready makes sure a usable connection is idle, or every slot is busy.
func (p *Pool) Ready(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrClosed
	}
	p.dropStaleLocked()
	if len(p.idle) > 0 || len(p.gens) >= cap(p.slots) {
		p.mu.Unlock()
		return nil
	}
	p.mu.Unlock()
	c, err := p.dial(ctx)
	if err != nil {
		return err
	}
	return p.add(c, true)
}

// Acquire takes an idle connection, or dials one, waiting for a free slot.
// Give it back with Release.
func (p *Pool) Acquire(ctx context.Context) (*Conn, error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	c, err := p.take(ctx)
	if err != nil {
		<-p.slots
	}
	return c, err
}

func (p *Pool) take(ctx context.Context) (*Conn, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	p.dropStaleLocked()
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return c, nil
	}
	p.mu.Unlock()
	c, err := p.dial(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.add(c, false); err != nil {
		return nil, err
	}
	return c, nil
}

func (p *Pool) add(c *Conn, idle bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = c.Close()
		return ErrClosed
	}
	p.gens[c] = p.gen
	if idle {
		p.idle = append(p.idle, c)
	}
	return nil
}

// Release gives a connection back. A broken one is closed and makes the
// idle connections dialled before it stale.
func (p *Pool) Release(c *Conn) {
	p.put(c)
	<-p.slots
}

func (p *Pool) put(c *Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	gen, known := p.gens[c]
	switch {
	case c.Broken():
		if known && gen == p.gen {
			p.gen++
		}
		delete(p.gens, c)
		_ = c.Close()
	case p.closed || !known || gen != p.gen:
		delete(p.gens, c)
		_ = c.Close()
	default:
		p.idle = append(p.idle, c)
	}
}

func (p *Pool) dropStaleLocked() {
	kept := p.idle[:0]
	for _, c := range p.idle {
		if p.gens[c] == p.gen && !c.Broken() {
			kept = append(kept, c)
			continue
		}
		delete(p.gens, c)
		_ = c.Close()
	}
	p.idle = kept
}

// keepAliveLoop pings connections that have been idle for keepAlive.
func (p *Pool) keepAliveLoop() {
	defer close(p.done)
	t := time.NewTicker(p.keepAlive / 2)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		for _, c := range p.takeIdle() {
			ctx, cancel := context.WithTimeout(context.Background(), p.keepAlive)
			_ = c.Ping(ctx) // a failed ping breaks c; Release drops it
			cancel()
			p.Release(c)
		}
	}
}

// takeIdle takes the connections idle for keepAlive out of the pool, each
// with a slot, as Acquire would.
func (p *Pool) takeIdle() []*Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*Conn
	kept := p.idle[:0]
	for _, c := range p.idle {
		if c.IdleFor() < p.keepAlive {
			kept = append(kept, c)
			continue
		}
		select {
		case p.slots <- struct{}{}:
			out = append(out, c)
		default:
			kept = append(kept, c)
		}
	}
	p.idle = kept
	return out
}

// Close closes every connection, busy ones too (their requests return at
// once), and stops the keep-alive goroutine, waiting for it until ctx ends.
func (p *Pool) Close(ctx context.Context) error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.stop)
	}
	for c := range p.gens {
		_ = c.Close()
	}
	p.gens = map[*Conn]uint64{}
	p.idle = nil
	p.mu.Unlock()
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
