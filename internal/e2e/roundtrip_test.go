package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/iggy"
	"github.com/fluss-iggy/fluss-iggy/internal/e2e"
)

// reverseKills is how many times the Iggy -> Fluss pipeline is SIGKILLed
// in each round trip.
const reverseKills = 5

// testRoundTrip: Fluss -> config/fluss_to_iggy.yaml -> Iggy ->
// config/iggy_to_fluss.yaml -> a second Fluss table, for the log table
// (every family of types) and the primary-key table (its changelog with
// updates and deletes), the Iggy -> Fluss pipeline SIGKILLed 5 times on
// the way. The copy of the log table holds every row of the first (the
// Java client's scans, as multisets) and no row twice: the output's
// journal, dedupe, keeps the rows written but not yet committed at a kill
// from being written again after the restart. The copy of the primary-key
// table is the same state (the Java client's replay of both changelogs,
// and `fluss scan --snapshot` of the copy).
func (f *fixture) testRoundTrip(t *testing.T) {
	t.Run("log", func(t *testing.T) {
		copyName := f.log.name + "_copy"
		f.roundTrip(t, f.log.name, copyName, uint64(len(f.log.scan)),
			[]string{"--columns", logColumns, "--buckets", "4"})
		got := f.scanCopy(t, "scan", copyName)
		var want []string
		for _, r := range f.log.scan {
			want = append(want, compactRow(t, r.Row))
		}
		missing, dups, foreign := multisetDiff(want, got)
		t.Logf("%s: %d rows, %d of the %d rows of %s missing, %d duplicates, %d foreign",
			copyName, len(got), len(missing), len(want), f.log.name, dups, len(foreign))
		if len(missing) > 0 {
			t.Errorf("%d rows missing from %s, e.g. %s", len(missing), copyName, missing[0])
		}
		if len(foreign) > 0 {
			t.Errorf("%s holds %d rows that are no row of %s, e.g. %s", copyName, len(foreign), f.log.name, foreign[0])
		}
		// The output's journal keeps the rows written but not committed
		// at a kill from being written again (without it, 3,000 and 1,000
		// repeats over 5 kills were measured), and the input hands out no
		// acknowledged message twice: idempotent writes duplicate nothing.
		if dups > 0 {
			t.Errorf("%d duplicates after %d kills", dups, reverseKills)
		}
	})
	t.Run("primary_key", func(t *testing.T) {
		f.pkRoundTrip(t, f.pk.name, uint64(len(f.pk.scan)), []string{"--columns", pkColumns, "--primary-key", "id", "--buckets", "3"})
	})
	t.Run("partitioned_primary_key", func(t *testing.T) {
		changes := f.writePartitioned(t, "regions")
		// The copy starts without partitions: the output creates them.
		f.pkRoundTrip(t, "regions", changes, []string{"--columns", regionColumns, "--primary-key", "id,region",
			"--partition-key", "region", "--buckets", "2"})
	})
}

// regionColumns are the columns of the partitioned primary-key table.
const regionColumns = "id INT NOT NULL, region STRING NOT NULL, name STRING, amount DECIMAL(10,2), seen TIMESTAMP_LTZ(3), tags ARRAY<STRING>"

// writePartitioned creates a primary-key table partitioned by region
// (us, eu, ap) and writes 3,000 inserts, 1,000 updates and 500 deletes
// with the Java client; it returns how many changelog rows that makes.
func (f *fixture) writePartitioned(t *testing.T, name string) uint64 {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	table := f.db + "." + name
	if _, err := f.tool(ctx, "create-table", table, "--columns", regionColumns, "--primary-key", "id,region",
		"--partition-key", "region", "--buckets", "2", "--partitions", "us,eu,ap"); err != nil {
		t.Fatal(err)
	}
	regions := []string{"us", "eu", "ap"}
	row := func(id int, name string) string {
		return fmt.Sprintf(`{"id":%d,"region":%q,"name":%q,"amount":"%d.%02d","seen":"2026-12-05T08:%02d:%02d.%03dZ","tags":["a",%q]}`,
			id, regions[id%3], name, id, id%100, id/60%60, id%60, id%1000, name)
	}
	var inserts, updates, deletes []string
	for id := range 3000 {
		inserts = append(inserts, row(id, fmt.Sprint("n", id)))
		if id%3 == 1 && len(updates) < 1000 {
			updates = append(updates, row(id, fmt.Sprint("u", id)))
		}
		if id%6 == 0 && len(deletes) < 500 {
			deletes = append(deletes, fmt.Sprintf(`{"id":%d,"region":%q}`, id, regions[id%3]))
		}
	}
	dir := t.TempDir()
	for _, w := range []struct {
		cmd  string
		rows []string
	}{{"upsert", inserts}, {"upsert", updates}, {"delete", deletes}} {
		file := filepath.Join(dir, fmt.Sprintf("%s-%d.jsonl", w.cmd, len(w.rows)))
		if err := os.WriteFile(file, []byte(strings.Join(w.rows, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := f.tool(ctx, w.cmd, table, "--file", file); err != nil {
			t.Fatal(err)
		}
	}
	return uint64(len(inserts) + 2*len(updates) + len(deletes))
}

// pkRoundTrip moves a primary-key table's changelog through Iggy into a
// copy and compares the states: the Java client's replay of both, and
// `fluss scan --snapshot` of the copy.
func (f *fixture) pkRoundTrip(t *testing.T, source string, changes uint64, createArgs []string) {
	copyName := source + "_copy"
	f.roundTrip(t, source, copyName, changes, createArgs)
	want := f.scanCopy(t, "state", source)
	if got := f.scanCopy(t, "state", copyName); !slices.Equal(got, want) {
		t.Errorf("the Java state of %s: %d keys; of %s: %d keys; first difference %s", copyName, len(got), source, len(want), firstDiff(want, got))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := runBinary(ctx, f.bin, "FLUSS_BOOTSTRAP="+f.bootstrap, "fluss", "scan", "--snapshot", f.db+"."+copyName)
	if err != nil {
		t.Fatal(err)
	}
	if got := sortedLines(t, out); !slices.Equal(got, want) {
		t.Errorf("fluss scan --snapshot of %s: %d keys, the Java state of %s %d; first difference %s", copyName, len(got), source, len(want), firstDiff(want, got))
	}
	t.Logf("%s: %d keys, the same state as %s (Java state and fluss scan --snapshot)", copyName, len(want), source)
}

// roundTrip moves source through Iggy into a new table copyName (created
// with createArgs) and returns once every message is written and committed.
func (f *fixture) roundTrip(t *testing.T, source, copyName string, messages uint64, createArgs []string) {
	stream := f.newStream(t, "rt")
	p := f.startPipeline(t, "fluss_to_iggy.yaml", source, stream, t.TempDir())
	f.waitRows(t, p, stream, source, messages)
	if err := p.Stop(30 * time.Second); err != nil {
		t.Fatalf("stopping the Fluss -> Iggy pipeline: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := f.tool(ctx, append([]string{"create-table", f.db + "." + copyName}, createArgs...)...); err != nil {
		t.Fatal(err)
	}
	group := "rt-" + copyName
	progress := f.groupProgress(t, stream, source, group)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	start := time.Now()
	rev := f.startReverse(t, stream, source, copyName, group)
	for k := range reverseKills {
		threshold := messages * uint64(k+1) / uint64(reverseKills+2)
		err := waitProgress(5*time.Millisecond, func() (uint64, bool, error) {
			n, err := progress()
			if rev.Exited() {
				return n, false, fmt.Errorf("the Iggy -> Fluss pipeline exited by itself: %v", rev.Err())
			}
			return n, n >= threshold, err
		})
		if err != nil {
			t.Fatalf("kill %d: waiting for %d committed messages: %v\n%s", k+1, threshold, err, rev.Tail(30))
		}
		time.Sleep(time.Duration(rng.IntN(20_000)) * time.Microsecond)
		rev.Kill()
		n, _ := progress()
		t.Logf("kill %d: SIGKILL with %d of %d messages committed, %s after start", k+1, n, messages, time.Since(start).Round(time.Millisecond))
		rev = f.startReverse(t, stream, source, copyName, group)
	}
	err := waitProgress(20*time.Millisecond, func() (uint64, bool, error) {
		n, err := progress()
		if rev.Exited() {
			return n, false, fmt.Errorf("the Iggy -> Fluss pipeline exited by itself: %v", rev.Err())
		}
		return n, n >= messages, err
	})
	if err != nil {
		t.Fatalf("waiting for all %d messages to be committed: %v\n%s", messages, err, rev.Tail(30))
	}
	t.Logf("%s -> Iggy -> %s: %d messages in %s with %d kills", source, copyName, messages, time.Since(start).Round(time.Millisecond), reverseKills)
	if err := rev.Stop(30 * time.Second); err != nil {
		t.Errorf("stopping the Iggy -> Fluss pipeline: %v\n%s", err, rev.Tail(30))
	}
}

// startReverse runs config/iggy_to_fluss.yaml from stream/topic into the
// table copyName as consumer group group, with its journal in a bbolt file
// that outlives the process (one per copy).
func (f *fixture) startReverse(t *testing.T, stream, topic, copyName, group string) *e2e.Proc {
	state := filepath.Join(os.TempDir(), "fluss-iggy-roundtrip-"+f.db+"-"+copyName)
	env := []string{
		"FLUSS_IGGY_STATE_DIR=" + state,
		"FLUSS_BOOTSTRAP=" + f.bootstrap,
		"FLUSS_DATABASE=" + f.db,
		"FLUSS_TARGET_TABLE=" + copyName,
		"IGGY_TCP_ADDRESS=" + f.iggy.addr,
		"IGGY_USERNAME=" + f.iggy.user,
		"IGGY_PASSWORD=" + f.iggy.pass,
		"IGGY_STREAM=" + stream,
		"IGGY_TOPIC=" + topic,
		"IGGY_CONSUMER_GROUP=" + group,
		"FLUSS_IGGY_HTTP_ADDRESS=127.0.0.1:0",
	}
	config := f.root + "/config/iggy_to_fluss.yaml"
	return f.startProcess(t, config, env, []string{"run", "-r", filepath.Join(f.root, "config", "resources", "bbolt.yaml"), config})
}

// groupProgress returns a function that sums, over the topic's partitions,
// how many messages the consumer group has committed (stored offset + 1).
func (f *fixture) groupProgress(t *testing.T, stream, topic, group string) func() (uint64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := iggy.Dial(ctx, iggy.Options{Addr: f.iggy.addr, Credentials: iggy.Credentials{Username: f.iggy.user, Password: f.iggy.pass}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	sid, _ := iggy.NameID(stream)
	tid, _ := iggy.NameID(topic)
	gid, _ := iggy.NameID(group)
	tp, err := c.GetTopic(ctx, sid, tid)
	if err != nil || tp == nil {
		t.Fatalf("topic %s of stream %s: %v", topic, stream, err)
	}
	return func() (uint64, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var sum uint64
		for p := range tp.Partitions {
			o, ok, err := c.GetOffset(ctx, iggy.GroupConsumer(gid), sid, tid, p)
			if err != nil && !iggy.IsNotFound(err) {
				return sum, err
			}
			if ok {
				sum += o + 1
			}
		}
		return sum, nil
	}
}

// scanCopy runs the Java tool's scan or state of a table of the fixture's
// database and returns its rows (compacted JSON), sorted.
func (f *fixture) scanCopy(t *testing.T, command, table string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := f.tool(ctx, command, f.db+"."+table)
	if err != nil {
		t.Fatal(err)
	}
	if command == "state" {
		return sortedLines(t, out)
	}
	var rows []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var l struct {
			Row json.RawMessage `json:"row"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("%s of %s: %q: %v", command, table, line, err)
		}
		rows = append(rows, compactRow(t, l.Row))
	}
	sort.Strings(rows)
	return rows
}

// sortedLines is the non-empty lines of out, sorted.
func sortedLines(t *testing.T, out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	sort.Strings(lines)
	return lines
}

func compactRow(t *testing.T, raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("row %s: %v", raw, err)
	}
	return b.String()
}

// multisetDiff returns the rows of want missing from got, how many rows
// of got repeat a row of want beyond its count there, and the rows of got
// that are no row of want.
func multisetDiff(want, got []string) (missing []string, dups int, foreign []string) {
	count := map[string]int{}
	for _, w := range want {
		count[w]++
	}
	seen := map[string]bool{}
	for _, g := range got {
		switch {
		case count[g] > 0:
			count[g]--
			seen[g] = true
		case seen[g]:
			dups++
		default:
			foreign = append(foreign, g)
		}
	}
	for w, n := range count {
		for range n {
			missing = append(missing, w)
		}
	}
	sort.Strings(missing)
	return missing, dups, foreign
}

// runBinary runs the fluss-iggy binary and returns its standard output.
func runBinary(ctx context.Context, bin string, env string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("fluss-iggy %s: %w\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), nil
}

func firstDiff(want, got []string) string {
	for i := 0; i < len(want) || i < len(got); i++ {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			return fmt.Sprintf("at line %d: want %s, got %s", i+1, w, g)
		}
	}
	return "none"
}
