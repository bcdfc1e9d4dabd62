package redis_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/internal/cachetest"
	"github.com/fluss-iggy/fluss-iggy/resources/redis"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func yamlConf(url string, extra ...string) string {
	conf := fmt.Sprintf("redis:\n  url: %q\n", url)
	for _, e := range extra {
		conf += "  " + e + "\n"
	}
	return conf
}

func TestSpec(t *testing.T) {
	cachetest.CheckSpec(t, "redis")
}

// TestContract runs the shared contract suite against redis caches built from
// YAML, each subtest under its own key prefix on one server.
func TestContract(t *testing.T) {
	srv := cachetest.StartRedis(t, cachetest.RedisOptions{})
	var n atomic.Int64
	cachetest.Run(t, func(t *testing.T) service.Cache {
		prefix := fmt.Sprintf("contract%d:", n.Add(1))
		return cachetest.FromYAML(t, yamlConf(srv.URL(), fmt.Sprintf("prefix: %q", prefix)))
	}, cachetest.Options{})
}

func TestPrefix(t *testing.T) {
	srv := cachetest.StartRedis(t, cachetest.RedisOptions{})
	ctx := ctxT(t)
	a := cachetest.FromYAML(t, yamlConf(srv.URL(), `prefix: "a:"`))
	b := cachetest.FromYAML(t, yamlConf(srv.URL(), `prefix: "b:"`))
	raw := cachetest.FromYAML(t, yamlConf(srv.URL()))
	if err := a.Set(ctx, "k", []byte("in a"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, "k"); !errors.Is(err, service.ErrKeyNotFound) {
		t.Fatalf("b sees a's key: %v", err)
	}
	if err := b.Add(ctx, "k", []byte("in b"), nil); err != nil {
		t.Fatalf("Add in b: %v", err)
	}
	for key, want := range map[string]string{"a:k": "in a", "b:k": "in b"} {
		if got, err := raw.Get(ctx, key); err != nil || string(got) != want {
			t.Fatalf("raw Get(%q) = %q, %v; want %q", key, got, err, want)
		}
	}
}

func TestDefaultTTL(t *testing.T) {
	srv := cachetest.StartRedis(t, cachetest.RedisOptions{})
	c := cachetest.FromYAML(t, yamlConf(srv.URL(), "default_ttl: 200ms"))
	ctx := ctxT(t)
	hour, zero := time.Hour, time.Duration(0)
	for k, ttl := range map[string]*time.Duration{"default": nil, "explicit": &hour, "zero": &zero} {
		if err := c.Set(ctx, k, []byte("v"), ttl); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Add(ctx, "added", []byte("v"), nil); err != nil {
		t.Fatal(err)
	}
	// The server holds exactly the expiries asked for: the 200ms default on
	// "default" and "added", an hour on "explicit", none on "zero".
	opt, err := goredis.ParseURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	rdb := goredis.NewClient(opt)
	defer rdb.Close()
	for k, ok := range map[string]func(time.Duration) bool{
		"default":  func(d time.Duration) bool { return d > 0 && d <= 200*time.Millisecond },
		"added":    func(d time.Duration) bool { return d > 0 && d <= 200*time.Millisecond },
		"explicit": func(d time.Duration) bool { return d > 200*time.Millisecond && d <= time.Hour },
		"zero":     func(d time.Duration) bool { return d == -1 }, // no expiry
	} {
		if d, err := rdb.PTTL(ctx, k).Result(); err != nil || !ok(d) {
			t.Fatalf("PTTL %q = %v, %v", k, d, err)
		}
	}
	// Let the 200ms default TTL lapse on the server: poll for the effect. A Get
	// other than ErrKeyNotFound or a hit is an error at once. "added" was
	// written last, so once it is gone any key given the 200ms default is too:
	// "explicit" and "zero" must still be there.
	for _, k := range []string{"default", "added"} {
		cachetest.WaitFor(t, fmt.Sprintf("key %q written without TTL under default_ttl 200ms to expire", k), func() bool {
			_, err := c.Get(ctx, k)
			if err != nil && !errors.Is(err, service.ErrKeyNotFound) {
				t.Fatalf("Get(%q): %v", k, err)
			}
			return err != nil
		})
	}
	for _, k := range []string{"explicit", "zero"} {
		if _, err := c.Get(ctx, k); err != nil {
			t.Fatalf("Get(%q): %v", k, err)
		}
	}
}

func TestSetMulti(t *testing.T) {
	srv := cachetest.StartRedis(t, cachetest.RedisOptions{})
	c, err := redis.New(redis.Options{URL: srv.URL(), Prefix: "m:"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	ctx := ctxT(t)
	ttl := 50 * time.Millisecond
	if err := c.SetMulti(ctx,
		service.CacheItem{Key: "a", Value: []byte("1")},
		service.CacheItem{Key: "b", Value: []byte("2")},
		service.CacheItem{Key: "gone", Value: []byte("3"), TTL: &ttl},
	); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"a": "1", "b": "2"} {
		if got, err := c.Get(ctx, k); err != nil || string(got) != want {
			t.Fatalf("Get(%q) = %q, %v", k, got, err)
		}
	}
	// Let the 50ms TTL lapse on the server: poll for the effect.
	cachetest.WaitFor(t, `"gone" (TTL 50ms) to expire`, func() bool {
		_, err := c.Get(ctx, "gone")
		if err != nil && !errors.Is(err, service.ErrKeyNotFound) {
			t.Fatalf("Get(gone) = %v", err)
		}
		return err != nil
	})
}

func TestClosed(t *testing.T) {
	srv := cachetest.StartRedis(t, cachetest.RedisOptions{})
	c, err := redis.New(redis.Options{URL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	if err := c.Set(ctx, "k", []byte("v"), nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	checks := map[string]error{}
	_, checks["get"] = c.Get(ctx, "k")
	checks["set"] = c.Set(ctx, "k", nil, nil)
	checks["add"] = c.Add(ctx, "k", nil, nil)
	checks["delete"] = c.Delete(ctx, "k")
	for op, err := range checks {
		if err == nil || !strings.Contains(err.Error(), "closed") || !strings.Contains(err.Error(), srv.Addr()) {
			t.Errorf("%s after Close = %v, want a closed error naming %s", op, err, srv.Addr())
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for name, tc := range map[string]struct{ conf, want, hidden string }{
		"missing url":  {conf: "redis:\n  prefix: x\n", want: "url"},
		"bad scheme":   {conf: yamlConf("http://localhost:6379"), want: "scheme"},
		"bad port":     {conf: yamlConf("redis://user:s3cret@localhost:port"), want: "invalid url", hidden: "s3cret"},
		"bad duration": {conf: yamlConf("redis://localhost:6379", "read_timeout: soon"), want: "read_timeout"},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := cachetest.NewFromYAML(tc.conf)
			if err == nil {
				_ = c.Close(context.Background())
				t.Fatalf("config accepted:\n%s", tc.conf)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not mention %q", err, tc.want)
			}
			if tc.hidden != "" && strings.Contains(err.Error(), tc.hidden) {
				t.Fatalf("error leaks %q: %v", tc.hidden, err)
			}
		})
	}
}

// TestServerDown checks a cache whose server is not running fails quickly
// with an error naming the server and key, not ErrKeyNotFound.
func TestServerDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c := cachetest.FromYAML(t, yamlConf("redis://"+addr+"/0", "max_retries: 1", "dial_timeout: 1s"))
	ctx := ctxT(t)
	start := time.Now()
	_, err = c.Get(ctx, "k")
	if err == nil || errors.Is(err, service.ErrKeyNotFound) || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), `"k"`) {
		t.Fatalf("Get with the server down = %v, want an error naming %s and the key", err, addr)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("Get with the server down took %s", el)
	}
	t.Logf("error after %s: %v", time.Since(start).Round(time.Millisecond), err)
	if err := c.Set(ctx, "k", []byte("v"), nil); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("Set with the server down = %v, want connection refused", err)
	}
}

// TestServerRestart kills the server (SIGKILL) while a writer is using the
// cache: operations fail with clear errors while it is down and succeed again
// once it is back. The server runs with appendfsync always, so the last write
// acknowledged before the kill is still there afterwards.
func TestServerRestart(t *testing.T) {
	srv := cachetest.StartRedis(t, cachetest.RedisOptions{AppendOnly: true})
	c := cachetest.FromYAML(t, yamlConf(srv.URL(), `prefix: "restart:"`, "max_retries: 1", "dial_timeout: 1s", "read_timeout: 1s", "write_timeout: 1s"))
	ctx := ctxT(t)

	var (
		mu        sync.Mutex
		acked     uint64 // last acknowledged sequence
		tried     uint64 // last sequence sent
		oks, errs int
		errSample []string
	)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for seq := uint64(1); ; seq++ {
			select {
			case <-stop:
				return
			default:
			}
			err := c.Set(ctx, "seq", []byte(strconv.FormatUint(seq, 10)), nil)
			mu.Lock()
			tried = seq
			if err == nil {
				acked, oks = seq, oks+1
			} else {
				errs++
				if len(errSample) < 3 {
					errSample = append(errSample, err.Error())
				}
			}
			mu.Unlock()
			time.Sleep(time.Millisecond)
		}
	}()
	snapshot := func() (uint64, int, int) {
		mu.Lock()
		defer mu.Unlock()
		return acked, oks, errs
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				close(stop)
				<-done
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	waitFor("writes before the kill", func() bool { _, ok, _ := snapshot(); return ok >= 20 })
	srv.Kill()
	ackedAtKill, oksAtKill, _ := snapshot()
	killedAt := time.Now()

	// While down: the writer's Sets fail, and so does a Get, with errors
	// naming the server.
	waitFor("errors while the server is down", func() bool { _, _, e := snapshot(); return e >= 3 })
	if _, err := c.Get(ctx, "seq"); err == nil || errors.Is(err, service.ErrKeyNotFound) || !strings.Contains(err.Error(), srv.Addr()) {
		t.Fatalf("Get while the server is down = %v, want an error naming %s", err, srv.Addr())
	}
	_, oksDown, _ := snapshot()
	if oksDown > oksAtKill+1 {
		t.Fatalf("%d writes succeeded while the server was down", oksDown-oksAtKill)
	}

	srv.Start()
	restartedAt := time.Now()
	waitFor("writes after the restart", func() bool { _, ok, _ := snapshot(); return ok >= oksDown+20 })
	recovered := time.Since(restartedAt)
	close(stop)
	<-done

	got, err := c.Get(ctx, "seq")
	if err != nil {
		t.Fatalf("Get after the restart: %v", err)
	}
	final, _, nerrs := snapshot()
	// A Set that timed out may still have been applied: a later value than
	// the last acknowledged one is not a loss, an earlier one is.
	mu.Lock()
	last := tried
	mu.Unlock()
	if v, err := strconv.ParseUint(string(got), 10, 64); err != nil || v < final || v > last {
		t.Fatalf("Get after the restart = %s, want the last acknowledged %d (or a later one sent, up to %d)", got, final, last)
	}
	mu.Lock()
	sample := strings.Join(errSample, "\n  ")
	mu.Unlock()
	for _, e := range errSample {
		if !strings.Contains(e, srv.Addr()) || !strings.Contains(e, `"restart:seq"`) {
			t.Errorf("unclear error while down: %s", e)
		}
	}
	t.Logf("down %s, %d failed writes, recovered %s after restart; last ack before kill %d; errors:\n  %s",
		restartedAt.Sub(killedAt).Round(time.Millisecond), nerrs, recovered.Round(time.Millisecond), ackedAtKill, sample)
}

// TestServerRestartKeepsAcknowledged checks, with a fresh client, that the
// last value acknowledged before a SIGKILL of an appendfsync-always server is
// there after the restart.
func TestServerRestartKeepsAcknowledged(t *testing.T) {
	srv := cachetest.StartRedis(t, cachetest.RedisOptions{AppendOnly: true})
	ctx := ctxT(t)
	c := cachetest.FromYAML(t, yamlConf(srv.URL()))
	for i := range 100 {
		if err := c.Set(ctx, "k", []byte(strconv.Itoa(i)), nil); err != nil {
			t.Fatal(err)
		}
	}
	srv.Kill()
	srv.Start()
	c2 := cachetest.FromYAML(t, yamlConf(srv.URL()))
	if got, err := c2.Get(ctx, "k"); err != nil || string(got) != "99" {
		t.Fatalf("after SIGKILL and restart: %q, %v; want 99", got, err)
	}
}

// TestTLS runs the server with TLS only and connects with the standard
// Benthos tls field and a private CA.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	caFile, certFile, keyFile := writeTestPKI(t, dir)
	srv := cachetest.StartRedis(t, cachetest.RedisOptions{TLSCertFile: certFile, TLSKeyFile: keyFile})
	ctx := ctxT(t)
	plainURL := "redis://" + srv.Addr() + "/0"

	c := cachetest.FromYAML(t, yamlConf(plainURL, "tls:", "  enabled: true", "  root_cas_file: "+strconv.Quote(caFile)))
	if err := c.Set(ctx, "k", []byte("over tls"), nil); err != nil {
		t.Fatalf("Set over TLS: %v", err)
	}
	if got, err := c.Get(ctx, "k"); err != nil || string(got) != "over tls" {
		t.Fatalf("Get over TLS = %q, %v", got, err)
	}

	// rediss:// with the same CA works too; without the CA the certificate
	// is rejected.
	c2 := cachetest.FromYAML(t, yamlConf(srv.URL(), "tls:", "  enabled: true", "  root_cas_file: "+strconv.Quote(caFile)))
	if _, err := c2.Get(ctx, "k"); err != nil {
		t.Fatalf("Get over rediss:// with the CA: %v", err)
	}
	c3 := cachetest.FromYAML(t, yamlConf(srv.URL(), "max_retries: 0"))
	if _, err := c3.Get(ctx, "k"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("Get over rediss:// without the CA = %v, want a certificate error", err)
	}
	c4 := cachetest.FromYAML(t, yamlConf(plainURL, "max_retries: 0", "read_timeout: 1s"))
	if _, err := c4.Get(ctx, "k"); err == nil || errors.Is(err, service.ErrKeyNotFound) {
		t.Fatalf("plain Get against a TLS server = %v, want an error", err)
	}
}

// writeTestPKI writes a CA and a server certificate for 127.0.0.1 signed by
// it, as PEM files in dir.
func writeTestPKI(t *testing.T, dir string) (caFile, certFile, keyFile string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "fluss-iggy test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, ca, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return write("ca.pem", "CERTIFICATE", caDER), write("server.pem", "CERTIFICATE", srvDER), write("server.key", "EC PRIVATE KEY", keyDER)
}
