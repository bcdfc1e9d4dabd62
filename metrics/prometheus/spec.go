// Package prometheus is the `prometheus` metrics exporter of fluss-iggy: it
// keeps every Benthos metric (the engine's own and those of our plugins, such
// as the fluss input's lag and offsets and the iggy output's counters) in a
// registry of the official Prometheus Go client and serves it in the Prometheus
// text format at `/metrics` on the service-wide HTTP server. It can also write
// the metrics to a file and push them to a Pushgateway, for runs that end.
package prometheus

import (
	"github.com/redpanda-data/benthos/v4/public/service"
)

const (
	fieldNamespace        = "namespace"
	fieldConstLabels      = "const_labels"
	fieldTimerUnit        = "timer_unit"
	fieldUseHistogram     = "use_histogram_timing"
	fieldHistogramBuckets = "histogram_buckets"
	fieldObjectives       = "summary_quantiles_objectives"
	fieldQuantile         = "quantile"
	fieldError            = "error"
	fieldSummaryMaxAge    = "summary_max_age"
	fieldGoMetrics        = "add_go_metrics"
	fieldProcessMetrics   = "add_process_metrics"
	fieldFileOutputPath   = "file_output_path"
	fieldPush             = "push"
	fieldPushURL          = "url"
	fieldPushJob          = "job"
	fieldPushInterval     = "interval"
	fieldPushTimeout      = "timeout"
	fieldPushGrouping     = "grouping"
	fieldPushBasicAuth    = "basic_auth"
	fieldPushUsername     = "username"
	fieldPushPassword     = "password"

	timerUnitSeconds     = "seconds"
	timerUnitNanoseconds = "nanoseconds"
)

const specDescription = `
Every metric of the pipeline is kept in a registry of the official Prometheus Go client and served in the Prometheus text format at ` + "`/metrics`" + ` (and ` + "`/stats`" + `) on the service-wide HTTP server (` + "`http.address`" + `, ` + "`0.0.0.0:4195`" + ` by default), so a Prometheus server can scrape it directly. That includes the engine's own metrics (` + "`input_received`" + `, ` + "`output_sent`" + `, ` + "`output_error`" + `, ` + "`output_latency_ns`" + `, the connection counters, the ` + "`cache_*`" + ` metrics of cache resources such as the checkpoint store, ...), which for the ` + "`iggy`" + ` output count and time the batches Iggy confirmed, and those of the fluss-iggy plugins, such as the lag and committed offset of every Fluss bucket read by the ` + "`fluss`" + ` input. Metric labels (` + "`label`" + `, ` + "`path`" + ` and the plugins' own, such as ` + "`partition`" + `, ` + "`bucket`" + ` and ` + "`server`" + `) become Prometheus labels. The repository's ` + "`deploy/grafana/fluss-iggy.json`" + ` is a Grafana dashboard for these metrics.

=== Names and types

Metric names keep their Benthos names, prefixed with ` + "`namespace`" + ` and an underscore when one is set. Characters that Prometheus does not allow in a name or label name are replaced with underscores. Counters become Prometheus counters, gauges become gauges, and timers become summaries (quantiles set by ` + "`summary_quantiles_objectives`" + `) or, with ` + "`use_histogram_timing`" + `, histograms. With ` + "`timer_unit: seconds`" + ` (the default) timings are reported in seconds, the Prometheus convention, and a timer whose name ends in ` + "`_ns`" + ` is renamed to end in ` + "`_seconds`" + ` (` + "`output_latency_ns`" + ` becomes ` + "`output_latency_seconds`" + `); with ` + "`nanoseconds`" + ` names and values stay as Benthos records them.

The ` + "`mapping`" + ` field of the ` + "`metrics`" + ` section applies before this exporter sees a metric, so it can rename metrics, drop them or add labels.

A metric that cannot be registered (a name used before with another type or other labels, or a label that clashes with ` + "`const_labels`" + `) is logged once as a warning and not exported; the pipeline carries on. A counter increment below zero is ignored, since Prometheus counters never go down.

=== Runs that end

A scrape only sees a running process. For runs that end, such as a backfill with ` + "`end_at: latest`" + `, set ` + "`file_output_path`" + ` to write the final metrics to a file when the process stops (for example for the node exporter's textfile collector), or ` + "`push.url`" + ` to push them to a Prometheus Pushgateway every ` + "`push.interval`" + ` and once more at shutdown.`

// ConfigSpec returns the configuration spec of the prometheus metrics exporter.
func ConfigSpec() *service.ConfigSpec {
	return service.NewConfigSpec().
		Beta().
		Version("0.1.0").
		Summary("Serves metrics in the Prometheus text format at `/metrics` on the service-wide HTTP server, using the official Prometheus Go client.").
		Description(specDescription).
		Fields(
			service.NewStringField(fieldNamespace).
				Description("A prefix for every metric name, joined to it with an underscore. Empty means no prefix.").
				Example("fluss_iggy").
				Default(""),
			service.NewStringMapField(fieldConstLabels).
				Description("Labels with fixed values added to every metric, for example to tell instances or shards apart.").
				Example(map[string]any{"instance": "${HOSTNAME}", "shard": "0"}).
				Default(map[string]any{}),
			service.NewStringAnnotatedEnumField(fieldTimerUnit, map[string]string{
				timerUnitSeconds:     "Timings are reported in seconds and a trailing `_ns` in a timer's name becomes `_seconds`.",
				timerUnitNanoseconds: "Timings are reported in nanoseconds under their Benthos names.",
			}).
				Description("The unit in which timer metrics are reported.").
				Default(timerUnitSeconds).
				Advanced(),
			service.NewBoolField(fieldUseHistogram).
				Description("Report timers as histograms with the buckets of `histogram_buckets` instead of summaries. Histograms can be aggregated across instances; summaries cannot.").
				Default(false),
			service.NewFloatListField(fieldHistogramBuckets).
				Description("The upper bounds of the histogram buckets, in seconds (whatever `timer_unit` is), in increasing order. Empty means the Prometheus client's defaults (5ms to 10s).").
				Example([]any{0.001, 0.01, 0.1, 1, 10}).
				Default([]any{}).
				Advanced(),
			service.NewObjectListField(fieldObjectives,
				service.NewFloatField(fieldQuantile).
					Description("The quantile to report, between 0 and 1.").
					Example(0.99),
				service.NewFloatField(fieldError).
					Description("The allowed absolute error of the quantile.").
					Example(0.001),
			).
				Description("The quantiles reported by the summaries of timer metrics, each with its allowed error. An empty list reports only the count and sum.").
				Default([]any{
					map[string]any{fieldQuantile: 0.5, fieldError: 0.05},
					map[string]any{fieldQuantile: 0.9, fieldError: 0.01},
					map[string]any{fieldQuantile: 0.99, fieldError: 0.001},
				}).
				Advanced(),
			service.NewDurationField(fieldSummaryMaxAge).
				Description("How long an observation counts towards the quantiles of a summary.").
				Default("10m").
				Advanced(),
			service.NewBoolField(fieldGoMetrics).
				Description("Also export the Go runtime's metrics (`go_*`: goroutines, memory, garbage collection).").
				Default(false),
			service.NewBoolField(fieldProcessMetrics).
				Description("Also export the process's metrics (`process_*`: CPU time, resident memory, open files).").
				Default(false),
			service.NewStringField(fieldFileOutputPath).
				Description("A file to write the final metrics to, in the text format, when the process stops. Empty means none. The file is written to a temporary name and renamed, so readers never see half of it.").
				Example("/var/lib/node_exporter/textfile/fluss_iggy.prom").
				Default("").
				Advanced(),
			service.NewObjectField(fieldPush,
				service.NewURLField(fieldPushURL).
					Description("The Pushgateway's base URL, without the `/metrics/job/...` part. Empty turns pushing off.").
					Example("http://pushgateway:9091").
					Default(""),
				service.NewStringField(fieldPushJob).
					Description("The `job` label of the pushed group.").
					Default("fluss_iggy"),
				service.NewStringMapField(fieldPushGrouping).
					Description("More labels identifying the pushed group, so that several instances do not replace each other's metrics.").
					Example(map[string]any{"instance": "${HOSTNAME}"}).
					Default(map[string]any{}),
				service.NewDurationField(fieldPushInterval).
					Description("How often to push while running. `0s` pushes only once, at shutdown.").
					Default("15s"),
				service.NewDurationField(fieldPushTimeout).
					Description("The longest time one push may take.").
					Default("10s").
					Advanced(),
				service.NewObjectField(fieldPushBasicAuth,
					service.NewStringField(fieldPushUsername).
						Description("The user name.").
						Default(""),
					service.NewStringField(fieldPushPassword).
						Description("The password.").
						Secret().
						Default(""),
				).
					Description("HTTP basic authentication for the Pushgateway; used when `username` is set.").
					Advanced(),
			).
				Description("Push the metrics to a Prometheus Pushgateway as well as serving them.").
				Advanced(),
		).
		LintRule(`root = match {
  this.histogram_buckets.or([]).unique().sort() != this.histogram_buckets.or([]) => [ "histogram_buckets must be in strictly increasing order" ],
  this.summary_quantiles_objectives.or([]).any(o -> o.quantile < 0 || o.quantile > 1 || o.error < 0) => [ "every quantile of summary_quantiles_objectives must be between 0 and 1, with an error of at least 0" ],
}`).
		Example("Scraped by Prometheus",
			"Serves the pipeline's metrics at `http://HOST:4195/metrics`, with every name prefixed and every series labelled with its shard.",
			`
http:
  address: 0.0.0.0:4195
metrics:
  prometheus:
    namespace: fluss_iggy
    const_labels:
      shard: ${SHARD:0}
    use_histogram_timing: true
    add_process_metrics: true
`).
		Example("A backfill that ends",
			"Pushes the metrics of a bounded run to a Pushgateway every 30 seconds and once more when it finishes, and leaves a copy for the node exporter.",
			`
metrics:
  prometheus:
    file_output_path: /var/lib/node_exporter/textfile/fluss_iggy_backfill.prom
    push:
      url: http://pushgateway:9091
      job: fluss_iggy_backfill
      interval: 30s
`)
}

func init() {
	service.MustRegisterMetricsExporter("prometheus", ConfigSpec(), func(conf *service.ParsedConfig, log *service.Logger) (service.MetricsExporter, error) {
		return NewFromConfig(conf, log)
	})
}
