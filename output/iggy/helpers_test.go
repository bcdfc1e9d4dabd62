package iggyoutput_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/iggy"
	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
	iggyoutput "github.com/fluss-iggy/fluss-iggy/output/iggy"

	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
)

// The suite runs against the in-process test server, once per dialect it
// speaks (TestMain runs the test binary again for 0.9), or, unchanged,
// against a real Iggy server when IGGY_TCP_ADDRESS is set (with
// IGGY_USERNAME and IGGY_PASSWORD, default iggy/iggy). Tests that need
// fault injection skip only that part with a real server.

// testVersion is the dialect of this run's test server.
var testVersion = iggytest.SuiteVersion()

func TestMain(m *testing.M) { iggytest.MainEveryDialect(m) }

// env is the Iggy server a test talks to.
type env struct {
	t    *testing.T
	addr string
	user string
	pass string
	srv  *iggytest.Server // nil with a real server
	cl   *iggy.Conn
}

func realServer() (addr, user, pass string, ok bool) {
	addr = os.Getenv("IGGY_TCP_ADDRESS")
	if addr == "" {
		return "", "", "", false
	}
	user, pass = os.Getenv("IGGY_USERNAME"), os.Getenv("IGGY_PASSWORD")
	if user == "" {
		user = "iggy"
	}
	if pass == "" {
		pass = "iggy"
	}
	return addr, user, pass, true
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvOpts(t, iggytest.Options{})
}

func newEnvOpts(t *testing.T, opts iggytest.Options) *env {
	t.Helper()
	if addr, user, pass, ok := realServer(); ok {
		return &env{t: t, addr: addr, user: user, pass: pass}
	}
	opts.Version = testVersion
	srv, err := iggytest.Start(opts)
	if err != nil {
		t.Fatalf("starting the Iggy test server: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return &env{t: t, addr: srv.Addr(), user: iggytest.DefaultUsername, pass: iggytest.DefaultPassword, srv: srv}
}

// needFaults returns the test server, or skips the test with a real server,
// where faults cannot be injected.
func (e *env) needFaults() *iggytest.Server {
	e.t.Helper()
	if e.srv == nil {
		e.t.Skip("needs fault injection, which only the in-process test server offers (IGGY_TCP_ADDRESS points at a real server)")
	}
	return e.srv
}

var nameSeq atomic.Int64

// name returns a stream or topic name unique to this test run, and deletes
// the stream at the end when it is one.
func (e *env) stream() string {
	e.t.Helper()
	n := fmt.Sprintf("fi-%s-%d-%d", sanitize(e.t.Name()), time.Now().UnixNano()%1e9, nameSeq.Add(1))
	e.t.Cleanup(func() {
		if cl, err := e.dial(); err == nil {
			_ = cl.DeleteStream(context.Background(), ident(e.t, n))
			_ = cl.Close()
		}
	})
	return n
}

func sanitize(s string) string {
	s = regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(s, "-")
	if len(s) > 60 {
		s = s[len(s)-60:]
	}
	return strings.Trim(s, "-")
}

func (e *env) dial() (*iggy.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return iggy.Dial(ctx, iggy.Options{Addr: e.addr, Credentials: iggy.Credentials{Username: e.user, Password: e.pass}})
}

// client returns a logged-in client for setting up and checking, one per
// test, dialled again if it broke. After a fault (a restart, dropped
// connections) use with, which dials again when the old connection died.
func (e *env) client() *iggy.Conn {
	e.t.Helper()
	if e.cl != nil && !e.cl.Broken() {
		return e.cl
	}
	cl, err := e.dial()
	if err != nil {
		e.t.Fatalf("client for %s: %v", e.addr, err)
	}
	e.t.Cleanup(func() { _ = cl.Close() })
	e.cl = cl
	return cl
}

// with runs fn with the test's client, once more on a new connection when
// the first one turns out to be dead.
func (e *env) with(fn func(*iggy.Conn) error) error {
	e.t.Helper()
	err := fn(e.client())
	if iggy.EndsConnection(err) && e.cl.Broken() {
		err = fn(e.client())
	}
	return err
}

func ident(t *testing.T, s string) iggy.Identifier {
	t.Helper()
	id, err := iggy.ParseIdentifier(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// createTopic creates stream (if needed) and topic with n partitions.
func (e *env) createTopic(stream, topic string, n uint32) {
	e.t.Helper()
	cl, ctx := e.client(), context.Background()
	if err := cl.CreateStream(ctx, stream); err != nil && iggy.CodeOf(err) != iggy.CodeStreamNameAlreadyExists {
		e.t.Fatalf("creating stream %s: %v", stream, err)
	}
	if err := cl.CreateTopic(ctx, ident(e.t, stream), iggy.TopicSpec{Name: topic, Partitions: n}); err != nil {
		e.t.Fatalf("creating topic %s/%s: %v", stream, topic, err)
	}
}

// partitionCount returns the topic's partition count, or -1 if it is missing.
func (e *env) partitionCount(stream, topic string) int {
	e.t.Helper()
	var td *iggy.Topic
	err := e.with(func(c *iggy.Conn) (err error) {
		td, err = c.GetTopic(context.Background(), ident(e.t, stream), ident(e.t, topic))
		return err
	})
	if err != nil || td == nil {
		return -1
	}
	return int(td.Partitions)
}

// poll reads every message of one partition.
func (e *env) poll(stream, topic string, partition uint32) []iggy.PolledMessage {
	e.t.Helper()
	var out []iggy.PolledMessage
	offset := uint64(0)
	for {
		var pm *iggy.Polled
		err := e.with(func(c *iggy.Conn) (err error) {
			pm, err = c.Poll(context.Background(), &iggy.PollRequest{Stream: ident(e.t, stream), Topic: ident(e.t, topic),
				Partition: partition, Strategy: iggy.PollOffset, Value: offset, Count: 1000})
			return err
		})
		if err != nil {
			e.t.Fatalf("polling %s/%s partition %d: %v", stream, topic, partition, err)
		}
		if len(pm.Messages) == 0 {
			return out
		}
		out = append(out, pm.Messages...)
		offset = pm.Messages[len(pm.Messages)-1].Offset + 1
	}
}

// pollAll reads every message of every partition, by partition.
func (e *env) pollAll(stream, topic string) map[uint32][]iggy.PolledMessage {
	e.t.Helper()
	n := e.partitionCount(stream, topic)
	if n < 0 {
		e.t.Fatalf("topic %s/%s does not exist", stream, topic)
	}
	out := map[uint32][]iggy.PolledMessage{}
	for p := range uint32(n) {
		out[p] = e.poll(stream, topic, p)
	}
	return out
}

func payloads(msgs []iggy.PolledMessage) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Payload)
	}
	return out
}

func sortedPayloads(byPart map[uint32][]iggy.PolledMessage) []string {
	var out []string
	for _, msgs := range byPart {
		out = append(out, payloads(msgs)...)
	}
	sort.Strings(out)
	return out
}

// output builds an iggy output from YAML, with the address and login of the
// test's server filled in unless the YAML sets them.
func (e *env) outputYAML(yaml string) string {
	if !strings.Contains(yaml, "address:") {
		yaml += "\naddress: " + e.addr
	}
	if !strings.Contains(yaml, "username:") && !strings.Contains(yaml, "personal_access_token:") {
		yaml += fmt.Sprintf("\nusername: %q\npassword: %q", e.user, e.pass)
	}
	return yaml
}

func (e *env) output(yaml string) *iggyoutput.Output {
	e.t.Helper()
	out, err := newOutput(e.outputYAML(yaml))
	if err != nil {
		e.t.Fatalf("building output: %v", err)
	}
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = out.Close(ctx)
	})
	return out
}

func newOutput(yaml string) (*iggyoutput.Output, error) {
	pc, err := iggyoutput.Spec().ParseYAML(yaml, nil)
	if err != nil {
		return nil, err
	}
	return iggyoutput.NewFromConfig(pc, service.MockResources())
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func mustConnect(t *testing.T, out *iggyoutput.Output) {
	t.Helper()
	if err := out.Connect(ctxT(t, 15*time.Second)); err != nil {
		t.Fatalf("Connect: %v", err)
	}
}

// msg builds a message with metadata given as key, value pairs.
func msg(payload string, meta ...any) *service.Message {
	m := service.NewMessage([]byte(payload))
	for i := 0; i+1 < len(meta); i += 2 {
		m.MetaSetMut(meta[i].(string), meta[i+1])
	}
	return m
}

// batchErrors maps each failed index of a *service.BatchError to its error.
func batchErrors(t *testing.T, err error) map[int]error {
	t.Helper()
	var berr *service.BatchError
	if !errors.As(err, &berr) {
		t.Fatalf("want a *service.BatchError, got %T: %v", err, err)
	}
	out := map[int]error{}
	//lint:ignore SA1019 the BatchError was built from the very batch WriteBatch was given, so its indexes are that batch's.
	berr.WalkMessages(func(i int, _ *service.Message, err error) bool {
		if err != nil {
			out[i] = err
		}
		return true
	})
	return out
}

// selfSigned makes a certificate for 127.0.0.1 and returns it as PEM and as
// a server TLS configuration.
func selfSigned(t *testing.T) ([]byte, *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "iggy test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return certPEM, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// startWithTopic starts a test server with opts, stream "s" and its topic
// "t" of one partition; it is closed when the test ends.
func startWithTopic(t *testing.T, opts iggytest.Options) *iggytest.Server {
	t.Helper()
	srv, err := iggytest.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	if _, err := srv.CreateStream("s"); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.CreateTopic("s", "t", 1); err != nil {
		t.Fatal(err)
	}
	return srv
}

// syncBuffer is a bytes.Buffer safe for a logger and a test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newLoggedOutput builds an output whose log lines go to the returned
// buffer.
func newLoggedOutput(t *testing.T, yaml string) (*iggyoutput.Output, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	pc, err := iggyoutput.Spec().ParseYAML(yaml, nil)
	if err != nil {
		t.Fatal(err)
	}
	log := service.NewLoggerFromSlog(slog.New(slog.NewTextHandler(logs, nil)))
	out, err := iggyoutput.NewFromConfig(pc, service.MockResources(service.MockResourcesOptUseLogger(log)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = out.Close(ctxT(t, 5*time.Second)) })
	return out, logs
}
