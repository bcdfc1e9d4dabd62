package iggycmd

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fluss-iggy/fluss-iggy/iggy"
	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
)

// header is one user header with a string key, as the wire has it.
func header(key string, kind iggy.HeaderKind, value []byte) []byte {
	b := []byte{byte(iggy.HeaderString)}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(key)))
	b = append(b, key...)
	b = append(b, byte(kind))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(value)))
	return append(b, value...)
}

// fill starts a test server of version v with stream s, topic t of two
// partitions: partition 0 holds 5 JSON messages {"id":i} with headers,
// partition 1 one binary message without.
func fill(t *testing.T, v iggytest.Version) string {
	t.Helper()
	srv, err := iggytest.Start(iggytest.Options{Version: v})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ctx := context.Background()
	c, err := iggy.Dial(ctx, iggy.Options{Addr: srv.Addr(), Credentials: iggy.Credentials{Username: "iggy", Password: "iggy"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sid, _ := iggy.NameID("s")
	tid, _ := iggy.NameID("t")
	if err := c.CreateStream(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTopic(ctx, sid, iggy.TopicSpec{Name: "t", Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	b := &iggy.Batch{Stream: sid, Topic: tid, Partitioning: iggy.PartitionID(0)}
	for i := range 5 {
		hdrs := append(header("fluss_table", iggy.HeaderString, []byte("orders")),
			header("fluss_offset", iggy.HeaderInt64, binary.LittleEndian.AppendUint64(nil, uint64(i)))...)
		b.Messages = append(b.Messages, iggy.Message{ID: [16]byte{byte(i + 1)}, Payload: fmt.Appendf(nil, `{"id":%d}`, i), UserHeaders: hdrs})
	}
	if _, err := c.Send(ctx, b); err != nil {
		t.Fatal(err)
	}
	b = &iggy.Batch{Stream: sid, Topic: tid, Partitioning: iggy.PartitionID(1),
		Messages: []iggy.Message{{ID: [16]byte{0xff}, Payload: []byte("a\x00\"b\n")}}}
	if _, err := c.Send(ctx, b); err != nil {
		t.Fatal(err)
	}
	return srv.Addr()
}

// peek runs `iggy peek` with args and returns its output and error.
func peek(args ...string) (string, error) {
	var out bytes.Buffer
	app := &cli.App{Name: "fluss-iggy", Writer: &out, ErrWriter: &out, Commands: []*cli.Command{Command()}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := app.RunContext(ctx, append([]string{"fluss-iggy", "iggy", "peek"}, args...))
	return out.String(), err
}

// offsets lists the "partition P offset O" of each message line of out.
func offsets(out string) []string {
	var got []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[0] == "partition" && f[2] == "offset" {
			got = append(got, f[1]+":"+f[3])
		}
	}
	return got
}

// TestPeek: peek prints, in both protocol dialects (found, and pinned with
// --protocol), the messages asked for (every partition or one, from the
// earliest, the last N, or an offset), with id, headers by kind and the
// payload as indented JSON or escaped.
func TestPeek(t *testing.T) {
	for _, v := range []iggytest.Version{iggytest.Version08, iggytest.Version09} {
		t.Run(v.String(), func(t *testing.T) {
			addr := fill(t, v)
			conn := []string{"--address", addr, "--username", "iggy", "--password", "iggy", "--stream", "s", "--topic", "t"}
			out, err := peek(append(conn, "--protocol", v.String(), "--count", "2")...)
			if err != nil {
				t.Fatalf("peek: %v\n%s", err, out)
			}
			for _, want := range []string{
				"Iggy " + v.String() + " at " + addr + `: stream "s" topic "t", 2 partitions`,
				"partition 0 offset 0 id 0x00000000000000000000000000000001 timestamp ",
				`  headers fluss_offset=0 fluss_table="orders"`,
				"  payload {\n    \"id\": 0\n  }\n",
				"partition 1 offset 0 id 0x000000000000000000000000000000ff",
				"  headers (none)\n",
				`  payload "a\x00\"b\n"`,
			} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			for _, c := range []struct {
				args []string
				want string
			}{
				{[]string{"--count", "2"}, "[0:0 0:1 1:0]"},
				{[]string{"--partition", "0", "--from", "latest-2"}, "[0:3 0:4]"},
				{[]string{"--partition", "0", "--from", "latest", "--count", "3"}, "[0:2 0:3 0:4]"},
				{[]string{"--partition", "0", "--from", "3"}, "[0:3 0:4]"},
				{[]string{"--from", "earliest"}, "[0:0 0:1 0:2 0:3 0:4 1:0]"},
				{[]string{"--partition", "1", "--from", "1"}, "[]"},
			} {
				out, err := peek(append(conn, c.args...)...)
				if got := fmt.Sprint(offsets(out)); err != nil || got != c.want {
					t.Errorf("%v: %s (%v), want %s\n%s", c.args, got, err, c.want, out)
				}
			}
			if out, _ := peek(append(conn, "--partition", "1", "--from", "1")...); !strings.Contains(out, "partition 1: no messages from offset 1") {
				t.Errorf("an empty range is not said:\n%s", out)
			}
		})
	}
}

// TestPeekErrors: a missing topic, a partition the topic lacks and a bad
// --from are refused with what is wrong.
func TestPeekErrors(t *testing.T) {
	addr := fill(t, iggytest.Version09)
	conn := []string{"--address", addr, "--stream", "s"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--topic", "nope"}, `no stream "s" with a topic "nope" at `},
		{[]string{"--topic", "t", "--partition", "2"}, "--partition 2: stream \"s\" topic \"t\" has partitions 0 to 1"},
		{[]string{"--topic", "t", "--from", "latest-0"}, `--from "latest-0": want earliest, latest, latest-N`},
		{[]string{"--topic", "t", "--from", "soon"}, `--from "soon"`},
		{[]string{"--topic", "t", "--count", "0"}, "--count 0: want at least 1"},
		{[]string{"--topic", "t", "--partition", "-2"}, "--partition -2: want a partition number from 0"},
		{[]string{"--topic", "t", "--protocol", "0.7"}, `--protocol: "0.7" is not auto, 0.8 or 0.9`},
	} {
		_, err := peek(append(conn, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one with %q", c.args, err, c.want)
		}
	}
}

// TestPeekEnvDefaults: the address, user, password and stream come from
// the variables our configs use when no flag gives them.
func TestPeekEnvDefaults(t *testing.T) {
	addr := fill(t, iggytest.Version09)
	t.Setenv("IGGY_TCP_ADDRESS", addr)
	t.Setenv("IGGY_USERNAME", "iggy")
	t.Setenv("IGGY_PASSWORD", "iggy")
	t.Setenv("IGGY_STREAM", "s")
	out, err := peek("--topic", "t", "--partition", "1")
	if err != nil || !strings.Contains(out, "at "+addr+`: stream "s" topic "t"`) || fmt.Sprint(offsets(out)) != "[1:0]" {
		t.Errorf("with the variables: %v\n%s", err, out)
	}
	t.Setenv("IGGY_PASSWORD", "wrong")
	if _, err := peek("--topic", "t"); !iggy.IsLoginRejected(err) {
		t.Errorf("IGGY_PASSWORD=wrong: %v, want a refused login", err)
	}
}
