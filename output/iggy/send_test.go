package iggy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/apache/iggy/foreign/go/client"
	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"
	ierror "github.com/apache/iggy/foreign/go/errors"
)

// frameServer accepts one connection and, for every request frame it
// reads, hands the frame to the test and answers with the next status.
type frameServer struct {
	ln     net.Listener
	frames chan []byte
	status chan uint32
}

func newFrameServer(t *testing.T) *frameServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &frameServer{ln: ln, frames: make(chan []byte, 1), status: make(chan uint32, 1)}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		for {
			var n [4]byte
			if _, err := io.ReadFull(c, n[:]); err != nil {
				return
			}
			frame := make([]byte, 4+binary.LittleEndian.Uint32(n[:]))
			copy(frame, n[:])
			if _, err := io.ReadFull(c, frame[4:]); err != nil {
				return
			}
			s.frames <- frame
			var answer [8]byte
			binary.LittleEndian.PutUint32(answer[:4], <-s.status)
			if _, err := c.Write(answer[:]); err != nil {
				return
			}
		}
	}()
	return s
}

// TestSendMessagesSameBytesAsSDK: the request the output writes itself is
// byte for byte the one the SDK's SendMessages writes, for every kind of
// partitioning and identifier, with ids, user headers and empty ones.
func TestSendMessagesSameBytesAsSDK(t *testing.T) {
	srv := newFrameServer(t)
	cl, err := client.NewIggyClient(client.WithTcp(tcp.WithServerAddress(srv.ln.Addr().String())))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	c := newConn(cl, 5*time.Second)
	if c.socket() == nil {
		t.Fatal("socketOf found no socket")
	}

	mb := &messageBuilder{now: 1_767_225_600_123_456}
	headers := mb.arena
	headers = append(headers, 2, 3, 0, 0, 0, 'k', 'e', 'y', 9, 8, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8)
	msgs := []iggcon.IggyMessage{
		{Header: iggcon.MessageHeader{Id: iggcon.MessageID{1, 2, 3}, OriginTimestamp: mb.now, PayloadLength: 5}, Payload: []byte("hello")},
		{Header: iggcon.MessageHeader{OriginTimestamp: mb.now + 1, PayloadLength: 3000, UserHeaderLength: uint32(len(headers))},
			Payload: bytes.Repeat([]byte{0xab}, 3000), UserHeaders: headers},
		{Header: iggcon.MessageHeader{PayloadLength: 1}, Payload: []byte{0}, UserHeaders: []byte{}},
	}
	named, _ := iggcon.NewIdentifier("a-stream")
	numeric, _ := iggcon.NewIdentifier(uint32(7))
	key, _ := iggcon.EntityIdString("some key")
	for _, p := range []iggcon.Partitioning{iggcon.None(), iggcon.PartitionId(3), key} {
		for _, ids := range [][2]iggcon.Identifier{{named, numeric}, {numeric, named}} {
			srv.status <- 0
			if err := cl.SendMessages(ids[0], ids[1], p, msgs); err != nil {
				t.Fatalf("SDK send: %v", err)
			}
			want := <-srv.frames
			srv.status <- 0
			if err := c.sendMessages(ids[0], ids[1], p, msgs); err != nil {
				t.Fatalf("our send: %v", err)
			}
			if got := <-srv.frames; !bytes.Equal(got, want) {
				t.Fatalf("partitioning %v: our request differs from the SDK's:\n got %x\nwant %x", p.Kind, got, want)
			}
		}
	}

	// A status other than 0 comes back as the SDK's error for it, and the
	// connection stays usable.
	srv.status <- uint32(ierror.TopicIdNotFoundCode)
	err = c.sendMessages(named, numeric, iggcon.None(), msgs[:1])
	<-srv.frames
	var ie ierror.IggyError
	if !errors.As(err, &ie) || ie.Code() != ierror.TopicIdNotFoundCode {
		t.Fatalf("error status: got %v", err)
	}
	if isTransportError(err) {
		t.Fatal("a server error is taken for a broken connection")
	}
	srv.status <- 0
	if err := c.sendMessages(named, numeric, iggcon.None(), msgs[:1]); err != nil {
		t.Fatalf("send after an error status: %v", err)
	}
	<-srv.frames
}
