package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
)

// saslMechanismPlain must be sent upper-case: the server's SASL factory only
// knows "PLAIN".
const saslMechanismPlain = "PLAIN"

// PlainToken builds the RFC 4616 PLAIN initial response with an empty
// authorization id: NUL username NUL password.
func PlainToken(username, password string) []byte {
	tok := make([]byte, 0, 2+len(username)+len(password))
	tok = append(tok, 0)
	tok = append(tok, username...)
	tok = append(tok, 0)
	return append(tok, password...)
}

// ErrUnsupportedServer is wrapped when the server's API version ranges do not
// overlap with the client's, or it reports an unexpected role.
var ErrUnsupportedServer = errors.New("unsupported server")

func (c *Conn) handshake(ctx context.Context) error {
	req := &pb.ApiVersionsRequest{
		ClientSoftwareName:    proto.String(c.cfg.ClientName),
		ClientSoftwareVersion: proto.String(c.cfg.ClientVersion),
	}
	var resp pb.ApiVersionsResponse
	if err := c.Call(ctx, APIVersions, req, &resp, WithVersion(0), WithTimeout(c.cfg.HandshakeTimeout)); err != nil {
		return unanswered(err, c.cfg.DialTimeout) // it names the request or the connection's failure
	}
	versions := make(map[APIKey]versionRange, len(resp.GetApiVersions()))
	for _, v := range resp.GetApiVersions() {
		versions[APIKey(v.GetApiKey())] = versionRange{min: int16(v.GetMinVersion()), max: int16(v.GetMaxVersion())}
	}
	st := ServerType(resp.GetServerType())
	if c.cfg.ExpectedServerType != ServerTypeUnknown && st != ServerTypeUnknown && st != c.cfg.ExpectedServerType {
		return fmt.Errorf("%w: expected a %s, the server says it is a %s", ErrUnsupportedServer, c.cfg.ExpectedServerType, st)
	}
	if len(versions) > 0 {
		c.versions = versions
	}
	c.serverType = st

	if c.cfg.SASL != nil {
		if err := c.authenticate(ctx); err != nil {
			return err
		}
	}
	return nil
}

// unanswered returns the failure of the first request, ApiVersions, as an
// ErrNoAnswer when the peer closed or reset the connection or sent nothing
// within the limit that ended the wait: the request's own timer (the
// handshake time) or the dial's context (dialTimeout, counted from the dial's
// start). The limit is said as configured, not as measured, so the message
// does not depend on how late a timer fired. Other failures, an answer that
// is not a Fluss frame among them, are returned unchanged. A caller whose own
// context ended replaces the timeout with its context's error (Dial).
func unanswered(err error, dialTimeout time.Duration) error {
	var te *TimeoutError
	var ce *ConnError
	switch {
	case errors.As(err, &te):
		return &noAnswerError{how: fmt.Sprintf("sent nothing within %v", te.After.Round(time.Millisecond)), cause: err}
	case errors.Is(err, context.DeadlineExceeded):
		return &noAnswerError{how: fmt.Sprintf("sent nothing within %v", dialTimeout), cause: err}
	case !errors.As(err, &ce) || ce.Op != "read":
		return err
	case errors.Is(err, io.EOF):
		return &noAnswerError{how: "closed the connection", cause: err}
	case errors.Is(err, syscall.ECONNRESET):
		return &noAnswerError{how: "reset the connection", cause: err}
	}
	return err
}

// authenticate runs SASL/PLAIN. Bad credentials (AUTHENTICATE_EXCEPTION) fail
// at once; RETRIABLE_AUTHENTICATE_EXCEPTION is retried with backoff until ctx
// (bounded by the dial timeout) ends.
func (c *Conn) authenticate(ctx context.Context) error {
	req := &pb.AuthenticateRequest{
		Protocol: proto.String(saslMechanismPlain),
		Token:    PlainToken(c.cfg.SASL.Username, c.cfg.SASL.Password),
	}
	delay := c.cfg.RetryDelay
	if delay == nil {
		delay = func(int) time.Duration { return 100 * time.Millisecond }
	}
	for attempt := 0; ; attempt++ {
		var resp pb.AuthenticateResponse
		err := c.Call(ctx, Authenticate, req, &resp, WithVersion(0))
		if err == nil {
			// PLAIN completes in one round; 0.9 servers answer with an empty
			// challenge.
			return nil
		}
		if !errors.Is(err, errcode.RetriableAuthenticate) {
			return fmt.Errorf("sasl/plain authentication as %q: %w", c.cfg.SASL.Username, err)
		}
		if serr := Sleep(ctx, delay(attempt)); serr != nil {
			return fmt.Errorf("sasl/plain authentication as %q: %w (last error: %v)", c.cfg.SASL.Username, serr, err)
		}
	}
}
