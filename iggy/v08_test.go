package iggy

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/apache/iggy/foreign/go/client"
	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"
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

// conn08 is a Conn speaking 0.8 on a connection to addr, not logged in.
func conn08(t *testing.T, addr string) *Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c := &Conn{w: wire{nc: nc, addr: addr}, d: v08{}, timeout: 5 * time.Second}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestSendMessagesSameBytesAsSDK: the 0.8 request we write is byte for byte
// the one the SDK's SendMessages writes, for every kind of partitioning and
// identifier, with ids, user headers and empty ones.
func TestSendMessagesSameBytesAsSDK(t *testing.T) {
	srv := newFrameServer(t)
	cl, err := client.NewIggyClient(client.WithTcp(tcp.WithServerAddress(srv.ln.Addr().String())))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// The SDK's client took the frame server's only connection; ours gets
	// a server of its own that forwards to the same channels.
	ours := newFrameServer(t)
	ours.frames, ours.status = srv.frames, srv.status
	c := conn08(t, ours.ln.Addr().String())

	const origin = 1_767_225_600_123_456
	headers := []byte{2, 3, 0, 0, 0, 'k', 'e', 'y', 9, 8, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}
	sdkMsgs := []iggcon.IggyMessage{
		{Header: iggcon.MessageHeader{Id: iggcon.MessageID{1, 2, 3}, OriginTimestamp: origin, PayloadLength: 5}, Payload: []byte("hello")},
		{Header: iggcon.MessageHeader{OriginTimestamp: origin, PayloadLength: 3000, UserHeaderLength: uint32(len(headers))},
			Payload: bytes.Repeat([]byte{0xab}, 3000), UserHeaders: headers},
		{Header: iggcon.MessageHeader{OriginTimestamp: origin, PayloadLength: 1}, Payload: []byte{0}, UserHeaders: []byte{}},
	}
	msgs := []Message{
		{ID: [16]byte{1, 2, 3}, Payload: []byte("hello")},
		{Payload: bytes.Repeat([]byte{0xab}, 3000), UserHeaders: headers},
		{Payload: []byte{0}, UserHeaders: []byte{}},
	}
	sdkNamed, _ := iggcon.NewIdentifier("a-stream")
	sdkNumeric, _ := iggcon.NewIdentifier(uint32(7))
	sdkKey, _ := iggcon.EntityIdString("some key")
	named, _ := NameID("a-stream")
	numeric := NumericID(7)
	key, _ := MessagesKey([]byte("some key"))
	sdkParts := []iggcon.Partitioning{iggcon.None(), iggcon.PartitionId(3), sdkKey}
	for pi, p := range []Partitioning{Balanced(), PartitionID(3), key} {
		for order := range 2 {
			sdkIDs := [2]iggcon.Identifier{sdkNamed, sdkNumeric}
			ids := [2]Identifier{named, numeric}
			if order == 1 {
				sdkIDs[0], sdkIDs[1], ids[0], ids[1] = sdkIDs[1], sdkIDs[0], ids[1], ids[0]
			}
			srv.status <- 0
			if err := cl.SendMessages(sdkIDs[0], sdkIDs[1], sdkParts[pi], sdkMsgs); err != nil {
				t.Fatalf("SDK send: %v", err)
			}
			want := <-srv.frames
			srv.status <- 0
			b := Batch{Stream: ids[0], Topic: ids[1], Partitioning: p, OriginTimestamp: origin, Messages: msgs}
			if _, err := c.Send(context.Background(), &b); err != nil {
				t.Fatalf("our send: %v", err)
			}
			if got := <-srv.frames; !bytes.Equal(got, want) {
				t.Fatalf("partitioning %v: our request differs from the SDK's:\n got %x\nwant %x", p.Kind, got, want)
			}
		}
	}

	// A status other than 0 comes back as a *ServerError, and the
	// connection stays usable.
	srv.status <- CodeTopicIDNotFound
	_, err = c.Send(context.Background(), &Batch{Stream: named, Topic: numeric, Partitioning: Balanced(), Messages: msgs[:1]})
	<-srv.frames
	if CodeOf(err) != CodeTopicIDNotFound || !IsTopicNotFound(err) {
		t.Fatalf("error status: got %v", err)
	}
	if c.Broken() {
		t.Fatal("a server error broke the connection")
	}
	srv.status <- 0
	if _, err := c.Send(context.Background(), &Batch{Stream: named, Topic: numeric, Partitioning: Balanced(), Messages: msgs[:1]}); err != nil {
		t.Fatalf("send after an error status: %v", err)
	}
	<-srv.frames
}
