package iggyoutput

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/internal/iggyconn"
)

// outputConfig is the parsed and validated configuration of one iggy output.
type outputConfig struct {
	conn     iggyconn.Config
	ackAfter string

	stream       field
	topic        field
	createStream bool
	createTopic  bool
	partitions   uint32
	expiry       uint64 // µs; 0 server default, MaxUint64 never
	maxTopicSize uint64

	partitioning string
	partition    field
	key          field
	messageID    field                   // InterpolatedString nil: the server assigns ids
	headers      *service.MetadataFilter // nil: no headers

	maxInFlight int
	batchPolicy service.BatchPolicy
}

func parseConfig(conf *service.ParsedConfig) (c outputConfig, err error) {
	for _, step := range []func(*service.ParsedConfig) error{
		c.parseConnection, c.parseTopics, c.parsePartitioning, c.parseMessages, c.parseDelivery,
	} {
		if err := step(conf); err != nil {
			return c, err
		}
	}
	return c, nil
}

// parseConnection reads where and how to connect and log in.
func (c *outputConfig) parseConnection(conf *service.ParsedConfig) (err error) {
	c.conn, err = iggyconn.Parse(conf)
	return err
}

// parseTopics reads the destination and what to create.
func (c *outputConfig) parseTopics(conf *service.ParsedConfig) (err error) {
	if c.stream, err = parseField(conf, ioFieldStream); err != nil {
		return err
	}
	if c.topic, err = parseField(conf, ioFieldTopic); err != nil {
		return err
	}
	if c.createStream, err = conf.FieldBool(ioFieldCreateStream); err != nil {
		return err
	}
	if c.createTopic, err = conf.FieldBool(ioFieldCreateTopic); err != nil {
		return err
	}
	partitions, err := conf.FieldInt(ioFieldPartitions)
	if err != nil {
		return err
	}
	if partitions < 1 || partitions > 1000 {
		return fmt.Errorf("field %s: %d is outside 1 to 1000", ioFieldPartitions, partitions)
	}
	c.partitions = uint32(partitions)
	expiry, err := conf.FieldString(ioFieldMessageExpiry)
	if err != nil {
		return err
	}
	if c.expiry, err = parseExpiry(expiry); err != nil {
		return fmt.Errorf("field %s: %w", ioFieldMessageExpiry, err)
	}
	size, err := conf.FieldString(ioFieldMaxTopicSize)
	if err != nil {
		return err
	}
	if c.maxTopicSize, err = parseTopicSize(size); err != nil {
		return fmt.Errorf("field %s: %w", ioFieldMaxTopicSize, err)
	}
	return nil
}

// parsePartitioning reads how messages are spread over partitions.
func (c *outputConfig) parsePartitioning(conf *service.ParsedConfig) (err error) {
	if c.partitioning, err = conf.FieldString(ioFieldPartitioning); err != nil {
		return err
	}
	switch c.partitioning {
	case partitioningBalanced:
	case partitioningPartition:
		if !conf.Contains(ioFieldPartition) {
			return errors.New("field partition must be set when partitioning is partition_id")
		}
		c.partition, err = parseField(conf, ioFieldPartition)
	case partitioningKey:
		if !conf.Contains(ioFieldKey) {
			return errors.New("field key must be set when partitioning is messages_key")
		}
		c.key, err = parseField(conf, ioFieldKey)
	default:
		err = fmt.Errorf("field %s: %q is not one of balanced, partition_id, messages_key", ioFieldPartitioning, c.partitioning)
	}
	return err
}

// parseMessages reads message ids and headers.
func (c *outputConfig) parseMessages(conf *service.ParsedConfig) (err error) {
	if c.messageID, err = parseField(conf, ioFieldMessageID); err != nil {
		return err
	}
	if s, static := c.messageID.Static(); static && s == "" {
		c.messageID = field{}
	}
	if conf.Contains(ioFieldHeaders) {
		if c.headers, err = conf.FieldMetadataFilter(ioFieldHeaders); err != nil {
			return err
		}
		if c.headers.IsEmpty() {
			c.headers = nil
		}
	}
	return nil
}

// parseDelivery reads acknowledgement, concurrency and batching.
func (c *outputConfig) parseDelivery(conf *service.ParsedConfig) (err error) {
	if c.ackAfter, err = conf.FieldString(ioFieldAckAfter); err != nil {
		return err
	}
	switch c.ackAfter {
	case ackAfterSend, ackAfterFlush, ackAfterFsync:
	default:
		return fmt.Errorf("field %s: %q is not one of send, flush, fsync", ioFieldAckAfter, c.ackAfter)
	}
	if c.maxInFlight, err = conf.FieldMaxInFlight(); err != nil {
		return err
	}
	if c.maxInFlight < 1 {
		return fmt.Errorf("field %s must be at least 1, got %d", ioFieldMaxInFlight, c.maxInFlight)
	}
	c.batchPolicy, err = conf.FieldBatchPolicy(ioFieldBatching)
	return err
}

func parseExpiry(s string) (uint64, error) {
	switch s {
	case "", "server_default":
		return 0, nil
	case "never", "never_expire":
		return math.MaxUint64, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not server_default, never or a duration: %w", s, err)
	}
	if d < time.Microsecond {
		return 0, fmt.Errorf("%q must be at least 1µs", s)
	}
	return uint64(d / time.Microsecond), nil
}

func parseTopicSize(s string) (uint64, error) {
	switch s {
	case "", "server_default":
		return 0, nil
	case "unlimited":
		return math.MaxUint64, nil
	}
	n, err := humanize.ParseBytes(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not server_default, unlimited or a size: %w", s, err)
	}
	if n == 0 {
		return 0, errors.New("a size of 0 means server_default; write server_default")
	}
	return n, nil
}
