package iggyoutput

import (
	"regexp"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// field is an interpolated configuration field. meta is the metadata key
// when the field is exactly one metadata reference, `${! @name }` (how the
// shipped configurations set topic, key and message_id): its value is then
// read with Message.MetaGet, which formats a value as the interpolation
// does, instead of running Bloblang for every message (a sixth of the
// output's CPU in a row-per-message pipeline).
type field struct {
	*service.InterpolatedString
	meta string
}

// metaRef matches an interpolation that is one metadata reference; the key
// is limited to the characters of a plain Bloblang name.
var metaRef = regexp.MustCompile(`^\$\{!\s*@([A-Za-z_][A-Za-z0-9_]*)\s*\}$`)

// parseField reads the interpolated field name.
func parseField(conf *service.ParsedConfig, name string) (field, error) {
	s, err := conf.FieldInterpolatedString(name)
	if err != nil {
		return field{}, err
	}
	f := field{InterpolatedString: s}
	if raw, err := conf.FieldString(name); err == nil {
		if m := metaRef.FindStringSubmatch(raw); m != nil {
			f.meta = m[1]
		}
	}
	return f, nil
}

// fieldExec evaluates a field for the messages of one batch.
type fieldExec struct {
	f     field
	batch service.MessageBatch
	exec  *service.MessageBatchInterpolationExecutor // built on first need
}

func (f field) forBatch(batch service.MessageBatch) *fieldExec {
	return &fieldExec{f: f, batch: batch}
}

// value returns the field's value for message i. A message without the
// metadata key goes through Benthos, which decides what that gives.
func (e *fieldExec) value(i int) (string, error) {
	if e.f.meta != "" {
		if v, ok := e.batch[i].MetaGet(e.f.meta); ok {
			return v, nil
		}
	}
	if e.exec == nil {
		e.exec = e.batch.InterpolationExecutor(e.f.InterpolatedString)
	}
	return e.exec.TryString(i)
}
