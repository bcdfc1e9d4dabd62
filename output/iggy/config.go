package iggy

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"strings"
	"time"

	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"
	"github.com/dustin/go-humanize"
	"github.com/redpanda-data/benthos/v4/public/service"
)

// outputConfig is the parsed and validated configuration of one iggy output.
type outputConfig struct {
	address  string
	username string
	password string
	token    string

	// tlsEnabled switches TLS on; tlsOpts are the SDK options and tlsConf the
	// equivalent crypto/tls configuration used to check the handshake before
	// the SDK gets the address (the SDK retries a failing handshake forever).
	tlsEnabled bool
	tlsOpts    []tcp.TLSOption
	tlsConf    *tls.Config

	stream       *service.InterpolatedString
	topic        *service.InterpolatedString
	createStream bool
	createTopic  bool
	partitions   uint32
	expiry       iggcon.Duration
	maxTopicSize uint64

	partitioning string
	partition    *service.InterpolatedString
	key          *service.InterpolatedString
	messageID    *service.InterpolatedString // nil: the server assigns ids
	flussID      bool                        // message_id is DeterministicIDMapping (see flussMessageID)
	headers      *service.MetadataFilter     // nil: no headers

	timeout     time.Duration
	maxInFlight int
	batchPolicy service.BatchPolicy
}

func parseConfig(conf *service.ParsedConfig) (c outputConfig, err error) {
	if c.address, err = conf.FieldString(ioFieldAddress); err != nil {
		return
	}
	if _, _, err = net.SplitHostPort(c.address); err != nil {
		return c, fmt.Errorf("field %s: %q is not host:port: %w", ioFieldAddress, c.address, err)
	}
	if c.username, err = conf.FieldString(ioFieldUsername); err != nil {
		return
	}
	if c.password, err = conf.FieldString(ioFieldPassword); err != nil {
		return
	}
	if c.token, err = conf.FieldString(ioFieldToken); err != nil {
		return
	}
	switch {
	case c.token != "" && (c.username != "" || c.password != ""):
		return c, errors.New("set either personal_access_token or username and password, not both")
	case c.token == "" && (c.username == "" || c.password == ""):
		return c, errors.New("set username and password, or personal_access_token: Iggy needs a login for every request")
	case len(c.username) > 255 || len(c.password) > 255:
		return c, errors.New("username and password must be at most 255 bytes each")
	}
	if err = c.parseTLS(conf); err != nil {
		return c, fmt.Errorf("field %s: %w", ioFieldTLS, err)
	}

	if c.stream, err = conf.FieldInterpolatedString(ioFieldStream); err != nil {
		return
	}
	if c.topic, err = conf.FieldInterpolatedString(ioFieldTopic); err != nil {
		return
	}
	if c.createStream, err = conf.FieldBool(ioFieldCreateStream); err != nil {
		return
	}
	if c.createTopic, err = conf.FieldBool(ioFieldCreateTopic); err != nil {
		return
	}
	partitions, err := conf.FieldInt(ioFieldPartitions)
	if err != nil {
		return
	}
	if partitions < 1 || partitions > 1000 {
		return c, fmt.Errorf("field %s: %d is outside 1 to 1000", ioFieldPartitions, partitions)
	}
	c.partitions = uint32(partitions)
	expiry, err := conf.FieldString(ioFieldMessageExpiry)
	if err != nil {
		return
	}
	if c.expiry, err = parseExpiry(expiry); err != nil {
		return c, fmt.Errorf("field %s: %w", ioFieldMessageExpiry, err)
	}
	size, err := conf.FieldString(ioFieldMaxTopicSize)
	if err != nil {
		return
	}
	if c.maxTopicSize, err = parseTopicSize(size); err != nil {
		return c, fmt.Errorf("field %s: %w", ioFieldMaxTopicSize, err)
	}

	if c.partitioning, err = conf.FieldString(ioFieldPartitioning); err != nil {
		return
	}
	switch c.partitioning {
	case partitioningBalanced:
	case partitioningPartition:
		if !conf.Contains(ioFieldPartition) {
			return c, errors.New("field partition must be set when partitioning is partition_id")
		}
		if c.partition, err = conf.FieldInterpolatedString(ioFieldPartition); err != nil {
			return
		}
	case partitioningKey:
		if !conf.Contains(ioFieldKey) {
			return c, errors.New("field key must be set when partitioning is messages_key")
		}
		if c.key, err = conf.FieldInterpolatedString(ioFieldKey); err != nil {
			return
		}
	default:
		return c, fmt.Errorf("field %s: %q is not one of balanced, partition_id, messages_key", ioFieldPartitioning, c.partitioning)
	}

	if c.messageID, err = conf.FieldInterpolatedString(ioFieldMessageID); err != nil {
		return
	}
	if raw, err := conf.FieldString(ioFieldMessageID); err == nil && strings.TrimSpace(raw) == DeterministicIDMapping {
		c.flussID = true
	}
	if s, static := c.messageID.Static(); static && s == "" {
		c.messageID = nil
	}
	if conf.Contains(ioFieldHeaders) {
		if c.headers, err = conf.FieldMetadataFilter(ioFieldHeaders); err != nil {
			return
		}
		if c.headers.IsEmpty() {
			c.headers = nil
		}
	}

	if c.timeout, err = conf.FieldDuration(ioFieldTimeout); err != nil {
		return
	}
	if c.timeout <= 0 {
		return c, fmt.Errorf("field %s must be positive", ioFieldTimeout)
	}
	if c.maxInFlight, err = conf.FieldMaxInFlight(); err != nil {
		return
	}
	if c.maxInFlight < 1 {
		return c, fmt.Errorf("field %s must be at least 1, got %d", ioFieldMaxInFlight, c.maxInFlight)
	}
	if c.batchPolicy, err = conf.FieldBatchPolicy(ioFieldBatching); err != nil {
		return
	}
	return c, nil
}

// parseTLS maps the standard TLS field onto the options of the Iggy Go SDK,
// which can verify the server with the system roots or a CA file, or skip
// verification, and nothing else.
func (c *outputConfig) parseTLS(conf *service.ParsedConfig) error {
	ns := conf.Namespace(ioFieldTLS)
	enabled, err := ns.FieldBool("enabled")
	if err != nil || !enabled {
		return err
	}
	rootCAs, err := ns.FieldString("root_cas")
	if err != nil {
		return err
	}
	if rootCAs != "" {
		return errors.New("root_cas is not supported by the Iggy Go SDK: write the certificates to a file and set root_cas_file")
	}
	certs, err := ns.FieldAnyList("client_certs")
	if err != nil {
		return err
	}
	if len(certs) > 0 {
		return errors.New("client_certs is not supported: the Iggy Go SDK cannot present a client certificate")
	}
	reneg, err := ns.FieldBool("enable_renegotiation")
	if err != nil {
		return err
	}
	if reneg {
		return errors.New("enable_renegotiation is not supported by the Iggy Go SDK")
	}
	skip, err := ns.FieldBool("skip_cert_verify")
	if err != nil {
		return err
	}
	caFile, err := ns.FieldString("root_cas_file")
	if err != nil {
		return err
	}

	// The same settings the SDK derives (client/tcp createTLSConfig): the
	// server name is the host part of the address.
	host := c.address
	if i := strings.LastIndex(host, ":"); i >= 0 {
		host = host[:i]
	}
	if host == "" {
		return fmt.Errorf("address %q has no host to verify the server certificate against", c.address)
	}
	tc := &tls.Config{ServerName: host, InsecureSkipVerify: skip} //nolint:gosec // the user asked for skip_cert_verify
	opts := []tcp.TLSOption{tcp.WithTLSValidateCertificate(!skip)}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return fmt.Errorf("reading root_cas_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("root_cas_file %s holds no PEM certificate", caFile)
		}
		tc.RootCAs = pool
		opts = append(opts, tcp.WithTLSCAFile(caFile))
	}
	c.tlsEnabled, c.tlsOpts, c.tlsConf = true, opts, tc
	return nil
}

func parseExpiry(s string) (iggcon.Duration, error) {
	switch s {
	case "", "server_default":
		return iggcon.IggyExpiryServerDefault, nil
	case "never", "never_expire":
		return iggcon.IggyExpiryNeverExpire, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not server_default, never or a duration: %w", s, err)
	}
	if d < time.Microsecond {
		return 0, fmt.Errorf("%q must be at least 1µs", s)
	}
	return iggcon.Duration(d / time.Microsecond), nil
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
