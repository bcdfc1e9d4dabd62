package iggytest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/zeebo/xxh3"
)

// tclient is a minimal client of either dialect, built from the protocol
// facts, for tests that hold for both.
type tclient struct {
	t       *testing.T
	v       Version
	c       net.Conn
	id      u128   // 0.9 client id
	session uint64 // 0.9 session
	next    uint64 // 0.9 request number of the next replicated operation
	timeout time.Duration
}

// statusErr is an error status the server answered with (for 0.9 also a
// committed refusal in a result section).
type statusErr uint32

func (e statusErr) Error() string { return fmt.Sprintf("server error %d", uint32(e)) }

// evictedErr is a 0.9 Eviction frame with its reason.
type evictedErr uint8

func (e evictedErr) Error() string { return fmt.Sprintf("evicted, reason %d", uint8(e)) }

// isStatus reports whether err is the server error code.
func isStatus(err error, code uint32) bool {
	var s statusErr
	return errors.As(err, &s) && uint32(s) == code
}

// isTransport reports whether err is a dead connection rather than an
// answer.
func isTransport(err error) bool {
	var s statusErr
	var e evictedErr
	return err != nil && !errors.As(err, &s) && !errors.As(err, &e)
}

// versions are the dialects the dialect-independent tests run in.
var versions = []Version{Version08, Version09}

// forVersions runs f as a subtest per dialect.
func forVersions(t *testing.T, f func(t *testing.T, v Version)) {
	for _, v := range versions {
		t.Run(v.String(), func(t *testing.T) { f(t, v) })
	}
}

// startT starts a server for a test and closes it at the end.
func startT(t *testing.T, opts Options) *Server {
	t.Helper()
	s, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// dialT connects a client of the server's dialect (not logged in).
func dialT(t *testing.T, s *Server) *tclient {
	t.Helper()
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &tclient{t: t, v: s.opts.Version, c: c, next: 1, timeout: 5 * time.Second,
		id: u128{0xAB, byte(time.Now().UnixNano()), 7}}
}

// loginT connects and logs in as the default user.
func loginT(t *testing.T, s *Server) *tclient {
	t.Helper()
	c := dialT(t, s)
	if err := c.login(DefaultUsername, DefaultPassword); err != nil {
		t.Fatalf("login: %v", err)
	}
	return c
}

// call08 sends a 0.8 request and returns the answer's body.
func (c *tclient) call08(code Command, payload []byte) ([]byte, error) {
	_ = c.c.SetDeadline(time.Now().Add(c.timeout))
	if _, err := c.c.Write(requestFrame(code, payload)); err != nil {
		return nil, err
	}
	var hdr [8]byte
	if _, err := io.ReadFull(c.c, hdr[:]); err != nil {
		return nil, err
	}
	body := make([]byte, binary.LittleEndian.Uint32(hdr[4:8]))
	if _, err := io.ReadFull(c.c, body); err != nil {
		return nil, err
	}
	if st := binary.LittleEndian.Uint32(hdr[0:4]); st != 0 {
		return nil, statusErr(st)
	}
	return body, nil
}

// call09 sends a 0.9 request and returns the reply's header and body.
func (c *tclient) call09(op uint8, code uint32, body []byte) ([]byte, []byte, error) {
	req := c.next
	if op == opRegister {
		req = 0
	}
	session := c.session
	if op == opRegister {
		session = 0
	}
	stamp := op != opNonReplicated && op < opPartitionPlaneBase
	_ = c.c.SetDeadline(time.Now().Add(c.timeout))
	if op != opNonReplicated && op != opRegister {
		c.next++ // replicated operations, sends too, take a number each
	}
	if _, err := c.c.Write(request09Frame(c.id, op, code, req, session, body, stamp)); err != nil {
		return nil, nil, err
	}
	hdr, rb, err := readFrame09(c.c)
	if err != nil {
		return nil, nil, err
	}
	if hdr[60] == command09Eviction {
		return hdr, nil, evictedErr(hdr[255])
	}
	if st := binary.LittleEndian.Uint32(hdr[216:220]); st != 0 {
		return hdr, nil, statusErr(st)
	}
	return hdr, rb, nil
}

// meta09 runs a metadata operation (taking the next request number) and
// strips its result section.
func (c *tclient) meta09(op uint8, body []byte) ([]byte, error) {
	_, rb, err := c.call09(op, 0, body)
	if err != nil {
		return nil, err
	}
	return stripResult(rb)
}

// stripResult removes a result section, turning a refusal into an error.
func stripResult(b []byte) ([]byte, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("no result section in %x", b)
	}
	if n := binary.LittleEndian.Uint32(b); n > 0 {
		return nil, statusErr(binary.LittleEndian.Uint32(b[8:12]))
	}
	return b[4:], nil
}

// readFrame09 reads one 0.9 frame.
func readFrame09(c net.Conn) ([]byte, []byte, error) {
	hdr := make([]byte, headerSize09)
	if _, err := io.ReadFull(c, hdr); err != nil {
		return nil, nil, err
	}
	body := make([]byte, binary.LittleEndian.Uint32(hdr[48:52])-headerSize09)
	_, err := io.ReadFull(c, body)
	return hdr, body, err
}

// request09Frame builds a 0.9 request; stamp sets its request checksum.
func request09Frame(client u128, op uint8, code uint32, request, session uint64, body []byte, stamp bool) []byte {
	b := make([]byte, headerSize09, headerSize09+len(body))
	binary.LittleEndian.PutUint32(b[48:], uint32(headerSize09+len(body)))
	b[60] = command09Request
	copy(b[128:144], client[:])
	if stamp {
		binary.LittleEndian.PutUint64(b[144:], xxh3.Hash(body))
	}
	binary.LittleEndian.PutUint64(b[168:], request)
	b[176] = op
	binary.LittleEndian.PutUint64(b[184:], session)
	if op == opNonReplicated {
		binary.LittleEndian.PutUint32(b[196:], code)
	}
	return append(b, body...)
}

// loginBody09 builds a username/password Register body.
func loginBody09(protocol uint32, user, pass string) []byte {
	var e encoder
	e.u32(protocol)
	e.name("go-test")
	e.name("0.0.1")
	e.name(user)
	e.u8(uint8(len(pass)))
	e.b = append(e.b, pass...)
	e.u32(0)
	return e.b
}

func (c *tclient) ping() error {
	if c.v == Version08 {
		_, err := c.call08(CmdPing, nil)
		return err
	}
	_, _, err := c.call09(opNonReplicated, uint32(CmdPing), nil)
	return err
}

func (c *tclient) login(user, pass string) error {
	if c.v == Version08 {
		_, err := c.call08(CmdLoginUser, loginPayload(user, pass))
		return err
	}
	_, rb, err := c.call09(opRegister, 0, loginBody09(Protocol09, user, pass))
	if err != nil {
		return err
	}
	p, err := stripResult(rb)
	if err != nil {
		return err
	}
	c.session = binary.LittleEndian.Uint64(p[4:12])
	return nil
}

func (c *tclient) createStream(name string) error {
	var e encoder
	e.name(name)
	if c.v == Version08 {
		_, err := c.call08(CmdCreateStream, e.b)
		return err
	}
	_, err := c.meta09(opCreateStream, e.b)
	return err
}

func (c *tclient) createTopic(stream, name string, partitions uint32) error {
	e := encoder{b: nameIdent(stream)}
	e.u32(partitions)
	if c.v == Version08 {
		e.u8(1)
		e.u64(0)
		e.u64(0)
		e.u8(0)
		e.name(name)
		_, err := c.call08(CmdCreateTopic, e.b)
		return err
	}
	e.name(name)
	_, err := c.meta09(opCreateTopic, e.b)
	return err
}

// send sends payloads as one batch to a partition.
func (c *tclient) send(stream, topic string, partition uint32, payloads ...string) error {
	part := binary.LittleEndian.AppendUint32([]byte{2, 4}, partition)
	if c.v == Version08 {
		var msgs []testMessage
		for _, p := range payloads {
			msgs = append(msgs, testMessage{payload: []byte(p)})
		}
		_, err := c.call08(CmdSendMessages, sendPayload(stream, topic, part, msgs, nil))
		return err
	}
	var msgs []msg09
	for _, p := range payloads {
		msgs = append(msgs, msg09{payload: []byte(p)})
	}
	_, _, err := c.call09(opSendMessages, 0, sendBody09(stream, topic, part, batch09(1000, msgs)))
	return err
}

// poll reads up to count payloads from offset of a partition.
func (c *tclient) poll(stream, topic string, partition uint32, offset uint64, count uint32) ([]string, error) {
	e := encoder{b: []byte{1, 1, 4, 0, 0, 0, 0}}
	e.b = append(append(e.b, nameIdent(stream)...), nameIdent(topic)...)
	e.u8(1)
	e.u32(partition)
	e.u8(1)
	e.u64(offset)
	e.u32(count)
	e.u8(0)
	var body []byte
	var err error
	if c.v == Version08 {
		body, err = c.call08(CmdPollMessages, e.b)
	} else {
		_, body, err = c.call09(opNonReplicated, uint32(CmdPollMessages), e.b)
	}
	if err != nil {
		return nil, err
	}
	return pollPayloads(c.v, body)
}

// pollPayloads reads the payloads of a poll answer.
func pollPayloads(v Version, b []byte) ([]string, error) {
	var out []string
	if v == Version08 {
		for pos := 16; pos < len(b); {
			pl := int(binary.LittleEndian.Uint32(b[pos+52:]))
			hl := int(binary.LittleEndian.Uint32(b[pos+48:]))
			out = append(out, string(b[pos+64:pos+64+pl]))
			pos += 64 + pl + hl
		}
		return out, nil
	}
	for _, f := range batchFrames(b[16:]) {
		pl := int(binary.LittleEndian.Uint32(f[36:40]))
		out = append(out, string(f[48:48+pl]))
	}
	return out, nil
}

// batchFrames splits batch records into their frames.
func batchFrames(b []byte) [][]byte {
	var out [][]byte
	for len(b) >= batchHeaderSize {
		n := int(binary.LittleEndian.Uint64(b[32:40]))
		for pos := batchHeaderSize; pos < n; {
			size := frameHeaderSize + int(binary.LittleEndian.Uint32(b[pos+32:])) + int(binary.LittleEndian.Uint32(b[pos+36:]))
			out = append(out, b[pos:pos+size])
			pos += size
		}
		b = b[n:]
	}
	return out
}

// flush asks to save a partition's unsaved messages.
func (c *tclient) flush(stream, topic string, partition uint32) error {
	e := encoder{b: append(nameIdent(stream), nameIdent(topic)...)}
	e.u32(partition)
	e.u8(1)
	if c.v == Version08 {
		_, err := c.call08(CmdFlushUnsavedBuffer, e.b)
		return err
	}
	_, _, err := c.call09(opNonReplicated, uint32(CmdFlushUnsavedBuffer), e.b)
	return err
}

// msg09 is one message of a hand-built 0.9 batch.
type msg09 struct {
	id               u128
	payload, headers []byte
	tsDelta          uint32
}

// batch09 builds a batch with correct frame and batch checksums.
func batch09(origin uint64, msgs []msg09) []byte {
	b := make([]byte, batchHeaderSize)
	for i, m := range msgs {
		f := make([]byte, frameHeaderSize)
		copy(f[8:24], m.id[:])
		binary.LittleEndian.PutUint32(f[24:28], uint32(i))
		binary.LittleEndian.PutUint32(f[28:32], m.tsDelta)
		binary.LittleEndian.PutUint32(f[32:36], uint32(len(m.headers)))
		binary.LittleEndian.PutUint32(f[36:40], uint32(len(m.payload)))
		f = append(append(f, m.payload...), m.headers...)
		binary.LittleEndian.PutUint64(f[0:8], xxh3.Hash(f[8:]))
		b = append(b, f...)
	}
	binary.LittleEndian.PutUint64(b[24:32], origin)
	binary.LittleEndian.PutUint64(b[32:40], uint64(len(b)))
	binary.LittleEndian.PutUint32(b[48:52], uint32(len(msgs)))
	resealBatch09(b)
	return b
}

// resealBatch09 recomputes a batch's checksum from its header fields and
// frame checksums.
func resealBatch09(b []byte) {
	sums := append(append([]byte(nil), b[0:40]...), b[48:52]...)
	for _, f := range batchFrames(b) {
		sums = append(sums, f[0:8]...)
	}
	binary.LittleEndian.PutUint64(b[40:48], xxh3.Hash(sums))
}

// sendBody09 builds a SendMessages body around a batch.
func sendBody09(stream, topic string, partitioning, batch []byte) []byte {
	meta := append(append(nameIdent(stream), nameIdent(topic)...), partitioning...)
	meta = binary.LittleEndian.AppendUint32(meta, binary.LittleEndian.Uint32(batch[48:52]))
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(meta)))
	return append(append(b, meta...), batch...)
}
