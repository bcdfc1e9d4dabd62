package fluss

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/credentials"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
)

func TestDecodeSecurityToken(t *testing.T) {
	resp := &pb.GetFileSystemSecurityTokenResponse{
		Schema:         proto.String("s3"),
		Token:          []byte(`{"access_key_id":"ak","access_key_secret":"sk","security_token":"st"}`),
		ExpirationTime: proto.Int64(1_700_000_000_000),
		AdditionInfo: []*pb.PbKeyValue{
			{Key: proto.String("fs.s3a.endpoint"), Value: proto.String("http://127.0.0.1:9000")},
			{Key: proto.String("fs.s3a.path.style.access"), Value: proto.String("true")},
			{Key: proto.String("fs.s3a.region"), Value: proto.String("eu-west-1")},
		},
	}
	tok, err := decodeSecurityToken(resp)
	if err != nil {
		t.Fatal(err)
	}
	if tok.creds.AccessKeyID != "ak" || tok.creds.SecretAccessKey != "sk" || tok.creds.SessionToken != "st" {
		t.Errorf("credentials %+v", tok.creds)
	}
	if !tok.expires.Equal(time.UnixMilli(1_700_000_000_000)) {
		t.Errorf("expires %v", tok.expires)
	}
	o := withTokenSettings(S3Options{}, tok.addition)
	if o.Endpoint != "http://127.0.0.1:9000" || !o.PathStyle || o.Region != "eu-west-1" {
		t.Errorf("settings from the token: %+v", o)
	}
	if o := withTokenSettings(S3Options{Endpoint: "http://mine:1", Region: "r"}, tok.addition); o.Endpoint != "http://mine:1" || o.Region != "r" {
		t.Errorf("options must win over the token: %+v", o)
	}
	// A local file system answers with an empty token.
	local, err := decodeSecurityToken(&pb.GetFileSystemSecurityTokenResponse{Schema: proto.String("file"), Token: []byte{}})
	if err != nil || local.creds.AccessKeyID != "" || !local.expires.IsZero() {
		t.Errorf("empty token: %+v, %v", local, err)
	}
	if _, err := decodeSecurityToken(&pb.GetFileSystemSecurityTokenResponse{Schema: proto.String("s3"), Token: []byte("{")}); err == nil {
		t.Error("a malformed token decoded")
	}
}

// TestTokenProviderRenews: the token is fetched once, reused, and fetched
// again after 80% of its lifetime or after invalidate.
func TestTokenProviderRenews(t *testing.T) {
	now := time.Unix(1000, 0)
	var fetches int
	p := &tokenProvider{now: func() time.Time { return now }, fetch: func(context.Context) (*securityToken, error) {
		fetches++
		return &securityToken{creds: credentialsValue(fmt.Sprint("ak", fetches)), expires: now.Add(100 * time.Second)}, nil
	}}
	if !p.IsExpired() {
		t.Error("no token yet, but not expired")
	}
	v, err := p.Retrieve()
	if err != nil || v.AccessKeyID != "ak1" {
		t.Fatalf("first: %+v %v", v, err)
	}
	now = now.Add(79 * time.Second)
	if p.IsExpired() {
		t.Error("expired before 80% of the lifetime")
	}
	if v, _ := p.Retrieve(); v.AccessKeyID != "ak1" || fetches != 1 {
		t.Errorf("refetched early: %+v after %d fetches", v, fetches)
	}
	now = now.Add(2 * time.Second)
	if !p.IsExpired() {
		t.Error("not due after 80% of the lifetime")
	}
	if v, _ := p.Retrieve(); v.AccessKeyID != "ak2" {
		t.Errorf("after renewal: %+v", v)
	}
	p.invalidate()
	if v, _ := p.Retrieve(); v.AccessKeyID != "ak3" {
		t.Errorf("after invalidate: %+v", v)
	}
}

func TestParseS3Endpoint(t *testing.T) {
	for _, c := range []struct {
		in, host string
		secure   bool
		bad      bool
	}{
		{"http://127.0.0.1:8333", "127.0.0.1:8333", false, false},
		{"https://s3.example.com/", "s3.example.com", true, false},
		{"s3.example.com:443", "s3.example.com:443", true, false},
		{"ftp://x", "", false, true},
	} {
		host, secure, err := parseS3Endpoint(c.in)
		if (err != nil) != c.bad || host != c.host || secure != c.secure {
			t.Errorf("%q: %q %v %v", c.in, host, secure, err)
		}
	}
	if b, k, err := splitS3Path("s3a://bkt/remote/log/db/t-1/0/uuid/00000000000000000000.log"); err != nil || b != "bkt" || k != "remote/log/db/t-1/0/uuid/00000000000000000000.log" {
		t.Errorf("split: %q %q %v", b, k, err)
	}
	if !isS3("s3://b/k") || !isS3("S3A://b/k") || isS3("/tmp/x") || isS3("file:/tmp/x") {
		t.Error("isS3")
	}
}

// flakySource serves data and breaks the first stream after cut bytes.
type flakySource struct {
	data  []byte
	cut   int
	opens atomic.Int32
	read  atomic.Int64
}

func (f *flakySource) open(_ context.Context, pos int64) (io.ReadCloser, error) {
	n := f.opens.Add(1)
	var r io.Reader = bytes.NewReader(f.data[pos:])
	if n == 1 && f.cut > 0 {
		r = io.MultiReader(io.LimitReader(r, int64(f.cut)), errReader{io.ErrUnexpectedEOF})
	}
	return io.NopCloser(countingReader{r, &f.read}), nil
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// TestAheadReaderReopensAndBounds: a stream cut short is reopened at the
// byte it stopped at, and the reader never runs more than about its limit
// ahead of a caller that does not read.
func TestAheadReaderReopensAndBounds(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	src := &flakySource{data: data, cut: 100_000}
	limit := 64 << 10
	r := newAheadReader(context.Background(), src.open, 10, limit)
	time.Sleep(50 * time.Millisecond)
	if ahead := src.read.Load(); ahead > int64(limit+2*limit) {
		t.Errorf("read %d bytes ahead with a %d-byte limit", ahead, limit)
	}
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data[10:]) {
		t.Fatalf("read %d bytes, want %d (equal prefix %v)", len(got), len(data)-10, bytes.HasPrefix(data[10:], got))
	}
	if src.opens.Load() != 2 {
		t.Errorf("opened %d times, want 2", src.opens.Load())
	}
	r.Close()
}

func TestAheadReaderCloseStopsPump(t *testing.T) {
	src := &flakySource{data: make([]byte, 8<<20)}
	ctx, cancel := context.WithCancel(context.Background())
	r := newAheadReader(context.Background(), src.open, 0, 64<<10)
	r.bind(ctx)
	buf := make([]byte, 1000)
	if _, err := r.Read(buf); err != nil {
		t.Fatal(err)
	}
	cancel() // the caller's context ends: reads fail, the pump stops
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := r.Read(buf)
		if err != nil {
			if !errcode.IsRetriable(err) && !errors.Is(err, context.Canceled) {
				t.Errorf("read after cancel: %v", err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("reads go on after the context ended")
		}
	}
	r.Close()
}

func TestCursorCacheEvictsAndExpires(t *testing.T) {
	c := newCursorCache()
	var closed atomic.Int32
	mk := func() io.ReadCloser { return closeCounter{&closed} }
	for i := 0; i < maxCursors+3; i++ {
		c.put(cursorKey{"p", int64(i)}, mk())
	}
	if closed.Load() != 3 {
		t.Errorf("closed %d streams over the cap, want 3", closed.Load())
	}
	if _, ok := c.take(cursorKey{"p", 0}); ok {
		t.Error("the oldest stream was kept")
	}
	if _, ok := c.take(cursorKey{"p", int64(maxCursors + 2)}); !ok {
		t.Error("the newest stream is missing")
	}
	c.close()
	if closed.Load() != maxCursors+2 {
		t.Errorf("closed %d after close, want %d", closed.Load(), maxCursors+2)
	}
	c.put(cursorKey{"p", 99}, mk())
	if closed.Load() != maxCursors+3 {
		t.Error("a put after close kept the stream")
	}
}

type closeCounter struct{ n *atomic.Int32 }

func (closeCounter) Read([]byte) (int, error) { return 0, io.EOF }
func (c closeCounter) Close() error           { c.n.Add(1); return nil }

// fakeS3 serves objects over HTTP with Range support, counting GETs.
type fakeS3 struct {
	mu      sync.Mutex
	objects map[string][]byte // "/bucket/key"
	gets    map[string]int
	status  int // when non-zero, every request fails with it
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	data, ok := f.objects[r.URL.Path]
	f.gets[r.URL.Path]++
	status := f.status
	f.mu.Unlock()
	if status != 0 {
		w.WriteHeader(status)
		fmt.Fprintf(w, `<Error><Code>%s</Code><Message>x</Message></Error>`, map[int]string{403: "AccessDenied", 503: "SlowDown"}[status])
		return
	}
	if !ok {
		w.WriteHeader(404)
		fmt.Fprint(w, `<Error><Code>NoSuchKey</Code><Message>no</Message></Error>`)
		return
	}
	w.Header().Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
	w.Header().Set("ETag", `"e"`)
	from := 0
	if rg := r.Header.Get("Range"); rg != "" {
		from, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(rg, "bytes="), "-"))
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", from, len(data)-1, len(data)))
		w.Header().Set("Content-Length", strconv.Itoa(len(data)-from))
		w.WriteHeader(http.StatusPartialContent)
	} else {
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	}
	w.Write(data[from:])
}

func (f *fakeS3) getCount(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gets[path]
}

// TestRemoteStorageS3ParkAndPrefetch: an S3 segment read in two parts
// (parked in between) costs one GET, a prefetched one is served from the
// prefetch, ranges start at the asked byte, and S3 errors are classified.
func TestRemoteStorageS3ParkAndPrefetch(t *testing.T) {
	seg := bytes.Repeat([]byte("abcdefgh"), 100_000)
	f := &fakeS3{objects: map[string][]byte{"/bkt/a.log": seg, "/bkt/b.log": seg[:1000]}, gets: map[string]int{}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	rs, err := (&Client{}).RemoteStorage(RemoteStorageOptions{S3: S3Options{
		Endpoint: srv.URL, AccessKey: "ak", SecretKey: "sk", PathStyle: true,
	}, ReadAhead: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	ctx := context.Background()

	rc, err := rs.Open(ctx, "s3://bkt/a.log", 8)
	if err != nil {
		t.Fatal(err)
	}
	first := make([]byte, 100)
	if _, err := io.ReadFull(rc, first); err != nil || !bytes.Equal(first, seg[8:108]) {
		t.Fatalf("first read %q %v", first[:8], err)
	}
	rs.park("s3://bkt/a.log", 42, withPrefix(first[50:], rc))
	rs.prefetch("s3://bkt/b.log", 7)
	again, ok := rs.resume(ctx, "s3://bkt/a.log", 42)
	if !ok {
		t.Fatal("parked stream not resumed")
	}
	rest, err := io.ReadAll(again)
	again.Close()
	if err != nil || !bytes.Equal(rest, seg[58:]) {
		t.Fatalf("resumed read: %d bytes, %v", len(rest), err)
	}
	b, ok := rs.resume(ctx, "s3://bkt/b.log", 7)
	if !ok {
		t.Fatal("prefetched stream missing")
	}
	if got, err := io.ReadAll(b); err != nil || !bytes.Equal(got, seg[:1000]) {
		t.Fatalf("prefetched read: %d bytes, %v", len(got), err)
	}
	b.Close()
	if f.getCount("/bkt/a.log") != 1 || f.getCount("/bkt/b.log") != 1 {
		t.Errorf("GETs: a %d, b %d; want 1 each", f.getCount("/bkt/a.log"), f.getCount("/bkt/b.log"))
	}

	missing, _ := rs.Open(ctx, "s3://bkt/none.log", 0)
	if _, err := io.ReadAll(missing); err == nil || errcode.IsRetriable(err) {
		t.Errorf("missing object: %v (retriable %v)", err, errcode.IsRetriable(err))
	}
	missing.Close()
	f.mu.Lock()
	f.status = 503
	f.mu.Unlock()
	busy, _ := rs.Open(ctx, "s3://bkt/a.log", 0)
	if _, err := io.ReadAll(busy); err == nil || !errcode.IsRetriable(err) {
		t.Errorf("503: %v (retriable %v)", err, errcode.IsRetriable(err))
	}
	busy.Close()
}

func credentialsValue(ak string) credentials.Value { return credentials.Value{AccessKeyID: ak} }
