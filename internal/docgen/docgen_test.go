package main

import (
	"bytes"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
)

const repoRoot = "../.."

// The committed reference must match the specs: CI fails here when a
// ConfigSpec changed without `go run ./internal/docgen`.
func TestDocsUpToDate(t *testing.T) {
	pages, err := generate(service.GlobalEnvironment())
	if err != nil {
		t.Fatal(err)
	}
	stale, err := compare(filepath.Join(repoRoot, "docs", "components"), pages)
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 {
		t.Fatalf("docs/components is stale: %s\nrun from the repository root: %s", strings.Join(stale, "; "), regenerateHint)
	}
}

// moduleImports returns the blank imports of a Go file that belong to this
// module: the plugins it registers.
func moduleImports(t *testing.T, path string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, imp := range f.Imports {
		if imp.Name == nil || imp.Name.Name != "_" {
			continue
		}
		p, _ := strconv.Unquote(imp.Path.Value)
		if strings.HasPrefix(p, "github.com/fluss-iggy/fluss-iggy/") {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// docgen documents exactly the plugins the binary ships.
func TestPluginListMatchesBinary(t *testing.T) {
	binary := moduleImports(t, filepath.Join(repoRoot, "cmd", "fluss-iggy", "main.go"))
	documented := moduleImports(t, "plugins.go")
	if !slices.Equal(binary, documented) {
		t.Fatalf("cmd/fluss-iggy/main.go imports our plugins\n  %v\nbut internal/docgen/plugins.go documents\n  %v\nmake the two lists equal, then run %s", binary, documented, regenerateHint)
	}
}

func TestEveryComponentAndFieldIsDocumented(t *testing.T) {
	env := service.GlobalEnvironment()
	pages, err := generate(env)
	if err != nil {
		t.Fatal(err)
	}
	cs := components(env)
	if len(cs) == 0 {
		t.Fatal("no components registered")
	}
	index := string(pages["README.md"])
	for _, c := range cs {
		page, ok := pages[c.page]
		if !ok {
			t.Errorf("no page for the %s %q", c.typ, c.name)
			continue
		}
		if !strings.Contains(index, "("+c.page+")") {
			t.Errorf("index does not link %s", c.page)
		}
		td, err := c.view.TemplateData()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range td.Fields {
			if !bytes.Contains(page, []byte("### `"+f.FullName+"`\n")) {
				t.Errorf("%s.md lacks field %s", c.name, f.FullName)
			}
		}
		for _, ex := range td.Examples {
			if !bytes.Contains(page, []byte("### "+ex.Title+"\n")) {
				t.Errorf("%s.md lacks example %q", c.name, ex.Title)
			}
		}
		if !bytes.HasPrefix(page, []byte(header+"\n")) {
			t.Errorf("%s.md does not start with the generated-file header", c.name)
		}
		if n := bytes.Count(page, []byte("```")); n%2 != 0 {
			t.Errorf("%s.md has an unbalanced code fence (%d fences)", c.name, n)
		}
	}
	for _, want := range []string{"prometheus.md", "iggy_input.md", "iggy_output.md", "bbolt.md", "redis.md", "fluss_input.md", "fluss_output.md"} {
		if _, ok := pages[want]; !ok {
			t.Errorf("%s not generated", want)
		}
	}
}

func TestWriteAndCheck(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "components")
	var out, errb bytes.Buffer
	if code := run([]string{"-check", "-dir", dir}, &out, &errb); code != 1 {
		t.Fatalf("-check on a missing dir: exit %d, want 1 (%s)", code, errb.String())
	}
	if code := run([]string{"-dir", dir}, &out, &errb); code != 0 {
		t.Fatalf("generate: exit %d: %s", code, errb.String())
	}
	check := func() (int, string) {
		var o, e bytes.Buffer
		code := run([]string{"-check", "-dir", dir}, &o, &e)
		return code, e.String()
	}
	if code, msg := check(); code != 0 {
		t.Fatalf("-check right after generating: exit %d: %s", code, msg)
	}

	page := filepath.Join(dir, "prometheus.md")
	orig, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, append(orig, "edited\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, msg := check(); code != 1 || !strings.Contains(msg, "prometheus.md differs") || !strings.Contains(msg, regenerateHint) {
		t.Errorf("-check after an edit: exit %d, %q", code, msg)
	}

	if err := os.Remove(page); err != nil {
		t.Fatal(err)
	}
	if code, msg := check(); code != 1 || !strings.Contains(msg, "prometheus.md is missing") {
		t.Errorf("-check after a removal: exit %d, %q", code, msg)
	}

	extra := filepath.Join(dir, "gone.md")
	if err := os.WriteFile(extra, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, msg := check(); code != 1 || !strings.Contains(msg, "gone.md documents no registered component") {
		t.Errorf("-check with a leftover page: exit %d, %q", code, msg)
	}

	// Regenerating restores the page and removes the leftover.
	if code := run([]string{"-dir", dir}, &out, &errb); code != 0 {
		t.Fatalf("regenerate: exit %d: %s", code, errb.String())
	}
	if _, err := os.Stat(extra); !os.IsNotExist(err) {
		t.Errorf("leftover page survived regeneration: %v", err)
	}
	if code, msg := check(); code != 0 {
		t.Errorf("-check after regenerating: exit %d: %s", code, msg)
	}

	if code := run([]string{"-no-such-flag"}, &out, &errb); code != 2 {
		t.Errorf("bad flag: exit %d, want 2", code)
	}
}

func TestAsciidocToMarkdown(t *testing.T) {
	cases := []struct {
		name, in string
		top      int
		want     string
	}{
		{"plain", "Just `code` and text.", 3, "Just `code` and text."},
		{"headings", "== Top\ntext\n=== Sub", 3, "### Top\ntext\n#### Sub"},
		{"headings start deeper", "=== Top\n==== Sub", 2, "## Top\n### Sub"},
		{"link", "see https://example.com/x[the docs^] now", 2, "see [the docs](https://example.com/x) now"},
		{"link without text", "https://example.com[]", 2, "[https://example.com](https://example.com)"},
		{"link in code span untouched", "`https://a.b[c]` and https://a.b[c]", 2, "`https://a.b[c]` and [c](https://a.b)"},
		{"xref", "read xref:components/foo.adoc[foo] first", 2, "read foo first"},
		{"source block", "[source,yaml]\n----\na: 1\n== not a heading\n----\nafter", 2, "```yaml\na: 1\n== not a heading\n```\nafter"},
		{"bare block", "----\nx\n----", 2, "```\nx\n```"},
		{"markdown fence kept", "```yaml\n== x\n```\n== H", 2, "```yaml\n== x\n```\n## H"},
		{"not a heading", "a == b", 2, "a == b"},
	}
	for _, c := range cases {
		if got := asciidocToMarkdown(c.in, c.top); got != c.want {
			t.Errorf("%s: got\n%q\nwant\n%q", c.name, got, c.want)
		}
	}
}
