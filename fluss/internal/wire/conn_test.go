package wire

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
)

func TestAppendRequestWorkedExample(t *testing.T) {
	body, err := proto.Marshal(&pb.ApiVersionsRequest{
		ClientSoftwareName:    proto.String("go"),
		ClientSoftwareVersion: proto.String("0.1"),
	})
	if err != nil {
		t.Fatal(err)
	}
	got := hex.EncodeToString(AppendRequest(nil, APIVersions, 0, 1, body))
	want := "0000001103e800000000000" + "10a02676f1203302e31"
	if got != want {
		t.Fatalf("frame = %s, want %s", got, want)
	}
}

func TestParseResponse(t *testing.T) {
	cases := []struct {
		name    string
		frame   []byte
		typ     ResponseType
		id      int32
		body    string
		wantErr bool
	}{
		{name: "empty", frame: nil, wantErr: true},
		{name: "success", frame: []byte{0, 0, 0, 0, 7, 'x'}, typ: ResponseSuccess, id: 7, body: "x"},
		{name: "error empty body", frame: []byte{1, 0, 0, 1, 0}, typ: ResponseError, id: 256},
		{name: "success short", frame: []byte{0, 0, 0}, wantErr: true},
		{name: "server failure has no id", frame: []byte{2, 'a', 'b'}, typ: ResponseServerFailure, body: "ab"},
		{name: "unknown type", frame: []byte{9, 0, 0, 0, 0}, wantErr: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := ParseResponse(c.frame)
			if c.wantErr {
				if !errors.Is(err, ErrMalformedFrame) {
					t.Fatalf("err = %v, want ErrMalformedFrame", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Type != c.typ || r.RequestID != c.id || string(r.Body) != c.body {
				t.Fatalf("got %+v", r)
			}
		})
	}
}

func TestFrameReaderBound(t *testing.T) {
	// A header announcing 2 GiB must be rejected before anything is allocated
	// or read.
	var b bytes.Buffer
	b.Write([]byte{0x7f, 0xff, 0xff, 0xff})
	fr := NewFrameReader(&b, 1024)
	if _, err := fr.Next(); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("err = %v, want ErrFrameTooLarge", err)
	}
	neg := NewFrameReader(bytes.NewReader([]byte{0xff, 0xff, 0xff, 0xfe}), 1024)
	if _, err := neg.Next(); !errors.Is(err, ErrMalformedFrame) {
		t.Fatalf("negative length: err = %v", err)
	}
	trunc := NewFrameReader(bytes.NewReader([]byte{0, 0, 0, 9, 1, 2}), 1024)
	if _, err := trunc.Next(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("truncated: err = %v", err)
	}
	// The bound is checked before allocating: rejecting a 1 GiB header must
	// allocate next to nothing.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < 10; i++ {
		fr := NewFrameReader(bytes.NewReader([]byte{0x40, 0, 0, 0}), 1<<20)
		_, _ = fr.Next()
	}
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
		t.Fatalf("rejecting oversized frames allocated %d bytes", d)
	}
}

// schemaEcho answers GetTableSchema requests with the schema id they asked
// for, so a test can tell responses apart.
func schemaReq(i int32) *pb.GetTableSchemaRequest {
	return &pb.GetTableSchemaRequest{
		TablePath: &pb.PbTablePath{DatabaseName: proto.String("db"), TableName: proto.String("t")},
		SchemaId:  proto.Int32(i),
	}
}

func schemaResp(i int32) *pb.GetTableSchemaResponse {
	return &pb.GetTableSchemaResponse{SchemaId: proto.Int32(i), SchemaJson: []byte("{}")}
}

func decodeSchemaReq(t *testing.T, r request) int32 {
	var req pb.GetTableSchemaRequest
	if err := proto.Unmarshal(r.body, &req); err != nil {
		t.Errorf("decode request: %v", err)
	}
	return req.GetSchemaId()
}

func dialRaw(t *testing.T, s *fakeServer, cfg Config) *Conn {
	t.Helper()
	nc, err := net.Dial("tcp", s.addr())
	if err != nil {
		t.Fatal(err)
	}
	c := NewConn(s.addr(), nc, cfg)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestOutOfOrderResponses(t *testing.T) {
	const n = 50
	s := newFakeServer(t, func(sc *serverConn) {
		// Collect every request first, then answer in reverse order.
		var reqs []request
		for len(reqs) < n {
			r, ok := sc.read()
			if !ok {
				return
			}
			reqs = append(reqs, r)
		}
		for i := len(reqs) - 1; i >= 0; i-- {
			sc.respond(ResponseSuccess, reqs[i].id, schemaResp(decodeSchemaReq(t, reqs[i])))
		}
		for {
			if _, ok := sc.read(); !ok {
				return
			}
		}
	})
	c := dialRaw(t, s, Config{})
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := int32(0); i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var resp pb.GetTableSchemaResponse
			if err := c.Call(context.Background(), GetTableSchema, schemaReq(i), &resp); err != nil {
				errs <- err
				return
			}
			if resp.GetSchemaId() != i {
				errs <- errors.New("response routed to the wrong request")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// silentThenAnswer ignores requests whose schema id is negative and answers
// the others.
func silentForNegative(t *testing.T) func(sc *serverConn) {
	return func(sc *serverConn) {
		var ignored []request
		for {
			r, ok := sc.read()
			if !ok {
				return
			}
			id := decodeSchemaReq(t, r)
			if id < 0 {
				ignored = append(ignored, r)
				continue
			}
			// Answer late the previously ignored ones first: the client must
			// drop those responses.
			for _, old := range ignored {
				sc.respond(ResponseSuccess, old.id, schemaResp(decodeSchemaReq(t, old)))
			}
			ignored = nil
			sc.respond(ResponseSuccess, r.id, schemaResp(id))
		}
	}
}

func TestRequestTimeout(t *testing.T) {
	s := newFakeServer(t, silentForNegative(t))
	c := dialRaw(t, s, Config{RequestTimeout: 5 * time.Second})
	start := time.Now()
	var resp pb.GetTableSchemaResponse
	err := c.Call(context.Background(), GetTableSchema, schemaReq(-1), &resp, WithTimeout(150*time.Millisecond))
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("err = %v, want *TimeoutError", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("timeout took %s", el)
	}
	if !errcode.IsRetriable(err) {
		t.Error("a timeout should be retriable")
	}
	// The connection survives and the late answer to the timed-out request
	// is not mistaken for this one.
	if err := c.Call(context.Background(), GetTableSchema, schemaReq(5), &resp); err != nil {
		t.Fatal(err)
	}
	if resp.GetSchemaId() != 5 {
		t.Fatalf("schema id = %d, want 5", resp.GetSchemaId())
	}
	if c.Err() != nil {
		t.Fatalf("connection died: %v", c.Err())
	}
}

func TestContextCancel(t *testing.T) {
	s := newFakeServer(t, silentForNegative(t))
	c := dialRaw(t, s, Config{RequestTimeout: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	var resp pb.GetTableSchemaResponse
	err := c.Call(ctx, GetTableSchema, schemaReq(-1), &resp)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if errcode.IsRetriable(err) {
		t.Error("a cancelled context must not be retriable")
	}
	// Deadline of the context applies too.
	dctx, dcancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer dcancel()
	if err := c.Call(dctx, GetTableSchema, schemaReq(-2), &resp); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
	if err := c.Call(context.Background(), GetTableSchema, schemaReq(3), &resp); err != nil {
		t.Fatal(err)
	}
}

func TestServerFailureFailsAllPending(t *testing.T) {
	const n = 5
	s := newFakeServer(t, func(sc *serverConn) {
		for i := 0; i < n; i++ {
			if _, ok := sc.read(); !ok {
				return
			}
		}
		sc.respond(ResponseServerFailure, 0, &pb.ErrorResponse{ErrorCode: proto.Int32(-1), ErrorMessage: proto.String("pipeline broke")})
		// The real server closes the connection after a server failure; keep
		// it open here to prove the client drops it by itself.
		for {
			if _, ok := sc.read(); !ok {
				return
			}
		}
	})
	c := dialRaw(t, s, Config{RequestTimeout: time.Minute})
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var resp pb.GetTableSchemaResponse
			errs[i] = c.Call(context.Background(), GetTableSchema, schemaReq(int32(i)), &resp)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		var ce *ConnError
		if !errors.As(err, &ce) || ce.Op != "server failure" {
			t.Fatalf("call %d: err = %v, want server failure ConnError", i, err)
		}
		if !errors.Is(err, errcode.UnknownServerError) || !strings.Contains(err.Error(), "pipeline broke") {
			t.Fatalf("call %d: err = %v", i, err)
		}
		if !errcode.InvalidatesMetadata(err) {
			t.Fatal("a dead connection should invalidate metadata")
		}
	}
	select {
	case <-c.Done():
	case <-time.After(time.Second):
		t.Fatal("Done not closed")
	}
	var resp pb.GetTableSchemaResponse
	if err := c.Call(context.Background(), GetTableSchema, schemaReq(1), &resp); err == nil {
		t.Fatal("call on a dead connection succeeded")
	}
}

func TestOversizedResponseFrame(t *testing.T) {
	s := newFakeServer(t, func(sc *serverConn) {
		if _, ok := sc.read(); !ok {
			return
		}
		// Announce 1.5 GiB and send nothing more.
		sc.writeRaw([]byte{0x60, 0, 0, 0, 0})
		for {
			if _, ok := sc.read(); !ok {
				return
			}
		}
	})
	c := dialRaw(t, s, Config{MaxFrameSize: 1 << 20})
	var resp pb.GetTableSchemaResponse
	err := c.Call(context.Background(), GetTableSchema, schemaReq(1), &resp)
	if !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("err = %v, want ErrFrameTooLarge", err)
	}
	// The connection's first answer: not a Fluss server.
	if !errors.Is(err, ErrNotFluss) || errcode.IsRetriable(err) {
		t.Fatalf("err = %v, want ErrNotFluss, not retriable", err)
	}
	<-c.Done()
}

// An oversized frame after good ones is a broken connection to a Fluss
// server (retriable), not a foreign server.
func TestOversizedLaterFrameIsRetriable(t *testing.T) {
	s := newFakeServer(t, func(sc *serverConn) {
		r, ok := sc.read()
		if !ok {
			return
		}
		sc.respond(ResponseSuccess, r.id, &pb.GetTableSchemaResponse{SchemaId: proto.Int32(1), SchemaJson: []byte("{}")})
		if _, ok := sc.read(); !ok {
			return
		}
		sc.writeRaw([]byte{0x60, 0, 0, 0, 0})
		for {
			if _, ok := sc.read(); !ok {
				return
			}
		}
	})
	c := dialRaw(t, s, Config{MaxFrameSize: 1 << 20})
	var resp pb.GetTableSchemaResponse
	if err := c.Call(context.Background(), GetTableSchema, schemaReq(1), &resp); err != nil {
		t.Fatal(err)
	}
	err := c.Call(context.Background(), GetTableSchema, schemaReq(1), &resp)
	if !errors.Is(err, ErrFrameTooLarge) || errors.Is(err, ErrNotFluss) || !errcode.IsRetriable(err) {
		t.Fatalf("err = %v, want a retriable ErrFrameTooLarge", err)
	}
}

// Connection errors name the server once: a net error already does.
func TestConnErrorSaysTheAddressOnce(t *testing.T) {
	cases := []struct {
		err  *ConnError
		want string
	}{
		{&ConnError{Addr: "127.0.0.1:1", Op: "dial", Err: errors.New("dial tcp 127.0.0.1:1: connect: connection refused")},
			"fluss: dial tcp 127.0.0.1:1: connect: connection refused"},
		{&ConnError{Addr: "h:1", Op: "handshake", Err: &TimeoutError{Addr: "h:1", API: APIVersions, After: time.Second}},
			"fluss: handshake: " + APIVersions.String() + " request to h:1: no response within 1s"},
		{&ConnError{Addr: "h:1", Op: "read", Err: io.EOF}, "fluss: connection to h:1: read: EOF"},
		{&ConnError{Addr: "h:1", Op: "read", Err: &notFlussError{answer: []byte("HTTP/1.1 400"), cause: ErrFrameTooLarge}},
			`fluss: h:1 did not answer as a Fluss server (its answer starts with "HTTP/1.1 400")`},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}

func TestErrorResponse(t *testing.T) {
	s := newFakeServer(t, func(sc *serverConn) {
		for {
			r, ok := sc.read()
			if !ok {
				return
			}
			if decodeSchemaReq(t, r) == 7 {
				sc.errorResponse(r.id, 7, "Table 'db.t' does not exist.")
				continue
			}
			sc.respond(ResponseSuccess, r.id, schemaResp(1))
		}
	})
	c := dialRaw(t, s, Config{})
	var resp pb.GetTableSchemaResponse
	err := c.Call(context.Background(), GetTableSchema, schemaReq(7), &resp)
	if !errors.Is(err, errcode.TableNotExist) {
		t.Fatalf("err = %v, want TABLE_NOT_EXIST", err)
	}
	var se *errcode.ServerError
	if !errors.As(err, &se) || se.Message != "Table 'db.t' does not exist." {
		t.Fatalf("server error = %+v", se)
	}
	var re *RequestError
	if !errors.As(err, &re) || re.API != GetTableSchema {
		t.Fatalf("request error = %+v", re)
	}
	if errcode.IsRetriable(err) {
		t.Error("TABLE_NOT_EXIST must not be retriable")
	}
	if err := c.Call(context.Background(), GetTableSchema, schemaReq(1), &resp); err != nil {
		t.Fatal(err)
	}
}

func TestMissingRequiredFieldRejectedLocally(t *testing.T) {
	s := newFakeServer(t, func(sc *serverConn) {
		for {
			if _, ok := sc.read(); !ok {
				return
			}
		}
	})
	c := dialRaw(t, s, Config{RequestTimeout: time.Minute})
	start := time.Now()
	err := c.Call(context.Background(), GetTableSchema, &pb.GetTableSchemaRequest{}, &pb.GetTableSchemaResponse{})
	if err == nil || time.Since(start) > time.Second {
		t.Fatalf("err = %v after %s; want an immediate encoding error", err, time.Since(start))
	}
	if c.Err() != nil {
		t.Fatal("an encoding error must not kill the connection")
	}
}

func TestHandshakeAndSASL(t *testing.T) {
	s := newFakeServer(t, func(sc *serverConn) {
		authed := false
		for {
			r, ok := sc.read()
			if !ok {
				return
			}
			switch r.key {
			case APIVersions:
				var req pb.ApiVersionsRequest
				if err := proto.Unmarshal(r.body, &req); err != nil || req.GetClientSoftwareName() != "fluss-iggy" {
					t.Errorf("api versions request %v %v", req.String(), err)
				}
				sc.answerAPIVersions(r, ServerTypeTabletServer, APIVersions, Authenticate, GetTableSchema)
			case Authenticate:
				var req pb.AuthenticateRequest
				_ = proto.Unmarshal(r.body, &req)
				if req.GetProtocol() == "PLAIN" && bytes.Equal(req.GetToken(), PlainToken("alice", "alice-secret")) {
					authed = true
					sc.respond(ResponseSuccess, r.id, &pb.AuthenticateResponse{Challenge: []byte{}})
				} else {
					sc.errorResponse(r.id, 46, "Authentication failed: Invalid username or password")
				}
			default:
				if !authed {
					sc.errorResponse(r.id, 46, "not authenticated")
					continue
				}
				sc.respond(ResponseSuccess, r.id, schemaResp(decodeSchemaReq(t, r)))
			}
		}
	})
	ctx := context.Background()

	c, err := Dial(ctx, s.addr(), Config{SASL: &SASLPlain{Username: "alice", Password: "alice-secret"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.ServerType() != ServerTypeTabletServer {
		t.Errorf("server type = %v", c.ServerType())
	}
	var resp pb.GetTableSchemaResponse
	if err := c.Call(ctx, GetTableSchema, schemaReq(4), &resp); err != nil || resp.GetSchemaId() != 4 {
		t.Fatalf("call after auth: %v %v", err, resp.GetSchemaId())
	}
	// An API the server did not list fails at once instead of timing out.
	start := time.Now()
	err = c.Call(ctx, CreateTable, &pb.CreateTableRequest{}, &pb.CreateTableResponse{})
	if !errors.Is(err, errcode.UnsupportedVersion) || time.Since(start) > time.Second {
		t.Fatalf("unlisted api: %v", err)
	}

	start = time.Now()
	_, err = Dial(ctx, s.addr(), Config{SASL: &SASLPlain{Username: "alice", Password: "wrong"}})
	if !errors.Is(err, errcode.AuthenticateException) {
		t.Fatalf("wrong password: err = %v", err)
	}
	if errcode.IsRetriable(err) {
		t.Error("bad credentials must not be retriable")
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("auth failure took %s", time.Since(start))
	}

	_, err = Dial(ctx, s.addr(), Config{ExpectedServerType: ServerTypeCoordinator})
	if !errors.Is(err, ErrUnsupportedServer) {
		t.Fatalf("wrong server type: err = %v", err)
	}
}

func TestDialUnreachable(t *testing.T) {
	// A listener that accepts but never answers: the handshake must time out.
	s := newFakeServer(t, func(sc *serverConn) {
		for {
			if _, ok := sc.read(); !ok {
				return
			}
		}
	})
	start := time.Now()
	_, err := Dial(context.Background(), s.addr(), Config{DialTimeout: 300 * time.Millisecond})
	var ce *ConnError
	if !errors.As(err, &ce) || ce.Op != "handshake" {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > 3*time.Second {
		t.Fatalf("handshake timeout took %s", time.Since(start))
	}

	// Nothing listening.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	_, err = Dial(context.Background(), addr, Config{DialTimeout: time.Second})
	if !errors.As(err, &ce) || ce.Op != "dial" || !errcode.IsRetriable(err) {
		t.Fatalf("err = %v", err)
	}
}

func TestRequestIDsUniqueUnderLoad(t *testing.T) {
	// Many concurrent callers with ids wrapping around: every response must
	// reach its caller.
	s := newFakeServer(t, func(sc *serverConn) {
		for {
			r, ok := sc.read()
			if !ok {
				return
			}
			go sc.respond(ResponseSuccess, r.id, schemaResp(decodeSchemaReq(t, r)))
		}
	})
	c := dialRaw(t, s, Config{})
	c.mu.Lock()
	c.nextID = 1<<31 - 20 // wrap during the test
	c.mu.Unlock()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				want := int32(g*1000 + i)
				var resp pb.GetTableSchemaResponse
				if err := c.Call(context.Background(), GetTableSchema, schemaReq(want), &resp); err != nil {
					t.Error(err)
					return
				}
				if resp.GetSchemaId() != want {
					t.Errorf("got %d want %d", resp.GetSchemaId(), want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestCloseFailsPending(t *testing.T) {
	s := newFakeServer(t, silentForNegative(t))
	c := dialRaw(t, s, Config{RequestTimeout: time.Minute})
	time.AfterFunc(100*time.Millisecond, func() { _ = c.Close() })
	err := c.Call(context.Background(), GetTableSchema, schemaReq(-1), &pb.GetTableSchemaResponse{})
	if !errors.Is(err, ErrConnClosed) || errcode.IsRetriable(err) {
		t.Fatalf("err = %v", err)
	}
}

func TestWriteHeaderLayout(t *testing.T) {
	buf := make([]byte, 12, 16)
	putRequestHeader(buf, FetchLog, 1, 0x01020304, 3)
	if binary.BigEndian.Uint32(buf) != 11 || binary.BigEndian.Uint16(buf[4:]) != 1015 ||
		binary.BigEndian.Uint16(buf[6:]) != 1 || binary.BigEndian.Uint32(buf[8:]) != 0x01020304 {
		t.Fatalf("header = %x", buf)
	}
}
