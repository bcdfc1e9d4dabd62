// Package dashtest proves the Grafana dashboard of deploy/grafana against the
// metrics the binary really exports, and checks the other files of deploy/
// (the Grafana provisioning, the Prometheus configuration and the compose
// file).
//
// The tests (run by `make test`):
//
//   - TestDashboardAgainstPrometheus runs two fluss-iggy pipelines in process
//     (service.NewStreamBuilder: the fluss input reading a table of a real
//     Fluss cluster that the test keeps writing to, the iggy output writing
//     into the in-process Iggy server of internal/iggytest, a bbolt checkpoint
//     cache, the prometheus metrics exporter), one with the exporter's
//     defaults (timers as summaries) and one with use_histogram_timing, and a
//     real Prometheus server (Debian's `prometheus` package) scraping both
//     every second. Every query of every panel of deploy/grafana/fluss-iggy.json
//     is then evaluated through Prometheus's HTTP API, with the dashboard's
//     variables and $__rate_interval replaced by concrete values, once for
//     all instances and once for each pipeline: each must return data with
//     finite values (and a value above zero, except for the error, skip
//     and lag metrics, which stay at zero in a healthy pipeline), and every
//     {{label}} of a legend must name a label of the result. A renamed metric or label fails
//     the test with the panel's title and the metric names the pipelines do
//     export. The variables' label_values queries are checked through the
//     series API.
//   - TestDashboardStructure checks the JSON without a server: panel types,
//     the datasource variable, units, ids and grid positions, and that every
//     expression uses only known variables.
//   - TestDeployFiles parses the compose file, the Prometheus configuration
//     (and runs `promtool check config` on it) and the Grafana provisioning
//     files, and checks that the paths they name exist and agree with each
//     other.
//   - TestAlertRules runs `promtool check rules` on deploy/prometheus/alerts.yml
//     and `promtool test rules` on alerts_test.yml (every alert firing on
//     series made for it and silent on the others), and checks that
//     prometheus.yml and compose.yaml load it;
//     TestAlertRuleTestsCatchMutations changes each alert and expects
//     alerts_test.yml to fail. TestDashboardAgainstPrometheus also checks
//     that the pipelines export the metrics the rules read.
//
// The Prometheus binary is $PROMETHEUS_BIN, else `prometheus` on PATH (and
// promtool beside it). Without one the tests that need it fail under CI (env
// CI set) and are skipped, saying why, elsewhere. Fluss is the cluster of
// internal/flusstest (FLUSS_BOOTSTRAP, or one it starts).
//
// The non-test files hold what the tests use: loading a dashboard and
// expanding its variables (dashboard.go) and running a Prometheus server
// (prometheus.go).
package dashtest
