package iggy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"
)

// Options say where and how to connect.
type Options struct {
	// Addr is the server's host:port.
	Addr string
	// TLS, when set, makes the connection TLS with this configuration.
	TLS *tls.Config
	// Credentials log the connection in.
	Credentials Credentials
	// Version pins the dialect; VersionAuto finds it at connect.
	Version Version
	// Timeout bounds connecting (dial, TLS handshake, detection and login
	// together) and, afterwards, every single request. Default 10s.
	Timeout time.Duration
}

func (o *Options) timeout() time.Duration {
	if o.Timeout <= 0 {
		return 10 * time.Second
	}
	return o.Timeout
}

// Dial connects, finds or checks the server's dialect and logs in. It
// returns an *UnsupportedServerError for a server whose protocol this
// package does not speak, a *NotIggyError for an address that does not
// answer like Iggy, and a *ServerError when the login is refused.
func Dial(ctx context.Context, o Options) (*Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, o.timeout())
	defer cancel()
	d, w, err := detect(ctx, &o)
	if err != nil {
		return nil, err
	}
	c := &Conn{w: *w, d: d, timeout: o.timeout()}
	c.lastUsed.Store(time.Now().UnixNano())
	err = c.do(ctx, "logging in to Iggy at "+o.Addr, func() error {
		var err error
		c.info, err = d.login(&c.w, o.Credentials)
		return err
	})
	if err != nil {
		_ = c.Close()
		return nil, loginError(&o, err)
	}
	return c, nil
}

// loginError says who tried to log in (never with the password or
// token), and whether the server refused the login or it failed.
func loginError(o *Options, err error) error {
	var u *UnsupportedServerError
	if errors.As(err, &u) {
		return err
	}
	who := "with a personal access token"
	if o.Credentials.Token == "" {
		who = fmt.Sprintf("as %q", o.Credentials.Username)
	}
	if IsLoginRejected(err) {
		return fmt.Errorf("the Iggy server at %s refused the login %s: %w", o.Addr, who, err)
	}
	return fmt.Errorf("logging in to Iggy at %s %s: %w", o.Addr, who, err)
}

// detect opens a connection that speaks the server's dialect. A 0.9 ping
// tells the two apart: a 0.9 server answers with a 256-byte reply header,
// a 0.8 server answers its first 8 bytes with an InvalidCommand frame, and
// the connection is then opened again for 0.8.
func detect(ctx context.Context, o *Options) (dialect, *wire, error) {
	w, err := open(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	if o.Version == Version08 {
		if err := probe08(ctx, w, o); err != nil {
			_ = w.nc.Close()
			return nil, nil, err
		}
		return v08{}, w, nil
	}
	isV08, err := withDeadline(ctx, w, func() (bool, error) { return probeV09(w) })
	if err != nil {
		_ = w.nc.Close()
		return nil, nil, probeError(ctx, o, err)
	}
	if !isV08 {
		return newV09(), w, nil
	}
	_ = w.nc.Close()
	if o.Version == Version09 {
		return nil, nil, fmt.Errorf("the Iggy server at %s speaks Iggy 0.8, but server_version is 0.9: set it to 0.8 or auto", o.Addr)
	}
	if w, err = open(ctx, o); err != nil {
		return nil, nil, err
	}
	return v08{}, w, nil
}

// probe08 pings in the 0.8 dialect, so that a server that does not speak
// it is told apart from a slow login.
func probe08(ctx context.Context, w *wire, o *Options) error {
	_, err := withDeadline(ctx, w, func() (bool, error) { return false, v08{}.ping(w) })
	if err == nil || CodeOf(err) != 0 {
		return err
	}
	err = probeError(ctx, o, err)
	var n *NotIggyError
	if errors.As(err, &n) {
		n.Detail += "; if it is Iggy 0.9 or later, set server_version to auto"
	}
	return err
}

// probeError turns a failed detection into what it most likely means.
func probeError(ctx context.Context, o *Options, err error) error {
	var u *UnsupportedServerError
	var n *NotIggyError
	switch {
	case errors.As(err, &u) || errors.As(err, &n):
		return err
	case ctx.Err() != nil || isTimeout(err):
		if cerr := context.Cause(ctx); cerr != nil && !errors.Is(cerr, context.DeadlineExceeded) {
			return cerr
		}
		return &NotIggyError{Addr: o.Addr, Detail: fmt.Sprintf("no reply to ping within %v", o.timeout())}
	}
	return fmt.Errorf("pinging Iggy at %s: %w", o.Addr, err)
}

// withDeadline runs fn on w bounded by ctx.
func withDeadline(ctx context.Context, w *wire, fn func() (bool, error)) (bool, error) {
	if d, ok := ctx.Deadline(); ok {
		_ = w.nc.SetDeadline(d)
	}
	stop := context.AfterFunc(ctx, func() { _ = w.nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	return fn()
}

// open dials the address and completes the TLS handshake.
func open(ctx context.Context, o *Options) (*wire, error) {
	var nd net.Dialer
	nc, err := nd.DialContext(ctx, "tcp", o.Addr)
	if err != nil {
		return nil, fmt.Errorf("connecting to Iggy at %s: %w", o.Addr, dialCause(ctx, err))
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	if o.TLS != nil {
		tc := tls.Client(nc, o.TLS.Clone())
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = nc.Close()
			return nil, fmt.Errorf("TLS handshake with Iggy at %s: %w", o.Addr, dialCause(ctx, err))
		}
		nc = tc
	}
	return &wire{nc: nc, addr: o.Addr}, nil
}

// dialCause prefers a cancellation's cause to the dialer's own words.
func dialCause(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			return errors.New("no connection within the timeout")
		}
		return context.Cause(ctx)
	}
	return err
}
