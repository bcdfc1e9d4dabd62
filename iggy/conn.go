package iggy

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Conn is one logged-in connection to an Iggy server. Its methods may be
// called from several goroutines; they run one at a time.
type Conn struct {
	mu      sync.Mutex // held for a whole request: write and reply
	w       wire
	d       dialect
	info    ServerInfo
	timeout time.Duration

	broken   atomic.Bool
	closed   atomic.Bool
	lastUsed atomic.Int64 // unix nanoseconds of the last request's end
}

// Info says what the login told about the server.
func (c *Conn) Info() ServerInfo { return c.info }

// Addr is the server's address.
func (c *Conn) Addr() string { return c.w.addr }

// Broken tells whether the connection failed or was closed.
func (c *Conn) Broken() bool { return c.broken.Load() || c.closed.Load() }

// IdleFor is how long the connection has had no request.
func (c *Conn) IdleFor() time.Duration {
	return time.Since(time.Unix(0, c.lastUsed.Load()))
}

// Close closes the socket at once; a request in flight returns ErrClosed.
func (c *Conn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.broken.Store(true)
	return c.w.nc.Close()
}

// do runs one request under the lock with a deadline: the earlier of
// ctx's deadline and the connection's timeout. Cancelling ctx makes a
// blocked read or write return at once. A failure that is not an answer
// from the server closes the connection.
func (c *Conn) do(ctx context.Context, what string, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Load() {
		return ErrClosed
	}
	if c.broken.Load() {
		return ErrBroken
	}
	deadline := time.Now().Add(c.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = c.w.nc.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = c.w.nc.SetDeadline(time.Unix(1, 0)) })
	err := fn()
	stop()
	c.lastUsed.Store(time.Now().UnixNano())
	if err == nil {
		return nil
	}
	if CodeOf(err) != 0 {
		if EndsConnection(err) {
			c.breakLocked()
		}
		return err
	}
	c.breakLocked()
	switch {
	case c.closed.Load():
		return fmt.Errorf("%s: %w", what, ErrClosed)
	case ctx.Err() != nil:
		return fmt.Errorf("%s: %w", what, ctx.Err())
	case isTimeout(err):
		return &TimeoutError{What: what, Timeout: c.timeout.String()}
	}
	return fmt.Errorf("%s: %w", what, err)
}

func (c *Conn) breakLocked() {
	c.broken.Store(true)
	_ = c.w.nc.Close()
}

// Ping checks that the server answers.
func (c *Conn) Ping(ctx context.Context) error {
	return c.do(ctx, "pinging Iggy", func() error { return c.d.ping(&c.w) })
}

// StreamExists tells whether a stream exists.
func (c *Conn) StreamExists(ctx context.Context, stream Identifier) (bool, error) {
	var ok bool
	err := c.do(ctx, "reading stream "+stream.String(), func() error {
		var err error
		ok, err = c.d.streamExists(&c.w, stream)
		return err
	})
	return ok, err
}

// GetTopic reads a topic; it returns (nil, nil) when the stream or the topic
// does not exist.
func (c *Conn) GetTopic(ctx context.Context, stream, topic Identifier) (*Topic, error) {
	var t *Topic
	err := c.do(ctx, fmt.Sprintf("reading stream %s topic %s", stream, topic), func() error {
		var err error
		t, err = c.d.getTopic(&c.w, stream, topic)
		return err
	})
	return t, err
}

// CreateStream creates a stream.
func (c *Conn) CreateStream(ctx context.Context, name string) error {
	if len(name) == 0 || len(name) > 255 {
		return fmt.Errorf("stream name %q: names must be 1 to 255 bytes", name)
	}
	return c.do(ctx, "creating stream "+name, func() error { return c.d.createStream(&c.w, name) })
}

// CreateTopic creates a topic in a stream.
func (c *Conn) CreateTopic(ctx context.Context, stream Identifier, t TopicSpec) error {
	if len(t.Name) == 0 || len(t.Name) > 255 {
		return fmt.Errorf("topic name %q: names must be 1 to 255 bytes", t.Name)
	}
	return c.do(ctx, fmt.Sprintf("creating topic %s in stream %s", t.Name, stream), func() error {
		return c.d.createTopic(&c.w, stream, t)
	})
}

// DeleteStream deletes a stream and everything in it.
func (c *Conn) DeleteStream(ctx context.Context, stream Identifier) error {
	return c.do(ctx, "deleting stream "+stream.String(), func() error { return c.d.deleteStream(&c.w, stream) })
}

// CreatePersonalAccessToken creates a token that never expires and returns
// it.
func (c *Conn) CreatePersonalAccessToken(ctx context.Context, name string) (string, error) {
	var tok string
	err := c.do(ctx, "creating personal access token "+name, func() error {
		var err error
		tok, err = c.d.createToken(&c.w, name)
		return err
	})
	return tok, err
}

// errEmptyBatch is a batch with no messages.
var errEmptyBatch = errors.New("a batch needs at least one message")

// Send sends one batch and returns once the server confirmed it. Where the
// dialect tells (0.9), it returns the partitions the batch landed in.
func (c *Conn) Send(ctx context.Context, b *Batch) ([]Appended, error) {
	if len(b.Messages) == 0 {
		return nil, errEmptyBatch
	}
	var app []Appended
	err := c.do(ctx, fmt.Sprintf("sending %d messages to stream %s topic %s", len(b.Messages), b.Stream, b.Topic), func() error {
		var err error
		app, err = c.d.send(&c.w, b)
		return err
	})
	return app, err
}

// Poll reads messages of one partition, or, with r.Assigned, of the next
// partition assigned to this connection's consumer group membership.
func (c *Conn) Poll(ctx context.Context, r *PollRequest) (*Polled, error) {
	where := fmt.Sprintf("partition %d", r.Partition)
	if r.Assigned {
		where = "its assigned partitions"
	}
	what := fmt.Sprintf("polling stream %s topic %s %s as %s", r.Stream, r.Topic, where, r.reader())
	if err := checkPoll(r); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var p *Polled
	err := c.do(ctx, what, func() error {
		var err error
		p, err = c.d.poll(&c.w, r)
		return err
	})
	return p, err
}

// Flush makes the server save a partition's unsaved messages to disk, and
// with fsync, sync them.
func (c *Conn) Flush(ctx context.Context, stream, topic Identifier, partition uint32, fsync bool) error {
	return c.do(ctx, fmt.Sprintf("flushing stream %s topic %s partition %d", stream, topic, partition), func() error {
		return c.d.flush(&c.w, stream, topic, partition, fsync)
	})
}
