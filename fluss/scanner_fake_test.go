package fluss

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/wire"
	"github.com/fluss-iggy/fluss-iggy/fluss/records"
)

// fakeTablet is an in-process server that plays coordinator and tablet
// server 0 of a one-bucket log table db.t (id 1, one INT column "id") for
// scanner tests. Its FetchLog answers come from fetch, called with the
// request's fetch offset of bucket 0. A fake made by newFakeServer plays
// another table: its answer func answers every request (nil: no answer).
type fakeTablet struct {
	t    *testing.T
	ln   net.Listener
	host string
	port int32

	mu     sync.Mutex
	conns  []net.Conn
	fetch  func(offset int64) *pb.PbFetchLogRespForBucket
	answer func(f *fakeTablet, key wire.APIKey, body []byte) proto.Message
}

const fakeOneBucketTableJSON = `{"version":1,"schema":{"version":1,"columns":[{"name":"id","data_type":{"type":"INTEGER"},"id":0}],"highest_field_id":0},` +
	`"partition_key":[],"bucket_key":[],"bucket_count":1,"properties":{},"custom_properties":{}}`

func newFakeTablet(t *testing.T, fetch func(offset int64) *pb.PbFetchLogRespForBucket) *fakeTablet {
	t.Helper()
	return startFake(t, &fakeTablet{t: t, fetch: fetch})
}

// newFakeServer starts a fake whose answers all come from answer.
func newFakeServer(t *testing.T, answer func(f *fakeTablet, key wire.APIKey, body []byte) proto.Message) *fakeTablet {
	t.Helper()
	return startFake(t, &fakeTablet{t: t, answer: answer})
}

func startFake(t *testing.T, f *fakeTablet) *fakeTablet {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.ln = ln
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	p, _ := strconv.Atoi(port)
	f.host, f.port = host, int32(p)
	go f.serve()
	t.Cleanup(f.close)
	return f
}

func (f *fakeTablet) addr() string { return f.ln.Addr().String() }

func (f *fakeTablet) close() {
	_ = f.ln.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.conns {
		_ = c.Close()
	}
	f.conns = nil
}

func (f *fakeTablet) serve() {
	for {
		nc, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		f.conns = append(f.conns, nc)
		f.mu.Unlock()
		go f.handle(nc)
	}
}

func (f *fakeTablet) node() *pb.PbServerNode {
	return &pb.PbServerNode{NodeId: proto.Int32(0), Host: proto.String(f.host), Port: proto.Int32(f.port)}
}

func (f *fakeTablet) handle(nc net.Conn) {
	defer nc.Close()
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
		answer := (*fakeTablet).oneBucketTable
		if f.answer != nil {
			answer = f.answer
		}
		resp := answer(f, key, body)
		if resp == nil {
			continue
		}
		b, err := proto.Marshal(resp)
		if err != nil {
			f.t.Errorf("fake: marshal %s: %v", key, err)
			return
		}
		out := binary.BigEndian.AppendUint32(nil, uint32(5+len(b)))
		out = append(out, 0)
		out = binary.BigEndian.AppendUint32(out, id)
		if _, err := nc.Write(append(out, b...)); err != nil {
			return
		}
	}
}

// fakeVersions is the ApiVersions answer of a coordinator serving version 0
// of keys.
func fakeVersions(keys ...wire.APIKey) *pb.ApiVersionsResponse {
	r := &pb.ApiVersionsResponse{ServerType: proto.Int32(1)}
	for _, k := range keys {
		r.ApiVersions = append(r.ApiVersions, &pb.PbApiVersion{ApiKey: proto.Int32(int32(k)), MinVersion: proto.Int32(0), MaxVersion: proto.Int32(0)})
	}
	return r
}

// decoded is body decoded as a T (what of it decodes).
func decoded[T any, P interface {
	*T
	proto.Message
}](body []byte) P {
	m := P(new(T))
	_ = proto.Unmarshal(body, m)
	return m
}

// oneBucketTable answers a request as the server of the one-bucket table.
func (f *fakeTablet) oneBucketTable(key wire.APIKey, body []byte) proto.Message {
	var resp proto.Message
	switch key {
	case wire.APIVersions:
		resp = fakeVersions(wire.APIVersions, wire.GetMetadata, wire.FetchLog)
	case wire.GetMetadata:
		var req pb.MetadataRequest
		_ = proto.Unmarshal(body, &req)
		r := &pb.MetadataResponse{CoordinatorServer: f.node(), TabletServers: []*pb.PbServerNode{f.node()}}
		for _, tp := range req.GetTablePath() {
			if tp.GetDatabaseName() != "db" || tp.GetTableName() != "t" {
				continue
			}
			r.TableMetadata = append(r.TableMetadata, &pb.PbTableMetadata{
				TablePath: tp, TableId: proto.Int64(1), SchemaId: proto.Int32(1), TableJson: []byte(fakeOneBucketTableJSON),
				CreatedTime: proto.Int64(1), ModifiedTime: proto.Int64(2),
				BucketMetadata: []*pb.PbBucketMetadata{{BucketId: proto.Int32(0), LeaderId: proto.Int32(0)}},
			})
		}
		resp = r
	case wire.FetchLog:
		var req pb.FetchLogRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			f.t.Errorf("fake: FetchLog request: %v", err)
			return nil
		}
		r := &pb.FetchLogResponse{}
		for _, tr := range req.GetTablesReq() {
			out := &pb.PbFetchLogRespForTable{TableId: proto.Int64(tr.GetTableId())}
			for _, br := range tr.GetBucketsReq() {
				b := f.fetch(br.GetFetchOffset())
				b.BucketId = proto.Int32(br.GetBucketId())
				out.BucketsResp = append(out.BucketsResp, b)
			}
			r.TablesResp = append(r.TablesResp, out)
		}
		resp = r
	}
	return resp
}

// fakeLogBatch encodes a log batch of the fake table with rows
// first..first+n-1 (the "id" column holds the offset), at base offset first.
func fakeLogBatch(t *testing.T, first int64, n int) []byte {
	t.Helper()
	b := array.NewInt32Builder(memory.DefaultAllocator)
	defer b.Release()
	for i := 0; i < n; i++ {
		b.Append(int32(first) + int32(i))
	}
	col := b.NewArray()
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(n))
	defer rec.Release()
	out, err := records.EncodeLogBatch(rec, records.LogBatchOptions{SchemaID: 1, BaseOffset: first})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// fakeSegment writes a remote log segment file holding batches and returns
// its description.
func fakeSegment(t *testing.T, tabletDir, id string, start, end int64, batches ...[]byte) *pb.PbRemoteLogSegment {
	t.Helper()
	path := RemoteSegmentPath(tabletDir, id, start)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var data []byte
	for _, b := range batches {
		data = append(data, b...)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return &pb.PbRemoteLogSegment{
		RemoteLogSegmentId:   proto.String(id),
		RemoteLogStartOffset: proto.Int64(start),
		RemoteLogEndOffset:   proto.Int64(end),
		SegmentSizeInBytes:   proto.Int32(int32(len(data))),
	}
}

// openFakeTable connects a client with fast retries to a fake server at
// addr and loads the table db.t. The client is closed when the test ends.
func openFakeTable(ctx context.Context, t *testing.T, addr string) (*Client, *TableInfo) {
	t.Helper()
	c, err := NewClient(ctx, Bootstrap(addr), RetryBackoff(Backoff{Initial: time.Millisecond, Max: 10 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	info, err := c.Table(ctx, NewTablePath("db", "t"))
	if err != nil {
		t.Fatal(err)
	}
	return c, info
}
