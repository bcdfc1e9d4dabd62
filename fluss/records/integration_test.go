package records_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/wire"
	"github.com/fluss-iggy/fluss-iggy/fluss/jsonrow"
	"github.com/fluss-iggy/fluss-iggy/fluss/records"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

var captureSeeds = flag.Bool("capture-seeds", false,
	"write the records bytes fetched from a real cluster to testdata/cluster-*.bin (fuzz seeds)")

func TestMain(m *testing.M) { flusstest.Main(m) }

// javaTool runs scripts/fluss-java.sh against the test cluster.
func javaTool(t *testing.T, addr string, args ...string) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts", "fluss-java.sh"), append(args, "--bootstrap", addr)...)
	cmd.Env = append(os.Environ(), "FLUSS_TOOL_HEAP=256m")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("fluss-java.sh %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func newClient(t *testing.T, addr string) *fluss.Client {
	c, err := fluss.NewClient(testCtx(t), fluss.Bootstrap(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// scanLines fetches bucket 0 of a table from offset 0 to the high watermark,
// decodes every batch and renders it like the Java tool's scan.
// With proj, the server projects the columns (projection pushdown) and the
// lines show those columns in proj's order.
func scanLines(t *testing.T, c *fluss.Client, path fluss.TablePath, capture string, proj ...int) []string {
	t.Helper()
	return scanFormatLines(t, c, path, capture, records.LogFormatArrow, proj...)
}

// scanFormatLines is scanLines for a table of the given log format.
func scanFormatLines(t *testing.T, c *fluss.Client, path fluss.TablePath, capture string, format records.LogFormat, proj ...int) []string {
	t.Helper()
	ctx := testCtx(t)
	info, err := c.Table(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	opts := []records.Option{records.WithAllocator(mem), records.WithLogFormat(format, func(id int16) (*types.Schema, error) {
		return c.Schema(ctx, info, int32(id))
	})}
	schema := info.Schema
	if proj != nil {
		opts = append(opts, records.WithProjection(proj), records.WithProjectionPushedDown(true))
		if schema, err = info.Schema.ProjectIndices(proj); err != nil {
			t.Fatal(err)
		}
	}
	dec, err := records.NewDecoder(func(id int16) (*arrow.Schema, error) {
		return c.ArrowSchema(ctx, info, int32(id))
	}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := jsonrow.NewSchemaEncoder(schema)
	if err != nil {
		t.Fatal(err)
	}
	conn, _, err := c.LeaderConn(ctx, info.Bucket(fluss.NoPartition, 0))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	var line []byte
	offset := int64(0)
	for first := true; ; first = false {
		var resp pb.FetchLogResponse
		err := conn.Call(ctx, wire.FetchLog, &pb.FetchLogRequest{
			FollowerServerId: proto.Int32(-1),
			MaxBytes:         proto.Int32(64 << 10),
			TablesReq: []*pb.PbFetchLogReqForTable{{
				TableId:                   proto.Int64(info.TableID),
				ProjectionPushdownEnabled: proto.Bool(proj != nil),
				ProjectedFields:           records.ServerProjection(proj),
				BucketsReq: []*pb.PbFetchLogReqForBucket{{
					BucketId: proto.Int32(0), FetchOffset: proto.Int64(offset), MaxFetchBytes: proto.Int32(64 << 10),
				}},
			}},
		}, &resp)
		if err != nil {
			t.Fatal(err)
		}
		b := resp.GetTablesResp()[0].GetBucketsResp()[0]
		if err := errcode.New(b.GetErrorCode(), b.GetErrorMessage()); err != nil {
			t.Fatalf("fetch %s at %d: %v", path, offset, err)
		}
		if first && capture != "" && *captureSeeds {
			if err := os.WriteFile(filepath.Join("testdata", capture), b.GetRecords(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		res, err := dec.Decode(b.GetRecords(), offset)
		if err != nil {
			res.Release()
			t.Fatalf("decode %s at %d: %v", path, offset, err)
		}
		for _, batch := range res.Batches {
			if err := enc.Bind(batch.Record); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < batch.NumRows(); i++ {
				line = fmt.Appendf(line[:0], `{"partition":null,"bucket":0,"offset":%d,"change_type":"%s","row":`, batch.Offset(i), batch.ChangeType(i))
				line = enc.AppendRow(line, i)
				lines = append(lines, string(append(line, '}')))
			}
		}
		res.Release()
		offset = res.NextOffset
		if offset >= b.GetHighWatermark() {
			return lines
		}
	}
}

func splitLines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func requireSameLines(t *testing.T, what string, want, got []string) {
	t.Helper()
	if len(want) != len(got) {
		t.Errorf("%s: %d lines from Java, %d from Go", what, len(want), len(got))
	}
	for i := 0; i < min(len(want), len(got)); i++ {
		if want[i] != got[i] {
			t.Fatalf("%s: line %d differs\njava: %s\ngo:   %s", what, i, want[i], got[i])
		}
	}
	if len(want) != len(got) {
		t.FailNow()
	}
}

// testDB is this run's database (a name of its own, so that a run
// interrupted on a shared cluster leaves nothing in the next one's way);
// useTestDB creates it, and drops it when the test ends.
var testDB = flusstest.UniqueName("records_it")

func useTestDB(t *testing.T, addr string) {
	t.Helper()
	javaTool(t, addr, "create-database", testDB, "--if-not-exists")
	t.Cleanup(func() { javaTool(t, addr, "drop-database", testDB, "--if-exists", "--cascade") })
}

// TestIntegrationDecodeJavaBatches: rows written by the official Java client
// (every type, each compression; a primary-key table with updates, deletes
// and the delete of a missing key) are fetched raw, decoded by this package
// and rendered identically to the Java tool's scan.
func TestIntegrationDecodeJavaBatches(t *testing.T) {
	addr := flusstest.Require(t)
	useTestDB(t, addr)
	c := newClient(t, addr)
	for _, comp := range []string{"NONE", "LZ4_FRAME", "ZSTD"} {
		t.Run("log-"+comp, func(t *testing.T) {
			table := testDB + ".java_log_" + strings.ToLower(comp)
			javaTool(t, addr, "create-table", table, "--all-types", "--compression", comp)
			javaTool(t, addr, "append", table, "--rows", "65", "--seed", "1", "--flush-every", "15")
			want := splitLines(javaTool(t, addr, "scan", table))
			got := scanLines(t, c, fluss.NewTablePath(testDB, "java_log_"+strings.ToLower(comp)), "cluster-log-"+strings.ToLower(comp)+".bin")
			requireSameLines(t, table, want, got)
		})
	}
	t.Run("projection-pushdown", func(t *testing.T) {
		// Server-projected bodies of the ZSTD table (CRC no longer valid),
		// columns in a non-ascending order.
		names := []string{"c_map_string_row", "c_string", "id", "c_row_nested"}
		table := testDB + ".java_log_zstd"
		info, err := c.Table(testCtx(t), fluss.NewTablePath(testDB, "java_log_zstd"))
		if err != nil {
			t.Fatal(err)
		}
		proj, err := info.Schema.ProjectionIndices(names)
		if err != nil {
			t.Fatal(err)
		}
		want := splitLines(javaTool(t, addr, "scan", table, "--columns", strings.Join(names, ",")))
		got := scanLines(t, c, info.Path, "cluster-log-zstd-projected.bin", proj...)
		requireSameLines(t, table+" projected", want, got)
	})
	t.Run("pk-changelog", func(t *testing.T) {
		table := testDB + ".java_pk"
		javaTool(t, addr, "create-table", table, "--all-types", "--primary-key", "id")
		javaTool(t, addr, "upsert", table, "--rows", "30", "--seed", "1")
		javaTool(t, addr, "upsert", table, "--rows", "10", "--seed", "2", "--start", "5")
		javaTool(t, addr, "delete", table, "--rows", "4", "--seed", "1", "--start", "20")
		javaTool(t, addr, "delete", table, "--rows", "1", "--seed", "1", "--start", "1000") // missing key: empty batch
		javaTool(t, addr, "upsert", table, "--rows", "2", "--seed", "3", "--start", "100")
		want := splitLines(javaTool(t, addr, "scan", table))
		got := scanLines(t, c, fluss.NewTablePath(testDB, "java_pk"), "cluster-pk-changelog.bin")
		requireSameLines(t, table, want, got)
		kinds := map[string]bool{}
		for _, l := range got {
			kinds[l[strings.Index(l, `"change_type":"`)+15:][:2]] = true
		}
		for _, k := range []string{"+I", "-U", "+U", "-D"} {
			if !kinds[k] {
				t.Errorf("no %s row in the changelog", k)
			}
		}
	})
}

// TestIntegrationEncodeForJava: batches built by EncodeLogBatch (every type,
// each compression) are accepted by the server and read back identically by
// the Java client.
func TestIntegrationEncodeForJava(t *testing.T) {
	addr := flusstest.Require(t)
	useTestDB(t, addr)
	c := newClient(t, addr)
	for _, comp := range []records.Compression{records.CompressionNone, records.CompressionLZ4Frame, records.CompressionZSTD} {
		t.Run(comp.String(), func(t *testing.T) {
			name := "go_log_" + strings.ToLower(comp.String())
			javaTool(t, addr, "create-table", testDB+"."+name, "--all-types", "--compression", comp.String())
			ctx := testCtx(t)
			path := fluss.NewTablePath(testDB, name)
			info, err := c.Table(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			as, err := c.ArrowSchema(ctx, info, info.SchemaID)
			if err != nil {
				t.Fatal(err)
			}
			enc, err := jsonrow.NewSchemaEncoder(info.Schema)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			offset := 0
			for k, n := range []int{1, 30, 200} {
				rec := flussRecord(t, as, n, offset, uint64(k))
				batch, err := records.EncodeLogBatch(rec, records.LogBatchOptions{SchemaID: int16(info.SchemaID), Compression: comp})
				if err != nil {
					t.Fatal(err)
				}
				produce(t, c, info, batch)
				if err := enc.Bind(rec); err != nil {
					t.Fatal(err)
				}
				for i := 0; i < n; i++ {
					l := fmt.Appendf(nil, `{"partition":null,"bucket":0,"offset":%d,"change_type":"+A","row":`, offset+i)
					want = append(want, string(append(enc.AppendRow(l, i), '}')))
				}
				offset += n
				rec.Release()
			}
			got := splitLines(javaTool(t, addr, "scan", testDB+"."+name))
			requireSameLines(t, name, want, got)
			// And our own decoder reads them back the same way.
			requireSameLines(t, name+" (Go)", want, scanLines(t, c, path, ""))
		})
	}
}

// TestIntegrationPutKV: KV batches built by KVBatchBuilder upsert, update and
// delete rows of a primary-key table; the Java client sees the changelog.
func TestIntegrationPutKV(t *testing.T) {
	addr := flusstest.Require(t)
	useTestDB(t, addr)
	cols := "id BIGINT NOT NULL, c_boolean BOOLEAN, c_tinyint TINYINT, c_smallint SMALLINT, c_int INT, " +
		"c_float FLOAT, c_double DOUBLE, c_decimal_5_2 DECIMAL(5, 2), c_decimal_18_6 DECIMAL(18, 6), " +
		"c_decimal_38_18 DECIMAL(38, 18), c_char CHAR(8), c_string STRING, c_binary BINARY(4), c_bytes BYTES, " +
		"c_date DATE, c_time_0 TIME(0), c_time_3 TIME(3), c_time_9 TIME(9), c_ts_0 TIMESTAMP(0), c_ts_3 TIMESTAMP(3), " +
		"c_ts_6 TIMESTAMP(6), c_ts_9 TIMESTAMP(9), c_ltz_3 TIMESTAMP_LTZ(3), c_ltz_9 TIMESTAMP_LTZ(9), c_int_not_null INT NOT NULL"
	javaTool(t, addr, "create-table", testDB+".go_pk", "--columns", cols, "--primary-key", "id")
	c := newClient(t, addr)
	ctx := testCtx(t)
	info, err := c.Table(ctx, fluss.NewTablePath(testDB, "go_pk"))
	if err != nil {
		t.Fatal(err)
	}
	as, err := c.ArrowSchema(ctx, info, info.SchemaID)
	if err != nil {
		t.Fatal(err)
	}
	renc, err := records.NewRowEncoder(as, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	jenc, err := jsonrow.NewSchemaEncoder(info.Schema)
	if err != nil {
		t.Fatal(err)
	}
	line := func(off int, ct string, rec arrow.RecordBatch, i int) string {
		if err := jenc.Bind(rec); err != nil {
			t.Fatal(err)
		}
		l := fmt.Appendf(nil, `{"partition":null,"bucket":0,"offset":%d,"change_type":"%s","row":`, off, ct)
		return string(append(jenc.AppendRow(l, i), '}'))
	}
	first := flussRecord(t, as, 5, 0, 1) // ids 0..4
	defer first.Release()
	kb := records.NewKVBatchBuilder(int16(info.SchemaID), nil)
	var want []string
	for i := 0; i < 5; i++ {
		if err := kb.AppendRow(renc, first, i, false); err != nil {
			t.Fatal(err)
		}
		want = append(want, line(i, "+I", first, i))
	}
	putKV(t, c, info, kb.Build())

	second := flussRecord(t, as, 3, 1, 2) // ids 1..3 with new values
	defer second.Release()
	kb.Reset()
	if err := kb.AppendRow(renc, second, 0, false); err != nil { // update id 1
		t.Fatal(err)
	}
	if err := kb.AppendRow(renc, second, 1, true); err != nil { // delete id 2
		t.Fatal(err)
	}
	missing := flussRecord(t, as, 1, 999, 3)
	defer missing.Release()
	if err := kb.AppendRow(renc, missing, 0, true); err != nil { // delete of a missing key
		t.Fatal(err)
	}
	putKV(t, c, info, kb.Build())
	want = append(want, line(5, "-U", first, 1), line(6, "+U", second, 0), line(7, "-D", first, 2))

	got := splitLines(javaTool(t, addr, "scan", testDB+".go_pk"))
	requireSameLines(t, "go_pk", want, got)
}

func produce(t *testing.T, c *fluss.Client, info *fluss.TableInfo, batch []byte) {
	t.Helper()
	ctx := testCtx(t)
	conn, _, err := c.LeaderConn(ctx, info.Bucket(fluss.NoPartition, 0))
	if err != nil {
		t.Fatal(err)
	}
	var resp pb.ProduceLogResponse
	err = conn.Call(ctx, wire.ProduceLog, &pb.ProduceLogRequest{
		Acks: proto.Int32(-1), TableId: proto.Int64(info.TableID), TimeoutMs: proto.Int32(30000),
		BucketsReq: []*pb.PbProduceLogReqForBucket{{BucketId: proto.Int32(0), Records: batch}},
	}, &resp)
	if err != nil {
		t.Fatal(err)
	}
	br := resp.GetBucketsResp()[0]
	if err := errcode.New(br.GetErrorCode(), br.GetErrorMessage()); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

func putKV(t *testing.T, c *fluss.Client, info *fluss.TableInfo, batch []byte) {
	t.Helper()
	ctx := testCtx(t)
	conn, _, err := c.LeaderConn(ctx, info.Bucket(fluss.NoPartition, 0))
	if err != nil {
		t.Fatal(err)
	}
	var resp pb.PutKvResponse
	err = conn.Call(ctx, wire.PutKV, &pb.PutKvRequest{
		Acks: proto.Int32(-1), TableId: proto.Int64(info.TableID), TimeoutMs: proto.Int32(30000),
		BucketsReq: []*pb.PbPutKvReqForBucket{{BucketId: proto.Int32(0), Records: batch}},
	}, &resp)
	if err != nil {
		t.Fatal(err)
	}
	br := resp.GetBucketsResp()[0]
	if err := errcode.New(br.GetErrorCode(), br.GetErrorMessage()); err != nil {
		t.Fatalf("put kv: %v", err)
	}
}

// flussRecord builds n rows of Fluss-valid values for an Arrow schema derived
// from a Fluss schema (types.ArrowSchema); column 0 (id) is first+row.
func flussRecord(t *testing.T, s *arrow.Schema, n, first int, seed uint64) arrow.RecordBatch {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 3))
	b := array.NewRecordBuilder(memory.DefaultAllocator, s)
	defer b.Release()
	for row := 0; row < n; row++ {
		b.Field(0).(*array.Int64Builder).Append(int64(first + row))
		for i := 1; i < len(s.Fields()); i++ {
			f := s.Field(i)
			genValue(t, b.Field(i), f.Type, f.Nullable, r, 0)
		}
	}
	return b.NewRecordBatch()
}

func genValue(t *testing.T, b array.Builder, dt arrow.DataType, nullable bool, r *rand.Rand, depth int) {
	if nullable && r.IntN(6) == 0 {
		b.AppendNull()
		return
	}
	switch b := b.(type) {
	case *array.BooleanBuilder:
		b.Append(r.IntN(2) == 0)
	case *array.Int8Builder:
		b.Append(int8(r.IntN(256) - 128))
	case *array.Int16Builder:
		b.Append(int16(r.IntN(65536) - 32768))
	case *array.Int32Builder:
		b.Append(r.Int32() - 1<<30)
	case *array.Int64Builder:
		b.Append(r.Int64() - 1<<62)
	case *array.Float32Builder:
		b.Append(float32(r.NormFloat64() * 1000))
	case *array.Float64Builder:
		b.Append(r.NormFloat64() * 1e6)
	case *array.StringBuilder:
		b.Append([]string{"", "a", "héllo", "x\"y\\z", "tab\t", "日本", "12345678"}[r.IntN(7)])
	case *array.BinaryBuilder:
		v := make([]byte, r.IntN(6))
		for i := range v {
			v[i] = byte(r.IntN(256))
		}
		b.Append(v)
	case *array.FixedSizeBinaryBuilder:
		v := make([]byte, dt.(*arrow.FixedSizeBinaryType).ByteWidth)
		for i := range v {
			v[i] = byte(r.IntN(256))
		}
		b.Append(v)
	case *array.Decimal128Builder:
		p := dt.(*arrow.Decimal128Type).Precision
		lim := int64(1)
		for i := int32(0); i < min(p, 18); i++ {
			lim *= 10
		}
		v := decimal128.FromI64(r.Int64N(2*lim-1) - (lim - 1))
		if p > 18 && r.IntN(2) == 0 { // beyond 64 bits, within the precision
			mul := int64(1)
			for i := int32(0); i < min(p-18, 15); i++ {
				mul *= 10
			}
			v = v.Mul(decimal128.FromI64(mul))
		}
		b.Append(v)
	case *array.Date32Builder:
		b.Append(arrow.Date32(r.IntN(80000) - 20000))
	case *array.Time32Builder:
		ms := r.Int32N(86400000)
		if dt.(*arrow.Time32Type).Unit == arrow.Second {
			b.Append(arrow.Time32(ms / 1000))
		} else {
			b.Append(arrow.Time32(ms))
		}
	case *array.Time64Builder:
		ms := r.Int64N(86400000)
		if dt.(*arrow.Time64Type).Unit == arrow.Microsecond {
			b.Append(arrow.Time64(ms * 1000))
		} else {
			b.Append(arrow.Time64(ms * 1000000))
		}
	case *array.TimestampBuilder:
		// 1970..2096: the Java client (0.9.1) cannot read sub-millisecond
		// timestamps before 1970 (truncating division gives a negative
		// nano-of-millisecond, ArrowTimestamp*ColumnVector).
		sec := r.Int64N(4e9)
		var v int64
		switch dt.(*arrow.TimestampType).Unit {
		case arrow.Second:
			v = sec
		case arrow.Millisecond:
			v = sec*1000 + r.Int64N(1000)
		case arrow.Microsecond:
			v = sec*1000000 + r.Int64N(1000000)
		default:
			v = sec*1000000000 + r.Int64N(1000000000)
		}
		b.Append(arrow.Timestamp(v))
	case *array.ListBuilder:
		b.Append(true)
		ef := dt.(*arrow.ListType).ElemField()
		for k := r.IntN(4); k > 0; k-- {
			genValue(t, b.ValueBuilder(), ef.Type, ef.Nullable, r, depth+1)
		}
	case *array.MapBuilder:
		b.Append(true)
		mt := dt.(*arrow.MapType)
		n := r.IntN(3)
		for k := 0; k < n; k++ {
			switch kb := b.KeyBuilder().(type) {
			case *array.StringBuilder:
				kb.Append(fmt.Sprintf("k%d", k))
			case *array.Int32Builder:
				kb.Append(int32(k))
			case *array.BinaryBuilder:
				kb.Append([]byte{byte(k)})
			default:
				t.Fatalf("map key builder %T", kb)
			}
			genValue(t, b.ItemBuilder(), mt.ItemType(), mt.ItemField().Nullable, r, depth+1)
		}
	case *array.StructBuilder:
		b.Append(true)
		st := dt.(*arrow.StructType)
		for i, f := range st.Fields() {
			genValue(t, b.FieldBuilder(i), f.Type, f.Nullable, r, depth+1)
		}
	default:
		t.Fatalf("no generator for %T (%s)", b, dt)
	}
}
