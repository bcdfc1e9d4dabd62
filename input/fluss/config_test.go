package flussinput

import (
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	_ "github.com/fluss-iggy/fluss-iggy/resources/bbolt"
	_ "github.com/fluss-iggy/fluss-iggy/resources/redis"
)

const baseYAML = `
bootstrap_servers: [ "127.0.0.1:9123" ]
database: shop
table: orders
checkpoint_cache: offs
`

func parseYAML(t *testing.T, extra string) (*inputConfig, error) {
	t.Helper()
	pc, err := Spec().ParseYAML(baseYAML+extra, nil)
	if err != nil {
		return nil, err
	}
	return parseConfig(pc)
}

func TestConfigDefaults(t *testing.T) {
	c, err := parseYAML(t, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.checkpointKey != "fluss_shop_orders" {
		t.Errorf("checkpoint key %q", c.checkpointKey)
	}
	if c.startMode != startModeEarliest || c.onUnresumable != unresumableFail || c.endAtLatest || c.arrowPayload {
		t.Errorf("unexpected defaults %+v", c)
	}
	if c.checkpointLimit != 1024 || c.maxBatchRows != 1024 || c.discoveryInterval != time.Minute {
		t.Errorf("unexpected defaults %+v", c)
	}
	if c.fetchMaxBytes != 16<<20 || c.fetchMaxBucketBytes != 1<<20 || c.fetchMaxWait != 500*time.Millisecond {
		t.Errorf("unexpected fetch defaults %+v", c)
	}
	if !c.batching.IsNoop() {
		t.Error("batching should be a no-op by default")
	}
	if c.sasl || c.shardCount != 0 || len(c.buckets) != 0 || len(c.columns) != 0 {
		t.Errorf("unexpected defaults %+v", c)
	}
}

func TestConfigValues(t *testing.T) {
	c, err := parseYAML(t, `
sasl: { username: u, password: p }
columns: [ b, a ]
table_type: primary_key
start_offset: 100
on_unresumable_offset: latest
end_at: latest
payload_format: arrow_ipc
shard: { index: 1, count: 3 }
checkpoint_limit: 7
max_batch_rows: 0
partition_discovery_interval: 0s
`)
	if err != nil {
		t.Fatal(err)
	}
	if !c.sasl || c.saslUser != "u" || c.saslPassword != "p" {
		t.Errorf("sasl %+v", c)
	}
	if strings.Join(c.columns, ",") != "b,a" || c.tableType != tableTypePK {
		t.Errorf("columns/table type %+v", c)
	}
	if c.startMode != startModeOffset || c.startOffset != 100 {
		t.Errorf("start %v %d", c.startMode, c.startOffset)
	}
	if c.onUnresumable != unresumableLatest || !c.endAtLatest || !c.arrowPayload {
		t.Errorf("enums %+v", c)
	}
	if c.shardIndex != 1 || c.shardCount != 3 || c.checkpointKey != "fluss_shop_orders" {
		t.Errorf("shard %d/%d key %q", c.shardIndex, c.shardCount, c.checkpointKey)
	}
	if c.checkpointLimit != 7 || c.maxBatchRows != 0 || c.discoveryInterval != 0 {
		t.Errorf("numbers %+v", c)
	}
}

func TestConfigMaxBatchRowsDefaults(t *testing.T) {
	for extra, want := range map[string]int{
		"":                            1024,
		"payload_format: arrow_ipc\n": 0,
		"payload_format: arrow_ipc\nmax_batch_rows: 500\n": 500,
		"max_batch_rows: 0\n":                              0,
		"max_batch_rows: 77\n":                             77,
	} {
		c, err := parseYAML(t, extra)
		if err != nil {
			t.Fatal(err)
		}
		if c.maxBatchRows != want {
			t.Errorf("%q: max_batch_rows %d, want %d", extra, c.maxBatchRows, want)
		}
	}
}

func TestConfigStartTimestamp(t *testing.T) {
	for in, want := range map[string]int64{
		`"2026-01-31T12:00:00Z"`:        1769860800000,
		`"2026-01-31T13:00:00.5+01:00"`: 1769860800500,
		`1769860800000`:                 1769860800000,
		`"1769860800000"`:               1769860800000,
	} {
		c, err := parseYAML(t, "start_offset: timestamp\nstart_timestamp: "+in+"\n")
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if c.startMode != startModeTimestamp || c.startTimestamp != want {
			t.Errorf("%s: got %d, want %d", in, c.startTimestamp, want)
		}
	}
}

func TestConfigCheckpointKeys(t *testing.T) {
	c, err := parseYAML(t, "buckets: [ 3, 1 ]\n")
	if err != nil {
		t.Fatal(err)
	}
	if c.checkpointKey != "fluss_shop_orders_buckets_1_3" {
		t.Errorf("key %q", c.checkpointKey)
	}
	c1, err := parseYAML(t, "partitions: [ a, b ]\n")
	if err != nil {
		t.Fatal(err)
	}
	c2, err := parseYAML(t, "partitions: [ b, a ]\n")
	if err != nil {
		t.Fatal(err)
	}
	if c1.checkpointKey != c2.checkpointKey || !strings.HasPrefix(c1.checkpointKey, "fluss_shop_orders_partitions_") {
		t.Errorf("keys %q %q", c1.checkpointKey, c2.checkpointKey)
	}
	c, err = parseYAML(t, "checkpoint_key: mine\n")
	if err != nil {
		t.Fatal(err)
	}
	if c.checkpointKey != "mine" {
		t.Errorf("key %q", c.checkpointKey)
	}
}

// Required fields are named when missing.
func TestConfigRequiredFields(t *testing.T) {
	// Required fields.
	for _, missing := range []string{"database", "table", "checkpoint_cache", "bootstrap_servers"} {
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(baseYAML), "\n") {
			if !strings.HasPrefix(l, missing+":") {
				lines = append(lines, l)
			}
		}
		pc, err := Spec().ParseYAML(strings.Join(lines, "\n"), nil)
		if err == nil {
			_, err = parseConfig(pc)
		}
		if err == nil || !strings.Contains(err.Error(), missing) {
			t.Errorf("missing %s: error %v", missing, err)
		}
	}
}

func TestConstructorChecksCache(t *testing.T) {
	pc, err := Spec().ParseYAML(baseYAML, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `field checkpoint_cache: cache resource "offs" is not defined; it usually comes from a resource file: fluss-iggy run -r config/resources/bbolt.yaml <config> (or add it under cache_resources)`
	if _, err := newInputFromParsed(pc, service.MockResources()); err == nil || err.Error() != want {
		t.Errorf("error %v\nwant %s", err, want)
	}
	if _, err := newInputFromParsed(pc, service.MockResources(service.MockResourcesOptAddCache("offs"))); err != nil {
		t.Error(err)
	}
}

func indent(s string) string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		out = append(out, "  "+l)
	}
	return strings.Join(out, "\n") + "\n"
}

func TestSpecDocumentsMetadata(t *testing.T) {
	for _, k := range []string{metaDatabase, metaTable, metaTableID, metaPartition, metaPartID, metaBucket, metaOffset, metaLastOffset, metaTimestamp, metaChangeType, metaSchemaID, metaMessageID} {
		if !strings.Contains(specDescription, "`"+k+"`") {
			t.Errorf("description does not list %s", k)
		}
	}
	for _, s := range []string{"=== Metadata", "=== Delivery guarantees"} {
		if !strings.Contains(specDescription, s) {
			t.Errorf("description lacks section %q", s)
		}
	}
}

// Every example of the spec is a valid config for the distribution.
func TestExamplesLint(t *testing.T) {
	var examples []service.TemplatDataPluginExample
	service.GlobalEnvironment().WalkInputs(func(name string, v *service.ConfigView) {
		if name != "fluss" {
			return
		}
		data, err := v.TemplateData()
		if err != nil {
			t.Fatal(err)
		}
		examples = data.Examples
	})
	if len(examples) < 3 {
		t.Fatalf("%d examples", len(examples))
	}
	for _, ex := range examples {
		b := service.NewStreamBuilder()
		if err := b.SetYAML(ex.Config); err != nil {
			t.Errorf("example %q: %v", ex.Title, err)
		}
	}
}
