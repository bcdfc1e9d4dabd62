package iggyinput

import (
	"errors"
	"fmt"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/iggy"
	"github.com/fluss-iggy/fluss-iggy/internal/iggyconn"
)

// inputConfig is the parsed and validated configuration of one iggy input.
type inputConfig struct {
	conn          iggyconn.Config
	stream, topic iggy.Identifier
	// group is the consumer group read as; its Value is empty for a single
	// consumer.
	group       iggy.Identifier
	groupName   string // the group's name when it is given by name
	createGroup bool
	consumer    iggy.Identifier
	partitions  []uint32 // nil: every partition of the topic
	latest      bool
	pollCount   uint32
	interval    time.Duration
	limit       int
}

// grouped tells whether the input reads as a consumer group member.
func (c *inputConfig) grouped() bool { return len(c.group.Value) > 0 }

// reader is who the input reads and stores offsets as.
func (c *inputConfig) reader() iggy.Consumer {
	if c.grouped() {
		return iggy.GroupConsumer(c.group)
	}
	return iggy.SingleConsumer(c.consumer)
}

func parseConfig(conf *service.ParsedConfig) (c inputConfig, err error) {
	if c.conn, err = iggyconn.Parse(conf); err != nil {
		return c, err
	}
	for _, f := range []struct {
		name string
		dst  *iggy.Identifier
	}{{fieldStream, &c.stream}, {fieldTopic, &c.topic}, {fieldConsumer, &c.consumer}} {
		if *f.dst, err = identifier(conf, f.name); err != nil {
			return c, err
		}
	}
	if err = c.parseGroup(conf); err != nil {
		return c, err
	}
	if err = c.parsePartitions(conf); err != nil {
		return c, err
	}
	return c, c.parseReading(conf)
}

// identifier reads a field that names a stream, topic, group or consumer.
func identifier(conf *service.ParsedConfig, field string) (iggy.Identifier, error) {
	s, err := conf.FieldString(field)
	if err != nil {
		return iggy.Identifier{}, err
	}
	if s == "" {
		return iggy.Identifier{}, fmt.Errorf("field %s must not be empty", field)
	}
	id, err := iggy.ParseIdentifier(s)
	if err != nil {
		return id, fmt.Errorf("field %s: %w", field, err)
	}
	return id, nil
}

func (c *inputConfig) parseGroup(conf *service.ParsedConfig) (err error) {
	if c.createGroup, err = conf.FieldBool(fieldCreateGroup); err != nil {
		return err
	}
	name, err := conf.FieldString(fieldConsumerGroup)
	if err != nil || name == "" {
		return err
	}
	if c.group, err = identifier(conf, fieldConsumerGroup); err != nil {
		return err
	}
	if c.group.Kind == iggy.KindName {
		c.groupName = name
	}
	if ps, _ := conf.FieldIntList(fieldPartitions); len(ps) > 0 {
		return errors.New("field partitions is for a single consumer: a consumer group's partitions are assigned by the server")
	}
	return nil
}

func (c *inputConfig) parsePartitions(conf *service.ParsedConfig) error {
	if !conf.Contains(fieldPartitions) {
		return nil
	}
	ps, err := conf.FieldIntList(fieldPartitions)
	if err != nil {
		return err
	}
	seen := map[int]bool{}
	for _, p := range ps {
		if p < 0 || p > 1<<31 || seen[p] {
			return fmt.Errorf("field %s: partition %d is negative, too large or given twice", fieldPartitions, p)
		}
		seen[p] = true
		c.partitions = append(c.partitions, uint32(p))
	}
	return nil
}

func (c *inputConfig) parseReading(conf *service.ParsedConfig) error {
	start, err := conf.FieldString(fieldStartFrom)
	if err != nil {
		return err
	}
	switch start {
	case startEarliest:
	case startLatest:
		c.latest = true
	default:
		return fmt.Errorf("field %s: %q is not %s or %s", fieldStartFrom, start, startEarliest, startLatest)
	}
	n, err := conf.FieldInt(fieldPollCount)
	if err != nil {
		return err
	}
	if n < 1 || n > 100000 {
		return fmt.Errorf("field %s: %d is outside 1 to 100000", fieldPollCount, n)
	}
	c.pollCount = uint32(n)
	if c.interval, err = iggyconn.PositiveDuration(conf, fieldPollInterval); err != nil {
		return err
	}
	if c.limit, err = conf.FieldInt(fieldCheckpointLimit); err != nil {
		return err
	}
	if c.limit < 1 {
		return fmt.Errorf("field %s must be 1 or more, got %d", fieldCheckpointLimit, c.limit)
	}
	return nil
}
