package flussinput

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// The lint tests run `fluss-iggy lint FILE` as a user does: Benthos's CLI,
// in a child process. That child is $FLUSS_IGGY_BIN when set (the real
// binary), otherwise this test binary started with cliEnv, whose TestMain
// then runs the Benthos CLI with the same fluss input registered (and the
// io and pure components), independent of cmd/.
const (
	cliEnv     = "FLUSS_INPUT_TEST_CLI"
	cliArgsEnv = "FLUSS_INPUT_TEST_CLI_ARGS"
)

// runCLIIfAsked runs the Benthos CLI and exits when the process was started
// as the CLI by cli().
func runCLIIfAsked() {
	if os.Getenv(cliEnv) != "1" {
		return
	}
	var args []string
	if err := json.Unmarshal([]byte(os.Getenv(cliArgsEnv)), &args); err != nil {
		fmt.Fprintln(os.Stderr, "bad", cliArgsEnv, err)
		os.Exit(2)
	}
	code, err := service.RunCLIToCode(context.Background(),
		service.CLIOptSetArgs(append([]string{"fluss-iggy"}, args...)...),
		service.CLIOptSetBinaryName("fluss-iggy"),
		service.CLIOptSetProductName("fluss-iggy"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// cli runs `fluss-iggy ARGS...` and returns its exit code and output.
func cli(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var cmd *exec.Cmd
	if bin := os.Getenv("FLUSS_IGGY_BIN"); bin != "" {
		cmd = exec.CommandContext(ctx, bin, args...)
	} else {
		js, _ := json.Marshal(args)
		cmd = exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), cliEnv+"=1", cliArgsEnv+"="+string(js))
	}
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("fluss-iggy %v: %v", args, ctx.Err())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("fluss-iggy %v: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), string(out)
}

// lintBase is the fluss input of every lint case, one field per line;
// a case replaces fields by key and appends the others.
var lintBase = []string{
	`bootstrap_servers: [ "127.0.0.1:9123" ]`,
	`database: shop`,
	`table: orders`,
	`checkpoint_cache: offs`,
}

// lintConfig renders a whole config with the input's fields, and returns
// the line of each field key (1-based).
func lintConfig(fields []string) (string, map[string]int) {
	lines := []string{"input:", "  fluss:"}
	at := map[string]int{}
	for _, f := range fields {
		key, _, _ := strings.Cut(f, ":")
		at[key] = len(lines) + 1
		lines = append(lines, "    "+f)
	}
	lines = append(lines, "output:", "  drop: {}", "cache_resources:", "  - label: offs", "    memory: {}")
	return strings.Join(lines, "\n") + "\n", at
}

// withFields returns lintBase with fields replacing those of the same key.
func withFields(fields ...string) []string {
	out := append([]string(nil), lintBase...)
	for _, f := range fields {
		key, _, _ := strings.Cut(f, ":")
		replaced := false
		for i, b := range out {
			if strings.HasPrefix(b, key+":") {
				out[i], replaced = f, true
			}
		}
		if !replaced {
			out = append(out, f)
		}
	}
	return out
}

// lintCase is a config `run` refuses for the input's own reasons; lint must
// report msg at the line of field at (the input's first field for checks
// that combine fields).
type lintCase struct {
	fields []string
	at     string
	msg    string
}

func badConfigs() []lintCase {
	notStart := func(v string) string {
		return "field start_offset: " + v + " is not earliest, latest, timestamp, snapshot or an offset (a whole number from 0)"
	}
	return []lintCase{
		{[]string{"start_offset: earlist"}, "start_offset", notStart(`"earlist"`)},
		{[]string{"start_offset: -5"}, "start_offset", notStart(`"-5"`)},
		{[]string{"start_offset: 99999999999999999999"}, "start_offset", notStart(`"99999999999999999999"`)},
		{[]string{"checkpoint_limit: lots"}, "checkpoint_limit", `field checkpoint_limit: "lots" is not a whole number`},
		{[]string{"checkpoint_limit: 1.5"}, "checkpoint_limit", `field checkpoint_limit: 1.5 is not a whole number`},
		{[]string{"checkpoint_limit: 0"}, "checkpoint_limit", `field checkpoint_limit: 0 is outside 1 to 1048576`},
		{[]string{"payload_format: avro"}, "payload_format", `field payload_format: "avro" is not one of: json, structured, arrow_ipc`},
		{[]string{"on_unresumable_offset: skip"}, "on_unresumable_offset", `field on_unresumable_offset: "skip" is not one of: fail, earliest, latest`},
		{[]string{"end_at: tomorrow"}, "end_at", `field end_at: "tomorrow" is not one of: none, latest`},
		{[]string{"ordering: strict"}, "ordering", `field ordering: "strict" is not one of: bucket, none`},
		{[]string{"start_offset: snapshot", "table_type: log"}, "bootstrap_servers", "field start_offset: snapshot reads primary-key tables, but table_type is log"},
		{[]string{"remote_storage: { s3: { access_key: AK } }"}, "bootstrap_servers", "fields remote_storage.s3.access_key and secret_key: set both or neither"},
		{[]string{"arrow_ipc_compression: gzip"}, "arrow_ipc_compression", `field arrow_ipc_compression: "gzip" is not one of: none, lz4, zstd`},
		{[]string{"table_type: view"}, "table_type", `field table_type: "view" is not one of: log, primary_key`},
		{[]string{"sasl: { mechanism: SCRAM, username: u, password: p }"}, "sasl", `field sasl.mechanism: "SCRAM" is not one of: PLAIN`},
		{[]string{"sasl: { username: '', password: p }"}, "sasl", `field sasl.username: must not be empty`},
		{[]string{"connect_timeout: lots"}, "connect_timeout", `field connect_timeout: "lots" is not a positive duration such as 500ms, 10s or 1m`},
		{[]string{"request_timeout: 0s"}, "request_timeout", `field request_timeout: "0s" is not a positive duration such as 500ms, 10s or 1m`},
		{[]string{"partition_discovery_interval: -1s"}, "partition_discovery_interval", `field partition_discovery_interval: "-1s" is not a duration of 0s or more such as 500ms, 10s or 1m`},
		{[]string{"fetch_max_wait: soon"}, "fetch_max_wait", `field fetch_max_wait: "soon" is not a duration of 0s or more such as 500ms, 10s or 1m`},
		{[]string{"columns: [ a, a ]"}, "columns", `field columns: column "a" listed twice`},
		{[]string{"columns: [ '' ]"}, "columns", `field columns: empty column`},
		{[]string{"partitions: [ x, x ]"}, "partitions", `field partitions: partition "x" listed twice`},
		{[]string{"partitions: [ '' ]"}, "partitions", `field partitions: empty partition`},
		{[]string{"buckets: [ 1, 1 ]"}, "buckets", `field buckets: bucket 1 listed twice`},
		{[]string{"buckets: [ -1 ]"}, "buckets", `field buckets: -1 is outside 0 to 2147483647`},
		{[]string{"buckets: [ one ]"}, "buckets", `field buckets: "one" is not a whole number`},
		{[]string{"buckets: [ 1 ]", "shard: { index: 0, count: 2 }"}, "bootstrap_servers", `fields buckets and shard: set one, not both`},
		{[]string{"shard: { index: 2, count: 2 }"}, "shard", `field shard.index: must be between 0 and 1 (shard.count - 1), got 2`},
		{[]string{"shard: { index: 0, count: 0 }"}, "shard", `field shard.count: 0 is outside 1 to 65536`},
		{[]string{"shard: { index: first, count: 2 }"}, "shard", `field shard.index: "first" is neither a whole number nor a name ending in -<number> (a StatefulSet pod name such as fluss-iggy-2)`},
		{[]string{"shard: { index: fluss-iggy-, count: 2 }"}, "shard", `field shard.index: "fluss-iggy-" is neither a whole number nor a name ending in -<number> (a StatefulSet pod name such as fluss-iggy-2)`},
		{[]string{"shard: { index: fluss-iggy-3, count: 3 }"}, "shard", `field shard.index: must be between 0 and 2 (shard.count - 1), got 3`},
		{[]string{"shard: { index: fluss-iggy-99999, count: 3 }"}, "shard", `field shard.index: "fluss-iggy-99999" gives 99999, outside 0 to 65535`},
		{[]string{"checkpoint_key: a/b"}, "checkpoint_key", `field checkpoint_key: "a/b" must not contain '/'`},
		{[]string{"checkpoint_key: ''"}, "checkpoint_key", `field checkpoint_key: must not be empty`},
		{[]string{"checkpoint_cache: ''"}, "checkpoint_cache", `field checkpoint_cache: must not be empty`},
		{[]string{"database: ''"}, "database", `field database: must not be empty`},
		{[]string{"table: ''"}, "table", `field table: must not be empty`},
		{[]string{"bootstrap_servers: []"}, "bootstrap_servers", `field bootstrap_servers: at least one address (host:port) is required`},
		{[]string{"bootstrap_servers: [ nohostport ]"}, "bootstrap_servers", `field bootstrap_servers: address "nohostport" is not host:port`},
		{[]string{"fetch_max_bytes: 0"}, "fetch_max_bytes", `field fetch_max_bytes: 0 is outside 1 to 2147483647`},
		{[]string{"fetch_max_bytes: 3000000000"}, "fetch_max_bytes", `field fetch_max_bytes: 3000000000 is outside 1 to 2147483647`},
		{[]string{"fetch_max_bytes_per_bucket: -1"}, "fetch_max_bytes_per_bucket", `field fetch_max_bytes_per_bucket: -1 is outside 1 to 2147483647`},
		{[]string{"max_batch_rows: -1"}, "max_batch_rows", `field max_batch_rows: -1 is outside 0 to 2147483647`},
		{[]string{"max_batch_rows: many"}, "max_batch_rows", `field max_batch_rows: "many" is not a whole number`},
		{[]string{"start_offset: timestamp"}, "bootstrap_servers", `field start_offset: timestamp needs field start_timestamp`},
		{[]string{"start_timestamp: 5"}, "bootstrap_servers", `field start_timestamp: only used with start_offset: timestamp (it is earliest)`},
		{[]string{"start_offset: timestamp", "start_timestamp: noon"}, "start_timestamp", `field start_timestamp: "noon" is neither an RFC 3339 time nor milliseconds since the epoch`},
		{[]string{"start_offset: timestamp", "start_timestamp: -5"}, "start_timestamp", `field start_timestamp: timestamp -5 is negative`},
		{[]string{"start_offset: timestamp", `start_timestamp: "1960-01-01T00:00:00Z"`}, "start_timestamp", `field start_timestamp: timestamp "1960-01-01T00:00:00Z" is before 1970`},
		{[]string{"wait_for_table: yes"}, "wait_for_table", `field wait_for_table: "yes" is not true or false`},
		{[]string{"auto_replay_nacks: nope"}, "auto_replay_nacks", `field auto_replay_nacks: "nope" is not true or false`},
	}
}

// goodConfigs are valid: lint passes and parseConfig accepts them.
var goodConfigs = [][]string{
	nil,
	{"start_offset: 12", "checkpoint_limit: 1", "max_batch_rows: 0", "fetch_max_bytes: 1048576"},
	{"start_offset: latest", "payload_format: arrow_ipc", "end_at: latest", "table_type: primary_key", "on_unresumable_offset: earliest"},
	{"start_offset: timestamp", `start_timestamp: "2026-01-31T12:00:00.5+01:00"`},
	{"start_offset: timestamp", "start_timestamp: 1769860800000"},
	{"shard: { index: 1, count: 3 }", "columns: [ id, amount ]", `partitions: [ "2026$01" ]`},
	{"shard: { index: fluss-iggy-2, count: 3 }"},
	{`shard: { index: "7", count: 8 }`},
	{"buckets: [ 0, 2 ]", "checkpoint_key: mine", "fetch_max_bytes_per_bucket: 65536"},
	{"sasl: { mechanism: plain, username: u, password: p }", "connect_timeout: 1s", "partition_discovery_interval: 0s", "fetch_max_wait: 0s"},
	{"wait_for_table: true", "auto_replay_nacks: false", "checkpoint_limit: 1e3"},
	{"ordering: none", "payload_format: arrow_ipc", "arrow_ipc_compression: zstd"},
	{"start_offset: snapshot", "table_type: primary_key", "snapshot_dir: /var/tmp/fluss"},
	{"remote_storage: { s3: { endpoint: 'http://127.0.0.1:8333', access_key: AK, secret_key: SK, path_style: true }, read_ahead: 65536 }"},
}

// Every config `run` would refuse for the input's own reasons fails
// `fluss-iggy lint` with the message `run` gives, at the field's line, and
// every good config passes both. (One lint run per table: lint prints every
// file's errors prefixed with its path, so each file is accounted for.)
func TestLintCatchesWhatRunRejects(t *testing.T) {
	dir := t.TempDir()
	var bad, wants []string
	for i, c := range badConfigs() {
		path, at := writeConfig(t, dir, fmt.Sprintf("bad%02d.yaml", i), withFields(c.fields...))
		bad = append(bad, path)
		wants = append(wants, fmt.Sprintf("%s(%d,1) %s", path, at[c.at], c.msg))
		if err := runRejects(withFields(c.fields...)); err == nil || err.Error() != c.msg {
			t.Errorf("%v: run's error %v, want %q", c.fields, err, c.msg)
		}
	}
	code, out := cli(t, append([]string{"lint"}, bad...)...)
	if code == 0 {
		t.Errorf("lint of the bad configs exited 0")
	}
	lines := strings.Split(out, "\n")
	for i, want := range wants {
		if !slices.Contains(lines, want) {
			t.Errorf("lint of %v does not say\n%s", badConfigs()[i].fields, want)
		}
	}
	if t.Failed() {
		t.Logf("lint output:\n%s", out)
	}

	var good []string
	for i, fields := range goodConfigs {
		path, _ := writeConfig(t, dir, fmt.Sprintf("good%02d.yaml", i), withFields(fields...))
		good = append(good, path)
		if err := runRejects(withFields(fields...)); err != nil {
			t.Errorf("%v: run rejects it: %v", fields, err)
		}
	}
	if code, out := cli(t, append([]string{"lint"}, good...)...); code != 0 || strings.TrimSpace(out) != "" {
		t.Errorf("lint of the good configs: exit %d, output:\n%s", code, out)
	}
}

// writeConfig writes a config with the input's fields and returns its path
// and the line of each field.
func writeConfig(t *testing.T, dir, name string, fields []string) (string, map[string]int) {
	t.Helper()
	yaml, at := lintConfig(fields)
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, at
}

// runRejects returns what the input's constructor says about the fields.
func runRejects(fields []string) error {
	pc, err := Spec().ParseYAML(strings.Join(fields, "\n")+"\n", nil)
	if err != nil {
		return err
	}
	_, err = parseConfig(pc)
	return err
}
