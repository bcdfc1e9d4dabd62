package fluss

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// The S3 reader uses minio-go rather than aws-sdk-go-v2: one module with few
// dependencies, Signature V4 with session tokens, path-style addressing for
// S3-compatible servers, and Core.GetObject hands back the HTTP body as a
// stream (no buffering of the object), which is all remote segments need.

// S3Options configures reading remote log segments from S3 or an
// S3-compatible store (remote.data.dir s3://bucket/… or s3a://bucket/…).
// Empty fields are taken from the cluster's file-system security token
// (GET_FILESYSTEM_SECURITY_TOKEN: credentials, fs.s3a.endpoint,
// fs.s3a.region, fs.s3a.path.style.access), as the Java client does; with
// AccessKey and SecretKey set, no token is asked for.
type S3Options struct {
	// Endpoint is the S3 endpoint: a URL (http://host:port, https://host)
	// or host[:port] (HTTPS). Empty: the token's, else AWS S3.
	Endpoint string
	// Region is the bucket's region (default: the token's, else us-east-1).
	Region string
	// AccessKey and SecretKey are static credentials; SessionToken goes
	// with temporary ones.
	AccessKey, SecretKey, SessionToken string
	// PathStyle addresses buckets as endpoint/bucket/key instead of
	// bucket.endpoint/key (most S3-compatible servers need it).
	PathStyle bool
}

// s3MaxRetries is how often minio retries one request.
const s3MaxRetries = 3

// s3Backend opens remote segment objects. The minio client is built on
// first use, when the token's settings are known.
type s3Backend struct {
	opts   S3Options
	tokens *tokenProvider // nil with static credentials

	mu   sync.Mutex
	core *minio.Core
}

func newS3Backend(c *Client, opts S3Options) (*s3Backend, error) {
	b := &s3Backend{opts: opts}
	if (opts.AccessKey == "") != (opts.SecretKey == "") {
		return nil, errors.New("fluss: S3 access key and secret key must be set together")
	}
	if opts.AccessKey == "" {
		b.tokens = newTokenProvider(c)
	}
	if opts.Endpoint != "" {
		if _, _, err := parseS3Endpoint(opts.Endpoint); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// parseS3Endpoint splits an endpoint into host[:port] and whether it uses TLS.
func parseS3Endpoint(e string) (string, bool, error) {
	if !strings.Contains(e, "://") {
		return strings.TrimRight(e, "/"), true, nil
	}
	u, err := url.Parse(e)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", false, fmt.Errorf("fluss: S3 endpoint %q: want http(s)://host[:port] or host[:port]", e)
	}
	return u.Host, u.Scheme == "https", nil
}

// splitS3Path returns the bucket and key of an s3:// or s3a:// URI.
func splitS3Path(p string) (bucket, key string, err error) {
	u, err := url.Parse(p)
	if err != nil || u.Host == "" {
		return "", "", fmt.Errorf("remote log path %q is not s3://bucket/key", p)
	}
	return u.Host, strings.TrimPrefix(u.Path, "/"), nil
}

// client returns the minio client, building it on first use.
func (b *s3Backend) client(ctx context.Context) (*minio.Core, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.core != nil {
		return b.core, nil
	}
	o := b.opts
	// Few retries inside minio: a failed read is retried by the scanner,
	// with its backoff, from the fetch position.
	mo := &minio.Options{MaxRetries: s3MaxRetries}
	if b.tokens != nil {
		tok, err := b.tokens.token(ctx)
		if err != nil {
			return nil, fmt.Errorf("no S3 credentials configured and none from the cluster: %w", err)
		}
		o = withTokenSettings(o, tok.addition)
		mo.Creds = credentials.New(b.tokens)
	} else {
		mo.Creds = credentials.NewStaticV4(o.AccessKey, o.SecretKey, o.SessionToken)
	}
	host, secure := "s3.amazonaws.com", true
	if o.Endpoint != "" {
		var err error
		if host, secure, err = parseS3Endpoint(o.Endpoint); err != nil {
			return nil, err
		}
	}
	mo.Secure, mo.Region = secure, o.Region
	if mo.Region == "" {
		mo.Region = "us-east-1"
	}
	if o.PathStyle {
		mo.BucketLookup = minio.BucketLookupPath
	}
	core, err := minio.NewCore(host, mo)
	if err != nil {
		return nil, fmt.Errorf("S3 client for %s: %w", host, err)
	}
	b.core = core
	return core, nil
}

// withTokenSettings fills the options the caller left empty from the
// token's Hadoop-style settings.
func withTokenSettings(o S3Options, add map[string]string) S3Options {
	if o.Endpoint == "" {
		o.Endpoint = add["fs.s3a.endpoint"]
	}
	if o.Region == "" {
		o.Region = add["fs.s3a.endpoint.region"]
	}
	if o.Region == "" {
		o.Region = add["fs.s3a.region"]
	}
	if !o.PathStyle {
		o.PathStyle = strings.EqualFold(add["fs.s3a.path.style.access"], "true")
	}
	return o
}

// open streams the object at path from byte pos.
func (b *s3Backend) open(ctx context.Context, path string, pos int64) (io.ReadCloser, error) {
	bucket, key, err := splitS3Path(path)
	if err != nil {
		return nil, err
	}
	core, err := b.client(ctx)
	if err != nil {
		return nil, b.classify(err)
	}
	if b.tokens != nil {
		// Renew with the caller's context before minio needs it.
		if _, err := b.tokens.token(ctx); err != nil {
			return nil, b.classify(err)
		}
	}
	var opts minio.GetObjectOptions
	if pos > 0 {
		if err := opts.SetRange(pos, 0); err != nil {
			return nil, err
		}
	}
	body, _, _, err := core.GetObject(ctx, bucket, key, opts)
	if err != nil {
		return nil, b.classify(err)
	}
	return body, nil
}

// classify marks transient failures (and expired tokens) retriable, and
// drops the token after an answer that it is no longer valid.
func (b *s3Backend) classify(err error) error {
	var er minio.ErrorResponse
	errors.As(err, &er)
	switch er.Code {
	case "ExpiredToken", "InvalidToken", "TokenRefreshRequired":
		if b.tokens != nil {
			b.tokens.invalidate()
			return &remoteIOError{err: err, retriable: true}
		}
		return err
	case "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied":
		// Not retried (wrong credentials would loop forever), but a token
		// is fetched anew before the caller's next attempt.
		if b.tokens != nil {
			b.tokens.invalidate()
		}
		return err
	case "SlowDown", "RequestTimeout", "InternalError", "ServiceUnavailable", "RequestTimeTooSkewed":
		return &remoteIOError{err: err, retriable: true}
	}
	if er.StatusCode >= 500 {
		return &remoteIOError{err: err, retriable: true}
	}
	return markTransient(err)
}

// remoteIOError carries whether a remote storage failure is worth a retry
// (errcode.IsRetriable asks Retriable).
type remoteIOError struct {
	err       error
	retriable bool
}

func (e *remoteIOError) Error() string   { return e.err.Error() }
func (e *remoteIOError) Unwrap() error   { return e.err }
func (e *remoteIOError) Retriable() bool { return e.retriable }

// markTransient marks network failures (and streams cut short) retriable.
func markTransient(err error) error {
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return &remoteIOError{err: err, retriable: true}
	}
	return err
}
