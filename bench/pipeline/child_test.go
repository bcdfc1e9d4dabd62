package pipeline_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"strconv"
	"time"

	"github.com/OneOfOne/xxhash"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iggy/foreign/go/client"
	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/jsonrow"
	"github.com/fluss-iggy/fluss-iggy/internal/flussmeta"

	_ "github.com/fluss-iggy/fluss-iggy/output/iggy"
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
)

func newRowEncoder(info *fluss.TableInfo) (*jsonrow.Encoder, error) {
	return jsonrow.NewSchemaEncoder(info.Schema)
}

// poolMsg is one row of the table as the pipeline would hand it to the
// output: the mapped JSON payload and the fluss input's metadata.
type poolMsg struct {
	payload  []byte
	key      string // the row id, the message key of config/fluss_to_iggy.yaml
	bucket   int32
	offset   int64
	ts       int64
	schemaID int64
}

// pool holds the first poolRows rows of the table (spread over its buckets).
type pool struct {
	table   fluss.TablePath
	tableID int64
	msgs    []poolMsg
}

func buildPool(ctx context.Context) (*pool, error) {
	path, err := fluss.ParseTablePath(os.Getenv(envTable))
	if err != nil {
		return nil, err
	}
	c, err := fluss.NewClient(ctx, fluss.Bootstrap(os.Getenv("FLUSS_BOOTSTRAP")))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	info, err := c.RefreshTable(ctx, path)
	if err != nil {
		return nil, err
	}
	ranges, err := c.BucketRanges(ctx, info, "")
	if err != nil {
		return nil, err
	}
	for i := range ranges {
		ranges[i].End = min(ranges[i].End, ranges[i].Start+poolRows/int64(len(ranges)))
	}
	enc, err := newRowEncoder(info)
	if err != nil {
		return nil, err
	}
	s, err := c.NewScanner(info)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	p := &pool{table: path, tableID: info.TableID}
	extra := mappingExtra(path)
	err = s.ReadRanges(ctx, ranges, func(sb *fluss.ScanBatch) error {
		if err := enc.Bind(sb.Record); err != nil {
			return err
		}
		ids, ok := sb.Record.Column(0).(*array.Int64)
		if !ok {
			return fmt.Errorf("column 0 is %s, want the BIGINT id", sb.Record.Column(0).DataType())
		}
		for i := 0; i < sb.NumRows(); i++ {
			row := enc.AppendRow(nil, i)
			payload := append(append(row[:len(row)-1:len(row)-1], extra...), '}')
			p.msgs = append(p.msgs, poolMsg{payload: payload, key: strconv.FormatInt(ids.Value(i), 10), bucket: sb.Bucket.Bucket, offset: sb.Offset(i),
				ts: sb.CommitTimestamp, schemaID: int64(sb.SchemaID)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(p.msgs) == 0 {
		return nil, errors.New("the table is empty")
	}
	return p, nil
}

// child runs one stage in this process (for its own peak RSS) and prints
// a result line.
func child(mode string) int {
	log.SetOutput(io.Discard)
	ctx := context.Background()
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "pipeline bench child %s: %v\n", mode, err)
		return 1
	}
	p, err := buildPool(ctx)
	if err != nil {
		return fail(err)
	}
	n, _ := strconv.ParseInt(os.Getenv(envRows), 10, 64)
	var secs float64
	switch mode {
	case "output":
		secs, err = p.outputAlone(ctx, n)
	case "sdk":
		secs, err = p.rawSDK(n)
	default:
		err = fmt.Errorf("unknown mode %q", mode)
	}
	if err != nil {
		return fail(err)
	}
	out, _ := json.Marshal(result{Rows: n, Seconds: secs})
	fmt.Println(string(out))
	return 0
}

// poolInput is a batch input that hands out the pool's rows, cycling,
// max_batch_rows (1,024) at a time, with the fluss input's metadata.
type poolInput struct {
	p         *pool
	total     int64
	next      int64
	batchSize int
}

func (in *poolInput) Connect(context.Context) error { return nil }

func (in *poolInput) ReadBatch(context.Context) (service.MessageBatch, service.AckFunc, error) {
	if in.next >= in.total {
		return nil, nil, service.ErrEndOfInput
	}
	n := min(int64(in.batchSize), in.total-in.next)
	batch := make(service.MessageBatch, n)
	for i := range batch {
		seq := in.next + int64(i)
		pm := &in.p.msgs[seq%int64(len(in.p.msgs))]
		m := service.NewMessage(pm.payload)
		m.MetaSetMut("fluss_database", in.p.table.Database)
		m.MetaSetMut("fluss_table", in.p.table.Table)
		m.MetaSetMut("fluss_table_id", in.p.tableID)
		m.MetaSetMut("fluss_bucket", int64(pm.bucket))
		m.MetaSetMut("fluss_offset", seq) // unique, as offsets are
		m.MetaSetMut("fluss_message_id", flussmeta.FormatMessageID(in.p.tableID, -1, pm.bucket, seq))
		m.MetaSetMut("fluss_timestamp", pm.ts)
		m.MetaSetMut("fluss_schema_id", pm.schemaID)
		m.MetaSetMut("iggy_key", pm.key) // the row id, the key (see outputConfig)
		batch[i] = m
	}
	in.next += n
	return batch, func(context.Context, error) error { return nil }, nil
}

func (in *poolInput) Close(context.Context) error { return nil }

// outputConfig is the output of config/fluss_to_iggy.yaml (key = row id).
// The shipped config reads the key from the structured row (`${! this.id }`);
// these messages hold JSON bytes, which that would parse, so the row id comes
// as metadata, read by the output's same kind of shortcut.
func outputConfig(addr, stream string) string {
	return fmt.Sprintf(`iggy:
  address: %s
  username: iggy
  password: iggy
  stream: %s
  topic: ${! @fluss_table }
  create_stream: true
  create_topic: true
  partitions: 4
  partitioning: messages_key
  key: ${! @iggy_key }
  message_id: '${! @fluss_message_id }'
  headers:
    include_prefixes: [ fluss_ ]
  max_in_flight: 4
`, addr, stream)
}

func (p *pool) outputAlone(ctx context.Context, n int64) (float64, error) {
	in := &poolInput{p: p, total: n, batchSize: 1024}
	err := service.RegisterBatchInput("bench_pool", service.NewConfigSpec(),
		func(*service.ParsedConfig, *service.Resources) (service.BatchInput, error) { return in, nil })
	if err != nil {
		return 0, err
	}
	sb := service.NewStreamBuilder()
	if err := sb.SetLoggerYAML("level: warn"); err != nil {
		return 0, err
	}
	if err := sb.AddInputYAML("bench_pool: {}"); err != nil {
		return 0, err
	}
	if err := sb.AddOutputYAML(outputConfig(os.Getenv("IGGY_TCP_ADDRESS"), os.Getenv("IGGY_STREAM"))); err != nil {
		return 0, err
	}
	s, err := sb.Build()
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if err := s.Run(ctx); err != nil {
		return 0, err
	}
	return time.Since(start).Seconds(), nil
}

// headers builds the user headers the output sends for a pool row: the
// fluss_ metadata in key order, strings as strings, integers as int64.
func (p *pool) headers(pm *poolMsg, offset int64) []iggcon.HeaderEntry {
	str := func(k, v string) iggcon.HeaderEntry {
		key, _ := iggcon.NewHeaderKeyString(k)
		return iggcon.HeaderEntry{Key: key, Value: iggcon.HeaderValue{Kind: iggcon.String, Value: []byte(v)}}
	}
	i64 := func(k string, v int64) iggcon.HeaderEntry {
		key, _ := iggcon.NewHeaderKeyString(k)
		b := make([]byte, 8)
		binary.LittleEndian.PutUint64(b, uint64(v))
		return iggcon.HeaderEntry{Key: key, Value: iggcon.HeaderValue{Kind: iggcon.Int64, Value: b}}
	}
	return []iggcon.HeaderEntry{
		i64("fluss_bucket", int64(pm.bucket)),
		str("fluss_database", p.table.Database),
		str("fluss_message_id", flussmeta.FormatMessageID(p.tableID, -1, pm.bucket, offset)),
		i64("fluss_offset", offset),
		i64("fluss_schema_id", pm.schemaID),
		str("fluss_table", p.table.Table),
		i64("fluss_table_id", p.tableID),
		i64("fluss_timestamp", pm.ts),
	}
}

// rawSDK sends n messages built from the pool with the SDK: grouped by the
// partition Iggy's messages_key rule gives their row-id key, 1,000 messages
// per request to that partition, as the output groups them, on one
// connection. The messages are built before the clock starts.
func (p *pool) rawSDK(n int64) (float64, error) {
	cl, err := client.NewIggyClient(client.WithTcp(tcp.WithServerAddress(os.Getenv("IGGY_TCP_ADDRESS"))))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	if _, err := cl.LoginUser("iggy", "iggy"); err != nil {
		return 0, err
	}
	stream := os.Getenv("IGGY_STREAM")
	if _, err := cl.CreateStream(stream); err != nil {
		return 0, err
	}
	sid, _ := iggcon.NewIdentifier(stream)
	tid, _ := iggcon.NewIdentifier(p.table.Table)
	if _, err := cl.CreateTopic(sid, p.table.Table, 4, iggcon.CompressionAlgorithmNone, iggcon.IggyExpiryServerDefault, 0, nil); err != nil {
		return 0, err
	}
	byPartition := map[uint32][]iggcon.IggyMessage{}
	for i := range p.msgs {
		pm := &p.msgs[i]
		var id [16]byte
		binary.LittleEndian.PutUint64(id[0:8], uint64(pm.bucket)<<48|uint64(pm.offset))
		binary.LittleEndian.PutUint64(id[8:16], uint64(p.tableID)<<32)
		m, err := iggcon.NewIggyMessage(pm.payload, iggcon.WithID(id), iggcon.WithUserHeaders(p.headers(pm, pm.offset)))
		if err != nil {
			return 0, err
		}
		part := xxhash.ChecksumString32(pm.key) % 4
		byPartition[part] = append(byPartition[part], m)
	}
	type lane struct {
		key  iggcon.Partitioning
		msgs []iggcon.IggyMessage
		pos  int
	}
	var lanes []*lane
	for part, msgs := range byPartition {
		lanes = append(lanes, &lane{key: iggcon.PartitionId(part), msgs: msgs})
	}
	const perRequest = 1000
	start := time.Now()
	for sent, li := int64(0), 0; sent < n; li++ {
		l := lanes[li%len(lanes)]
		k := int(min(perRequest, n-sent))
		if l.pos+k > len(l.msgs) {
			l.pos = 0
		}
		k = min(k, len(l.msgs))
		if err := cl.SendMessages(sid, tid, l.key, l.msgs[l.pos:l.pos+k]); err != nil {
			return 0, fmt.Errorf("after %d messages: %w", sent, err)
		}
		l.pos += k
		sent += int64(k)
	}
	return time.Since(start).Seconds(), nil
}
