package iggyconn

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/iggy"
	"github.com/fluss-iggy/fluss-iggy/internal/speclint"
)

// Field names of the connection.
const (
	FieldAddress       = "address"
	FieldUsername      = "username"
	FieldPassword      = "password"
	FieldToken         = "personal_access_token"
	FieldTLS           = "tls"
	FieldServerVersion = "server_version"
	FieldTimeout       = "timeout"
	FieldKeepAlive     = "keep_alive"
	FieldMaxLogins     = "max_login_attempts"
)

// Fields are where to connect, how to log in and which server version to
// speak.
func Fields() []*service.ConfigField {
	return []*service.ConfigField{
		service.NewStringField(FieldAddress).
			Description("The address (`host:port`) of the Iggy server's TCP endpoint.").
			Examples("127.0.0.1:8090", "iggy.internal:8090").
			Default("127.0.0.1:8090").
			LintRule(speclint.HostPort(FieldAddress)),
		service.NewStringField(FieldUsername).
			Description("The user to log in as. Set it together with `password`, or set `personal_access_token` instead.").
			Example("iggy").
			Default(""),
		service.NewStringField(FieldPassword).
			Description("The password of `username`.").
			Secret().
			Default(""),
		service.NewStringField(FieldToken).
			Description("A personal access token to log in with instead of `username` and `password`.").
			Secret().
			Default(""),
		service.NewTLSToggledField(FieldTLS).
			Description("TLS for the connection to Iggy."),
		service.NewStringAnnotatedEnumField(FieldServerVersion, map[string]string{
			"auto": "Find the server's protocol when connecting (a 0.9 ping; a 0.8 server answers it with an error of its own format) and log it.",
			"0.8":  "Iggy server 0.8.x.",
			"0.9":  "Iggy server 0.9.x (binary protocol 0.11.0).",
		}).
			Description("The Iggy server version to speak.").
			Default("auto").
			LintRule(speclint.Enum(FieldServerVersion, "auto", "0.8", "0.9")),
	}
}

// TimingFields are the request timeout, the keep-alive of idle
// connections and how many refused logins stop the pipeline.
func TimingFields() []*service.ConfigField {
	return []*service.ConfigField{
		service.NewDurationField(FieldTimeout).
			Description("The longest time to wait for Iggy to answer one request, and for connecting (dial, TLS, version detection and login together). A connection whose request times out is closed and the request is made again on a new one.").
			Default("10s").
			LintRule(speclint.PositiveDuration(FieldTimeout)).
			Advanced(),
		service.NewDurationField(FieldKeepAlive).
			Description("How long a connection may be idle before it is pinged, so that a dead server or connection is noticed before a request needs it (and, on Iggy 0.9, a consumer group membership stays alive: the server drops members silent for 36 s).").
			Default("5s").
			LintRule(speclint.PositiveDuration(FieldKeepAlive)).
			Advanced(),
		speclint.IntField(FieldMaxLogins).
			Description("How many logins in a row the server may refuse (a wrong password or token, an unknown or inactive user) before the pipeline stops, and the process exits 1 naming the address and user. " +
				"0 retries forever, with the usual back-off: worth it when the user may appear later, an operator or a provisioning job creating it or setting its password after the pipeline starts. " +
				"A server that cannot be reached is always retried, whatever this says.").
			Default(3).
			LintRule(speclint.MinInt(FieldMaxLogins, 0)).
			Advanced(),
	}
}

// Config is the parsed connection.
type Config struct {
	// Options holds the address, TLS, credentials, dialect and timeout.
	Options   iggy.Options
	KeepAlive time.Duration
	// MaxLogins is how many refused logins in a row stop the pipeline; 0
	// never.
	MaxLogins int
}

// Parse reads and checks the fields of Fields and TimingFields.
func Parse(conf *service.ParsedConfig) (c Config, err error) {
	o := &c.Options
	if o.Addr, err = conf.FieldString(FieldAddress); err != nil {
		return c, err
	}
	if _, _, err = net.SplitHostPort(o.Addr); err != nil {
		return c, fmt.Errorf("field %s: %q is not host:port: %w", FieldAddress, o.Addr, err)
	}
	if err = parseCredentials(conf, &o.Credentials); err != nil {
		return c, err
	}
	if err = parseTLS(conf, o); err != nil {
		return c, err
	}
	v, err := conf.FieldString(FieldServerVersion)
	if err != nil {
		return c, err
	}
	if o.Version, err = iggy.ParseVersion(v); err != nil {
		return c, fmt.Errorf("field %s: %w", FieldServerVersion, err)
	}
	if o.Timeout, err = PositiveDuration(conf, FieldTimeout); err != nil {
		return c, err
	}
	if c.KeepAlive, err = PositiveDuration(conf, FieldKeepAlive); err != nil {
		return c, err
	}
	if c.MaxLogins, err = conf.FieldInt(FieldMaxLogins); err != nil {
		return c, err
	}
	if c.MaxLogins < 0 {
		return c, fmt.Errorf("field %s must be 0 (retry forever) or more, got %d", FieldMaxLogins, c.MaxLogins)
	}
	return c, nil
}

func parseCredentials(conf *service.ParsedConfig, cr *iggy.Credentials) (err error) {
	if cr.Username, err = conf.FieldString(FieldUsername); err != nil {
		return err
	}
	if cr.Password, err = conf.FieldString(FieldPassword); err != nil {
		return err
	}
	if cr.Token, err = conf.FieldString(FieldToken); err != nil {
		return err
	}
	switch {
	case cr.Token != "" && (cr.Username != "" || cr.Password != ""):
		return errors.New("set either personal_access_token or username and password, not both")
	case cr.Token == "" && (cr.Username == "" || cr.Password == ""):
		return errors.New("set username and password, or personal_access_token: Iggy needs a login for every request")
	case len(cr.Username) > 255 || len(cr.Password) > 255 || len(cr.Token) > 255:
		return errors.New("username, password and personal_access_token must be at most 255 bytes each")
	}
	return nil
}

func parseTLS(conf *service.ParsedConfig, o *iggy.Options) error {
	tlsConf, enabled, err := conf.FieldTLSToggled(FieldTLS)
	if err != nil {
		return fmt.Errorf("field %s: %w", FieldTLS, err)
	}
	if !enabled {
		return nil
	}
	if err := checkCAFile(conf); err != nil {
		return fmt.Errorf("field %s: %w", FieldTLS, err)
	}
	if tlsConf.ServerName == "" {
		tlsConf.ServerName, _, _ = net.SplitHostPort(o.Addr)
	}
	o.TLS = tlsConf
	return nil
}

// checkCAFile fails a root_cas_file that holds no certificate, which
// Benthos's TLS parser accepts silently (every handshake would then fail).
func checkCAFile(conf *service.ParsedConfig) error {
	path, _ := conf.Namespace(FieldTLS).FieldString("root_cas_file")
	if path == "" {
		return nil
	}
	pem, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !x509.NewCertPool().AppendCertsFromPEM(pem) {
		return fmt.Errorf("root_cas_file %s holds no PEM certificate", path)
	}
	return nil
}

// PositiveDuration reads a duration field that must be above zero.
func PositiveDuration(conf *service.ParsedConfig, field string) (time.Duration, error) {
	d, err := conf.FieldDuration(field)
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, fmt.Errorf("field %s must be positive", field)
	}
	return d, nil
}
