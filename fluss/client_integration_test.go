package fluss

import (
	"context"
	"errors"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/wire"
	"github.com/fluss-iggy/fluss-iggy/fluss/records"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
	"github.com/fluss-iggy/fluss-iggy/internal/testnet"
)

func testCtx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// newTestClient connects to the shared cluster.
func newTestClient(t *testing.T, opts ...Option) *Client {
	t.Helper()
	addr := flusstest.Require(t)
	c, err := NewClient(testCtx(t, time.Minute), append([]Option{Bootstrap(addr), RequestTimeout(20 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatalf("NewClient(%s): %v", addr, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// newTestDatabase creates a database dropped (with its tables) at the end.
func newTestDatabase(t *testing.T, c *Client) string {
	t.Helper()
	db := flusstest.UniqueName("c_db")
	// Three minutes: a loaded machine has taken more than one to elect a new
	// table's bucket leaders.
	ctx := testCtx(t, 3*time.Minute)
	if err := c.CreateDatabase(ctx, db, &DatabaseDescriptor{Comment: "fluss client test"}, false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.DropDatabase(ctx, db, true, true); err != nil {
			t.Errorf("drop database %s: %v", db, err)
		}
	})
	return db
}

// waitOffsets polls ListOffsets until every bucket has a leader (a new table
// gets its leaders a moment after CreateTable returns).
func waitOffsets(t *testing.T, c *Client, info *TableInfo, partitionID int64, spec OffsetSpec) map[int32]int64 {
	t.Helper()
	// Three minutes: a loaded machine has taken more than one to elect a new
	// table's bucket leaders.
	ctx := testCtx(t, 3*time.Minute)
	for {
		offs, err := c.ListOffsets(ctx, info, partitionID, nil, spec)
		if err == nil {
			return offs
		}
		if ctx.Err() != nil {
			t.Fatalf("list offsets of %s: %v", info.Path, err)
		}
		t.Logf("list offsets of %s (will retry): %v", info.Path, err)
		time.Sleep(200 * time.Millisecond)
	}
}

func TestIntegrationAPIVersions(t *testing.T) {
	addr := flusstest.Require(t)
	// Three minutes: a loaded machine has taken more than one to elect a new
	// table's bucket leaders.
	ctx := testCtx(t, 3*time.Minute)
	conn, err := wire.Dial(ctx, addr, wire.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if conn.ServerType() != wire.ServerTypeCoordinator {
		t.Errorf("bootstrap server type = %s, want coordinator", conn.ServerType())
	}
	for _, k := range []wire.APIKey{wire.GetMetadata, wire.CreateTable, wire.GetTableInfo, wire.CreatePartition} {
		if v, ok := conn.Version(k); !ok || v != 0 {
			t.Errorf("coordinator %s: version %d ok %v", k, v, ok)
		}
	}
	if _, ok := conn.Version(wire.FetchLog); ok {
		t.Error("the coordinator should not list FETCH_LOG")
	}
	// An API the coordinator does not serve fails at once instead of hanging.
	start := time.Now()
	err = conn.Call(ctx, wire.ListOffsets, &pb.ListOffsetsRequest{
		FollowerServerId: proto.Int32(-1), OffsetType: proto.Int32(0), TableId: proto.Int64(1),
	}, &pb.ListOffsetsResponse{})
	if !errors.Is(err, errcode.UnsupportedVersion) || time.Since(start) > time.Second {
		t.Fatalf("LIST_OFFSETS to the coordinator: %v after %s", err, time.Since(start))
	}

	c := newTestClient(t)
	cl := c.cluster()
	if cl.Coordinator == nil || len(cl.TabletServers) == 0 {
		t.Fatalf("cluster = %+v", cl)
	}
	ts, err := c.tabletConn(ctx, cl.TabletServers[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if ts.ServerType() != wire.ServerTypeTabletServer {
		t.Errorf("tablet server type = %s", ts.ServerType())
	}
	for _, k := range []wire.APIKey{wire.FetchLog, wire.ProduceLog, wire.ListOffsets, wire.GetMetadata} {
		if _, ok := ts.Version(k); !ok {
			t.Errorf("tablet server does not list %s", k)
		}
	}
	if v, ok := ts.Version(wire.PutKV); !ok || v != 0 {
		t.Errorf("PUT_KV version %d %v, want 0 (our max)", v, ok)
	}
	// The same connection is reused.
	ts2, err := c.tabletConn(ctx, cl.TabletServers[0].ID)
	if err != nil || ts2 != ts {
		t.Fatalf("tabletConn did not reuse the connection: %v", err)
	}
}

func TestIntegrationDatabases(t *testing.T) {
	c := newTestClient(t)
	ctx := testCtx(t, 2*time.Minute)
	db := newTestDatabase(t, c)

	if ok, err := c.DatabaseExists(ctx, db); err != nil || !ok {
		t.Fatalf("DatabaseExists = %v, %v", ok, err)
	}
	dbs, err := c.ListDatabases(ctx)
	if err != nil || !slices.Contains(dbs, db) {
		t.Fatalf("ListDatabases = %v, %v", dbs, err)
	}
	err = c.CreateDatabase(ctx, db, nil, false)
	if !errors.Is(err, errcode.DatabaseAlreadyExist) {
		t.Fatalf("second create: %v", err)
	}
	if err := c.CreateDatabase(ctx, db, nil, true); err != nil {
		t.Fatalf("create with ignoreIfExists: %v", err)
	}
	missing := flusstest.UniqueName("c_missing")
	if err := c.DropDatabase(ctx, missing, false, false); !errors.Is(err, errcode.DatabaseNotExist) {
		t.Fatalf("drop missing: %v", err)
	}
	if ok, err := c.DatabaseExists(ctx, missing); err != nil || ok {
		t.Fatalf("DatabaseExists(missing) = %v, %v", ok, err)
	}

	other := flusstest.UniqueName("c_db2")
	if err := c.CreateDatabase(ctx, other, nil, false); err != nil {
		t.Fatal(err)
	}
	path := NewTablePath(other, "t")
	desc := &types.TableDescriptor{Schema: *types.MustSchema([]types.Column{types.NewColumn("a", types.Int())})}
	if err := c.CreateTable(ctx, path, desc, false); err != nil {
		t.Fatal(err)
	}
	if err := c.DropDatabase(ctx, other, false, false); !errors.Is(err, errcode.DatabaseNotEmpty) {
		t.Fatalf("drop non-empty without cascade: %v", err)
	}
	if err := c.DropDatabase(ctx, other, false, true); err != nil {
		t.Fatalf("drop cascade: %v", err)
	}
}

func allTypesSchema() *types.Schema {
	return types.MustSchema([]types.Column{
		types.NewColumn("id", types.Int().NotNull()),
		types.NewColumn("b", types.Boolean()),
		types.NewColumn("i8", types.TinyInt()),
		types.NewColumn("i16", types.SmallInt()),
		types.NewColumn("i64", types.BigInt()),
		types.NewColumn("f32", types.Float()),
		types.NewColumn("f64", types.Double()),
		types.NewColumn("dec", types.Decimal(10, 2)),
		types.NewColumn("c", types.Char(3)),
		types.NewColumn("s", types.String()),
		types.NewColumn("bin", types.Binary(4)),
		types.NewColumn("bytes", types.Bytes()),
		types.NewColumn("d", types.Date()),
		types.NewColumn("tm", types.Time(3)),
		types.NewColumn("ts", types.Timestamp(6)),
		types.NewColumn("ltz", types.TimestampLTZ(3)),
		types.NewColumn("arr", types.ArrayOf(types.Int())),
		types.NewColumn("m", types.MapOf(types.String().NotNull(), types.BigInt())),
		types.NewColumn("r", types.RowOf(types.NewField("x", types.Int()), types.NewField("y", types.String()))),
	})
}

func TestIntegrationLogTable(t *testing.T) {
	c := newTestClient(t)
	ctx := testCtx(t, 2*time.Minute)
	db := newTestDatabase(t, c)
	path := NewTablePath(db, "log3")
	schema := allTypesSchema()
	desc := &types.TableDescriptor{
		Schema:      *schema,
		Comment:     "all the types",
		BucketKeys:  []string{"id"},
		BucketCount: 3,
		Properties:  map[string]string{types.PropArrowCompression: "LZ4_FRAME"},
	}
	if err := c.CreateTable(ctx, path, desc, false); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTable(ctx, path, desc, false); !errors.Is(err, errcode.TableAlreadyExist) {
		t.Fatalf("second create: %v", err)
	}
	if err := c.CreateTable(ctx, path, desc, true); err != nil {
		t.Fatalf("create with ignoreIfExists: %v", err)
	}

	info, err := c.Table(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if info.TableID <= 0 || info.SchemaID != 1 || info.NumBuckets != 3 || info.IsPartitioned() || info.HasPrimaryKey() {
		t.Fatalf("info = %+v", info)
	}
	if !slices.Equal(info.Schema.ColumnNames(), schema.ColumnNames()) {
		t.Fatalf("columns = %v", info.Schema.ColumnNames())
	}
	for i, col := range schema.Columns {
		if !info.Schema.Columns[i].Type.Equal(col.Type) {
			t.Errorf("column %s: type %s, want %s", col.Name, info.Schema.Columns[i].Type, col.Type)
		}
	}
	if info.Descriptor.ArrowCompression() != "LZ4_FRAME" || info.Descriptor.Comment != "all the types" {
		t.Errorf("descriptor = %+v", info.Descriptor)
	}

	viaInfo, err := c.GetTableInfo(ctx, path)
	if err != nil || viaInfo.TableID != info.TableID || viaInfo.SchemaID != info.SchemaID {
		t.Fatalf("GetTableInfo = %+v, %v", viaInfo, err)
	}
	latest, id, err := c.GetTableSchema(ctx, path, nil)
	if err != nil || id != 1 || !slices.Equal(latest.ColumnNames(), schema.ColumnNames()) {
		t.Fatalf("GetTableSchema = %v %d %v", latest, id, err)
	}
	as, err := c.ArrowSchema(ctx, info, 1)
	if err != nil || as.NumFields() != len(schema.Columns) {
		t.Fatalf("ArrowSchema = %v, %v", as, err)
	}
	if ok, err := c.TableExists(ctx, path); err != nil || !ok {
		t.Fatalf("TableExists = %v %v", ok, err)
	}
	names, err := c.ListTables(ctx, db)
	if err != nil || !slices.Equal(names, []string{"log3"}) {
		t.Fatalf("ListTables = %v %v", names, err)
	}

	earliest := waitOffsets(t, c, info, NoPartition, EarliestOffset())
	if len(earliest) != 3 {
		t.Fatalf("earliest = %v", earliest)
	}
	for b := int32(0); b < 3; b++ {
		if earliest[b] != 0 {
			t.Errorf("earliest of bucket %d = %d", b, earliest[b])
		}
		leader, err := c.leader(ctx, info.Bucket(NoPartition, b))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := c.meta.tablet(leader); !ok {
			t.Errorf("bucket %d leader %d is not a known tablet server", b, leader)
		}
	}
	latestOffs, err := c.ListOffsets(ctx, info, NoPartition, []int32{1}, LatestOffset())
	if err != nil || len(latestOffs) != 1 || latestOffs[1] != 0 {
		t.Fatalf("latest of bucket 1 = %v, %v", latestOffs, err)
	}

	if err := c.DropTable(ctx, path, false); err != nil {
		t.Fatal(err)
	}
	if err := c.DropTable(ctx, path, false); !errors.Is(err, errcode.TableNotExist) {
		t.Fatalf("drop again: %v", err)
	}
	if err := c.DropTable(ctx, path, true); err != nil {
		t.Fatal(err)
	}
}

// produceInts appends one append-only batch of n INT rows (column "id") to a
// bucket of a log table with compression NONE and returns its base offset.
func produceInts(t *testing.T, c *Client, info *TableInfo, partitionID int64, bucket int32, from, n int) int64 {
	t.Helper()
	// Three minutes: a loaded machine has taken more than one to elect a new
	// table's bucket leaders.
	ctx := testCtx(t, 3*time.Minute)
	mem := memory.NewGoAllocator()
	as, err := c.ArrowSchema(ctx, info, info.SchemaID)
	if err != nil {
		t.Fatal(err)
	}
	bld := array.NewRecordBuilder(mem, as)
	defer bld.Release()
	for i := 0; i < n; i++ {
		bld.Field(0).(*array.Int32Builder).Append(int32(from + i))
		for f := 1; f < len(as.Fields()); f++ {
			bld.Field(f).AppendNull()
		}
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	batch, err := records.EncodeLogBatch(rec, records.LogBatchOptions{SchemaID: int16(info.SchemaID), Compression: records.CompressionNone})
	if err != nil {
		t.Fatal(err)
	}
	bk := info.Bucket(partitionID, bucket)
	req := &pb.ProduceLogRequest{
		Acks: proto.Int32(-1), TableId: proto.Int64(info.TableID), TimeoutMs: proto.Int32(30000),
		BucketsReq: []*pb.PbProduceLogReqForBucket{{BucketId: proto.Int32(bucket), Records: batch}},
	}
	if partitionID != NoPartition {
		req.BucketsReq[0].PartitionId = proto.Int64(partitionID)
	}
	for {
		conn, _, err := c.LeaderConn(ctx, bk)
		if err != nil {
			t.Fatal(err)
		}
		var resp pb.ProduceLogResponse
		if err := conn.Call(ctx, wire.ProduceLog, req, &resp); err != nil {
			t.Fatalf("produce to %s: %v", bk, err)
		}
		br := resp.GetBucketsResp()[0]
		err = errcode.New(br.GetErrorCode(), br.GetErrorMessage())
		if err == nil {
			return br.GetBaseOffset()
		}
		if !errcode.IsRetriable(err) || ctx.Err() != nil {
			t.Fatalf("produce to %s: %v", bk, err)
		}
		if errcode.InvalidatesMetadata(err) {
			c.invalidateLeader(bk)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestIntegrationListOffsets(t *testing.T) {
	c := newTestClient(t)
	ctx := testCtx(t, 2*time.Minute)
	db := newTestDatabase(t, c)
	path := NewTablePath(db, "offsets")
	desc := &types.TableDescriptor{
		Schema:      *types.MustSchema([]types.Column{types.NewColumn("id", types.Int()), types.NewColumn("s", types.String())}),
		BucketKeys:  []string{},
		BucketCount: 2,
		Properties:  map[string]string{types.PropArrowCompression: "NONE"},
	}
	if err := c.CreateTable(ctx, path, desc, false); err != nil {
		t.Fatal(err)
	}
	info, err := c.Table(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	waitOffsets(t, c, info, NoPartition, LatestOffset())

	before := time.Now().UnixMilli()
	if base := produceInts(t, c, info, NoPartition, 0, 0, 5); base != 0 {
		t.Fatalf("first base offset = %d", base)
	}
	time.Sleep(50 * time.Millisecond)
	mid := time.Now().UnixMilli()
	time.Sleep(50 * time.Millisecond)
	if base := produceInts(t, c, info, NoPartition, 0, 5, 3); base != 5 {
		t.Fatalf("second base offset = %d", base)
	}
	produceInts(t, c, info, NoPartition, 1, 100, 2)

	latest, err := c.ListOffsets(ctx, info, NoPartition, nil, LatestOffset())
	if err != nil {
		t.Fatal(err)
	}
	if latest[0] != 8 || latest[1] != 2 {
		t.Fatalf("latest = %v, want 0:8 1:2", latest)
	}
	earliest, err := c.ListOffsets(ctx, info, NoPartition, nil, EarliestOffset())
	if err != nil || earliest[0] != 0 || earliest[1] != 0 {
		t.Fatalf("earliest = %v, %v", earliest, err)
	}
	byTS, err := c.ListOffsets(ctx, info, NoPartition, []int32{0}, OffsetAtTimestamp(before-1000))
	if err != nil || byTS[0] != 0 {
		t.Fatalf("offset at %d = %v, %v", before-1000, byTS, err)
	}
	byTS, err = c.ListOffsets(ctx, info, NoPartition, []int32{0}, OffsetAtTimestamp(mid))
	if err != nil || byTS[0] != 5 {
		t.Fatalf("offset at mid = %v, %v; want 5", byTS, err)
	}
	_, err = c.ListOffsets(ctx, info, NoPartition, []int32{0}, OffsetAtTimestamp(time.Now().Add(time.Hour).UnixMilli()))
	if !errors.Is(err, errcode.InvalidTimestamp) {
		t.Fatalf("offset in the future: %v", err)
	}
	// A bucket that does not exist.
	_, err = c.ListOffsets(ctx, info, NoPartition, []int32{7}, LatestOffset())
	if err == nil {
		t.Fatal("bucket 7 of a 2-bucket table has an offset")
	}
	t.Logf("bucket 7: %v", err)
}

func TestIntegrationPrimaryKeyTable(t *testing.T) {
	c := newTestClient(t)
	ctx := testCtx(t, 2*time.Minute)
	db := newTestDatabase(t, c)
	path := NewTablePath(db, "pk")
	schema := types.MustSchema([]types.Column{
		types.NewColumn("id", types.Int()),
		types.NewColumn("region", types.String()),
		types.NewColumn("v", types.String()),
	}, "id", "region")
	if err := c.CreateTable(ctx, path, &types.TableDescriptor{Schema: *schema, BucketCount: 2}, false); err != nil {
		t.Fatal(err)
	}
	info, err := c.Table(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if !info.HasPrimaryKey() || !slices.Equal(info.PrimaryKey, []string{"id", "region"}) || info.NumBuckets != 2 {
		t.Fatalf("info = %+v", info)
	}
	if info.Schema.Columns[0].Type.Nullable || info.Schema.Columns[1].Type.Nullable {
		t.Error("primary-key columns must be NOT NULL")
	}
	// The coordinator defaults the bucket key to the primary key.
	if !slices.Equal(info.Descriptor.BucketKeys, []string{"id", "region"}) {
		t.Errorf("bucket keys = %v", info.Descriptor.BucketKeys)
	}
	offs := waitOffsets(t, c, info, NoPartition, LatestOffset())
	if len(offs) != 2 {
		t.Fatalf("offsets = %v", offs)
	}
}

func TestIntegrationPartitions(t *testing.T) {
	c := newTestClient(t)
	ctx := testCtx(t, 3*time.Minute)
	db := newTestDatabase(t, c)
	path := NewTablePath(db, "parted")
	schema := types.MustSchema([]types.Column{
		types.NewColumn("id", types.Int()),
		types.NewColumn("dt", types.String()),
		types.NewColumn("region", types.String()),
	})
	desc := &types.TableDescriptor{
		Schema:        *schema,
		PartitionKeys: []string{"dt", "region"},
		BucketKeys:    []string{},
		BucketCount:   2,
		Properties:    map[string]string{types.PropArrowCompression: "NONE"},
	}
	if err := c.CreateTable(ctx, path, desc, false); err != nil {
		t.Fatal(err)
	}
	info, err := c.Table(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if !info.IsPartitioned() || !slices.Equal(info.PartitionKeys, []string{"dt", "region"}) {
		t.Fatalf("info = %+v", info)
	}
	parts, err := c.Partitions(ctx, info)
	if err != nil || len(parts) != 0 {
		t.Fatalf("partitions = %v, %v", parts, err)
	}
	if _, err := c.ListOffsets(ctx, info, NoPartition, nil, LatestOffset()); err == nil {
		t.Fatal("list offsets of a partitioned table without partition succeeded")
	}

	spec1 := map[string]string{"dt": "2024-01-01", "region": "eu"}
	if err := c.CreatePartition(ctx, path, spec1, false); err != nil {
		t.Fatal(err)
	}
	if err := c.CreatePartition(ctx, path, spec1, false); !errors.Is(err, errcode.PartitionAlreadyExists) {
		t.Fatalf("second create: %v", err)
	}
	if err := c.CreatePartition(ctx, path, spec1, true); err != nil {
		t.Fatal(err)
	}
	if err := c.CreatePartition(ctx, path, map[string]string{"dt": "x"}, false); err == nil {
		t.Fatal("a partial partition spec was accepted")
	}
	p1, err := c.PartitionByName(ctx, info, "2024-01-01$eu")
	if err != nil {
		t.Fatal(err)
	}
	if p1.ID < 0 || !slices.Equal(p1.Spec, []KeyValue{{"dt", "2024-01-01"}, {"region", "eu"}}) {
		t.Fatalf("partition = %+v", p1)
	}
	offs := waitOffsets(t, c, info, p1.ID, LatestOffset())
	if len(offs) != 2 || offs[0] != 0 {
		t.Fatalf("offsets of %s = %v", p1.Name, offs)
	}
	if base := produceInts(t, c, info, p1.ID, 1, 0, 4); base != 0 {
		t.Fatalf("base = %d", base)
	}
	offs, err = c.ListOffsets(ctx, info, p1.ID, nil, LatestOffset())
	if err != nil || offs[1] != 4 || offs[0] != 0 {
		t.Fatalf("offsets after produce = %v, %v", offs, err)
	}

	// A partition created later (by someone else) is discovered by listing.
	other := newTestClient(t)
	if err := other.CreatePartition(ctx, path, map[string]string{"dt": "2024-01-02", "region": "us"}, false); err != nil {
		t.Fatal(err)
	}
	parts, err = c.Partitions(ctx, info)
	if err != nil || len(parts) != 2 || parts[0].ID != p1.ID || parts[1].Name != "2024-01-02$us" {
		t.Fatalf("partitions = %+v, %v", parts, err)
	}
	leader, err := c.leader(ctx, info.Bucket(parts[1].ID, 0))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("partition %s bucket 0 leader: %d", parts[1].Name, leader)

	if err := c.DropPartition(ctx, path, spec1, false); err != nil {
		t.Fatal(err)
	}
	parts, err = c.Partitions(ctx, info)
	if err != nil || len(parts) != 1 {
		t.Fatalf("partitions after drop = %+v, %v", parts, err)
	}
	if _, err := c.PartitionByName(ctx, info, "2024-01-01$eu"); !errors.Is(err, errcode.PartitionNotExists) {
		t.Fatalf("dropped partition: %v", err)
	}
	// The metadata refresh of a table whose cached partition was dropped still
	// works.
	if _, err := c.RefreshTable(ctx, path); err != nil {
		t.Fatal(err)
	}
}

func TestIntegrationSchemaEvolution(t *testing.T) {
	c := newTestClient(t)
	ctx := testCtx(t, 2*time.Minute)
	db := newTestDatabase(t, c)
	path := NewTablePath(db, "evolve")
	desc := &types.TableDescriptor{
		Schema:     *types.MustSchema([]types.Column{types.NewColumn("id", types.Int()), types.NewColumn("a", types.String())}),
		Properties: map[string]string{types.PropArrowCompression: "NONE"},
	}
	if err := c.CreateTable(ctx, path, desc, false); err != nil {
		t.Fatal(err)
	}
	v1, err := c.Table(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddColumns(ctx, path, types.Column{Name: "b", Type: types.BigInt(), Comment: "added"}); err != nil {
		t.Fatal(err)
	}
	v2, err := c.Table(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if v2.TableID != v1.TableID || v2.SchemaID != 2 || !slices.Equal(v2.Schema.ColumnNames(), []string{"id", "a", "b"}) {
		t.Fatalf("after add column: schema %d %v", v2.SchemaID, v2.Schema.ColumnNames())
	}
	old, err := c.Schema(ctx, v2, 1)
	if err != nil || !slices.Equal(old.ColumnNames(), []string{"id", "a"}) {
		t.Fatalf("schema 1 = %v, %v", old, err)
	}
	oldArrow, err := c.ArrowSchema(ctx, v2, 1)
	if err != nil || oldArrow.NumFields() != 2 {
		t.Fatalf("arrow schema 1 = %v, %v", oldArrow, err)
	}
	newArrow, err := c.ArrowSchema(ctx, v2, 2)
	if err != nil || newArrow.NumFields() != 3 || newArrow.Field(2).Type.ID() != arrow.INT64 {
		t.Fatalf("arrow schema 2 = %v, %v", newArrow, err)
	}
	// SCHEMA_NOT_EXIST is retriable (a new schema may not have reached every
	// server yet); ask once.
	once := newTestClient(t, MaxAttempts(1))
	if _, err := once.Schema(ctx, v2, 9); !errors.Is(err, errcode.SchemaNotExist) {
		t.Fatalf("schema 9: %v", err)
	}
	// Not supported by Fluss 0.9: a NOT NULL column.
	if err := c.AddColumns(ctx, path, types.NewColumn("c", types.Int().NotNull())); err == nil {
		t.Error("adding a NOT NULL column succeeded")
	}
}

func TestIntegrationTableNotExist(t *testing.T) {
	c := newTestClient(t)
	// Three minutes: a loaded machine has taken more than one to elect a new
	// table's bucket leaders.
	ctx := testCtx(t, 3*time.Minute)
	db := newTestDatabase(t, c)
	path := NewTablePath(db, "nope")
	start := time.Now()
	if _, err := c.Table(ctx, path); !errors.Is(err, errcode.TableNotExist) {
		t.Fatalf("Table: %v", err)
	}
	if _, err := c.GetTableInfo(ctx, path); !errors.Is(err, errcode.TableNotExist) {
		t.Fatalf("GetTableInfo: %v", err)
	}
	// 0.9.1 answers GET_TABLE_SCHEMA of a missing table with SCHEMA_NOT_EXIST,
	// which is retriable: ask once.
	once := newTestClient(t, MaxAttempts(1))
	if _, _, err := once.GetTableSchema(ctx, path, nil); !errors.Is(err, errcode.SchemaNotExist) {
		t.Fatalf("GetTableSchema: %v", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("not-exist errors took %s (retried?)", time.Since(start))
	}
	err := c.CreateTable(ctx, NewTablePath(flusstest.UniqueName("c_nodb"), "t"),
		&types.TableDescriptor{Schema: *types.MustSchema([]types.Column{types.NewColumn("a", types.Int())})}, false)
	if !errors.Is(err, errcode.DatabaseNotExist) {
		t.Fatalf("create in a missing database: %v", err)
	}
}

func TestIntegrationBadBootstrap(t *testing.T) {
	flusstest.Require(t) // run with the other integration tests
	// Nothing listens.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	start := time.Now()
	_, err = NewClient(context.Background(), Bootstrap(closed), DialTimeout(2*time.Second))
	if err == nil {
		t.Fatal("NewClient succeeded without a server")
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("refused bootstrap took %s", el)
	}
	t.Logf("refused: %v (%s)", err, time.Since(start).Round(time.Millisecond))

	// A server that accepts and never answers.
	silent := testnet.Silent(t)
	start = time.Now()
	_, err = NewClient(context.Background(), Bootstrap(silent), DialTimeout(500*time.Millisecond))
	var ce *wire.ConnError
	if !errors.As(err, &ce) {
		t.Fatalf("silent bootstrap: %v", err)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("silent bootstrap took %s", el)
	}
	t.Logf("silent: %v (%s)", err, time.Since(start).Round(time.Millisecond))

	// The context bounds it too.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start = time.Now()
	if _, err = NewClient(ctx, Bootstrap(silent)); err == nil || time.Since(start) > 3*time.Second {
		t.Fatalf("ctx-bounded bootstrap: %v after %s", err, time.Since(start))
	}

	// One bad address next to a good one is fine.
	good := flusstest.Require(t)
	c, err := NewClient(testCtx(t, time.Minute), Bootstrap(closed, good), DialTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

func TestIntegrationSASL(t *testing.T) {
	cl := flusstest.StartCluster(t, flusstest.Options{SASL: true})
	ctx := testCtx(t, 2*time.Minute)

	c, err := NewClient(ctx, Bootstrap(cl.Bootstrap), SASLPlain(cl.Username, cl.Password))
	if err != nil {
		t.Fatalf("right credentials: %v", err)
	}
	defer c.Close()
	db := flusstest.UniqueName("c_sasl")
	if err := c.CreateDatabase(ctx, db, nil, false); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.DatabaseExists(ctx, db); err != nil || !ok {
		t.Fatalf("exists = %v %v", ok, err)
	}
	// Tablet servers authenticate too.
	ts := c.cluster().TabletServers[0]
	if _, err := c.tabletConn(ctx, ts.ID); err != nil {
		t.Fatalf("tablet server %d over SASL: %v", ts.ID, err)
	}
	if err := c.DropDatabase(ctx, db, false, true); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	_, err = NewClient(ctx, Bootstrap(cl.Bootstrap), SASLPlain(cl.Username, "wrong-password"))
	if !errors.Is(err, errcode.AuthenticateException) {
		t.Fatalf("wrong password: %v", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("wrong password took %s", el)
	}
	t.Logf("wrong password: %v (%s)", err, time.Since(start).Round(time.Millisecond))

	start = time.Now()
	_, err = NewClient(ctx, Bootstrap(cl.Bootstrap), SASLPlain("nobody", "x"))
	if !errors.Is(err, errcode.AuthenticateException) || time.Since(start) > 5*time.Second {
		t.Fatalf("unknown user: %v after %s", err, time.Since(start))
	}

	// No credentials at a SASL listener: requests other than ApiVersions are
	// refused with AUTHENTICATE_EXCEPTION, again quickly.
	start = time.Now()
	_, err = NewClient(ctx, Bootstrap(cl.Bootstrap))
	if !errors.Is(err, errcode.AuthenticateException) || time.Since(start) > 5*time.Second {
		t.Fatalf("no credentials: %v after %s", err, time.Since(start))
	}
}
