package oracle

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// peer is a scripted single-node Iggy 0.9.0 for one client: it reads
// request frames, keeps every one in arrival order, checks them the way
// the 0.11.0 crates say a server does, and answers in the released reply
// layout from a small in-memory store. It is not a server: it knows the
// requests of the oracle scenario and answers anything else with status 3.
type peer struct {
	ln net.Listener
	wg sync.WaitGroup

	mu       sync.Mutex
	frames   []*request
	problems []string          // what the peer found wrong in the requests
	sends    map[string]uint64 // highest send request number per client id
	streams  []*peerStream
	op       uint64 // op number of the last replicated request
}

type peerStream struct {
	id     uint32
	name   string
	topics []*peerTopic
}

type peerTopic struct {
	id                uint32
	name              string
	expiry, maxSize   uint64
	explicit, derived []byte // option entries as sent, and the defaults the peer filled in
	parts             []*peerPartition
	balanced          uint32 // round-robin cursor
}

type peerPartition struct {
	next    uint64   // offset the next message gets
	batches [][]byte // stored batches
}

// startPeer listens on 127.0.0.1 and serves until the test ends.
func startPeer(t *testing.T) *peer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("recording peer: %v", err)
	}
	p := &peer{ln: ln, sends: map[string]uint64{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *peer) addr() string { return p.ln.Addr().String() }

func (p *peer) close() {
	_ = p.ln.Close()
	p.wg.Wait()
}

func (p *peer) accept() {
	defer p.wg.Done()
	for {
		nc, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.serve(nc)
		}()
	}
}

// serve answers the requests of one connection until it closes.
func (p *peer) serve(nc net.Conn) {
	defer nc.Close()
	for {
		_ = nc.SetDeadline(time.Now().Add(time.Minute))
		raw, err := readFrame(nc)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				p.problem("reading a request: %v", err)
			}
			return
		}
		r, err := decodeRequest(raw)
		if err != nil {
			p.problem("%v", err)
			return
		}
		if _, err := nc.Write(p.answer(r)); err != nil {
			return
		}
	}
}

// readFrame reads one whole frame: the header, then the rest its size
// field counts.
func readFrame(r io.Reader) ([]byte, error) {
	h := make([]byte, headerBytes)
	if _, err := io.ReadFull(r, h); err != nil {
		return nil, err
	}
	size := le.Uint32(h[offSize:])
	if size < headerBytes || size > 64<<20 {
		return nil, fmt.Errorf("a frame of size %d", size)
	}
	raw := make([]byte, size)
	copy(raw, h)
	if _, err := io.ReadFull(r, raw[headerBytes:]); err != nil {
		return nil, fmt.Errorf("the body of a %d-byte frame: %w", size, err)
	}
	return raw, nil
}

func (p *peer) problem(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.problems = append(p.problems, fmt.Sprintf(format, args...))
}

// recorded returns the requests so far and the problems found in them.
func (p *peer) recorded() ([]*request, []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*request(nil), p.frames...), append([]string(nil), p.problems...)
}

// answer records r, checks it and returns the whole reply frame.
func (p *peer) answer(r *request) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.frames) + 1
	p.frames = append(p.frames, r)
	for _, why := range checkHeader(r) {
		p.problems = append(p.problems, fmt.Sprintf("request %d, %s: %s", n, r, why))
	}
	if r.err != nil {
		p.problems = append(p.problems, fmt.Sprintf("request %d, %s: the body does not decode: %v", n, r, r.err))
		return replyHeader(r, r.op(), 0, errInvalidFormat, 0)
	}
	switch r.kind() {
	case "ping":
		return replyHeader(r, opNonReplicated, 0, 0, 0)
	case "cluster metadata":
		// A single node without a roster, as a 0.8 server answered; the
		// SDK then keeps no failover endpoints (leader_aware.rs).
		return replyHeader(r, opNonReplicated, 0, errFeatureUnavailable, 0)
	case "login":
		return p.replicated(r, opRegister, loginReply(), 0)
	case "get stream":
		return p.getStream(r)
	case "create stream":
		return p.createStream(r)
	case "get topic":
		return p.getTopic(r)
	case "create topic":
		return p.createTopic(r)
	case "send messages":
		return p.send(r, n)
	case "poll messages":
		return p.poll(r)
	}
	p.problems = append(p.problems, fmt.Sprintf("request %d, %s: not part of the scenario", n, r))
	return replyHeader(r, r.op(), 0, errInvalidCommand, 0)
}

// checkHeader lists what a 0.9.0 server would refuse in r's header
// (consensus/header.rs: validate_request_fields; vsr.rs for the stamp).
func checkHeader(r *request) []string {
	var bad []string
	if r.raw[offCommand] != cmdRequest {
		bad = append(bad, fmt.Sprintf("header.command is %d, not 5 (Request)", r.raw[offCommand]))
	}
	if bytes.Equal(r.raw[offClient:offClient+16], make([]byte, 16)) {
		bad = append(bad, "header.client is 0")
	}
	switch op, s, n := r.op(), r.session(), r.number(); {
	case op == opRegister && (s != 0 || n != 0):
		bad = append(bad, fmt.Sprintf("a login must carry request 0 and session 0, not %d and %d", n, s))
	case op == opNonReplicated && s != 0 && s != peerSession:
		bad = append(bad, fmt.Sprintf("session %#x is not the login's %#x", s, uint64(peerSession)))
	case op != opRegister && op != opNonReplicated && (s != peerSession || n == 0):
		bad = append(bad, fmt.Sprintf("a replicated request needs the login's session %#x and a request number > 0, not %#x and %d", uint64(peerSession), s, n))
	}
	if !stampOK(r) {
		bad = append(bad, "header.request_checksum is neither 0 nor the XXH3-64 of the body")
	}
	return bad
}

// replicated answers a replicated request with the payload of its reply;
// metadata and login replies carry the result section (payload starts
// with it).
func (p *peer) replicated(r *request, operation uint8, payload []byte, status uint32) []byte {
	p.op++
	if status != 0 {
		payload = nil
	}
	return append(replyHeader(r, operation, p.op, status, len(payload)), payload...)
}

// findStream finds a stream by the identifier field prefix ("stream").
func (p *peer) findStream(r *request) *peerStream {
	for _, s := range p.streams {
		if matches(r, "stream", s.id, s.name) {
			return s
		}
	}
	return nil
}

// findTopic finds a topic of s by the identifier field "topic".
func findTopic(r *request, s *peerStream) *peerTopic {
	for _, t := range s.topics {
		if matches(r, "topic", t.id, t.name) {
			return t
		}
	}
	return nil
}

// matches tells whether the identifier fields name.kind/name.value of r
// name id or name (primitives/identifier.rs: kind 1 numeric u32, 2 name).
func matches(r *request, prefix string, id uint32, name string) bool {
	kind, value := r.get(prefix+".kind"), r.get(prefix+".value")
	switch {
	case len(kind) != 1:
		return false
	case kind[0] == 1:
		return len(value) == 4 && le.Uint32(value) == id
	case kind[0] == 2:
		return string(value) == name
	}
	return false
}

// getStream answers code 200: the stream, or an empty body when missing.
func (p *peer) getStream(r *request) []byte {
	s := p.findStream(r)
	if s == nil {
		return replyHeader(r, opNonReplicated, 0, 0, 0)
	}
	body := appendStream(nil, s)
	return append(replyHeader(r, opNonReplicated, 0, 0, len(body)), body...)
}

// createStream answers operation 128 with the new stream.
func (p *peer) createStream(r *request) []byte {
	name := string(r.get("stream.name"))
	for _, s := range p.streams {
		if s.name == name {
			return p.replicated(r, opCreateStream, nil, errStreamNameExists)
		}
	}
	s := &peerStream{id: uint32(len(p.streams) + 1), name: name}
	p.streams = append(p.streams, s)
	return p.replicated(r, opCreateStream, appendStream(resultOK(), s), 0)
}

// getTopic answers code 300: the topic, or an empty body when the stream
// or the topic is missing.
func (p *peer) getTopic(r *request) []byte {
	var t *peerTopic
	if s := p.findStream(r); s != nil {
		t = findTopic(r, s)
	}
	if t == nil {
		return replyHeader(r, opNonReplicated, 0, 0, 0)
	}
	body := appendTopic(nil, t)
	return append(replyHeader(r, opNonReplicated, 0, 0, len(body)), body...)
}
