package fluss

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/wire"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

var captureFrameSeeds = flag.Bool("capture-frame-seeds", false,
	"rewrite fluss/internal/wire/testdata/fuzz/FuzzFrameDecode/real-* from a session with a real cluster")

// teeConn records everything the server sends.
type teeConn struct {
	net.Conn
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *teeConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	c.buf.Write(p[:n])
	c.mu.Unlock()
	return n, err
}

// TestIntegrationCaptureFrameSeeds runs a short session (handshake, metadata,
// admin, produce, fetch, list offsets, an error response) against the
// cluster, recording the server's bytes per connection. With
// -capture-frame-seeds it writes them as fuzz seeds for wire.FuzzFrameDecode;
// otherwise it only checks that every recorded stream splits into valid
// frames.
func TestIntegrationCaptureFrameSeeds(t *testing.T) {
	addr := flusstest.Require(t)
	var (
		mu    sync.Mutex
		conns []*teeConn
	)
	dial := func(ctx context.Context, network, a string) (net.Conn, error) {
		var d net.Dialer
		nc, err := d.DialContext(ctx, network, a)
		if err != nil {
			return nil, err
		}
		tc := &teeConn{Conn: nc}
		mu.Lock()
		conns = append(conns, tc)
		mu.Unlock()
		return tc, nil
	}
	ctx := testCtx(t, 2*time.Minute)
	c, err := NewClient(ctx, Bootstrap(addr), Dialer(dial))
	if err != nil {
		t.Fatal(err)
	}
	db := newTestDatabase(t, newTestClient(t))
	path := NewTablePath(db, "seeds")
	desc := &types.TableDescriptor{
		Schema:     *types.MustSchema([]types.Column{types.NewColumn("id", types.Int()), types.NewColumn("s", types.String())}),
		Properties: map[string]string{types.PropArrowCompression: "NONE"},
	}
	if err := c.CreateTable(ctx, path, desc, false); err != nil {
		t.Fatal(err)
	}
	_ = c.CreateTable(ctx, path, desc, false) // TABLE_ALREADY_EXIST error response
	info, err := c.Table(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	waitOffsets(t, c, info, NoPartition, EarliestOffset())
	produceInts(t, c, info, NoPartition, 0, 0, 3)
	produceInts(t, c, info, NoPartition, 0, 3, 2)
	conn, _, err := c.LeaderConn(ctx, info.Bucket(NoPartition, 0))
	if err != nil {
		t.Fatal(err)
	}
	var fetch pb.FetchLogResponse
	err = conn.Call(ctx, wire.FetchLog, &pb.FetchLogRequest{
		FollowerServerId: proto.Int32(-1),
		MaxBytes:         proto.Int32(1 << 20),
		TablesReq: []*pb.PbFetchLogReqForTable{{
			TableId:                   proto.Int64(info.TableID),
			ProjectionPushdownEnabled: proto.Bool(false),
			BucketsReq: []*pb.PbFetchLogReqForBucket{{
				BucketId: proto.Int32(0), FetchOffset: proto.Int64(0), MaxFetchBytes: proto.Int32(1 << 20),
			}},
		}},
	}, &fetch)
	if err != nil {
		t.Fatal(err)
	}
	bucket := fetch.GetTablesResp()[0].GetBucketsResp()[0]
	if bucket.GetHighWatermark() != 5 || len(bucket.GetRecords()) == 0 {
		t.Fatalf("fetch: hw %d, %d record bytes, error %d", bucket.GetHighWatermark(), len(bucket.GetRecords()), bucket.GetErrorCode())
	}
	if _, err := c.ListOffsets(ctx, info, NoPartition, nil, LatestOffset()); err != nil {
		t.Fatal(err)
	}
	c.Close()

	dir := filepath.Join("internal", "wire", "testdata", "fuzz", "FuzzFrameDecode")
	mu.Lock()
	defer mu.Unlock()
	for i, tc := range conns {
		tc.mu.Lock()
		stream := bytes.Clone(tc.buf.Bytes())
		tc.mu.Unlock()
		fr := wire.NewFrameReader(bytes.NewReader(stream), 0)
		frames := 0
		for {
			f, err := fr.Next()
			if err != nil {
				break
			}
			if _, err := wire.ParseResponse(f); err != nil {
				t.Fatalf("connection %d frame %d: %v", i, frames, err)
			}
			frames++
		}
		t.Logf("connection %d: %d bytes, %d frames", i, len(stream), frames)
		if !*captureFrameSeeds || len(stream) == 0 {
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		body := "go test fuzz v1\n[]byte(" + strconv.Quote(string(stream)) + ")\n"
		name := filepath.Join(dir, fmt.Sprintf("real-conn-%d", i))
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
