// Command docgen writes the configuration reference of the components that
// fluss-iggy adds to Benthos (inputs, outputs, caches, metrics exporters, ...)
// into docs/components/, one Markdown page per component plus an index, from
// the ConfigSpecs they register. Run it from the repository root:
//
//	go run ./internal/docgen          # (re)write docs/components
//	go run ./internal/docgen -check   # exit 1 when docs/components is stale
package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/template"

	"github.com/redpanda-data/benthos/v4/public/service"
	"gopkg.in/yaml.v3"
)

// regenerateHint is printed when -check finds stale pages.
const regenerateHint = "go run ./internal/docgen"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("docgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", filepath.Join("docs", "components"), "directory the pages are written to")
	check := fs.Bool("check", false, "write nothing; exit 1 when the pages in -dir differ from what would be generated")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	pages, err := generate(service.GlobalEnvironment())
	if err != nil {
		fmt.Fprintf(stderr, "docgen: %v\n", err)
		return 1
	}
	if *check {
		stale, err := compare(*dir, pages)
		if err != nil {
			fmt.Fprintf(stderr, "docgen: %v\n", err)
			return 1
		}
		if len(stale) > 0 {
			fmt.Fprintf(stderr, "docgen: %s is stale (%s); run %s\n", *dir, strings.Join(stale, "; "), regenerateHint)
			return 1
		}
		fmt.Fprintf(stdout, "docgen: %s is up to date (%d pages)\n", *dir, len(pages))
		return 0
	}
	if err := write(*dir, pages); err != nil {
		fmt.Fprintf(stderr, "docgen: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "docgen: wrote %d pages to %s\n", len(pages), *dir)
	return 0
}

// component is one registered plugin.
type component struct {
	typ  string // input, output, cache, ...
	name string
	page string // its file: name.md, or name_type.md when types share the name
	view *service.ConfigView
}

// typeOrder is the order of component types in the index.
var typeOrder = []string{"input", "output", "processor", "cache", "rate_limit", "buffer", "metrics", "tracer", "scanner"}

// components lists every component registered in env, ordered by type then
// name.
func components(env *service.Environment) []component {
	var cs []component
	add := func(typ string) func(string, *service.ConfigView) {
		return func(name string, v *service.ConfigView) {
			cs = append(cs, component{typ: typ, name: name, view: v})
		}
	}
	env.WalkInputs(add("input"))
	env.WalkOutputs(add("output"))
	env.WalkProcessors(add("processor"))
	env.WalkCaches(add("cache"))
	env.WalkRateLimits(add("rate_limit"))
	env.WalkBuffers(add("buffer"))
	env.WalkMetrics(add("metrics"))
	env.WalkTracers(add("tracer"))
	env.WalkScanners(add("scanner"))
	slices.SortFunc(cs, func(a, b component) int {
		return cmp.Or(cmp.Compare(slices.Index(typeOrder, a.typ), slices.Index(typeOrder, b.typ)), cmp.Compare(a.name, b.name))
	})
	types := map[string]int{} // how many component types use a name
	for _, c := range cs {
		types[c.name]++
	}
	for i := range cs {
		cs[i].page = pageName(cs[i], types[cs[i].name] > 1)
	}
	return cs
}

// generate renders every page: file name -> content.
func generate(env *service.Environment) (map[string][]byte, error) {
	cs := components(env)
	if len(cs) == 0 {
		return nil, errors.New("no components are registered")
	}
	pages := map[string][]byte{}
	var index []indexEntry
	for _, c := range cs {
		file := c.page
		if _, dup := pages[file]; dup || file == "README.md" {
			return nil, fmt.Errorf("two components would be documented in %s (the %s %q clashes)", file, c.typ, c.name)
		}
		td, err := c.view.TemplateData()
		if err != nil {
			return nil, fmt.Errorf("reading the spec of the %s %q: %w", c.typ, c.name, err)
		}
		page, err := renderPage(c.typ, c.view, td)
		if err != nil {
			return nil, fmt.Errorf("rendering the %s %q: %w", c.typ, c.name, err)
		}
		pages[file] = page
		index = append(index, indexEntry{File: file, Name: c.name, Type: c.typ, Status: td.Status, Summary: oneLine(asciidocToMarkdown(td.Summary, 0))})
	}
	var buf bytes.Buffer
	if err := indexTmpl.Execute(&buf, struct {
		Header  string
		Entries []indexEntry
	}{header, index}); err != nil {
		return nil, fmt.Errorf("rendering the index: %w", err)
	}
	pages["README.md"] = buf.Bytes()
	return pages, nil
}

// pageName is a component's page: its name, with its type when another
// type has a component of the same name (fluss_input.md, fluss_output.md).
func pageName(c component, shared bool) string {
	if shared {
		return c.name + "_" + c.typ + ".md"
	}
	return c.name + ".md"
}

// write replaces the pages in dir, removing Markdown pages that are no longer
// generated.
func write(dir string, pages map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	existing, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return err
	}
	for _, p := range existing {
		if _, keep := pages[filepath.Base(p)]; !keep {
			if err := os.Remove(p); err != nil {
				return fmt.Errorf("removing the outdated %s: %w", p, err)
			}
		}
	}
	for _, name := range sortedKeys(pages) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pages[name], 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", p, err)
		}
	}
	return nil
}

// compare lists how dir differs from pages.
func compare(dir string, pages map[string][]byte) ([]string, error) {
	var stale []string
	for _, name := range sortedKeys(pages) {
		got, err := os.ReadFile(filepath.Join(dir, name))
		switch {
		case errors.Is(err, os.ErrNotExist):
			stale = append(stale, name+" is missing")
		case err != nil:
			return nil, fmt.Errorf("reading %s: %w", filepath.Join(dir, name), err)
		case !bytes.Equal(got, pages[name]):
			stale = append(stale, name+" differs")
		}
	}
	existing, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return nil, err
	}
	for _, p := range existing {
		if _, ok := pages[filepath.Base(p)]; !ok {
			stale = append(stale, filepath.Base(p)+" documents no registered component")
		}
	}
	return stale, nil
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

const header = "<!-- Generated from the components' ConfigSpecs by `" + regenerateHint + "`. DO NOT EDIT. -->"

type indexEntry struct {
	File, Name, Type, Status, Summary string
}

var indexTmpl = template.Must(template.New("index").Parse(`{{.Header}}

# Component reference

The components fluss-iggy adds to Benthos. Every Benthos component (` + "`fluss-iggy list`" + `) can be used
alongside them; see the Benthos documentation for those.

| component | type | status | summary |
| --- | --- | --- | --- |
{{range .Entries}}| [` + "`{{.Name}}`" + `]({{.File}}) | {{.Type}} | {{.Status}} | {{.Summary}} |
{{end}}`))

// pageData is what the page template sees.
type pageData struct {
	Header      string
	Name, Type  string
	Status      string
	Version     string
	Categories  string
	Summary     string
	Description string
	Footnotes   string
	Common      string
	Advanced    string
	ShowAdv     bool
	Examples    []service.TemplatDataPluginExample
	Fields      []fieldData
}

type fieldData struct {
	Name        string
	Description string
	Type        string
	Default     string
	HasDefault  bool
	Required    bool
	Optional    bool
	Advanced    bool
	Secret      bool
	Interp      bool
	Options     []string
	Annotated   [][2]string
	Examples    []string
}

func renderPage(typ string, view *service.ConfigView, td service.TemplateDataPlugin) ([]byte, error) {
	d := pageData{
		Header:      header,
		Name:        td.Name,
		Type:        typ,
		Status:      td.Status,
		Version:     td.Version,
		Summary:     strings.TrimSpace(asciidocToMarkdown(td.Summary, 0)),
		Description: strings.TrimSpace(asciidocToMarkdown(td.Description, 3)),
		Footnotes:   strings.TrimSpace(asciidocToMarkdown(td.Footnotes, 3)),
		Common:      strings.TrimRight(td.CommonConfigYAML, "\n"),
		Advanced:    strings.TrimRight(td.AdvancedConfigYAML, "\n"),
	}
	d.ShowAdv = d.Advanced != d.Common
	if td.Categories != "" {
		var cats []string
		if err := json.Unmarshal([]byte(td.Categories), &cats); err == nil {
			d.Categories = strings.Join(cats, ", ")
		}
	}
	for _, ex := range td.Examples {
		ex.Summary = strings.TrimSpace(asciidocToMarkdown(ex.Summary, 0))
		ex.Config = strings.Trim(ex.Config, "\n")
		d.Examples = append(d.Examples, ex)
	}
	flags, err := fieldFlags(view)
	if err != nil {
		return nil, err
	}
	for _, f := range td.Fields {
		fl := flags[f.FullName]
		fd := fieldData{
			Name:        f.FullName,
			Description: strings.TrimSpace(asciidocToMarkdown(f.Description, 4)),
			Type:        fieldType(f, td.Fields),
			Default:     f.DefaultMarshalled,
			HasDefault:  f.DefaultMarshalled != "",
			Optional:    fl.optional,
			Advanced:    fl.advanced,
			Secret:      f.IsSecret,
			Interp:      f.IsInterpolated,
			Annotated:   f.AnnotatedOptions,
		}
		fd.Required = !fd.HasDefault && !fl.optional && !fl.object
		if len(f.AnnotatedOptions) == 0 {
			fd.Options = f.Options
		}
		for i := range fd.Annotated {
			fd.Annotated[i][1] = oneLine(asciidocToMarkdown(fd.Annotated[i][1], 0))
		}
		for _, e := range f.ExamplesMarshalled {
			fd.Examples = append(fd.Examples, strings.TrimRight(e, "\n"))
		}
		d.Fields = append(d.Fields, fd)
	}
	var buf bytes.Buffer
	if err := pageTmpl.Execute(&buf, d); err != nil {
		return nil, err
	}
	return tidy(buf.String()), nil
}

// tidy strips trailing spaces, collapses runs of blank lines outside code
// fences and ends the text with one newline.
func tidy(s string) []byte {
	var out []string
	inFence := false
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		l = strings.TrimRight(l, " \t")
		if strings.HasPrefix(l, "```") {
			inFence = !inFence
		}
		if !inFence && l == "" && len(out) > 0 && out[len(out)-1] == "" {
			continue
		}
		out = append(out, l)
	}
	return []byte(strings.Join(out, "\n") + "\n")
}

// flags are the field properties TemplateData leaves out.
type flags struct {
	optional, advanced, object bool
}

// jsonField is the part of a field spec in ConfigView.FormatJSON we read.
type jsonField struct {
	Name       string      `json:"name"`
	Kind       string      `json:"kind"`
	Optional   bool        `json:"is_optional"`
	Advanced   bool        `json:"is_advanced"`
	Deprecated bool        `json:"is_deprecated"`
	Children   []jsonField `json:"children"`
}

// fieldFlags maps each field's full name, spelt as TemplateData spells it, to
// whether it is optional, advanced, or an object of other fields.
func fieldFlags(view *service.ConfigView) (map[string]flags, error) {
	raw, err := view.FormatJSON()
	if err != nil {
		return nil, fmt.Errorf("reading the field specs: %w", err)
	}
	var spec struct {
		Config jsonField `json:"config"`
	}
	if err := json.Unmarshal(raw, &spec); err != nil {
		return nil, fmt.Errorf("decoding the field specs: %w", err)
	}
	out := map[string]flags{}
	var walk func(path string, fs []jsonField)
	walk = func(path string, fs []jsonField) {
		for _, f := range fs {
			if f.Deprecated {
				continue
			}
			full := path + f.Name
			out[full] = flags{optional: f.Optional, advanced: f.Advanced, object: len(f.Children) > 0}
			if len(f.Children) > 0 {
				walk(full+kindSuffix(f.Kind)+".", f.Children)
			}
		}
	}
	root := ""
	switch spec.Config.Kind {
	case "array":
		root = "[]."
	case "map":
		root = "<name>."
	}
	walk(root, spec.Config.Children)
	return out, nil
}

func kindSuffix(kind string) string {
	switch kind {
	case "array":
		return "[]"
	case "2darray":
		return "[][]"
	case "map":
		return ".<name>"
	}
	return ""
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

const fence = "```"

var pageTmpl = template.Must(template.New("page").Parse(`{{.Header}}

# ` + "`{{.Name}}`" + ` {{.Type}}

**Status:** {{.Status}}{{if .Version}} · **Since:** fluss-iggy {{.Version}}{{end}}{{if .Categories}} · **Categories:** {{.Categories}}{{end}}

{{.Summary}}

## Configuration

Common fields:

` + fence + `yaml
{{.Common}}
` + fence + `
{{if .ShowAdv}}
All fields, with their defaults:

` + fence + `yaml
{{.Advanced}}
` + fence + `
{{end}}
{{- if .Description}}
## Description

{{.Description}}
{{end}}
{{- if .Examples}}
## Examples
{{range .Examples}}
### {{.Title}}

{{.Summary}}

` + fence + `yaml
{{.Config}}
` + fence + `
{{end}}{{end}}
## Fields
{{range .Fields}}
### ` + "`{{.Name}}`" + `

{{.Description}}

*Type:* ` + "`{{.Type}}`" + `{{if .HasDefault}} · *Default:* ` + "`{{.Default}}`" + `{{end}}{{if .Required}} · **Required**{{end}}{{if .Optional}} · *Optional*{{end}}{{if .Advanced}} · *Advanced*{{end}}{{if .Secret}} · *Secret* (redacted in ` + "`echo`" + ` output){{end}}{{if .Interp}} · *Interpolated* (supports ` + "`${! }`" + ` functions){{end}}
{{- if .Annotated}}

| option | meaning |
| --- | --- |
{{range .Annotated}}| ` + "`{{index . 0}}`" + ` | {{index . 1}} |
{{end}}{{- end}}
{{- if .Options}}

*Options:* {{range $i, $o := .Options}}{{if $i}}, {{end}}` + "`{{$o}}`" + `{{end}}
{{- end}}
{{- if .Examples}}

` + fence + `yaml
# Examples
{{range $i, $e := .Examples}}{{if $i}}
{{end}}{{$e}}
{{end}}` + fence + `
{{- end}}
{{end}}
{{- if .Footnotes}}
## Notes

{{.Footnotes}}
{{end}}`))

// fieldType names the type of field f of fields. An untyped field
// (declared so, that lint sees values of the wrong type) is named after the
// values it is shown with (shownValues): whole numbers are int, true/false
// bool, text string, whole numbers and text together "int or string".
func fieldType(f service.TemplateDataPluginField, fields []service.TemplateDataPluginField) string {
	if f.Type != "unknown" {
		return f.Type
	}
	kinds := map[string]bool{}
	for _, v := range shownValues(f, fields) {
		switch v.(type) {
		case int:
			kinds["int"] = true
		case bool:
			kinds["bool"] = true
		case string:
			kinds["string"] = true
		default: // lists, objects, decimals: name no type
			return f.Type
		}
	}
	switch {
	case len(kinds) == 1:
		for k := range kinds {
			return k
		}
	case len(kinds) == 2 && kinds["int"] && kinds["string"]:
		return "int or string"
	}
	return f.Type
}

// shownValues are the values field f is shown with: its default, else its
// examples, else its value in the examples of the object that holds it
// (shard.index in shard's {index: 0, count: 2}).
func shownValues(f service.TemplateDataPluginField, fields []service.TemplateDataPluginField) []any {
	if f.DefaultMarshalled != "" {
		var v any
		if yaml.Unmarshal([]byte(f.DefaultMarshalled), &v) != nil {
			return nil
		}
		return []any{v}
	}
	out := slices.Clone(f.Examples)
	parent, key, nested := cutLast(f.FullName, ".")
	for i := 0; nested && len(out) == 0 && i < len(fields); i++ {
		if fields[i].FullName != parent {
			continue
		}
		for _, e := range fields[i].Examples {
			m, _ := e.(map[string]any)
			if v, ok := m[key]; ok {
				out = append(out, v)
			}
		}
	}
	return out
}

// cutLast cuts s around the last sep.
func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}
