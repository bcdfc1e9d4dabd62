package fluss

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/wire"
)

// fakeCluster is an in-process server that plays coordinator and tablet
// server 0 at one address, with one table db.t (id 1, 2 buckets).
type fakeCluster struct {
	t    *testing.T
	ln   net.Listener
	host string
	port int32

	mu       sync.Mutex
	conns    []net.Conn
	accepted atomic.Int32
	calls    map[wire.APIKey]int
	// listOffsets, when set, answers LIST_OFFSETS.
	listOffsets func(req *pb.ListOffsetsRequest, n int) *pb.ListOffsetsResponse
	// noAnswer makes the server drop requests of that API.
	noAnswer map[wire.APIKey]bool
	// refuse answers the first requests of that API with these error codes.
	refuse map[wire.APIKey][]int32
	// leaderless is how many more table metadata answers list bucket 1
	// without a leader (as right after its creation).
	leaderless atomic.Int32
}

const fakeTableJSON = `{"version":1,"schema":{"version":1,"columns":[{"name":"id","data_type":{"type":"INTEGER"},"id":0}],"highest_field_id":0},` +
	`"partition_key":[],"bucket_key":[],"bucket_count":2,"properties":{},"custom_properties":{}}`

func newFakeCluster(t *testing.T) *fakeCluster {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeCluster{t: t, ln: ln, calls: map[wire.APIKey]int{}, noAnswer: map[wire.APIKey]bool{},
		refuse: map[wire.APIKey][]int32{}}
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	p, _ := strconv.Atoi(port)
	f.host, f.port = host, int32(p)
	go f.serve()
	t.Cleanup(f.close)
	return f
}

func (f *fakeCluster) addr() string { return f.ln.Addr().String() }

func (f *fakeCluster) close() {
	_ = f.ln.Close()
	f.dropConns()
}

// dropConns closes every server-side connection.
func (f *fakeCluster) dropConns() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.conns {
		_ = c.Close()
	}
	f.conns = nil
}

func (f *fakeCluster) count(k wire.APIKey) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[k]
}

func (f *fakeCluster) serve() {
	for {
		nc, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.accepted.Add(1)
		f.mu.Lock()
		f.conns = append(f.conns, nc)
		f.mu.Unlock()
		go f.handle(nc)
	}
}

func (f *fakeCluster) node() *pb.PbServerNode {
	return &pb.PbServerNode{NodeId: proto.Int32(0), Host: proto.String(f.host), Port: proto.Int32(f.port)}
}

func (f *fakeCluster) handle(nc net.Conn) {
	defer nc.Close()
	var wmu sync.Mutex
	for {
		var hdr [12]byte
		if _, err := io.ReadFull(nc, hdr[:]); err != nil {
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(hdr[:4])-8)
		if _, err := io.ReadFull(nc, body); err != nil {
			return
		}
		key := wire.APIKey(binary.BigEndian.Uint16(hdr[4:6]))
		id := binary.BigEndian.Uint32(hdr[8:12])
		f.mu.Lock()
		f.calls[key]++
		n := f.calls[key]
		drop := f.noAnswer[key]
		refuse := f.refuse[key]
		lo := f.listOffsets
		f.mu.Unlock()
		if drop {
			continue
		}
		var resp proto.Message
		switch key {
		case wire.APIVersions:
			r := &pb.ApiVersionsResponse{ServerType: proto.Int32(1)}
			for _, k := range []wire.APIKey{wire.APIVersions, wire.GetMetadata, wire.ListOffsets, wire.CreateDatabase, wire.GetTableSchema} {
				r.ApiVersions = append(r.ApiVersions, &pb.PbApiVersion{ApiKey: proto.Int32(int32(k)), MinVersion: proto.Int32(0), MaxVersion: proto.Int32(0)})
			}
			resp = r
		case wire.GetMetadata:
			var req pb.MetadataRequest
			_ = proto.Unmarshal(body, &req)
			r := &pb.MetadataResponse{CoordinatorServer: f.node(), TabletServers: []*pb.PbServerNode{f.node()}}
			for _, tp := range req.GetTablePath() {
				if tp.GetDatabaseName() != "db" || tp.GetTableName() != "t" {
					continue
				}
				b1 := &pb.PbBucketMetadata{BucketId: proto.Int32(1), LeaderId: proto.Int32(0)}
				if f.leaderless.Add(-1) >= 0 {
					b1.LeaderId = nil
				} else {
					f.leaderless.Store(0)
				}
				r.TableMetadata = append(r.TableMetadata, &pb.PbTableMetadata{
					TablePath: tp, TableId: proto.Int64(1), SchemaId: proto.Int32(1), TableJson: []byte(fakeTableJSON),
					CreatedTime: proto.Int64(1), ModifiedTime: proto.Int64(2),
					BucketMetadata: []*pb.PbBucketMetadata{
						{BucketId: proto.Int32(0), LeaderId: proto.Int32(0)},
						b1,
					},
				})
			}
			resp = r
		case wire.ListOffsets:
			var req pb.ListOffsetsRequest
			_ = proto.Unmarshal(body, &req)
			resp = lo(&req, n)
		case wire.CreateDatabase:
			resp = &pb.CreateDatabaseResponse{}
		default:
			continue
		}
		rtype := wire.ResponseSuccess
		if n <= len(refuse) {
			rtype, resp = wire.ResponseError, &pb.ErrorResponse{ErrorCode: proto.Int32(refuse[n-1])}
		}
		b, err := proto.Marshal(resp)
		if err != nil {
			f.t.Errorf("fake: marshal %s: %v", key, err)
			return
		}
		out := binary.BigEndian.AppendUint32(nil, uint32(5+len(b)))
		out = append(out, byte(rtype))
		out = binary.BigEndian.AppendUint32(out, id)
		wmu.Lock()
		_, _ = nc.Write(append(out, b...))
		wmu.Unlock()
	}
}

func TestClientListOffsetsRetriesNotLeader(t *testing.T) {
	f := newFakeCluster(t)
	f.listOffsets = func(req *pb.ListOffsetsRequest, n int) *pb.ListOffsetsResponse {
		r := &pb.ListOffsetsResponse{}
		for _, b := range req.GetBucketId() {
			br := &pb.PbListOffsetsRespForBucket{BucketId: proto.Int32(b)}
			if n == 1 && b == 1 {
				br.ErrorCode = proto.Int32(errcode.NotLeaderOrFollower.Code)
				br.ErrorMessage = proto.String("leader moved")
			} else {
				br.Offset = proto.Int64(int64(100 + b))
			}
			r.BucketsResp = append(r.BucketsResp, br)
		}
		return r
	}
	ctx := testCtx(t, 30*time.Second)
	c, info := openFakeTable(ctx, t, f.addr())
	if info.TableID != 1 || info.NumBuckets != 2 || info.Schema.Columns[0].Name != "id" {
		t.Fatalf("info = %+v", info)
	}
	metaBefore := f.count(wire.GetMetadata)
	offs, err := c.ListOffsets(ctx, info, NoPartition, nil, LatestOffset())
	if err != nil {
		t.Fatal(err)
	}
	if offs[0] != 100 || offs[1] != 101 {
		t.Fatalf("offsets = %v", offs)
	}
	if got := f.count(wire.ListOffsets); got != 2 {
		t.Errorf("LIST_OFFSETS sent %d times, want 2", got)
	}
	if f.count(wire.GetMetadata) <= metaBefore {
		t.Error("NOT_LEADER_OR_FOLLOWER did not refresh the metadata")
	}
	// One connection serves everything (coordinator and tablet server share
	// the address here).
	if n := f.accepted.Load(); n != 1 {
		t.Errorf("%d connections accepted, want 1", n)
	}
}

func TestClientLeaderWaitsForElection(t *testing.T) {
	f := newFakeCluster(t)
	ctx := testCtx(t, 30*time.Second)
	c, err := NewClient(ctx, Bootstrap(f.addr()), MaxAttempts(5),
		RetryBackoff(Backoff{Initial: time.Millisecond, Max: 5 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The table load and two refreshes see bucket 1 without a leader; the
	// third refresh sees the elected one.
	f.leaderless.Store(3)
	info, err := c.Table(ctx, NewTablePath("db", "t"))
	if err != nil {
		t.Fatal(err)
	}
	if loc, ok := c.location(info.Bucket(NoPartition, 1)); !ok || loc.Leader != -1 {
		t.Fatalf("location after load = %+v, %v; want no leader", loc, ok)
	}
	before := f.count(wire.GetMetadata)
	leader, err := c.leader(ctx, info.Bucket(NoPartition, 1))
	if err != nil || leader != 0 {
		t.Fatalf("leader = %d, %v", leader, err)
	}
	if got := f.count(wire.GetMetadata) - before; got != 3 {
		t.Errorf("GET_METADATA sent %d times while waiting, want 3", got)
	}

	// A leader that never shows up: LEADER_NOT_AVAILABLE after the attempt
	// limit, one refresh per attempt.
	c.invalidateLeader(info.Bucket(NoPartition, 1))
	f.leaderless.Store(1000)
	before = f.count(wire.GetMetadata)
	if _, err := c.leader(ctx, info.Bucket(NoPartition, 1)); !errors.Is(err, errcode.LeaderNotAvailable) || !errcode.IsRetriable(err) {
		t.Fatalf("leaderless bucket: %v", err)
	}
	if got := f.count(wire.GetMetadata) - before; got != 5 {
		t.Errorf("GET_METADATA sent %d times, want 5 (the attempt limit)", got)
	}

	// The wait honours ctx.
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	slow, err := NewClient(ctx, Bootstrap(f.addr()), MaxAttempts(1000),
		RetryBackoff(Backoff{Initial: 10 * time.Millisecond, Max: 10 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	if _, err := slow.Table(ctx, NewTablePath("db", "t")); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := slow.leader(cctx, info.Bucket(NoPartition, 1)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("leader with an expiring ctx: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("leader wait took %v after ctx expired", d)
	}
}

func TestClientNonRetriableBucketError(t *testing.T) {
	f := newFakeCluster(t)
	f.listOffsets = func(req *pb.ListOffsetsRequest, n int) *pb.ListOffsetsResponse {
		return &pb.ListOffsetsResponse{BucketsResp: []*pb.PbListOffsetsRespForBucket{{
			BucketId: proto.Int32(0), ErrorCode: proto.Int32(errcode.InvalidTimestamp.Code), ErrorMessage: proto.String("in the future"),
		}}}
	}
	ctx := testCtx(t, 30*time.Second)
	c, err := NewClient(ctx, Bootstrap(f.addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	info, err := c.Table(ctx, NewTablePath("db", "t"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ListOffsets(ctx, info, NoPartition, []int32{0}, OffsetAtTimestamp(1))
	if !errors.Is(err, errcode.InvalidTimestamp) || f.count(wire.ListOffsets) != 1 {
		t.Fatalf("err = %v after %d calls", err, f.count(wire.ListOffsets))
	}
	var se *errcode.ServerError
	if !errors.As(err, &se) || se.Message != "in the future" {
		t.Fatalf("server error = %+v", se)
	}
}

func TestClientReconnectsWithBackoff(t *testing.T) {
	f := newFakeCluster(t)
	ctx := testCtx(t, 30*time.Second)
	c, err := NewClient(ctx, Bootstrap(f.addr()),
		RetryBackoff(Backoff{Initial: 50 * time.Millisecond, Max: 200 * time.Millisecond, Multiplier: 2}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	conn1, err := c.coordinatorConn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The server drops the connection: the next call gets a fresh one.
	f.dropConns()
	select {
	case <-conn1.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("client did not notice the dropped connection")
	}
	if err := c.CreateDatabase(ctx, "d", nil, false); err != nil {
		t.Fatal(err)
	}
	if n := f.accepted.Load(); n != 2 {
		t.Fatalf("%d connections accepted, want 2", n)
	}

	// The server goes away: dials fail and are spaced by the backoff.
	addr := f.addr()
	conn2, err := c.conn(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	f.close()
	<-conn2.Done()
	start := time.Now()
	var errs []error
	for i := 0; i < 4; i++ {
		_, err := c.conn(ctx, addr)
		if err == nil {
			t.Fatal("dial to a closed listener succeeded")
		}
		errs = append(errs, err)
	}
	// Waits before dials 2, 3 and 4: 50 + 100 + 200 ms (no jitter).
	if el := time.Since(start); el < 300*time.Millisecond || el > 5*time.Second {
		t.Fatalf("4 failing dials took %s, want about 350ms of backoff", el)
	}
	var ce *wire.ConnError
	if !errors.As(errs[3], &ce) || ce.Op != "dial" || !errcode.IsRetriable(errs[3]) {
		t.Fatalf("dial error = %v", errs[3])
	}
	// A context shorter than the backoff ends the wait. (Should this
	// goroutine be held up past the 200ms wait, the call dials at once and
	// fails, and the next wait is longer still: try again.)
	for try := 0; ; try++ {
		short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		_, err := c.conn(short, addr)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			break
		}
		if !errors.As(err, &ce) || ce.Op != "dial" || try == 2 {
			t.Fatalf("conn with short ctx: %v", err)
		}
	}
}

func TestClientRequestTimeoutAndClose(t *testing.T) {
	f := newFakeCluster(t)
	f.noAnswer[wire.GetTableSchema] = true
	ctx := testCtx(t, 30*time.Second)
	c, err := NewClient(ctx, Bootstrap(f.addr()), RequestTimeout(200*time.Millisecond), MaxAttempts(2),
		RetryBackoff(Backoff{Initial: time.Millisecond, Max: time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, _, err = c.GetTableSchema(ctx, NewTablePath("db", "t"), nil)
	var te *wire.TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("err = %v", err)
	}
	if el := time.Since(start); el < 400*time.Millisecond || el > 3*time.Second {
		t.Fatalf("two timed-out attempts took %s", el)
	}
	// The fake server counts a request when its goroutine reads it, which
	// may come a little after the client's timer fired.
	for deadline := time.Now().Add(5 * time.Second); f.count(wire.GetTableSchema) < 2 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if got := f.count(wire.GetTableSchema); got != 2 {
		t.Fatalf("GET_TABLE_SCHEMA sent %d times, want 2", got)
	}
	c.Close()
	if _, err := c.coordinatorConn(ctx); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

func TestNewClientValidation(t *testing.T) {
	if _, err := NewClient(context.Background()); !errors.Is(err, ErrNoBootstrap) {
		t.Fatalf("err = %v", err)
	}
}

func TestTablePath(t *testing.T) {
	p, err := ParseTablePath("db.t")
	if err != nil || p != NewTablePath("db", "t") || p.String() != "db.t" {
		t.Fatalf("%v %v", p, err)
	}
	for _, bad := range []string{"", "db", ".t", "db.", "a.b.c"} {
		if _, err := ParseTablePath(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if s := (TableBucket{TableID: 3, PartitionID: NoPartition, Bucket: 1}).String(); s != "table 3 bucket 1" {
		t.Error(s)
	}
	if s := (TableBucket{TableID: 3, PartitionID: 7, Bucket: 1}).String(); s != "table 3 partition 7 bucket 1" {
		t.Error(s)
	}
}

func TestAssignFieldIDs(t *testing.T) {
	s := allTypesSchema()
	assignFieldIDs(s)
	seen := map[int32]bool{}
	for i, col := range s.Columns {
		if seen[col.ID] {
			t.Fatalf("duplicate id %d", col.ID)
		}
		seen[col.ID] = true
		if col.Name == "r" {
			// r is column 18; its fields x and y follow it.
			if col.ID != int32(i) || col.Type.Fields[0].ID != int32(i+1) || col.Type.Fields[1].ID != int32(i+2) {
				t.Fatalf("ids of r: %d %d %d", col.ID, col.Type.Fields[0].ID, col.Type.Fields[1].ID)
			}
		}
	}
	if s.HighestFieldID != int32(len(s.Columns)+1) || !s.HasColumnIDs {
		t.Fatalf("highest = %d", s.HighestFieldID)
	}
}
