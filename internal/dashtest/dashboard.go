package dashtest

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
)

// Dashboard is the part of a Grafana dashboard's JSON model the tests read.
type Dashboard struct {
	Title         string  `json:"title"`
	UID           string  `json:"uid"`
	SchemaVersion int     `json:"schemaVersion"`
	Panels        []Panel `json:"panels"`
	Templating    struct {
		List []Variable `json:"list"`
	} `json:"templating"`
}

// Panel is a dashboard panel; a row holds its panels in Panels when it is
// collapsed.
type Panel struct {
	ID          int            `json:"id"`
	Type        string         `json:"type"`
	Title       string         `json:"title"`
	Description string         `json:"description"`
	Datasource  *DatasourceRef `json:"datasource"`
	GridPos     GridPos        `json:"gridPos"`
	FieldConfig struct {
		Defaults struct {
			Unit string `json:"unit"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
	Targets []Target `json:"targets"`
	Panels  []Panel  `json:"panels"`
}

// GridPos is where a panel sits on the dashboard's 24-column grid.
type GridPos struct {
	H int `json:"h"`
	W int `json:"w"`
	X int `json:"x"`
	Y int `json:"y"`
}

// DatasourceRef names a data source by type and uid (here a variable).
type DatasourceRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// Target is one query of a panel.
type Target struct {
	RefID        string         `json:"refId"`
	Expr         string         `json:"expr"`
	LegendFormat string         `json:"legendFormat"`
	Datasource   *DatasourceRef `json:"datasource"`
	Instant      bool           `json:"instant"`
}

// Variable is a template variable.
type Variable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Query      json.RawMessage `json:"query"`
	Datasource *DatasourceRef  `json:"datasource"`
	IncludeAll bool            `json:"includeAll"`
	Multi      bool            `json:"multi"`
	AllValue   string          `json:"allValue"`
}

// QueryString returns the variable's query: a string, or the "query" of an
// object as newer Grafana versions write it.
func (v Variable) QueryString() string {
	var s string
	if json.Unmarshal(v.Query, &s) == nil {
		return s
	}
	var o struct {
		Query string `json:"query"`
	}
	if json.Unmarshal(v.Query, &o) == nil {
		return o.Query
	}
	return ""
}

// Load reads a dashboard's JSON model.
func Load(path string) (*Dashboard, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var d Dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &d, nil
}

// AllPanels returns every panel, the panels of collapsed rows included, in
// order.
func (d *Dashboard) AllPanels() []Panel {
	var out []Panel
	var walk func([]Panel)
	walk = func(ps []Panel) {
		for _, p := range ps {
			out = append(out, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out
}

// Variable returns the template variable called name.
func (d *Dashboard) Variable(name string) (Variable, bool) {
	for _, v := range d.Templating.List {
		if v.Name == name {
			return v, true
		}
	}
	return Variable{}, false
}

// varRef matches $name, ${name} and ${name:format}.
var varRef = regexp.MustCompile(`\$\{([A-Za-z0-9_]+)(?::[A-Za-z0-9_]+)?\}|\$([A-Za-z0-9_]+)`)

// Expand replaces the variables of expr ($name, ${name}, ${name:format})
// with values[name]. It fails on a variable values does not hold.
func Expand(expr string, values map[string]string) (string, error) {
	var unknown []string
	out := varRef.ReplaceAllStringFunc(expr, func(m string) string {
		sm := varRef.FindStringSubmatch(m)
		name := sm[1] + sm[2]
		v, ok := values[name]
		if !ok {
			unknown = append(unknown, m)
			return m
		}
		return v
	})
	if len(unknown) > 0 {
		return "", fmt.Errorf("unknown variables %s in %q", strings.Join(unknown, ", "), expr)
	}
	return out, nil
}

// labelValuesRe matches Grafana's label_values(SELECTOR, LABEL) and
// label_values(LABEL).
var labelValuesRe = regexp.MustCompile(`^\s*label_values\(\s*(?:(.+?)\s*,\s*)?([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*$`)

// ParseLabelValues splits a label_values query of a Prometheus variable into
// its series selector ("" when it has none) and label.
func ParseLabelValues(q string) (selector, label string, ok bool) {
	m := labelValuesRe.FindStringSubmatch(q)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// legendRe matches the {{label}} references of a legend format.
var legendRe = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)

// LegendLabels returns the labels a legend format refers to.
func LegendLabels(format string) []string {
	var out []string
	for _, m := range legendRe.FindAllStringSubmatch(format, -1) {
		out = append(out, m[1])
	}
	return out
}

// metricRe matches a metric name followed by a label selector, the form
// every expression of the dashboard uses for its series.
var metricRe = regexp.MustCompile(`([A-Za-z_:][A-Za-z0-9_:]*)\s*\{`)

// MetricNames returns the metric names an expression selects, sorted and
// without repeats.
func MetricNames(expr string) []string {
	seen := map[string]bool{}
	for _, m := range metricRe.FindAllStringSubmatch(expr, -1) {
		seen[m[1]] = true
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
