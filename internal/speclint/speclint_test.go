package speclint_test

import (
	"strings"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/internal/speclint"
)

// lint parses yaml against a one-field spec with rule and returns the lint
// messages.
func lint(t *testing.T, field *service.ConfigField, yaml string) string {
	t.Helper()
	return lintSpec(t, service.NewConfigSpec().Fields(field), yaml)
}

func lintSpec(t *testing.T, spec *service.ConfigSpec, yaml string) string {
	t.Helper()
	env := service.NewEmptyEnvironment()
	err := env.RegisterInput("probe", spec, func(*service.ParsedConfig, *service.Resources) (service.Input, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	b := env.NewStreamBuilder()
	if err := b.AddInputYAML("probe:\n  " + yaml); err != nil {
		return err.Error()
	}
	return ""
}

func TestRules(t *testing.T) {
	cases := []struct {
		field     *service.ConfigField
		yaml, bad string // bad: the message part, "" for a valid value
	}{
		{service.NewStringField("mode").LintRule(speclint.Enum("mode", "a", "b")), "mode: a", ""},
		{service.NewStringField("mode").LintRule(speclint.Enum("mode", "a", "b")), "mode: c", `field mode: "c" is not one of: a, b`},
		{service.NewIntField("n").LintRule(speclint.IntRange("n", 1, 10)), "n: 5", ""},
		{service.NewIntField("n").LintRule(speclint.IntRange("n", 1, 10)), "n: 11", "field n: 11 is outside 1 to 10"},
		{service.NewIntField("n").LintRule(speclint.MinInt("n", 1)), "n: -5", "field n: -5 is less than 1"},
		{service.NewStringField("d").LintRule(speclint.PositiveDuration("d")), "d: 10s", ""},
		{service.NewStringField("d").LintRule(speclint.PositiveDuration("d")), "d: soon", "field d: soon is not a positive duration"},
		{service.NewStringField("d").LintRule(speclint.PositiveDuration("d")), "d: 0s", "not a positive duration"},
		{service.NewStringField("a").LintRule(speclint.HostPort("a")), "a: 127.0.0.1:8090", ""},
		{service.NewStringField("a").LintRule(speclint.HostPort("a")), "a: '[::1]:8090'", ""},
		{service.NewStringField("a").LintRule(speclint.HostPort("a")), "a: nohostport", "field a: nohostport is not host:port"},
	}
	for _, c := range cases {
		got := lint(t, c.field, c.yaml)
		if (c.bad == "") != (got == "") || !strings.Contains(got, c.bad) {
			t.Errorf("%s: got %q, want %q", c.yaml, got, c.bad)
		}
	}
}

// TestIntField: an IntField's rule sees values of any type, which an int
// field's rule never does, and FieldInt still reads it.
func TestIntField(t *testing.T) {
	field := speclint.IntField("n").Default(1).LintRule(speclint.IntRange("n", 1, 10))
	for yaml, want := range map[string]string{
		"n: 3":    "",
		"n: four": "field n: four is not a whole number",
		"n: 2.5":  "field n: 2.5 is not a whole number",
		"n: 12":   "field n: 12 is outside 1 to 10",
	} {
		got := lint(t, field, yaml)
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("%s: got %q, want %q", yaml, got, want)
		}
	}
	pc, err := service.NewConfigSpec().Fields(field).ParseYAML("n: 7", nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := pc.FieldInt("n"); err != nil || n != 7 {
		t.Errorf("FieldInt: %d, %v", n, err)
	}
}
