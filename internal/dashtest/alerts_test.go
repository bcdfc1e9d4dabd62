package dashtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// alertsFile and alertsTestFile are the alert rules and their promtool
// unit tests, in deploy/prometheus beside prometheus.yml.
const (
	alertsFile     = "alerts.yml"
	alertsTestFile = "alerts_test.yml"
)

// TestAlertRules checks deploy/prometheus/alerts.yml with `promtool check
// rules` and runs its unit tests (alerts_test.yml: each alert firing on
// series made for it and silent on the others) with `promtool test rules`,
// and checks that prometheus.yml loads it and compose.yaml mounts it beside
// prometheus.yml.
func TestAlertRules(t *testing.T) {
	tool := RequireTool(t, "promtool")
	dir := repoPath(t, "deploy", "prometheus")
	for _, args := range [][]string{{"check", "rules", alertsFile}, {"test", "rules", alertsTestFile}} {
		if out, err := promtoolIn(dir, tool, args...); err != nil {
			t.Errorf("promtool %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, out)
		}
	}

	var pc struct {
		RuleFiles []string `yaml:"rule_files"`
	}
	readYAML(t, filepath.Join(dir, "prometheus.yml"), &pc)
	if !slices.Contains(pc.RuleFiles, alertsFile) {
		t.Errorf("prometheus.yml: rule_files %v does not load %s", pc.RuleFiles, alertsFile)
	}
	var c compose
	readYAMLStrict(t, repoPath(t, "deploy", "compose.yaml"), &c)
	want := "./prometheus/" + alertsFile + ":/etc/prometheus/" + alertsFile + ":ro"
	if !slices.Contains(c.Services["prometheus"].Volumes, want) {
		t.Errorf("compose.yaml: service prometheus does not mount %s (rule_files are relative to prometheus.yml): volumes %v", want, c.Services["prometheus"].Volumes)
	}
}

// ruleMutations are changes to alerts.yml that alerts_test.yml must catch:
// each makes an alert fire where it must not, or stay silent where it must
// fire.
var ruleMutations = []struct{ name, old, new string }{
	{"lag growing fires on a steady lag", "(deriv(fluss_input_lag[10m])) > 0", "(deriv(fluss_input_lag[10m])) >= 0"},
	{"send errors never fire", "(rate(output_error[5m])) > 0", "(rate(output_error[5m])) > 1"},
	{"no progress fires on a moving bucket", "(changes(fluss_input_committed_offset[10m])) == 0", "(changes(fluss_input_committed_offset[10m])) >= 0"},
	{"stalled waits too long", "(fluss_input_stalled) == 1\n        for: 1m", "(fluss_input_stalled) == 1\n        for: 10m"},
	{"shard missing fires on a full set", "          < max by (job) (fluss_input_shard_count)", "          <= max by (job) (fluss_input_shard_count)"},
	{"an annotation changed", "summary: \"{{ $labels.instance }} is stalled\"", "summary: \"{{ $labels.instance }} stalled\""},
}

// TestAlertRuleTestsCatchMutations: `promtool test rules` fails on each of
// ruleMutations (so alerts_test.yml tests every alert both ways), and
// passes on the unchanged copy.
func TestAlertRuleTestsCatchMutations(t *testing.T) {
	tool := RequireTool(t, "promtool")
	src := repoPath(t, "deploy", "prometheus")
	rules, err := os.ReadFile(filepath.Join(src, alertsFile))
	if err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(filepath.Join(src, alertsTestFile))
	if err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, rules string) ([]byte, error) {
		dir := t.TempDir()
		for name, b := range map[string][]byte{alertsFile: []byte(rules), alertsTestFile: tests} {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return promtoolIn(dir, tool, "test", "rules", alertsTestFile)
	}
	if out, err := run(t, string(rules)); err != nil {
		t.Fatalf("the unchanged copy fails: %v\n%s", err, out)
	}
	for _, m := range ruleMutations {
		t.Run(m.name, func(t *testing.T) {
			if n := strings.Count(string(rules), m.old); n != 1 {
				t.Fatalf("%s: %q occurs %d times, want once (the mutation is stale)", alertsFile, m.old, n)
			}
			if out, err := run(t, strings.Replace(string(rules), m.old, m.new, 1)); err == nil {
				t.Errorf("promtool test rules passed on the mutated rules:\n%s", out)
			}
		})
	}
}

// promtoolIn runs promtool with args in dir.
func promtoolIn(dir, tool string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tool, args...)
	cmd.Dir = dir
	return cmd.CombinedOutput()
}

// alertExprRe finds the expressions of alerts.yml.
var alertExprRe = regexp.MustCompile(`(?m)^\s*expr: \|\n((?:\s{10,}.*\n)+)`)

// promqlGroupRe and the others strip what is not a metric name from an
// expression: label lists of by/on/without/ignoring, ranges, functions.
var (
	promqlGroupRe = regexp.MustCompile(`\b(by|on|without|ignoring)\s*\([^)]*\)`)
	promqlRangeRe = regexp.MustCompile(`\[[^\]]*\]`)
	promqlIdentRe = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*(\s*\()?`)
	promqlWords   = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true}
)

// alertMetrics returns the metric names the alert rules read.
func alertMetrics(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(repoPath(t, "deploy", "prometheus", alertsFile))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range alertExprRe.FindAllStringSubmatch(string(b), -1) {
		expr := promqlRangeRe.ReplaceAllString(promqlGroupRe.ReplaceAllString(m[1], ""), "")
		for _, id := range promqlIdentRe.FindAllString(expr, -1) {
			if strings.HasSuffix(id, "(") || promqlWords[id] || slices.Contains(out, id) {
				continue
			}
			out = append(out, id)
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no metric found in its expressions", alertsFile)
	}
	return out
}

// notLiveAlertMetrics are metrics of the alert rules that the pipelines of
// TestDashboardAgainstPrometheus do not export, with the reason.
var notLiveAlertMetrics = map[string]string{
	"fluss_input_shard_count": "exported by sharded instances only; the test's pipelines are not sharded",
}

// checkAlertMetrics: every metric the alert rules read is one the running
// pipelines export (a renamed metric would leave its alert silent forever).
func checkAlertMetrics(ctx context.Context, t *testing.T, prom *Prometheus) {
	t.Helper()
	names, err := prom.MetricNames(ctx)
	if err != nil {
		t.Errorf("listing the metrics for the alert rules: %v", err)
		return
	}
	for _, m := range alertMetrics(t) {
		if _, skip := notLiveAlertMetrics[m]; !skip && !slices.Contains(names, m) {
			t.Errorf("%s reads %s, which no pipeline exports (they export: %s)", alertsFile, m, strings.Join(ourMetrics(names), ", "))
		}
	}
}

func TestAlertMetricNames(t *testing.T) {
	got := strings.Join(alertMetrics(t), " ")
	for _, want := range []string{"fluss_input_lag", "fluss_input_committed_offset", "output_error", "fluss_input_stalled", "fluss_input_shard_count"} {
		if !slices.Contains(strings.Fields(got), want) {
			t.Errorf("alertMetrics: %s, want %s among them", got, want)
		}
	}
	for _, not := range []string{"job", "instance", "bucket", "deriv", "rate", "and", "max", "count"} {
		if slices.Contains(strings.Fields(got), not) {
			t.Errorf("alertMetrics: %s includes %s, which is not a metric", got, not)
		}
	}
}
