package main

import (
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// TestFieldType: an untyped field is named after its default, its examples
// or its value in the examples of the object holding it (shard.index and
// shard.count were "unknown": required, so no default, and no examples of
// their own); typed fields keep their type.
func TestFieldType(t *testing.T) {
	shard := service.TemplateDataPluginField{FullName: "shard", Type: "object",
		Examples: []any{"not an object", map[string]any{"index": 0, "count": 2}}}
	for _, c := range []struct {
		f    service.TemplateDataPluginField
		want string
	}{
		{service.TemplateDataPluginField{FullName: "a", Type: "string", DefaultMarshalled: `"x"`}, "string"},
		{service.TemplateDataPluginField{FullName: "a", Type: "unknown", DefaultMarshalled: "3"}, "int"},
		{service.TemplateDataPluginField{FullName: "a", Type: "unknown", DefaultMarshalled: "-1"}, "int"},
		{service.TemplateDataPluginField{FullName: "a", Type: "unknown", DefaultMarshalled: "true"}, "bool"},
		{service.TemplateDataPluginField{FullName: "a", Type: "unknown", DefaultMarshalled: "0.5"}, "unknown"},
		{service.TemplateDataPluginField{FullName: "max_batch_rows", Type: "unknown", Examples: []any{1024}}, "int"},
		{service.TemplateDataPluginField{FullName: "shard.index", Type: "unknown"}, "int"},
		{service.TemplateDataPluginField{FullName: "shard.count", Type: "unknown"}, "int"},
		{service.TemplateDataPluginField{FullName: "shard.index", Type: "unknown", Examples: []any{0, "fluss-iggy-2"}}, "int or string"},
		{service.TemplateDataPluginField{FullName: "shard.other", Type: "unknown"}, "unknown"},
		{service.TemplateDataPluginField{FullName: "a", Type: "unknown", Examples: []any{[]any{1}}}, "unknown"},
		{service.TemplateDataPluginField{FullName: "a", Type: "unknown"}, "unknown"},
	} {
		if got := fieldType(c.f, []service.TemplateDataPluginField{shard, c.f}); got != c.want {
			t.Errorf("%s (%s, default %q, examples %v): %q, want %q", c.f.FullName, c.f.Type, c.f.DefaultMarshalled, c.f.Examples, got, c.want)
		}
	}
}
