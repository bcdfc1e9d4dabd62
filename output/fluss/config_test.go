package flussoutput

import (
	"strings"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
)

const minimalConfig = "bootstrap_servers: [127.0.0.1:9123]\ndatabase: d\ntable: t\n"

func parse(yaml string) (*outputConfig, error) {
	pc, err := Spec().ParseYAML(yaml, service.NewEnvironment())
	if err != nil {
		return nil, err
	}
	return parseConfig(pc)
}

func TestConfigErrors(t *testing.T) {
	for yaml, want := range map[string]string{
		"bootstrap_servers: []\ndatabase: d\ntable: t":           "field bootstrap_servers: at least one address",
		"bootstrap_servers: [nohostport]\ndatabase: d\ntable: t": `field bootstrap_servers: "nohostport" is not host:port`,
		"bootstrap_servers: [a:1]\ndatabase: ' '\ntable: t":      "field database: must not be empty",
		"bootstrap_servers: [a:1]\ndatabase: d\ntable: ''":       "field table: must not be empty",
		minimalConfig + "acks: some":                             `field acks: "some" is not one of: all, leader, none`,
		minimalConfig + "unknown_columns: drop":                  `field unknown_columns: "drop" is not one of: error, ignore`,
		minimalConfig + "max_in_flight: 0":                       "field max_in_flight: 0 is less than 1",
		minimalConfig + "connections_per_server: 0":              "field connections_per_server: 0 is less than 1",
		minimalConfig + "sasl: {username: '', password: p}":      "field sasl.username: must not be empty",
		minimalConfig + "acks: leader\nidempotent: true":         `field idempotent: an idempotent writer needs acks: all, not "leader"`,
	} {
		if _, err := parse(yaml); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: want an error containing %q, got %v", yaml, want, err)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	c, err := parse(minimalConfig)
	if err != nil {
		t.Fatal(err)
	}
	if c.acks != -1 || c.maxInFlight != 1 || c.ignoreUnknown || c.createPartitions || c.table.String() != "d.t" || !c.idempotent {
		t.Errorf("defaults: %+v", c)
	}
	for yaml, want := range map[string]bool{"acks: leader": false, "acks: none": false, "idempotent: false": false, "acks: all": true} {
		if c, err := parse(minimalConfig + yaml); err != nil || c.idempotent != want {
			t.Errorf("%s: idempotent %v (%v), want %v", yaml, c != nil && c.idempotent, err, want)
		}
	}
	if got, err := c.changeType.TryString(service.NewMessage(nil)); err != nil || got != "" {
		t.Errorf("change_type of a message without fluss_change_type: %q, %v (want empty)", got, err)
	}
	m := service.NewMessage(nil)
	m.MetaSetMut("fluss_change_type", "-D")
	if got, _ := c.changeType.TryString(m); got != "-D" {
		t.Errorf("change_type with fluss_change_type -D: %q", got)
	}
}

// TestLint: what `fluss-iggy lint` reports, through the stream builder.
func TestLint(t *testing.T) {
	base := "fluss: {bootstrap_servers: [a:1], database: d, table: t, "
	for yaml, want := range map[string]string{
		base + "acks: some}":          `field acks: "some" is not one of: all, leader, none`,
		base + "unknown_columns: x}":  `field unknown_columns: "x" is not one of: error, ignore`,
		base + "max_in_flight: many}": "field max_in_flight: many is not a whole number",
		base + "write_timeout: 0s}":   "field write_timeout: 0s is not a positive duration",
	} {
		err := service.NewStreamBuilder().AddOutputYAML(yaml)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want a lint error containing %q, got %v", yaml, want, err)
		}
	}
	if err := service.NewStreamBuilder().AddOutputYAML(base + "acks: leader, create_partitions: true, max_in_flight: 4}"); err != nil {
		t.Errorf("valid config: %v", err)
	}
}

func TestActionOf(t *testing.T) {
	for _, c := range []struct {
		ct   string
		pk   bool
		want action
		err  string
	}{
		{"", false, actWrite, ""}, {"+A", false, actWrite, ""}, {"+I", true, actWrite, ""},
		{"+U", true, actWrite, ""}, {"-U", true, actSkip, ""}, {"-D", true, actDelete, ""},
		{"-D", false, 0, "needs a primary-key table"}, {"+U", false, 0, "needs a primary-key table"},
		{"delete", true, 0, `"delete" is not a change type`},
	} {
		got, err := actionOf(c.ct, c.pk)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("actionOf(%q, %v): error %v, want %q", c.ct, c.pk, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("actionOf(%q, %v) = %v, %v; want %v", c.ct, c.pk, got, err, c.want)
		}
	}
}
