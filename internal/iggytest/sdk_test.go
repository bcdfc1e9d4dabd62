package iggytest_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"log"
	"math"
	"os"
	"testing"
	"time"

	"github.com/apache/iggy/foreign/go/client"
	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"
	ierror "github.com/apache/iggy/foreign/go/errors"

	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
)

func TestMain(m *testing.M) {
	// The SDK logs every login through the standard logger.
	log.SetOutput(io.Discard)
	os.Exit(m.Run())
}

func startServer(t *testing.T, opts iggytest.Options) *iggytest.Server {
	t.Helper()
	srv, err := iggytest.Start(opts)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return srv
}

// connect opens an SDK client (unchanged SDK) without logging in.
func connect(t *testing.T, addr string) iggcon.Client {
	t.Helper()
	cli, err := client.NewIggyClient(client.WithTcp(tcp.WithServerAddress(addr)))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

func login(t *testing.T, addr string) iggcon.Client {
	t.Helper()
	cli := connect(t, addr)
	id, err := cli.LoginUser(iggytest.DefaultUsername, iggytest.DefaultPassword)
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	if id.UserId != 0 {
		t.Fatalf("root user id = %d, want 0", id.UserId)
	}
	return cli
}

func id[T uint32 | string](t *testing.T, v T) iggcon.Identifier {
	t.Helper()
	i, err := iggcon.NewIdentifier(v)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

func mustIs(t *testing.T, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("error = %v (%T), want %v", err, err, want)
	}
}

func setupTopic(t *testing.T, cli iggcon.Client, stream, topic string, partitions uint32) {
	t.Helper()
	if _, err := cli.CreateStream(stream); err != nil {
		t.Fatalf("create stream: %v", err)
	}
	if _, err := cli.CreateTopic(id(t, stream), topic, partitions, iggcon.CompressionAlgorithmNone,
		iggcon.IggyExpiryNeverExpire, 0, nil); err != nil {
		t.Fatalf("create topic: %v", err)
	}
}

func msg(t *testing.T, payload string, opts ...iggcon.IggyMessageOpt) iggcon.IggyMessage {
	t.Helper()
	m, err := iggcon.NewIggyMessage([]byte(payload), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLoginPingClusterMetadata(t *testing.T) {
	srv := startServer(t, iggytest.Options{})
	cli := connect(t, srv.Addr())

	if err := cli.Ping(); err != nil {
		t.Fatalf("ping before login: %v", err)
	}
	_, err := cli.GetStreams()
	mustIs(t, err, ierror.ErrUnauthenticated)
	_, err = cli.LoginUser("iggy", "wrong")
	mustIs(t, err, ierror.ErrInvalidCredentials)
	_, err = cli.LoginUser("nobody", "secret")
	mustIs(t, err, ierror.ErrInvalidCredentials)

	if _, err := cli.LoginUser(iggytest.DefaultUsername, iggytest.DefaultPassword); err != nil {
		t.Fatalf("login: %v", err)
	}
	md, err := cli.GetClusterMetadata()
	if err != nil {
		t.Fatalf("cluster metadata: %v", err)
	}
	if md.Name != "single-node" || len(md.Nodes) != 1 || md.Nodes[0].Role != iggcon.RoleLeader ||
		md.Nodes[0].Status != iggcon.Healthy || md.Nodes[0].IP != "127.0.0.1" {
		t.Fatalf("cluster metadata = %+v", md)
	}
	clients, err := cli.GetClients()
	if err != nil || len(clients) != 1 || clients[0].UserID != 0 || clients[0].Transport != string(iggcon.Tcp) {
		t.Fatalf("clients = %+v, %v", clients, err)
	}
	streams, err := cli.GetStreams()
	if err != nil || len(streams) != 0 {
		t.Fatalf("streams = %v, %v", streams, err)
	}
	if err := cli.LogoutUser(); err != nil {
		t.Fatalf("logout: %v", err)
	}
	_, err = cli.GetStreams()
	mustIs(t, err, ierror.ErrUnauthenticated)
	if got := srv.RequestCount(iggytest.CmdLoginUser); got != 3 {
		t.Fatalf("login requests = %d, want 3", got)
	}
}

func TestUsersAndTokens(t *testing.T) {
	srv := startServer(t, iggytest.Options{
		Users: []iggytest.User{{Username: "root", Password: "secret"}, {Username: "app", Password: "apppass"}, {Username: "off", Password: "offpass", Inactive: true}},
		Tokens: []iggytest.Token{
			{Username: "app", Name: "ci-token", Token: "tok-app-123"},
			{Username: "app", Name: "old", Token: "tok-expired", ExpiresAt: time.Now().Add(-time.Minute)},
		},
	})
	cli := connect(t, srv.Addr())
	_, err := cli.LoginUser("off", "offpass")
	mustIs(t, err, ierror.ErrUserInactive)
	_, err = cli.LoginWithPersonalAccessToken("no-such-token")
	mustIs(t, err, ierror.ErrResourceNotFound)
	_, err = cli.LoginWithPersonalAccessToken("tok-expired")
	mustIs(t, err, ierror.ErrPersonalAccessTokenExpired)

	ident, err := cli.LoginWithPersonalAccessToken("tok-app-123")
	if err != nil || ident.UserId != 1 {
		t.Fatalf("token login = %+v, %v", ident, err)
	}
	if _, err := cli.CreateStream("by-token"); err != nil {
		t.Fatalf("create stream after token login: %v", err)
	}

	// A token created through the protocol works on a new connection.
	raw, err := cli.CreatePersonalAccessToken("made-here", 0)
	if err != nil || raw.Token == "" {
		t.Fatalf("create token = %+v, %v", raw, err)
	}
	_, err = cli.CreatePersonalAccessToken("made-here", 0)
	mustIs(t, err, ierror.ErrPersonalAccessTokenAlreadyExists)
	tokens, err := cli.GetPersonalAccessTokens()
	if err != nil || len(tokens) != 3 {
		t.Fatalf("tokens = %+v, %v", tokens, err)
	}
	cli2 := connect(t, srv.Addr())
	if ident, err := cli2.LoginWithPersonalAccessToken(raw.Token); err != nil || ident.UserId != 1 {
		t.Fatalf("login with created token = %+v, %v", ident, err)
	}
	if err := cli.DeletePersonalAccessToken("made-here"); err != nil {
		t.Fatalf("delete token: %v", err)
	}
	cli3 := connect(t, srv.Addr())
	_, err = cli3.LoginWithPersonalAccessToken(raw.Token)
	mustIs(t, err, ierror.ErrResourceNotFound)
	if id, err := cli3.LoginUser("root", "secret"); err != nil || id.UserId != 0 {
		t.Fatalf("login root = %+v, %v", id, err)
	}
}

func TestStreamsAndTopics(t *testing.T) {
	srv := startServer(t, iggytest.Options{})
	cli := login(t, srv.Addr())

	s0, err := cli.CreateStream("alpha")
	if err != nil || s0.Id != 0 || s0.Name != "alpha" || s0.CreatedAt == 0 {
		t.Fatalf("create alpha = %+v, %v", s0, err)
	}
	s1, err := cli.CreateStream("beta")
	if err != nil || s1.Id != 1 {
		t.Fatalf("create beta = %+v, %v", s1, err)
	}
	_, err = cli.CreateStream("alpha")
	mustIs(t, err, ierror.ErrStreamNameAlreadyExists)

	for _, sid := range []iggcon.Identifier{id(t, "beta"), id(t, uint32(1))} {
		got, err := cli.GetStream(sid)
		if err != nil || got.Id != 1 || got.Name != "beta" {
			t.Fatalf("get stream = %+v, %v", got, err)
		}
	}
	_, err = cli.GetStream(id(t, "gamma"))
	mustIs(t, err, ierror.ErrStreamIdNotFound)
	_, err = cli.GetStream(id(t, uint32(7)))
	mustIs(t, err, ierror.ErrStreamIdNotFound)

	// Topics: compression must be 1 or 2 (the SDK sample's 0 is rejected).
	_, err = cli.CreateTopic(id(t, "alpha"), "t", 1, 0, iggcon.IggyExpiryServerDefault, 0, nil)
	mustIs(t, err, ierror.ErrInvalidCommand)
	_, err = cli.CreateTopic(id(t, "gamma"), "t", 1, iggcon.CompressionAlgorithmNone, iggcon.IggyExpiryServerDefault, 0, nil)
	mustIs(t, err, ierror.ErrStreamIdNotFound)
	_, err = cli.CreateTopic(id(t, "alpha"), "t", 1, iggcon.CompressionAlgorithmNone, iggcon.IggyExpiryServerDefault, 1000, nil)
	mustIs(t, err, ierror.ErrInvalidTopicSize)

	td, err := cli.CreateTopic(id(t, "alpha"), "orders", 3, iggcon.CompressionAlgorithmNone,
		iggcon.Duration(time.Hour.Microseconds()), 2<<30, nil)
	if err != nil {
		t.Fatalf("create topic: %v", err)
	}
	if td.Id != 0 || td.Name != "orders" || td.PartitionsCount != 3 || len(td.Partitions) != 3 ||
		td.Partitions[2].Id != 2 || td.MessageExpiry != iggcon.Duration(time.Hour.Microseconds()) ||
		td.MaxTopicSize != 2<<30 || td.ReplicationFactor != 1 || td.CompressionAlgorithm != 1 {
		t.Fatalf("topic = %+v", td)
	}
	_, err = cli.CreateTopic(id(t, uint32(0)), "orders", 1, iggcon.CompressionAlgorithmNone, iggcon.IggyExpiryServerDefault, 0, nil)
	mustIs(t, err, ierror.ErrTopicNameAlreadyExists)
	td2, err := cli.CreateTopic(id(t, uint32(0)), "defaults", 0, iggcon.CompressionAlgorithmGzip, iggcon.IggyExpiryServerDefault, 0, nil)
	if err != nil || td2.Id != 1 || td2.PartitionsCount != 0 || td2.MessageExpiry != iggcon.IggyExpiryNeverExpire ||
		td2.MaxTopicSize != math.MaxUint64 {
		t.Fatalf("defaults topic = %+v, %v", td2, err)
	}
	info, ok := srv.Topic("alpha", "defaults")
	if !ok || info.Compression != 2 || info.MaxTopicSize != math.MaxUint64 {
		t.Fatalf("server topic info = %+v", info)
	}

	for _, tid := range []iggcon.Identifier{id(t, "orders"), id(t, uint32(0))} {
		got, err := cli.GetTopic(id(t, "alpha"), tid)
		if err != nil || got.Name != "orders" || len(got.Partitions) != 3 {
			t.Fatalf("get topic = %+v, %v", got, err)
		}
	}
	_, err = cli.GetTopic(id(t, "alpha"), id(t, "nope"))
	mustIs(t, err, ierror.ErrTopicIdNotFound)
	_, err = cli.GetTopic(id(t, "nope"), id(t, "orders"))
	mustIs(t, err, ierror.ErrTopicIdNotFound)
	topics, err := cli.GetTopics(id(t, "alpha"))
	if err != nil || len(topics) != 2 || topics[1].Name != "defaults" {
		t.Fatalf("topics = %+v, %v", topics, err)
	}
	sd, err := cli.GetStream(id(t, "alpha"))
	if err != nil || sd.TopicsCount != 2 || len(sd.Topics) != 2 {
		t.Fatalf("stream details = %+v, %v", sd, err)
	}

	// Partitions.
	if err := cli.CreatePartitions(id(t, "alpha"), id(t, "orders"), 2); err != nil {
		t.Fatalf("create partitions: %v", err)
	}
	if err := cli.DeletePartitions(id(t, "alpha"), id(t, "orders"), 1); err != nil {
		t.Fatalf("delete partitions: %v", err)
	}
	if info, _ := srv.Topic("alpha", "orders"); info.Partitions != 4 {
		t.Fatalf("partitions = %d, want 4", info.Partitions)
	}
	err = cli.CreatePartitions(id(t, "alpha"), id(t, "orders"), 1001)
	mustIs(t, err, ierror.ErrTooManyPartitions)

	// Deleting frees the ID; the server's slab hands the newest free one out first.
	if err := cli.DeleteTopic(id(t, "alpha"), id(t, "orders")); err != nil {
		t.Fatalf("delete topic: %v", err)
	}
	err = cli.DeleteTopic(id(t, "alpha"), id(t, "orders"))
	mustIs(t, err, ierror.ErrTopicIdNotFound)
	if td, err := cli.CreateTopic(id(t, "alpha"), "again", 1, iggcon.CompressionAlgorithmNone, 0, 0, nil); err != nil || td.Id != 0 {
		t.Fatalf("recreated topic = %+v, %v", td, err)
	}
	if err := cli.UpdateStream(id(t, "beta"), "beta2"); err != nil {
		t.Fatalf("update stream: %v", err)
	}
	err = cli.UpdateStream(id(t, "beta2"), "alpha")
	mustIs(t, err, ierror.ErrStreamNameAlreadyExists)
	if err := cli.DeleteStream(id(t, "alpha")); err != nil {
		t.Fatalf("delete stream: %v", err)
	}
	err = cli.DeleteStream(id(t, "alpha"))
	mustIs(t, err, ierror.ErrStreamIdNotFound)
	streams, err := cli.GetStreams()
	if err != nil || len(streams) != 1 || streams[0].Name != "beta2" || streams[0].Id != 1 {
		t.Fatalf("streams = %+v, %v", streams, err)
	}
	if s, err := cli.CreateStream("new"); err != nil || s.Id != 0 {
		t.Fatalf("new stream = %+v, %v", s, err)
	}
}

func TestSendAndPollEachPartitioning(t *testing.T) {
	srv := startServer(t, iggytest.Options{})
	cli := login(t, srv.Addr())
	setupTopic(t, cli, "s", "t", 3)
	sid, tid := id(t, "s"), id(t, "t")

	// Balanced: round robin over the partitions, starting at 0.
	for i := 0; i < 4; i++ {
		if err := cli.SendMessages(sid, tid, iggcon.None(), []iggcon.IggyMessage{msg(t, "b")}); err != nil {
			t.Fatalf("send balanced: %v", err)
		}
	}
	// Partition ID.
	if err := cli.SendMessages(sid, tid, iggcon.PartitionId(2), []iggcon.IggyMessage{msg(t, "p2a"), msg(t, "p2b")}); err != nil {
		t.Fatalf("send partition id: %v", err)
	}
	err := cli.SendMessages(sid, tid, iggcon.PartitionId(3), []iggcon.IggyMessage{msg(t, "x")})
	mustIs(t, err, ierror.ErrPartitionNotFound)
	// Messages key.
	keys := []string{"user-1", "user-2", "order-42", "k"}
	for _, k := range keys {
		p, err := iggcon.EntityIdString(k)
		if err != nil {
			t.Fatal(err)
		}
		if err := cli.SendMessages(sid, tid, p, []iggcon.IggyMessage{msg(t, "key:"+k)}); err != nil {
			t.Fatalf("send key: %v", err)
		}
	}
	err = cli.SendMessages(id(t, "nope"), tid, iggcon.None(), []iggcon.IggyMessage{msg(t, "x")})
	mustIs(t, err, ierror.ErrStreamIdNotFound)
	err = cli.SendMessages(sid, id(t, "nope"), iggcon.None(), []iggcon.IggyMessage{msg(t, "x")})
	mustIs(t, err, ierror.ErrTopicIdNotFound)

	want := map[uint32][]string{0: {"b", "b"}, 1: {"b"}, 2: {"b", "p2a", "p2b"}}
	for _, k := range keys {
		p := iggytest.PartitionForKey([]byte(k), 3)
		want[p] = append(want[p], "key:"+k)
	}
	for p := uint32(0); p < 3; p++ {
		got := srv.PartitionMessages("s", "t", p)
		var payloads []string
		for i, m := range got {
			payloads = append(payloads, string(m.Payload))
			if m.Offset != uint64(i) || m.PartitionID != p {
				t.Fatalf("partition %d message %d: offset %d partition %d", p, i, m.Offset, m.PartitionID)
			}
			if m.Checksum != iggytest.Checksum(m.Raw) || m.Timestamp == 0 || m.OriginTimestamp == 0 {
				t.Fatalf("partition %d message %d: checksum %x (want %x), timestamp %d", p, i, m.Checksum, iggytest.Checksum(m.Raw), m.Timestamp)
			}
		}
		if !equalStrings(payloads, want[p]) {
			t.Fatalf("partition %d payloads = %q, want %q", p, payloads, want[p])
		}

		// The SDK polls back the same messages.
		polled, err := cli.PollMessages(sid, tid, iggcon.DefaultConsumer(), iggcon.OffsetPollingStrategy(0), 100, false, &p)
		if err != nil {
			t.Fatalf("poll partition %d: %v", p, err)
		}
		if polled.PartitionId != p || int(polled.MessageCount) != len(got) || len(polled.Messages) != len(got) ||
			polled.CurrentOffset != uint64(len(got)-1) {
			t.Fatalf("poll partition %d = %+v", p, polled)
		}
		for i, m := range polled.Messages {
			if !bytes.Equal(m.Payload, got[i].Payload) || m.Header.Offset != got[i].Offset ||
				m.Header.Id != iggcon.MessageID(got[i].ID) || m.Header.Checksum != got[i].Checksum ||
				m.Header.Timestamp != got[i].Timestamp {
				t.Fatalf("partition %d polled message %d = %+v, stored %+v", p, i, m.Header, got[i])
			}
		}
	}
	if n := srv.MessageCount("s", "t"); n != 10 {
		t.Fatalf("message count = %d", n)
	}
	if sd, err := cli.GetStream(sid); err != nil || sd.MessagesCount != 10 || sd.Topics[0].MessagesCount != 10 {
		t.Fatalf("stream stats = %+v, %v", sd, err)
	}
}

func TestKeyPartitionMatchesXXHash32(t *testing.T) {
	// xxHash32 reference values (seed 0) from the xxHash specification's test vectors.
	for _, c := range []struct {
		in   string
		hash uint32
	}{{"", 0x02CC5D05}, {"a", 0x550D7456}, {"abc", 0x32D153FF}} {
		// With 2^32-1 partitions the partition is the hash itself (all vectors are below that).
		if got := iggytest.PartitionForKey([]byte(c.in), math.MaxUint32); got != c.hash {
			t.Fatalf("xxhash32(%q) = %#x, want %#x", c.in, got, c.hash)
		}
		if got := iggytest.PartitionForKey([]byte(c.in), 7); got != c.hash%7 {
			t.Fatalf("partition of %q over 7 = %d, want %d", c.in, got, c.hash%7)
		}
	}
	// XXH3-64 of the empty input, the server's checksum function.
	if got := iggytest.Checksum(make([]byte, 8)); got != 0x2D06800538D394C2 {
		t.Fatalf("xxh3(empty) = %x", got)
	}
}

func TestIDsAndHeadersRoundTrip(t *testing.T) {
	srv := startServer(t, iggytest.Options{})
	cli := login(t, srv.Addr())
	setupTopic(t, cli, "s", "t", 1)
	sid, tid := id(t, "s"), id(t, "t")

	key := func(s string) iggcon.HeaderKey {
		k, err := iggcon.NewHeaderKeyString(s)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	u64 := make([]byte, 8)
	binary.LittleEndian.PutUint64(u64, 1234567890123)
	f64 := make([]byte, 8)
	binary.LittleEndian.PutUint64(f64, math.Float64bits(2.5))
	i32 := make([]byte, 4)
	binary.LittleEndian.PutUint32(i32, uint32(0xFFFFFFFF)) // -1
	headers := []iggcon.HeaderEntry{
		{Key: key("fluss_table"), Value: iggcon.HeaderValue{Kind: iggcon.String, Value: []byte("db.orders")}},
		{Key: key("fluss_offset"), Value: iggcon.HeaderValue{Kind: iggcon.Uint64, Value: u64}},
		{Key: key("is_delete"), Value: iggcon.HeaderValue{Kind: iggcon.Bool, Value: []byte{1}}},
		{Key: key("ratio"), Value: iggcon.HeaderValue{Kind: iggcon.Double, Value: f64}},
		{Key: iggcon.NewHeaderKeyInt32(7), Value: iggcon.HeaderValue{Kind: iggcon.Int32, Value: i32}},
		{Key: key("blob"), Value: iggcon.HeaderValue{Kind: iggcon.Raw, Value: []byte{0, 1, 2}}},
	}
	var msgID [16]byte
	for i := range msgID {
		msgID[i] = byte(i + 1)
	}
	withID := msg(t, "with id", iggcon.WithID(msgID), iggcon.WithUserHeaders(headers))
	noID := msg(t, "server id")
	if err := cli.SendMessages(sid, tid, iggcon.PartitionId(0), []iggcon.IggyMessage{withID, noID}); err != nil {
		t.Fatalf("send: %v", err)
	}

	stored := srv.Messages("s", "t")
	if len(stored) != 2 {
		t.Fatalf("stored %d messages", len(stored))
	}
	if stored[0].ID != msgID || stored[0].OriginTimestamp != withID.Header.OriginTimestamp {
		t.Fatalf("stored id/origin = %x/%d", stored[0].ID, stored[0].OriginTimestamp)
	}
	if stored[1].ID == ([16]byte{}) || stored[1].ID[6]>>4 != 4 || stored[1].ID[8]>>6 != 2 {
		t.Fatalf("server-assigned id %x is not a UUID v4", stored[1].ID)
	}
	if stored[0].HeadersErr != nil || len(stored[0].Headers) != len(headers) {
		t.Fatalf("stored headers = %+v, %v", stored[0].Headers, stored[0].HeadersErr)
	}
	hm := stored[0].HeaderMap()
	if v := hm["fluss_table"]; v.Kind != iggytest.HeaderString || string(v.Value) != "db.orders" {
		t.Fatalf("fluss_table = %+v", v)
	}
	if v := hm["fluss_offset"]; v.Kind != iggytest.HeaderUint64 || binary.LittleEndian.Uint64(v.Value) != 1234567890123 {
		t.Fatalf("fluss_offset = %+v", v)
	}
	if h := stored[0].Headers[4]; h.Key.Kind != iggytest.HeaderInt32 || h.Value.Kind != iggytest.HeaderInt32 {
		t.Fatalf("int32 header = %+v", h)
	}

	polled, err := cli.PollMessages(sid, tid, iggcon.DefaultConsumer(), iggcon.FirstPollingStrategy(), 10, false, nil)
	if err != nil || len(polled.Messages) != 2 {
		t.Fatalf("poll = %+v, %v", polled, err)
	}
	got, err := iggcon.DeserializeHeaders(polled.Messages[0].UserHeaders)
	if err != nil {
		t.Fatalf("deserialize headers: %v", err)
	}
	if len(got) != len(headers) {
		t.Fatalf("headers = %+v", got)
	}
	for i := range headers {
		if got[i].Key.Kind != headers[i].Key.Kind || !bytes.Equal(got[i].Key.Value, headers[i].Key.Value) ||
			got[i].Value.Kind != headers[i].Value.Kind || !bytes.Equal(got[i].Value.Value, headers[i].Value.Value) {
			t.Fatalf("header %d = %+v, want %+v", i, got[i], headers[i])
		}
	}
	if polled.Messages[0].Header.Id != iggcon.MessageID(msgID) || string(polled.Messages[0].Payload) != "with id" ||
		polled.Messages[1].Header.Id != iggcon.MessageID(stored[1].ID) || len(polled.Messages[1].UserHeaders) != 0 {
		t.Fatalf("polled = %+v", polled.Messages)
	}
}

func TestPollStrategiesAndConsumerOffsets(t *testing.T) {
	srv := startServer(t, iggytest.Options{})
	cli := login(t, srv.Addr())
	setupTopic(t, cli, "s", "t", 2)
	sid, tid := id(t, "s"), id(t, "t")
	var p0 uint32
	var p1 uint32 = 1

	// Empty partition.
	polled, err := cli.PollMessages(sid, tid, iggcon.DefaultConsumer(), iggcon.NextPollingStrategy(), 10, true, &p0)
	if err != nil || len(polled.Messages) != 0 || polled.CurrentOffset != 0 {
		t.Fatalf("empty poll = %+v, %v", polled, err)
	}
	err = cli.StoreConsumerOffset(iggcon.DefaultConsumer(), sid, tid, 0, &p0)
	mustIs(t, err, ierror.ErrInvalidOffset)

	batch := make([]iggcon.IggyMessage, 10)
	for i := range batch {
		batch[i] = msg(t, string(rune('a'+i)))
	}
	if err := cli.SendMessages(sid, tid, iggcon.PartitionId(0), batch); err != nil {
		t.Fatal(err)
	}
	payloads := func(pm *iggcon.PolledMessage) string {
		var b []byte
		for _, m := range pm.Messages {
			b = append(b, m.Payload...)
		}
		return string(b)
	}
	poll := func(c iggcon.Consumer, s iggcon.PollingStrategy, n uint32, auto bool, p *uint32) string {
		t.Helper()
		pm, err := cli.PollMessages(sid, tid, c, s, n, auto, p)
		if err != nil {
			t.Fatalf("poll %+v: %v", s, err)
		}
		if pm.CurrentOffset != 9 && (p == nil || *p == 0) {
			t.Fatalf("current offset = %d", pm.CurrentOffset)
		}
		return payloads(pm)
	}
	def := iggcon.DefaultConsumer()
	if got := poll(def, iggcon.OffsetPollingStrategy(3), 4, false, &p0); got != "defg" {
		t.Fatalf("offset poll = %q", got)
	}
	if got := poll(def, iggcon.OffsetPollingStrategy(10), 4, false, &p0); got != "" {
		t.Fatalf("poll past end = %q", got)
	}
	if got := poll(def, iggcon.FirstPollingStrategy(), 3, false, nil); got != "abc" {
		t.Fatalf("first poll = %q", got)
	}
	if got := poll(def, iggcon.LastPollingStrategy(), 3, false, &p0); got != "hij" {
		t.Fatalf("last poll = %q", got)
	}
	if got := poll(def, iggcon.LastPollingStrategy(), 30, false, &p0); got != "abcdefghij" {
		t.Fatalf("last poll (all) = %q", got)
	}
	if got := poll(def, iggcon.TimestampPollingStrategy(0), 2, false, &p0); got != "ab" {
		t.Fatalf("timestamp poll = %q", got)
	}
	if got := poll(def, iggcon.OffsetPollingStrategy(0), 0, false, &p0); got != "" {
		t.Fatalf("count 0 poll = %q", got)
	}

	// Next with auto-commit by a named consumer; offsets per consumer.
	named := iggcon.NewSingleConsumer(id(t, "reader"))
	if got := poll(named, iggcon.NextPollingStrategy(), 4, true, &p0); got != "abcd" {
		t.Fatalf("next #1 = %q", got)
	}
	if got := poll(named, iggcon.NextPollingStrategy(), 4, true, &p0); got != "efgh" {
		t.Fatalf("next #2 = %q", got)
	}
	if o, ok := srv.ConsumerOffset("s", "t", 0, iggytest.ConsumerKey("reader")); !ok || o != 7 {
		t.Fatalf("server offset for reader = %d, %v", o, ok)
	}
	info, err := cli.GetConsumerOffset(named, sid, tid, &p0)
	if err != nil || info == nil || info.StoredOffset != 7 || info.CurrentOffset != 9 || info.PartitionId != 0 {
		t.Fatalf("get offset = %+v, %v", info, err)
	}
	// Without auto-commit the offset stays.
	if got := poll(named, iggcon.NextPollingStrategy(), 1, false, &p0); got != "i" {
		t.Fatalf("next #3 = %q", got)
	}
	if got := poll(named, iggcon.NextPollingStrategy(), 5, false, &p0); got != "ij" {
		t.Fatalf("next #4 = %q", got)
	}

	// Explicit store, then next starts after it.
	num := iggcon.NewSingleConsumer(id(t, uint32(42)))
	if info, err := cli.GetConsumerOffset(num, sid, tid, &p0); err != nil || info != nil {
		t.Fatalf("offset before store = %+v, %v", info, err)
	}
	if err := cli.StoreConsumerOffset(num, sid, tid, 2, &p0); err != nil {
		t.Fatalf("store: %v", err)
	}
	err = cli.StoreConsumerOffset(num, sid, tid, 10, &p0)
	mustIs(t, err, ierror.ErrInvalidOffset)
	if got := poll(num, iggcon.NextPollingStrategy(), 2, false, nil); got != "de" {
		t.Fatalf("next after store = %q", got)
	}
	if err := cli.DeleteConsumerOffset(num, sid, tid, &p0); err != nil {
		t.Fatalf("delete offset: %v", err)
	}
	err = cli.DeleteConsumerOffset(num, sid, tid, &p0)
	mustIs(t, err, ierror.ErrConsumerOffsetNotFound)
	if got := poll(num, iggcon.NextPollingStrategy(), 2, false, nil); got != "ab" {
		t.Fatalf("next after delete = %q", got)
	}

	// Other partition and errors.
	if got := poll(def, iggcon.FirstPollingStrategy(), 5, false, &p1); got != "" {
		t.Fatalf("partition 1 = %q", got)
	}
	bad := uint32(5)
	_, err = cli.PollMessages(sid, tid, def, iggcon.FirstPollingStrategy(), 5, false, &bad)
	mustIs(t, err, ierror.ErrPartitionNotFound)
	_, err = cli.PollMessages(sid, id(t, "nope"), def, iggcon.FirstPollingStrategy(), 5, false, nil)
	mustIs(t, err, ierror.ErrTopicIdNotFound)
	if info, err := cli.GetConsumerOffset(num, id(t, "nope"), tid, nil); err != nil || info != nil {
		t.Fatalf("offset of missing stream = %+v, %v", info, err)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestTLS(t *testing.T) {
	cfg, caPEM, err := iggytest.NewTLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, iggytest.Options{TLSConfig: cfg})
	caFile := t.TempDir() + "/ca.pem"
	if err := os.WriteFile(caFile, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	cli, err := client.NewIggyClient(client.WithTcp(tcp.WithServerAddress(srv.Addr()),
		tcp.WithTLS(tcp.WithTLSCAFile(caFile))))
	if err != nil {
		t.Fatalf("TLS connect: %v", err)
	}
	defer cli.Close()
	if _, err := cli.LoginUser(iggytest.DefaultUsername, iggytest.DefaultPassword); err != nil {
		t.Fatalf("login over TLS: %v", err)
	}
	if _, err := cli.CreateStream("secure"); err != nil {
		t.Fatalf("create stream over TLS: %v", err)
	}
}

func TestRetentionCap(t *testing.T) {
	srv := startServer(t, iggytest.Options{MaxMessagesPerPartition: 3})
	cli := login(t, srv.Addr())
	setupTopic(t, cli, "s", "t", 1)
	for i := 0; i < 5; i++ {
		if err := cli.SendMessages(id(t, "s"), id(t, "t"), iggcon.None(), []iggcon.IggyMessage{msg(t, string(rune('a'+i)))}); err != nil {
			t.Fatal(err)
		}
	}
	got := srv.Messages("s", "t")
	if len(got) != 3 || got[0].Offset != 2 || string(got[0].Payload) != "c" {
		t.Fatalf("kept = %+v", got)
	}
	pm, err := cli.PollMessages(id(t, "s"), id(t, "t"), iggcon.DefaultConsumer(), iggcon.OffsetPollingStrategy(0), 10, false, nil)
	if err != nil || len(pm.Messages) != 3 || pm.Messages[0].Header.Offset != 2 || pm.CurrentOffset != 4 {
		t.Fatalf("poll = %+v, %v", pm, err)
	}
}

// BenchmarkSDKSendMessages measures the unchanged SDK sending batches of 100
// 1 KB messages to the test server (one connection).
func BenchmarkSDKSendMessages(b *testing.B) {
	srv, err := iggytest.Start(iggytest.Options{MaxMessagesPerPartition: 10000})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	cli, err := client.NewIggyClient(client.WithTcp(tcp.WithServerAddress(srv.Addr())))
	if err != nil {
		b.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.LoginUser(iggytest.DefaultUsername, iggytest.DefaultPassword); err != nil {
		b.Fatal(err)
	}
	if _, err := srv.CreateStream("s"); err != nil {
		b.Fatal(err)
	}
	if _, err := srv.CreateTopic("s", "t", 4); err != nil {
		b.Fatal(err)
	}
	sid, _ := iggcon.NewIdentifier("s")
	tid, _ := iggcon.NewIdentifier("t")
	batch := make([]iggcon.IggyMessage, 100)
	for i := range batch {
		batch[i], _ = iggcon.NewIggyMessage(bytes.Repeat([]byte{'x'}, 1024))
	}
	b.SetBytes(100 * 1024)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := cli.SendMessages(sid, tid, iggcon.None(), batch); err != nil {
			b.Fatal(err)
		}
	}
}
