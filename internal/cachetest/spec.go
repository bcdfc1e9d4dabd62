package cachetest

import (
	"strings"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// CheckSpec checks that the cache plugin name is registered in the global
// environment (so `list caches` shows it) with a complete, beta ConfigSpec: a
// summary, a description, at least one example, a description on every field,
// and examples that pass Benthos's config linter.
func CheckSpec(t *testing.T, name string) {
	t.Helper()
	env := service.GlobalEnvironment()
	listed := false
	env.WalkCaches(func(n string, _ *service.ConfigView) { listed = listed || n == name })
	if !listed {
		t.Fatalf("cache %q is not registered", name)
	}
	view, _ := env.GetCacheConfig(name)
	td, err := view.TemplateData()
	if err != nil {
		t.Fatalf("cache %q template data: %v", name, err)
	}
	if td.Status != "beta" {
		t.Errorf("cache %q status = %q, want beta", name, td.Status)
	}
	if strings.TrimSpace(td.Summary) == "" {
		t.Errorf("cache %q has no summary", name)
	}
	if len(strings.TrimSpace(td.Description)) < 100 {
		t.Errorf("cache %q description is missing or too short: %q", name, td.Description)
	}
	if len(td.Fields) == 0 {
		t.Errorf("cache %q has no fields", name)
	}
	for _, f := range td.Fields {
		if strings.TrimSpace(f.Description) == "" {
			t.Errorf("cache %q field %s has no description", name, f.FullName)
		}
	}
	if len(td.Examples) == 0 {
		t.Errorf("cache %q has no examples", name)
	}
	for _, ex := range td.Examples {
		if ex.Title == "" || ex.Summary == "" {
			t.Errorf("cache %q example %q lacks a title or summary", name, ex.Title)
		}
		rb := service.NewResourceBuilder()
		if err := rb.AddYAML(ex.Config); err != nil {
			t.Errorf("cache %q example %q does not lint: %v\n%s", name, ex.Title, err, ex.Config)
		}
	}
}
