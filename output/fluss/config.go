package flussoutput

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/fluss"
)

// outputConfig is the parsed configuration.
type outputConfig struct {
	bootstrap      []string
	table          fluss.TablePath
	waitForTable   bool
	saslUser       string
	saslPassword   string
	sasl           bool
	connectTimeout time.Duration
	requestTimeout time.Duration

	changeType       *service.InterpolatedString
	changeTypeIsMeta bool // changeType is defaultChangeType
	ignoreUnknown    bool
	createPartitions bool

	acks         int
	idempotent   bool
	dedupe       *dedupeConfig
	writeTimeout time.Duration
	maxInFlight  int
	connections  int
	batchPolicy  service.BatchPolicy
}

func parseConfig(pc *service.ParsedConfig) (*outputConfig, error) {
	c := &outputConfig{}
	for _, step := range []func(*service.ParsedConfig) error{c.parseConnection, c.parseRows, c.parseDelivery} {
		if err := step(pc); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// parseConnection reads the servers, the table, SASL and timeouts.
func (c *outputConfig) parseConnection(pc *service.ParsedConfig) (err error) {
	if c.bootstrap, err = pc.FieldStringList(foFieldBootstrap); err != nil {
		return err
	}
	if len(c.bootstrap) == 0 {
		return fmt.Errorf("field %s: at least one address (host:port) is required", foFieldBootstrap)
	}
	for _, a := range c.bootstrap {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return fmt.Errorf("field %s: %q is not host:port", foFieldBootstrap, a)
		}
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{foFieldDatabase, &c.table.Database}, {foFieldTable, &c.table.Table}} {
		if *f.dst, err = pc.FieldString(f.name); err != nil {
			return err
		}
		if strings.TrimSpace(*f.dst) == "" {
			return fmt.Errorf("field %s: must not be empty", f.name)
		}
	}
	if c.waitForTable, err = pc.FieldBool(foFieldWaitForTable); err != nil {
		return err
	}
	if pc.Contains(foFieldSASL) {
		c.sasl = true
		if c.saslUser, err = pc.FieldString(foFieldSASL, foFieldSASLUsername); err != nil {
			return err
		}
		if c.saslPassword, err = pc.FieldString(foFieldSASL, foFieldSASLPassword); err != nil {
			return err
		}
		if c.saslUser == "" {
			return errors.New("field sasl.username: must not be empty")
		}
	}
	if c.connectTimeout, err = pc.FieldDuration(foFieldConnectTimeout); err != nil {
		return err
	}
	c.requestTimeout, err = pc.FieldDuration(foFieldRequestTimeout)
	return err
}

// parseRows reads how messages become rows.
func (c *outputConfig) parseRows(pc *service.ParsedConfig) (err error) {
	if c.changeType, err = pc.FieldInterpolatedString(foFieldChangeType); err != nil {
		return err
	}
	if raw, err := pc.FieldString(foFieldChangeType); err == nil {
		c.changeTypeIsMeta = raw == defaultChangeType
	}
	unknown, err := pc.FieldString(foFieldUnknownColumns)
	if err != nil {
		return err
	}
	switch unknown {
	case unknownError, unknownIgnore:
		c.ignoreUnknown = unknown == unknownIgnore
	default:
		return fmt.Errorf("field %s: %q is not one of: %s, %s", foFieldUnknownColumns, unknown, unknownError, unknownIgnore)
	}
	c.createPartitions, err = pc.FieldBool(foFieldCreatePartitions)
	return err
}

// parseDelivery reads acknowledgements, timeouts and batching.
func (c *outputConfig) parseDelivery(pc *service.ParsedConfig) (err error) {
	acks, err := pc.FieldString(foFieldAcks)
	if err != nil {
		return err
	}
	switch acks {
	case acksAll:
		c.acks = -1
	case acksLeader:
		c.acks = 1
	case acksNone:
		c.acks = 0
	default:
		return fmt.Errorf("field %s: %q is not one of: %s, %s, %s", foFieldAcks, acks, acksAll, acksLeader, acksNone)
	}
	if err := c.parseIdempotent(pc, acks); err != nil {
		return err
	}
	if err := c.parseDedupe(pc); err != nil {
		return err
	}
	if c.writeTimeout, err = pc.FieldDuration(foFieldWriteTimeout); err != nil {
		return err
	}
	if c.maxInFlight, err = pc.FieldInt(foFieldMaxInFlight); err != nil {
		return err
	}
	if c.maxInFlight < 1 {
		return fmt.Errorf("field %s: %d is less than 1", foFieldMaxInFlight, c.maxInFlight)
	}
	if c.connections, err = pc.FieldInt(foFieldConnections); err != nil {
		return err
	}
	if c.connections < 1 {
		return fmt.Errorf("field %s: %d is less than 1", foFieldConnections, c.connections)
	}
	c.batchPolicy, err = pc.FieldBatchPolicy(foFieldBatching)
	return err
}

// clientOptions are the Fluss client's options for this configuration.
func (c *outputConfig) clientOptions() []fluss.Option {
	opts := []fluss.Option{
		fluss.Bootstrap(c.bootstrap...),
		fluss.DialTimeout(c.connectTimeout),
		fluss.RequestTimeout(c.requestTimeout),
		fluss.ClientSoftware("fluss-iggy", "0.1.0"),
	}
	if c.sasl {
		opts = append(opts, fluss.SASLPlain(c.saslUser, c.saslPassword))
	}
	return opts
}

// parseIdempotent reads idempotent, which is on with acks all and off
// otherwise when it is not set.
func (c *outputConfig) parseIdempotent(pc *service.ParsedConfig, acks string) (err error) {
	if !pc.Contains(foFieldIdempotent) {
		c.idempotent = c.acks == -1
		return nil
	}
	if c.idempotent, err = pc.FieldBool(foFieldIdempotent); err != nil {
		return err
	}
	if c.idempotent && c.acks != -1 {
		return fmt.Errorf("field %s: an idempotent writer needs %s: %s, not %q", foFieldIdempotent, foFieldAcks, acksAll, acks)
	}
	return nil
}

// dedupeConfig is the dedupe object.
type dedupeConfig struct {
	cache    string
	key      string
	sourceMD []string
	offsetMD string
}

// parseDedupe reads the optional dedupe object.
func (c *outputConfig) parseDedupe(pc *service.ParsedConfig) (err error) {
	if !pc.Contains(foFieldDedupe) {
		return nil
	}
	d := &dedupeConfig{}
	if d.cache, err = pc.FieldString(foFieldDedupe, foFieldDedupeCache); err != nil {
		return err
	}
	if d.key, err = pc.FieldString(foFieldDedupe, foFieldDedupeKey); err != nil {
		return err
	}
	if d.sourceMD, err = pc.FieldStringList(foFieldDedupe, foFieldDedupeSource); err != nil {
		return err
	}
	if d.offsetMD, err = pc.FieldString(foFieldDedupe, foFieldDedupeOffset); err != nil {
		return err
	}
	switch {
	case strings.TrimSpace(d.cache) == "":
		return fmt.Errorf("field %s.%s: must name a cache resource", foFieldDedupe, foFieldDedupeCache)
	case d.offsetMD == "":
		return fmt.Errorf("field %s.%s: must not be empty", foFieldDedupe, foFieldDedupeOffset)
	case !c.idempotent:
		return fmt.Errorf("field %s: needs an idempotent writer (acks: all, idempotent not false)", foFieldDedupe)
	}
	if d.key == "" {
		d.key = "fluss_output/" + c.table.String()
	}
	c.dedupe = d
	return nil
}
