package iggy

import (
	"net"
	"reflect"
	"unsafe"

	"github.com/apache/iggy/foreign/go/client"
	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"
)

// socketOf returns the TCP (or TLS) connection under an SDK client, or nil
// when the client is not the SDK v0.8.0 TCP client this code knows.
//
// Why: the Iggy Go SDK v0.8.0 sets no read or write deadlines and holds one
// mutex for each whole request, so a server that stops answering blocks the
// request, every later request and Close forever. The SDK dials with
// net.Dial itself and offers no way to pass a dialer or a context. Closing
// the socket is the only thing that unblocks a stuck request, and the SDK
// keeps it in an unexported field. The field is read by the goroutine that
// created the client, right after connecting and again after logging in (a
// login redirected to a cluster leader replaces it); the SDK writes it only
// while connecting. TestSocketOfFindsConn fails if an SDK upgrade changes
// the layout; without the socket the output still works but can only
// abandon (not close) a hung connection.
func socketOf(c iggcon.Client) net.Conn {
	ic, ok := c.(*client.IggyClient)
	if !ok {
		return nil
	}
	tc, ok := ic.Client.(*tcp.IggyTcpClient)
	if !ok || tc == nil {
		return nil
	}
	f := reflect.ValueOf(tc).Elem().FieldByName("conn")
	if !f.IsValid() || f.Type() != reflect.TypeFor[net.Conn]() {
		return nil
	}
	conn, _ := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Interface().(net.Conn)
	return conn
}
