package dashtest

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

// panelTypes are the standard panel types the dashboard may use.
var panelTypes = map[string]bool{"row": true, "timeseries": true, "stat": true, "gauge": true, "bargauge": true, "table": true}

// units are the Grafana unit ids the dashboard may use (all of them
// standard units of Grafana 10 and 11).
var units = map[string]bool{
	"none": true, "short": true, "locale": true, "percentunit": true,
	"s": true, "ms": true,
	"Bps": true, "bytes": true,
	"rowsps": true, "mps": true, "ops": true, "reqps": true, "wps": true, "cps": true,
}

// TestDashboardStructure checks the dashboard's JSON without a server.
func TestDashboardStructure(t *testing.T) {
	d, err := Load(dashboardPath(t))
	if err != nil {
		t.Fatal(err)
	}
	if d.Title == "" || d.UID == "" || d.SchemaVersion < 36 {
		t.Errorf("title %q, uid %q, schemaVersion %d: want a title, a uid and schemaVersion >= 36 (Grafana 9.x and later)", d.Title, d.UID, d.SchemaVersion)
	}

	// A datasource variable of type prometheus, and query variables on it.
	ds, ok := d.Variable("datasource")
	if !ok || ds.Type != "datasource" || ds.QueryString() != "prometheus" {
		t.Errorf("want a variable datasource of type datasource for prometheus, have %+v", ds)
	}
	known := map[string]string{"__rate_interval": "5s", "__interval": "1s", "__range": "1m"}
	for _, v := range d.Templating.List {
		known[v.Name] = "x"
		if v.Type != "query" {
			continue
		}
		if v.Datasource == nil || v.Datasource.UID != "${datasource}" {
			t.Errorf("variable %s: datasource %+v, want uid ${datasource}", v.Name, v.Datasource)
		}
		if _, _, ok := ParseLabelValues(v.QueryString()); !ok {
			t.Errorf("variable %s: query %q is not label_values(SELECTOR, LABEL)", v.Name, v.QueryString())
		}
		if v.IncludeAll && v.AllValue != ".*" {
			t.Errorf("variable %s: allValue %q, want .* (so that All is a regex, not a list of values)", v.Name, v.AllValue)
		}
	}
	for _, want := range []string{"job", "instance"} {
		if _, ok := d.Variable(want); !ok {
			t.Errorf("no variable %s", want)
		}
	}

	ids := map[int]string{}
	type cell struct{ x, y int }
	taken := map[cell]string{}
	panels := d.AllPanels()
	queries := 0
	for _, p := range panels {
		where := "panel " + p.Title
		if p.Title == "" {
			t.Errorf("panel %d has no title", p.ID)
		}
		if !panelTypes[p.Type] {
			t.Errorf("%s: type %q is not one of the standard panel types %v", where, p.Type, keys(panelTypes))
		}
		if other, dup := ids[p.ID]; dup || p.ID == 0 {
			t.Errorf("%s: id %d is zero or also that of %s", where, p.ID, other)
		}
		ids[p.ID] = p.Title
		g := p.GridPos
		if g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 || g.Y < 0 {
			t.Errorf("%s: gridPos %+v is off the 24-column grid", where, g)
		}
	cells:
		for x := g.X; x < g.X+g.W; x++ {
			for y := g.Y; y < g.Y+g.H; y++ {
				if other, ok := taken[cell{x, y}]; ok {
					t.Errorf("%s overlaps %s at column %d, row %d", where, other, x, y)
					break cells
				}
				taken[cell{x, y}] = p.Title
			}
		}
		if p.Type == "row" {
			continue
		}
		if p.Description == "" {
			t.Errorf("%s: no description", where)
		}
		if p.Datasource == nil || p.Datasource.Type != "prometheus" || p.Datasource.UID != "${datasource}" {
			t.Errorf("%s: datasource %+v, want prometheus with uid ${datasource}", where, p.Datasource)
		}
		if u := p.FieldConfig.Defaults.Unit; !units[u] {
			t.Errorf("%s: unit %q is not one of %v", where, u, keys(units))
		}
		if len(p.Targets) == 0 {
			t.Errorf("%s: no queries", where)
		}
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			queries++
			if tg.RefID == "" || refs[tg.RefID] {
				t.Errorf("%s: refId %q empty or repeated", where, tg.RefID)
			}
			refs[tg.RefID] = true
			if tg.Datasource != nil && tg.Datasource.UID != "${datasource}" {
				t.Errorf("%s query %s: datasource %+v, want uid ${datasource}", where, tg.RefID, tg.Datasource)
			}
			if strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("%s query %s: no expression", where, tg.RefID)
				continue
			}
			if _, err := Expand(tg.Expr, known); err != nil {
				t.Errorf("%s query %s: %v", where, tg.RefID, err)
			}
			if len(MetricNames(tg.Expr)) == 0 {
				t.Errorf("%s query %s: selects no metric with a label selector (every query should filter on job and instance): %s", where, tg.RefID, tg.Expr)
			}
			for _, sel := range []string{`job=~"$job"`, `instance=~"$instance"`} {
				if !strings.Contains(tg.Expr, sel) {
					t.Errorf("%s query %s: does not filter on %s: %s", where, tg.RefID, sel, tg.Expr)
				}
			}
		}
	}
	if queries < 10 {
		t.Errorf("only %d queries", queries)
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// compose is the part of a compose file the test reads.
type compose struct {
	Name     string `yaml:"name"`
	Services map[string]struct {
		Image string `yaml:"image"`
		Build *struct {
			Context    string `yaml:"context"`
			Dockerfile string `yaml:"dockerfile"`
		} `yaml:"build"`
		NetworkMode string            `yaml:"network_mode"`
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		Volumes     []string          `yaml:"volumes"`
		Ports       []string          `yaml:"ports"`
		DependsOn   []string          `yaml:"depends_on"`
		CapAdd      []string          `yaml:"cap_add"`
		SecurityOpt []string          `yaml:"security_opt"`
		Restart     string            `yaml:"restart"`
	} `yaml:"services"`
	Volumes map[string]any `yaml:"volumes"`
}

// TestDeployFiles parses the files of deploy/ and checks that they agree:
// every file the compose file mounts exists, Grafana's provisioning points
// at the mounted dashboard and at Prometheus, and Prometheus scrapes the
// pipeline's HTTP address. The compose file cannot be run here (no container
// engine runs one on this machine), so this is as far as its test goes.
func TestDeployFiles(t *testing.T) {
	deploy := repoPath(t, "deploy")
	var c compose
	// Strict: a key the test does not know (a misspelt one) fails.
	readYAMLStrict(t, filepath.Join(deploy, "compose.yaml"), &c)
	for _, name := range []string{"prometheus", "grafana", "fluss-iggy", "iggy"} {
		if _, ok := c.Services[name]; !ok {
			t.Errorf("compose.yaml: no service %s", name)
		}
	}
	mounts := map[string]string{} // container path -> host path
	for name, s := range c.Services {
		if s.Image == "" && s.Build == nil {
			t.Errorf("compose.yaml: service %s has neither image nor build", name)
		}
		if s.Image != "" && s.Build == nil && (!strings.Contains(s.Image, ":") || strings.HasSuffix(s.Image, ":latest")) {
			t.Errorf("compose.yaml: service %s: image %q is not pinned to a version", name, s.Image)
		}
		if s.Build != nil {
			df := filepath.Join(deploy, s.Build.Context, s.Build.Dockerfile)
			if _, err := os.Stat(df); err != nil {
				t.Errorf("compose.yaml: service %s builds from %s: %v", name, df, err)
			}
		}
		for _, dep := range s.DependsOn {
			if _, ok := c.Services[dep]; !ok {
				t.Errorf("compose.yaml: service %s depends on unknown service %s", name, dep)
			}
		}
		for _, v := range s.Volumes {
			parts := strings.Split(v, ":")
			if len(parts) < 2 {
				t.Errorf("compose.yaml: service %s: volume %q is not SOURCE:TARGET", name, v)
				continue
			}
			src, dst := parts[0], parts[1]
			if !strings.HasPrefix(src, ".") {
				if _, ok := c.Volumes[src]; !ok {
					t.Errorf("compose.yaml: service %s mounts the undeclared volume %s", name, src)
				}
				continue
			}
			host := filepath.Join(deploy, src)
			if _, err := os.Stat(host); err != nil {
				t.Errorf("compose.yaml: service %s mounts %s: %v", name, src, err)
			}
			mounts[dst] = host
		}
	}

	// Prometheus scrapes the pipeline's HTTP address; its config is valid.
	promConf := filepath.Join(deploy, "prometheus", "prometheus.yml")
	var pc struct {
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	readYAML(t, promConf, &pc)
	if mounts["/etc/prometheus/prometheus.yml"] != promConf {
		t.Errorf("compose.yaml does not mount %s at /etc/prometheus/prometheus.yml", promConf)
	}
	pipelineAddr := c.Services["fluss-iggy"].Environment["FLUSS_IGGY_HTTP_ADDRESS"]
	_, port, _ := strings.Cut(pipelineAddr, ":")
	scraped := false
	for _, sc := range pc.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			for _, tg := range st.Targets {
				scraped = scraped || strings.HasSuffix(tg, ":"+port)
			}
		}
	}
	if port == "" || !scraped {
		t.Errorf("prometheus.yml scrapes no target on the pipeline's port (FLUSS_IGGY_HTTP_ADDRESS %q)", pipelineAddr)
	}
	if tool := promtool(t); tool != "" {
		out, err := exec.Command(tool, "check", "config", promConf).CombinedOutput()
		if err != nil {
			t.Errorf("promtool check config %s: %v\n%s", promConf, err, out)
		}
	}

	// Grafana: the data source is that Prometheus, the dashboard provider
	// reads the directory the dashboard is mounted in.
	var dsConf struct {
		APIVersion  int `yaml:"apiVersion"`
		Datasources []struct {
			Name, Type, URL, UID string
			IsDefault            bool `yaml:"isDefault"`
			JSONData             struct {
				TimeInterval string `yaml:"timeInterval"`
			} `yaml:"jsonData"`
		} `yaml:"datasources"`
	}
	dsFile := filepath.Join(deploy, "grafana", "provisioning", "datasources", "prometheus.yaml")
	readYAML(t, dsFile, &dsConf)
	if dsConf.APIVersion != 1 || len(dsConf.Datasources) != 1 {
		t.Fatalf("%s: want apiVersion 1 and one data source, have %+v", dsFile, dsConf)
	}
	pds := dsConf.Datasources[0]
	if pds.Type != "prometheus" || !strings.HasSuffix(pds.URL, ":9090") || !pds.IsDefault || pds.JSONData.TimeInterval == "" {
		t.Errorf("%s: %+v: want the default prometheus data source on port 9090 with timeInterval set", dsFile, pds)
	}
	if !slices.Contains(c.Services["prometheus"].Command, "--web.listen-address=0.0.0.0:9090") {
		t.Errorf("compose.yaml: prometheus does not listen on 9090: %v", c.Services["prometheus"].Command)
	}

	var dashConf struct {
		APIVersion int `yaml:"apiVersion"`
		Providers  []struct {
			Name, Type string
			Options    struct {
				Path string `yaml:"path"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	dashFile := filepath.Join(deploy, "grafana", "provisioning", "dashboards", "fluss-iggy.yaml")
	readYAML(t, dashFile, &dashConf)
	if dashConf.APIVersion != 1 || len(dashConf.Providers) != 1 || dashConf.Providers[0].Type != "file" {
		t.Fatalf("%s: want apiVersion 1 and one file provider, have %+v", dashFile, dashConf)
	}
	dir := dashConf.Providers[0].Options.Path
	if host := mounts[path.Join(dir, "fluss-iggy.json")]; host != dashboardPath(t) {
		t.Errorf("compose.yaml does not mount %s into the provider's directory %s (mounts %v)", dashboardPath(t), dir, mounts)
	}
	for _, sub := range []string{"datasources", "dashboards"} {
		if mounts["/etc/grafana/provisioning/"+sub] != filepath.Join(deploy, "grafana", "provisioning", sub) {
			t.Errorf("compose.yaml does not mount grafana/provisioning/%s at /etc/grafana/provisioning/%s", sub, sub)
		}
	}
	if home := c.Services["grafana"].Environment["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]; home != "" && mounts[home] != dashboardPath(t) {
		t.Errorf("compose.yaml: Grafana's home dashboard %s is not the mounted dashboard", home)
	}
}

// promtool returns promtool's path, or "" (after a log line) when there is
// none outside CI; under CI a missing promtool fails the test.
func promtool(t *testing.T) string {
	t.Helper()
	if os.Getenv(EnvPrometheusBin) == "" {
		if _, err := exec.LookPath("promtool"); err != nil {
			if !flusstest.InCI() {
				t.Logf("promtool not found: the Prometheus configuration is parsed but not checked with promtool")
				return ""
			}
		}
	}
	return RequireTool(t, "promtool")
}

func readYAML(t *testing.T, file string, v any) { t.Helper(); decodeYAML(t, file, v, false) }

func readYAMLStrict(t *testing.T, file string, v any) { t.Helper(); decodeYAML(t, file, v, true) }

func decodeYAML(t *testing.T, file string, v any, strict bool) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(strict)
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}
