package fluss

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/wire"
)

// Object-store credentials from the cluster: GET_FILESYSTEM_SECURITY_TOKEN
// answers with the scheme of remote.data.dir, a JSON token
// {"access_key_id","access_key_secret","security_token"} (empty for file
// systems without credentials), its expiration time (ms since the epoch)
// and Hadoop-style settings such as fs.s3a.endpoint. Like the Java and Rust
// clients, the token is renewed after 80% of its remaining lifetime.

// tokenRenewRatio is the part of a token's lifetime after which it is renewed.
const tokenRenewRatio = 0.8

// tokenFetchTimeout bounds a token fetch minio starts without a deadline.
const tokenFetchTimeout = time.Minute

// securityToken is one decoded GetFileSystemSecurityToken answer.
type securityToken struct {
	scheme   string
	creds    credentials.Value
	expires  time.Time // zero: never
	addition map[string]string
}

type tokenJSON struct {
	AccessKeyID     string `json:"access_key_id"`
	AccessKeySecret string `json:"access_key_secret"`
	SecurityToken   string `json:"security_token"`
}

// decodeSecurityToken turns the response into a securityToken.
func decodeSecurityToken(resp *pb.GetFileSystemSecurityTokenResponse) (*securityToken, error) {
	t := &securityToken{scheme: resp.GetSchema(), addition: map[string]string{}}
	for _, kv := range resp.GetAdditionInfo() {
		t.addition[kv.GetKey()] = kv.GetValue()
	}
	if resp.ExpirationTime != nil {
		t.expires = time.UnixMilli(resp.GetExpirationTime())
	}
	t.creds.SignerType = credentials.SignatureAnonymous
	if len(resp.GetToken()) == 0 {
		return t, nil
	}
	var j tokenJSON
	if err := json.Unmarshal(resp.GetToken(), &j); err != nil {
		return nil, fmt.Errorf("decoding the %q security token: %w", t.scheme, err)
	}
	t.creds = credentials.Value{
		AccessKeyID:     j.AccessKeyID,
		SecretAccessKey: j.AccessKeySecret,
		SessionToken:    j.SecurityToken,
		Expiration:      t.expires,
		SignerType:      credentials.SignatureV4,
	}
	return t, nil
}

// tokenProvider is a minio credentials.Provider backed by the cluster's
// security token. It caches the token and renews it before it expires.
type tokenProvider struct {
	fetch func(ctx context.Context) (*securityToken, error)
	now   func() time.Time

	mu      sync.Mutex
	tok     *securityToken
	renewAt time.Time // zero: never
}

// newTokenProvider returns a provider that asks c for tokens.
func newTokenProvider(c *Client) *tokenProvider {
	return &tokenProvider{now: time.Now, fetch: func(ctx context.Context) (*securityToken, error) {
		var resp pb.GetFileSystemSecurityTokenResponse
		if err := c.callAny(ctx, wire.GetFileSystemSecurityToken, &pb.GetFileSystemSecurityTokenRequest{}, &resp); err != nil {
			return nil, fmt.Errorf("getting a file-system security token: %w", err)
		}
		return decodeSecurityToken(&resp)
	}}
}

// token returns the current token, fetching a new one when there is none
// or it is due for renewal.
func (p *tokenProvider) token(ctx context.Context) (*securityToken, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tok != nil && !p.dueLocked() {
		return p.tok, nil
	}
	t, err := p.fetch(ctx)
	if err != nil {
		return nil, err
	}
	p.tok = t
	p.renewAt = time.Time{}
	if !t.expires.IsZero() {
		now := p.now()
		p.renewAt = now.Add(time.Duration(float64(t.expires.Sub(now)) * tokenRenewRatio))
	}
	return t, nil
}

func (p *tokenProvider) dueLocked() bool {
	return !p.renewAt.IsZero() && !p.now().Before(p.renewAt)
}

// invalidate makes the next use fetch a new token (after an S3 answer that
// the credentials expired or were refused).
func (p *tokenProvider) invalidate() {
	p.mu.Lock()
	p.tok = nil
	p.mu.Unlock()
}

// RetrieveWithCredContext implements credentials.Provider.
func (p *tokenProvider) RetrieveWithCredContext(cc *credentials.CredContext) (credentials.Value, error) {
	ctx := context.Background()
	if cc != nil && cc.Context != nil {
		ctx = cc.Context
	}
	// minio asks without a deadline; the S3 reader renews the token with
	// the caller's context before each request, so this rarely fetches.
	ctx, cancel := context.WithTimeout(ctx, tokenFetchTimeout)
	defer cancel()
	t, err := p.token(ctx)
	if err != nil {
		return credentials.Value{}, err
	}
	return t.creds, nil
}

// Retrieve implements credentials.Provider.
func (p *tokenProvider) Retrieve() (credentials.Value, error) {
	return p.RetrieveWithCredContext(nil)
}

// IsExpired implements credentials.Provider.
func (p *tokenProvider) IsExpired() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tok == nil || p.dueLocked()
}
