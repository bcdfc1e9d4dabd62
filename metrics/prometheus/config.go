package prometheus

import (
	"fmt"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// NewFromConfig builds an Exporter from a config parsed with ConfigSpec.
func NewFromConfig(conf *service.ParsedConfig, log *service.Logger) (*Exporter, error) {
	opts, err := optionsFromConfig(conf)
	if err != nil {
		return nil, err
	}
	return New(opts, log)
}

func optionsFromConfig(conf *service.ParsedConfig) (Options, error) {
	var (
		o   Options
		err error
	)
	if o.Namespace, err = conf.FieldString(fieldNamespace); err != nil {
		return o, err
	}
	if o.ConstLabels, err = conf.FieldStringMap(fieldConstLabels); err != nil {
		return o, err
	}
	unit, err := conf.FieldString(fieldTimerUnit)
	if err != nil {
		return o, err
	}
	switch unit {
	case timerUnitSeconds:
	case timerUnitNanoseconds:
		o.TimerNanoseconds = true
	default:
		return o, fmt.Errorf("%s: %q is neither %q nor %q", fieldTimerUnit, unit, timerUnitSeconds, timerUnitNanoseconds)
	}
	if o.Histograms, err = conf.FieldBool(fieldUseHistogram); err != nil {
		return o, err
	}
	if o.HistogramBuckets, err = conf.FieldFloatList(fieldHistogramBuckets); err != nil {
		return o, err
	}
	objs, err := conf.FieldObjectList(fieldObjectives)
	if err != nil {
		return o, err
	}
	o.Objectives = make(map[float64]float64, len(objs))
	for i, obj := range objs {
		q, err := obj.FieldFloat(fieldQuantile)
		if err != nil {
			return o, fmt.Errorf("%s[%d]: %w", fieldObjectives, i, err)
		}
		e, err := obj.FieldFloat(fieldError)
		if err != nil {
			return o, fmt.Errorf("%s[%d]: %w", fieldObjectives, i, err)
		}
		o.Objectives[q] = e
	}
	if o.SummaryMaxAge, err = conf.FieldDuration(fieldSummaryMaxAge); err != nil {
		return o, err
	}
	if o.GoMetrics, err = conf.FieldBool(fieldGoMetrics); err != nil {
		return o, err
	}
	if o.ProcessMetrics, err = conf.FieldBool(fieldProcessMetrics); err != nil {
		return o, err
	}
	if o.FileOutputPath, err = conf.FieldString(fieldFileOutputPath); err != nil {
		return o, err
	}
	if o.Push, err = pushOptionsFromConfig(conf.Namespace(fieldPush)); err != nil {
		return o, err
	}
	return o, nil
}

func pushOptionsFromConfig(conf *service.ParsedConfig) (PushOptions, error) {
	var (
		p   PushOptions
		err error
	)
	if p.URL, err = conf.FieldString(fieldPushURL); err != nil {
		return p, err
	}
	if p.Job, err = conf.FieldString(fieldPushJob); err != nil {
		return p, err
	}
	if p.Grouping, err = conf.FieldStringMap(fieldPushGrouping); err != nil {
		return p, err
	}
	if p.Interval, err = conf.FieldDuration(fieldPushInterval); err != nil {
		return p, err
	}
	if p.Timeout, err = conf.FieldDuration(fieldPushTimeout); err != nil {
		return p, err
	}
	if p.Username, err = conf.FieldString(fieldPushBasicAuth, fieldPushUsername); err != nil {
		return p, err
	}
	if p.Password, err = conf.FieldString(fieldPushBasicAuth, fieldPushPassword); err != nil {
		return p, err
	}
	return p, nil
}
