package iggyoutput_test

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/internal/flussmeta"
	iggyoutput "github.com/fluss-iggy/fluss-iggy/output/iggy"
)

const minimal = `
address: 127.0.0.1:8090
username: iggy
password: iggy
stream: s
topic: t
`

func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, yaml, want string
	}{
		{"no login", "stream: s\ntopic: t", "set username and password, or personal_access_token"},
		{"both logins", minimal + "personal_access_token: abc", "not both"},
		{"bad address", strings.Replace(minimal, "127.0.0.1:8090", "nohostport", 1), "not host:port"},
		{"partition missing", minimal + "partitioning: partition_id", "partition must be set"},
		{"key missing", minimal + "partitioning: messages_key", "key must be set"},
		{"bad partitioning", minimal + "partitioning: random", "not one of balanced"},
		{"partitions", minimal + "partitions: 0", "outside 1 to 1000"},
		{"expiry", minimal + "message_expiry: soon", "not server_default, never or a duration"},
		{"size", minimal + "max_topic_size: huge", "not server_default, unlimited or a size"},
		{"timeout", minimal + "timeout: 0s", "timeout must be positive"},
		{"max_in_flight", minimal + "max_in_flight: 0", "must be at least 1"},
		{"tls client cert missing", minimal + "tls: {enabled: true, client_certs: [{cert_file: a, key_file: b}]}", "field tls: open a"},
		{"tls ca file missing", minimal + "tls: {enabled: true, root_cas_file: " + filepath.Join(dir, "nope.pem") + "}", "field tls: open " + filepath.Join(dir, "nope.pem")},
		{"tls ca file not pem", minimal + "tls: {enabled: true, root_cas_file: " + notPEM + "}", "holds no PEM certificate"},
		{"server_version", minimal + "server_version: \"0.10\"", "server_version"},
		{"ack_after", minimal + "ack_after: disk", "ack_after"},
		{"keep_alive", minimal + "keep_alive: 0s", "keep_alive must be positive"},
		{"max_login_attempts", minimal + "max_login_attempts: -1", "field max_login_attempts must be 0 (retry forever) or more, got -1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := newOutput(c.yaml)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want an error containing %q, got %v", c.want, err)
			}
		})
	}
}

func TestConfigAccepts(t *testing.T) {
	for _, yaml := range []string{
		minimal,
		minimal + "message_expiry: never\nmax_topic_size: unlimited",
		minimal + "message_expiry: 72h\nmax_topic_size: 10GiB\ncreate_stream: true\ncreate_topic: true\npartitions: 8",
		minimal + "partitioning: partition_id\npartition: '${! @p }'",
		minimal + "partitioning: partition_id\npartition: 0",
		minimal + "partitioning: messages_key\nkey: '${! @k }'\nmessage_id: '" + iggyoutput.DeterministicIDMapping + "'",
		minimal + "headers: {include_prefixes: [fluss_]}\nmax_in_flight: 8\nbatching: {count: 100}",
		minimal + "tls: {enabled: true, skip_cert_verify: true}",
		"address: 127.0.0.1:8090\npersonal_access_token: tok\nstream: s\ntopic: t",
	} {
		if _, err := newOutput(yaml); err != nil {
			t.Errorf("config %q: %v", yaml, err)
		}
	}
}

// TestLint checks the spec's lint rules through the stream builder, which
// lints like `fluss-iggy lint` does.
func TestLint(t *testing.T) {
	cases := map[string]string{
		"iggy: {stream: s, topic: t}": "set username and password, or personal_access_token",
		"iggy: {stream: s, topic: t, username: a, password: b, partitioning: partition_id}": "partition must be set",
		"iggy: {stream: s, topic: t, username: a, password: b, partitioning: messages_key}": "key must be set",
		"iggy: {stream: s, topic: t, username: a, password: b, partitions: 2000}":           "field partitions: 2000 is outside 1 to 1000",
		"iggy: {stream: s, topic: t, username: a, password: b, partitions: four}":           "field partitions: four is not a whole number",
		"iggy: {stream: s, topic: t, username: a, password: b, partitioning: nope}":         `field partitioning: "nope" is not one of: balanced, partition_id, messages_key`,
		"iggy: {stream: s, topic: t, username: a, password: b, server_version: '0.10'}":     `field server_version: "0.10" is not one of: auto, 0.8, 0.9`,
		"iggy: {stream: s, topic: t, username: a, password: b, ack_after: disk}":            `field ack_after: "disk" is not one of: send, flush, fsync`,
		"iggy: {stream: s, topic: t, username: a, password: b, timeout: soon}":              "field timeout: soon is not a positive duration",
		"iggy: {stream: s, topic: t, username: a, password: b, keep_alive: 0s}":             "field keep_alive: 0s is not a positive duration",
		"iggy: {stream: s, topic: t, username: a, password: b, max_in_flight: 0}":           "field max_in_flight: 0 is less than 1",
		"iggy: {stream: s, topic: t, username: a, password: b, max_in_flight: many}":        "field max_in_flight: many is not a whole number",
		"iggy: {stream: s, topic: t, username: a, password: b, max_login_attempts: -2}":     "field max_login_attempts: -2 is less than 0",
		"iggy: {stream: s, topic: t, username: a, password: b, address: nohostport}":        "field address: nohostport is not host:port",
		"iggy: {stream: s, topic: t, username: a, password: b, message_expiry: soon}":       "field message_expiry: soon is not server_default, never, never_expire or a positive duration",
		"iggy: {stream: s, topic: t, username: a, password: b, max_topic_size: huge}":       "field max_topic_size: huge is not server_default, unlimited or a size",
	}
	for yaml, want := range cases {
		b := service.NewStreamBuilder()
		err := b.AddOutputYAML(yaml)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want a lint error containing %q, got %v", yaml, want, err)
		}
	}
	for _, ok := range []string{
		"iggy: {stream: s, topic: t, username: a, password: b}",
		"iggy: {stream: s, topic: t, username: a, password: b, partitions: 8, max_in_flight: 4, timeout: 1m30s, keep_alive: 500ms}",
		"iggy: {stream: s, topic: t, username: a, password: b, message_expiry: 168h, max_topic_size: 10GiB, server_version: '0.9', ack_after: fsync}",
		"iggy: {stream: s, topic: t, username: a, password: b, message_expiry: never, max_topic_size: 500 MB, address: '[::1]:8090'}",
		"iggy: {stream: s, topic: t, username: a, password: b, max_login_attempts: 0}",
	} {
		if err := service.NewStreamBuilder().AddOutputYAML(ok); err != nil {
			t.Errorf("valid config %s: %v", ok, err)
		}
	}
}

func u128le(hi, lo uint64) [16]byte {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], lo)
	binary.LittleEndian.PutUint64(b[8:], hi)
	return b
}

func TestParseMessageID(t *testing.T) {
	ok := []struct {
		in     string
		hi, lo uint64
	}{
		{"", 0, 0},
		{"0", 0, 0},
		{"255", 0, 255},
		{"0xff", 0, 255},
		{"0XFF", 0, 255},
		{"00000000-0000-0000-0000-0000000000ff", 0, 255},
		{"{00000000-0000-0000-0000-0000000000ff}", 0, 255},
		{"urn:uuid:00000000-0000-0000-0000-0000000000ff", 0, 255},
		{"18446744073709551616", 1, 0},
		{"340282366920938463463374607431768211455", ^uint64(0), ^uint64(0)},
		{"0xffffffffffffffffffffffffffffffff", ^uint64(0), ^uint64(0)},
		{"0x00000000000000000000000000000001", 0, 1},
		{"01234567-89ab-cdef-0123-456789abcdef", 0x0123456789abcdef, 0x0123456789abcdef},
	}
	for _, c := range ok {
		got, err := iggyoutput.ParseMessageID(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if want := u128le(c.hi, c.lo); got != want {
			t.Errorf("%q: got %x, want %x", c.in, got, want)
		}
	}
	for _, bad := range []string{
		"340282366920938463463374607431768211456", // 2^128
		"0x1ffffffffffffffffffffffffffffffff",     // 129 bits
		"0x000000000000000000000000000000001",     // 33 digits
		"0x", "0xzz", "-1", "1.5", "abc",
		"0123456789abcdef0123456789abcdef", // bare hex, ambiguous
	} {
		if _, err := iggyoutput.ParseMessageID(bad); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
	id, _ := iggyoutput.ParseMessageID("01234567-89ab-cdef-0123-456789abcdef")
	if s := iggyoutput.FormatMessageID(id); s != "01234567-89ab-cdef-0123-456789abcdef" {
		t.Errorf("FormatMessageID: %s", s)
	}
}

// TestDeterministicIDRecipe runs DeterministicIDMapping on the metadata the
// fluss input sets and decodes the four numbers back out of the id.
func TestDeterministicIDRecipe(t *testing.T) {
	interp, err := service.NewInterpolatedString(iggyoutput.DeterministicIDMapping)
	if err != nil {
		t.Fatal(err)
	}
	decode := func(id [16]byte) (table, part, bucket, offset uint64) {
		lo := binary.LittleEndian.Uint64(id[:8])
		hi := binary.LittleEndian.Uint64(id[8:])
		return hi>>32 - 1, hi&0xffffffff - 1, lo >> 48, lo & (1<<48 - 1)
	}
	withID := func(table, part int64, bucket int32, offset int64) *service.Message {
		return msg("x", flussmeta.MessageID, flussmeta.FormatMessageID(table, part, bucket, offset))
	}
	cases := []struct {
		table, part            int64
		bucket                 int32
		offset                 int64
		wantTable, wantPart    uint64
		wantBucket, wantOffset uint64
	}{
		{7, -1, 3, 123456789, 7, ^uint64(0), 3, 123456789},
		// The first record of the first table must not get id 0 (server-assigned).
		{0, -1, 0, 0, 0, ^uint64(0), 0, 0},
		{7, 0, 3, 123456789, 7, 0, 3, 123456789},
		{1<<32 - 2, 42, 65535, 1<<48 - 1, 1<<32 - 2, 42, 65535, 1<<48 - 1},
	}
	seen := map[[16]byte]bool{}
	for _, c := range cases {
		s, err := interp.TryString(withID(c.table, c.part, c.bucket, c.offset))
		if err != nil {
			t.Fatal(err)
		}
		id, err := iggyoutput.ParseMessageID(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if seen[id] {
			t.Fatalf("%s: id repeated", s)
		}
		seen[id] = true
		table, part, bucket, offset := decode(id)
		if table != c.wantTable || part != c.wantPart || bucket != c.wantBucket || offset != c.wantOffset {
			t.Errorf("%s decodes to %d/%d/%d/%d", s, table, part, bucket, offset)
		}
	}
	// A value that outgrows its slot is rejected, never shifted into
	// another record's id.
	for _, m := range []*service.Message{
		withID(1<<40, -1, 0, 0), withID(7, -1, 70000, 0), withID(7, -1, 1, 1<<48), withID(7, -1, 1, -1),
	} {
		s, err := interp.TryString(m)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := iggyoutput.ParseMessageID(s); err == nil {
			t.Errorf("%s: want an error", s)
		}
	}
}

// TestSpecExamples lints every example of the spec as a full config, and
// checks that the generated docs render.
func TestSpecExamples(t *testing.T) {
	t.Setenv("IGGY_PASSWORD", "secret")
	t.Setenv("IGGY_TOKEN", "token")
	var found bool
	service.GlobalEnvironment().WalkOutputs(func(name string, view *service.ConfigView) {
		if name != "iggy" {
			return
		}
		found = true
		data, err := view.TemplateData()
		if err != nil {
			t.Fatal(err)
		}
		if len(data.Examples) < 2 {
			t.Errorf("want at least 2 examples, got %d", len(data.Examples))
		}
		for _, ex := range data.Examples {
			b := service.NewStreamBuilder()
			if err := b.SetYAML("input:\n  generate: {count: 1, mapping: 'root = \"x\"'}\n" + ex.Config); err != nil {
				t.Errorf("example %q: %v", ex.Title, err)
			}
		}
		for _, f := range data.Fields {
			if f.Description == "" && !strings.HasPrefix(f.FullName, "batching.") && !strings.HasPrefix(f.FullName, "tls.") && !strings.HasPrefix(f.FullName, "headers.") {
				t.Errorf("field %s has no description", f.FullName)
			}
		}
		// README.md documents every top-level field.
		readme, err := os.ReadFile("README.md")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range data.Fields {
			if !strings.Contains(f.FullName, ".") && !strings.Contains(string(readme), "`"+f.FullName+"`") {
				t.Errorf("README.md does not document field %s", f.FullName)
			}
		}
	})
	if !found {
		t.Fatal("the iggy output is not registered")
	}
}
