package iggytest_test

import (
	"errors"
	"testing"

	ierror "github.com/apache/iggy/foreign/go/errors"

	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
)

// Fault behaviour as the unchanged 0.8 SDK sees it; faults_test.go covers
// the faults in both dialects with raw clients.

// isTransportErr tells a dead connection (plain Go error) from a server error.
func isTransportErr(err error) bool {
	var ie ierror.IggyError
	return err != nil && !errors.As(err, &ie)
}

func TestGracefulStopSaysDisconnected(t *testing.T) {
	srv := startServer(t, iggytest.Options{GracefulStop: true})
	cli := login(t, srv.Addr())
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	// The server sent error 8 before closing; the SDK reads it as the answer
	// to its next request, and the connection is dead after that.
	mustIs(t, cli.Ping(), ierror.ErrDisconnected)
	if err := cli.Ping(); !isTransportErr(err) {
		t.Fatalf("second ping = %v, want a transport error", err)
	}
	if err := login(t, srv.Addr()).Ping(); err != nil {
		t.Fatalf("new connection after graceful restart: %v", err)
	}
}

// A server that answers cluster metadata with FeatureUnavailable (as some
// 0.8 builds with clustering off are described to) does not stop the SDK's login.
func TestLoginWhenClusterMetadataUnavailable(t *testing.T) {
	srv := startServer(t, iggytest.Options{})
	h := srv.FailWith(iggytest.CmdGetClusterMetadata, iggytest.CodeFeatureUnavailable)
	cli := login(t, srv.Addr())
	if h.Fired() != 1 {
		t.Fatalf("cluster metadata requested %d times during login", h.Fired())
	}
	if _, err := cli.CreateStream("ok"); err != nil {
		t.Fatal(err)
	}
}
