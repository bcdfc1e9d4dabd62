// Package iggyinput is the iggy input: it reads an Iggy stream's topic as a
// single consumer or a consumer group member and stores each partition's
// offset on the server once the messages up to it are acknowledged.
package iggyinput

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/iggy"
	"github.com/fluss-iggy/fluss-iggy/internal/iggyconn"
	"github.com/fluss-iggy/fluss-iggy/internal/stop"
)

// input reads one topic on one connection.
type input struct {
	conf      inputConfig
	names     [2]string // stream and topic as configured, for metadata
	log       *service.Logger
	connector *iggyconn.Connector
	mRead     *service.MetricCounter
	mStoreErr *service.MetricCounter

	mu      sync.Mutex
	conn    *iggy.Conn // nil while disconnected
	parts   map[uint32]*partition
	order   []uint32 // a single consumer's partitions, read in turn
	cursor  int
	empties int // polls in a row that found nothing
	keep    chan struct{}
	kept    sync.WaitGroup
	unwatch func()

	storeMu sync.Mutex // one offset store at a time, so they never go backwards
}

func newInput(c inputConfig, mgr *service.Resources) *input {
	return &input{
		conf:      c,
		names:     [2]string{c.stream.String(), c.topic.String()},
		log:       mgr.Logger(),
		connector: iggyconn.NewConnector(c.conn, mgr.Logger()),
		mRead:     mgr.Metrics().NewCounter("iggy_input_messages"),
		mStoreErr: mgr.Metrics().NewCounter("iggy_input_offset_store_errors"),
		parts:     map[uint32]*partition{},
	}
}

// Connect dials, learns the topic's partitions, joins the group, stores
// offsets acknowledged while disconnected and starts the keep-alive.
func (in *input) Connect(ctx context.Context) error {
	conn, err := in.connector.Dial(ctx)
	if err != nil {
		return in.connector.Failed(err)
	}
	if err := in.setUp(ctx, conn); err != nil {
		_ = conn.Close()
		if iggy.EndsConnection(err) {
			in.connector.Down(err)
		}
		return in.connector.Failed(err)
	}
	in.connector.Succeeded()
	in.mu.Lock()
	in.conn = conn
	if in.unwatch == nil {
		in.unwatch = stop.Watch(in.connector.Outage)
	}
	in.mu.Unlock()
	in.startKeepAlive(conn)
	in.storeAll(ctx)
	return nil
}

// setUp reads the topic and, for a group, joins it (creating it when
// asked to).
func (in *input) setUp(ctx context.Context, conn *iggy.Conn) error {
	t, err := conn.GetTopic(ctx, in.conf.stream, in.conf.topic)
	if err != nil {
		return err
	}
	if t == nil {
		return fmt.Errorf("iggy at %s has no topic %s in stream %s", conn.Addr(), in.names[1], in.names[0])
	}
	if in.conf.grouped() {
		return in.join(ctx, conn)
	}
	order := in.conf.partitions
	if order == nil {
		for p := range t.Partitions {
			order = append(order, p)
		}
	}
	for _, p := range order {
		if p >= t.Partitions {
			return fmt.Errorf("field %s: topic %s of stream %s has %d partitions, no partition %d", fieldPartitions, in.names[1], in.names[0], t.Partitions, p)
		}
	}
	in.mu.Lock()
	in.order = order
	in.mu.Unlock()
	return nil
}

// join makes conn a member of the group, creating the group when missing.
func (in *input) join(ctx context.Context, conn *iggy.Conn) error {
	c := &in.conf
	g, err := conn.GetConsumerGroup(ctx, c.stream, c.topic, c.group)
	if err != nil {
		return err
	}
	if g == nil {
		if c.groupName == "" || !c.createGroup {
			return fmt.Errorf("consumer group %s of topic %s in stream %s does not exist (field %s; %s creates one given by name)",
				c.group, in.names[1], in.names[0], fieldConsumerGroup, fieldCreateGroup)
		}
		_, err := conn.CreateConsumerGroup(ctx, c.stream, c.topic, c.groupName)
		if err != nil && iggy.CodeOf(err) != iggy.CodeConsumerGroupNameAlreadyExists {
			return err
		}
		in.log.Infof("Created consumer group %s of topic %s in stream %s", c.groupName, in.names[1], in.names[0])
	}
	if err := conn.JoinConsumerGroup(ctx, c.stream, c.topic, c.group); err != nil {
		return err
	}
	in.log.Infof("Joined consumer group %s of topic %s in stream %s", c.group, in.names[1], in.names[0])
	return nil
}

// startKeepAlive pings conn when it was idle for keep_alive, which keeps
// a 0.9 group membership alive while the pipeline waits downstream.
func (in *input) startKeepAlive(conn *iggy.Conn) {
	in.stopKeepAlive()
	every := in.conf.conn.KeepAlive
	done := make(chan struct{})
	in.mu.Lock()
	in.keep = done
	in.mu.Unlock()
	in.kept.Add(1)
	go func() {
		defer in.kept.Done()
		t := time.NewTicker(every / 2)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			if conn.Broken() || conn.IdleFor() < every {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), in.conf.conn.Options.Timeout)
			_ = conn.Ping(ctx) // a failure breaks conn; the next poll reconnects
			cancel()
		}
	}()
}

func (in *input) stopKeepAlive() {
	in.mu.Lock()
	done := in.keep
	in.keep = nil
	in.mu.Unlock()
	if done != nil {
		close(done)
	}
	in.kept.Wait()
}

// lost drops a broken connection: the next ReadBatch answers
// ErrNotConnected and Benthos connects again.
func (in *input) lost(conn *iggy.Conn, err error) error {
	in.mu.Lock()
	if in.conn == conn {
		in.conn = nil
	}
	in.mu.Unlock()
	_ = conn.Close()
	in.connector.Down(err)
	in.log.Warnf("Lost the connection: %v; reconnecting", err)
	return service.ErrNotConnected
}

func (in *input) current() *iggy.Conn {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.conn
}

// Close stores what was acknowledged, leaves the group and closes the
// connection.
func (in *input) Close(ctx context.Context) error {
	in.stopKeepAlive()
	in.storeAll(ctx)
	in.mu.Lock()
	conn := in.conn
	in.conn = nil
	if in.unwatch != nil {
		in.unwatch()
		in.unwatch = nil
	}
	in.mu.Unlock()
	if conn == nil {
		return nil
	}
	if in.conf.grouped() {
		if err := conn.LeaveConsumerGroup(ctx, in.conf.stream, in.conf.topic, in.conf.group); err != nil && !errors.Is(err, context.Canceled) {
			in.log.Debugf("Leaving consumer group %s: %v", in.conf.group, err)
		}
	}
	return conn.Close()
}
