package flussinput

import (
	"context"
	endian "encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
	"github.com/fluss-iggy/fluss-iggy/internal/stop"
)

// permanentWithin is how soon a permanent error must stop the pipeline.
const permanentWithin = 10 * time.Second

// connectOnce builds an input from the fields of a fluss input and runs
// one Connect, with stop installed as the binary does. It returns how long
// Connect took, whether stop cancelled the pipeline, and the error.
func connectOnce(t *testing.T, yaml string) (time.Duration, bool, error) {
	t.Helper()
	stop.Reset()
	t.Cleanup(stop.Reset)
	pipeline, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop.Install(cancel)
	pc, err := Spec().ParseYAML(yaml, nil)
	if err != nil {
		t.Fatal(err)
	}
	in, err := newInputFromParsed(pc, service.MockResources(service.MockResourcesOptAddCache("offs")))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close(context.Background())
	ctx, cancelConnect := context.WithTimeout(context.Background(), time.Minute)
	defer cancelConnect()
	start := time.Now()
	err = in.Connect(ctx)
	return time.Since(start), pipeline.Err() != nil, err
}

// checkStopped checks that Connect stopped the pipeline with want.
func checkStopped(t *testing.T, name string, err error, took time.Duration, cancelled bool, want string) {
	t.Helper()
	var bo *service.ErrBackOff
	switch {
	case !errors.As(err, &bo) || bo.Wait != permanentWait:
		t.Errorf("%s: Connect returned %v, want an ErrBackOff of %v", name, err, permanentWait)
	case err.Error() != want:
		t.Errorf("%s: error\n got  %s\n want %s", name, err, want)
	case stop.Err() == nil || stop.Err().Error() != want || !cancelled:
		t.Errorf("%s: stop.Fail not called with the error (recorded %v, pipeline cancelled %v)", name, stop.Err(), cancelled)
	case took > permanentWithin:
		t.Errorf("%s: took %v", name, took)
	}
	t.Logf("%s: stopped after %v: %s", name, took.Round(time.Millisecond), err)
}

// A missing database or table, a table_type, column, bucket or partition
// filter the table does not match: Connect stops the pipeline at once,
// with one message naming the field.
func TestIntegrationPermanentErrorsStopThePipeline(t *testing.T) {
	boot, _, table := sharedLogTable(t)
	db := testDB.name
	base := func(database, tbl, extra string) string {
		return fmt.Sprintf("bootstrap_servers: [ %q ]\ndatabase: %s\ntable: %s\ncheckpoint_cache: offs\n%s", boot, database, tbl, extra)
	}
	path := db + "." + table
	cases := []struct{ name, yaml, want string }{
		{"missing database", base("nodb_here", table, ""),
			`field database: database "nodb_here" does not exist; create it, or set wait_for_table: true to wait for it`},
		{"missing table", base(db, "no_table_here", ""),
			`field table: table "no_table_here" does not exist in database "` + db + `"; create it, or set wait_for_table: true to wait for it`},
		{"wrong table_type", base(db, table, "table_type: primary_key\n"),
			"field table_type: table " + path + " is a log table, not a primary-key table"},
		{"missing column", base(db, table, "columns: [ id, nope ]\n"),
			"field columns: table " + path + ` has no column "nope" (its columns: id, name, amount)`},
		{"partition filter on an unpartitioned table", base(db, table, "partitions: [ x ]\n"),
			"field partitions: table " + path + " is not partitioned"},
		{"bucket beyond the table", base(db, table, "buckets: [ 5 ]\n"),
			"field buckets: bucket 5 does not exist (the table has 3 buckets)"},
	}
	for _, c := range cases {
		took, cancelled, err := connectOnce(t, c.yaml)
		checkStopped(t, c.name, err, took, cancelled, c.want)
	}
}

// An address that is not a Fluss server (here an HTTP server) stops the
// pipeline, saying so.
func TestNotAFlussServerStopsThePipeline(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	took, cancelled, err := connectOnce(t, fmt.Sprintf("bootstrap_servers: [ %q ]\ndatabase: d\ntable: t\ncheckpoint_cache: offs\n", addr))
	want := "no bootstrap server answered: " + addr + ` did not answer as a Fluss server (its answer starts with "HTTP/1.1 400 Bad Request")`
	checkStopped(t, "HTTP server", err, took, cancelled, want)
}

// Transient failures are retried, never stopping the pipeline, with a
// back-off that doubles to a limit (a minute while waiting for a table),
// the attempt and the wait in the message Benthos logs once per attempt.
func TestConnectBackOffGrowsToALimit(t *testing.T) {
	stop.Reset()
	t.Cleanup(stop.Reset)
	in, _ := newTestInput(t, "")
	ctx := context.Background()
	var waits []time.Duration
	for i := 1; i <= 8; i++ {
		err := in.connectFailed(ctx, errors.New("dial tcp 127.0.0.1:1: connect: connection refused"))
		var bo *service.ErrBackOff
		if !errors.As(err, &bo) {
			t.Fatalf("attempt %d: %v", i, err)
		}
		waits = append(waits, bo.Wait)
		if want := fmt.Sprintf("connection refused (attempt %d; next in %v)", i, bo.Wait); !strings.HasSuffix(err.Error(), want) {
			t.Errorf("attempt %d: %q does not end with %q", i, err, want)
		}
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, retryMax, retryMax, retryMax}
	if !slices.Equal(waits, want) {
		t.Errorf("waits %v, want %v", waits, want)
	}
	in.connectFailures = 6
	err := in.connectFailed(ctx, &waitingError{err: errors.New("table missing")})
	var bo *service.ErrBackOff
	if !errors.As(err, &bo) || bo.Wait != waitMax {
		t.Errorf("waiting for a table: %v, want a wait of %v", err, waitMax)
	}
	if stop.Err() != nil {
		t.Errorf("a transient error stopped the pipeline: %v", stop.Err())
	}
}

// With wait_for_table: true a missing table is waited for, one log line per
// attempt, and read once it exists.
func TestIntegrationWaitsForTable(t *testing.T) {
	stop.Reset()
	t.Cleanup(stop.Reset)
	boot, c := cluster(t)
	name := flusstest.UniqueName("later")
	path := fluss.NewTablePath(testDB.name, name)
	logs := newLogCapture()
	waiting := func(l string) bool { return strings.Contains(l, "waiting for it (wait_for_table: true)") }
	var col collector
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Create the table once the input has looked for it in vain.
		if logs.waitFor(t, time.Minute, "saying the input waits", waiting) == "" {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		schema := types.MustSchema([]types.Column{types.NewColumn("id", types.BigInt()), types.NewColumn("name", types.String())})
		if err := c.CreateTable(ctx, path, &types.TableDescriptor{Schema: *schema, BucketCount: 1}, false); err != nil {
			t.Errorf("creating the table: %v", err)
			return
		}
		if err := waitLeaders(ctx, c, path); err != nil {
			t.Errorf("table not ready: %v", err)
			return
		}
		java(t, "append", name, "--rows", "5")
	}()
	runStream(t, streamRun{input: inputYAML(boot, name, "wait_for_table: true\n"), consume: col.consume(t), logs: logs,
		until: func() bool { return col.count() >= 5 }})
	<-done
	if ids := idsOf(t, col.snapshot()); !slices.Equal(ids, seq(0, 5)) {
		t.Fatalf("ids %v", ids)
	}
	lines := logs.matching(waiting)
	want := fmt.Sprintf(`Failed to connect to fluss: field table: table %q does not exist in database %q yet; waiting for it (wait_for_table: true) (attempt 1; next in 1s)`, name, testDB.name)
	if len(lines) == 0 || lines[0] != want {
		t.Errorf("first attempt logged as\n%q\nwant\n%q", lines, want)
	}
	if stop.Err() != nil {
		t.Errorf("waiting stopped the pipeline: %v", stop.Err())
	}
}

// The binary: a missing table ends `fluss-iggy run` within seconds, with
// exit code 1 and the reason on its last line.
func TestIntegrationBinaryStopsOnMissingTable(t *testing.T) {
	boot, _ := cluster(t)
	want := fmt.Sprintf(`fluss-iggy: stopped: field table: table "no_table_here" does not exist in database %q; create it, or set wait_for_table: true to wait for it`, testDB.name)
	checkBinaryStops(t, boot, testDB.name, "no_table_here", want)
}

// fakeFlussServer answers ApiVersions with an empty list and every other
// request with an ERROR_RESPONSE of code and message; it returns its
// address.
func fakeFlussServer(t *testing.T, code int, message string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			go serveFake(nc, code, message)
		}
	}()
	return l.Addr().String()
}

func serveFake(nc net.Conn, code int, message string) {
	defer nc.Close()
	for {
		var hdr [12]byte // length, api key, version, request id
		if _, err := io.ReadFull(nc, hdr[:]); err != nil {
			return
		}
		if _, err := io.CopyN(io.Discard, nc, int64(endian.BigEndian.Uint32(hdr[0:4]))-8); err != nil {
			return
		}
		typ, body := byte(0), []byte(nil) // an empty ApiVersionsResponse
		if endian.BigEndian.Uint16(hdr[4:6]) != 1000 {
			// ErrorResponse{error_code: code, error_message: message}
			typ = 1
			body = endian.AppendUvarint([]byte{0x08}, uint64(code))
			body = append(endian.AppendUvarint(append(body, 0x12), uint64(len(message))), message...)
		}
		resp := endian.BigEndian.AppendUint32(nil, uint32(5+len(body)))
		resp = append(append(resp, typ), hdr[8:12]...)
		if _, err := nc.Write(append(resp, body...)); err != nil {
			return
		}
	}
}

// Credentials the server refuses stop the pipeline: no retry cures them.
func TestRefusedCredentialsStopThePipeline(t *testing.T) {
	addr := fakeFlussServer(t, 46, "Authentication failed: Invalid username or password")
	took, cancelled, err := connectOnce(t, fmt.Sprintf("bootstrap_servers: [ %q ]\ndatabase: d\ntable: t\ncheckpoint_cache: offs\nsasl: { username: alice, password: wrong }\n", addr))
	want := `no bootstrap server answered: handshake: sasl/plain authentication as "alice": AUTHENTICATE request to ` + addr +
		`: AUTHENTICATE_EXCEPTION (46): Authentication failed: Invalid username or password`
	checkStopped(t, "refused credentials", err, took, cancelled, want)
}
