package wire

import (
	"encoding/binary"
	"io"
	"net"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
)

// fakeServer is an in-process TCP server that speaks the Fluss frame format.
// Each accepted connection is handed to handle.
type fakeServer struct {
	ln     net.Listener
	handle func(sc *serverConn)
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  []net.Conn
}

func newFakeServer(t *testing.T, handle func(sc *serverConn)) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeServer{ln: ln, handle: handle}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, nc)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer nc.Close()
				s.handle(&serverConn{t: t, nc: nc})
			}()
		}
	}()
	t.Cleanup(s.close)
	return s
}

func (s *fakeServer) addr() string { return s.ln.Addr().String() }

func (s *fakeServer) close() {
	_ = s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

type request struct {
	key     APIKey
	version int16
	id      int32
	body    []byte
}

type serverConn struct {
	t   *testing.T
	nc  net.Conn
	wmu sync.Mutex
}

// read returns the next request, or ok=false when the client went away.
func (sc *serverConn) read() (request, bool) {
	var hdr [12]byte
	if _, err := io.ReadFull(sc.nc, hdr[:]); err != nil {
		return request{}, false
	}
	n := binary.BigEndian.Uint32(hdr[0:4])
	body := make([]byte, n-RequestHeaderLen)
	if _, err := io.ReadFull(sc.nc, body); err != nil {
		return request{}, false
	}
	return request{
		key:     APIKey(binary.BigEndian.Uint16(hdr[4:6])),
		version: int16(binary.BigEndian.Uint16(hdr[6:8])),
		id:      int32(binary.BigEndian.Uint32(hdr[8:12])),
		body:    body,
	}, true
}

func (sc *serverConn) writeRaw(b []byte) {
	sc.wmu.Lock()
	defer sc.wmu.Unlock()
	_, _ = sc.nc.Write(b)
}

func (sc *serverConn) respond(typ ResponseType, id int32, m proto.Message) {
	body, err := proto.Marshal(m)
	if err != nil {
		sc.t.Errorf("marshal: %v", err)
		return
	}
	var b []byte
	if typ == ResponseServerFailure {
		b = binary.BigEndian.AppendUint32(b, uint32(1+len(body)))
		b = append(b, byte(typ))
	} else {
		b = binary.BigEndian.AppendUint32(b, uint32(5+len(body)))
		b = append(b, byte(typ))
		b = binary.BigEndian.AppendUint32(b, uint32(id))
	}
	sc.writeRaw(append(b, body...))
}

func (sc *serverConn) errorResponse(id int32, code int32, msg string) {
	sc.respond(ResponseError, id, &pb.ErrorResponse{ErrorCode: proto.Int32(code), ErrorMessage: proto.String(msg)})
}

// answerAPIVersions answers an ApiVersions request listing keys, as a server
// of type st.
func (sc *serverConn) answerAPIVersions(r request, st ServerType, keys ...APIKey) {
	resp := &pb.ApiVersionsResponse{ServerType: proto.Int32(int32(st))}
	for _, k := range keys {
		resp.ApiVersions = append(resp.ApiVersions, &pb.PbApiVersion{
			ApiKey: proto.Int32(int32(k)), MinVersion: proto.Int32(0), MaxVersion: proto.Int32(0),
		})
	}
	sc.respond(ResponseSuccess, r.id, resp)
}
