package iggyoutput

import (
	"encoding/json"
	"regexp"
	"strconv"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// field is an interpolated configuration field. When the field is exactly
// one metadata reference, `${! @name }` (how the shipped configurations set
// topic and message_id), meta is the key, and its value is read with
// Message.MetaGet, which formats a value as the interpolation does. When it
// is exactly one top-level field of the message, `${! this.name }` (a key
// taken from the row), this is the field's name, read from the message's
// structured value when it has one. Either spares running Bloblang for
// every message (a sixth of the output's CPU in a row-per-message
// pipeline); anything else, and any value the shortcut does not format
// itself, goes through Benthos.
type field struct {
	*service.InterpolatedString
	meta string
	this string
}

// metaRef matches an interpolation that is one metadata reference, and
// thisRef one that is one top-level field; the name is limited to the
// characters of a plain Bloblang name.
var (
	metaRef = regexp.MustCompile(`^\$\{!\s*@([A-Za-z_][A-Za-z0-9_]*)\s*\}$`)
	thisRef = regexp.MustCompile(`^\$\{!\s*this\.([A-Za-z_][A-Za-z0-9_]*)\s*\}$`)
)

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
		} else if m := thisRef.FindStringSubmatch(raw); m != nil {
			f.this = m[1]
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

// value returns the field's value for message i. A message the shortcut
// cannot answer (no such metadata key; no structured value, no such field,
// or a value of another type) goes through Benthos, which decides what that
// gives.
func (e *fieldExec) value(i int) (string, error) {
	switch {
	case e.f.meta != "":
		if v, ok := e.batch[i].MetaGet(e.f.meta); ok {
			return v, nil
		}
	case e.f.this != "":
		if v, ok := structuredField(e.batch[i], e.f.this); ok {
			return v, nil
		}
	}
	if e.exec == nil {
		e.exec = e.batch.InterpolationExecutor(e.f.InterpolatedString)
	}
	return e.exec.TryString(i)
}

// structuredField returns the top-level field name of msg's structured
// value as the interpolation would write it, for the types a row's key
// usually has (strings and integers as the fluss input and Bloblang build
// them, json.Number); ok is false for anything else, a message without a
// structured value (reading one from bytes would parse them) or a missing
// field.
func structuredField(msg *service.Message, name string) (string, bool) {
	if !msg.HasStructured() {
		return "", false
	}
	v, err := msg.AsStructured()
	if err != nil {
		return "", false
	}
	row, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	switch t := row[name].(type) {
	case string:
		return t, true
	case int64:
		return strconv.FormatInt(t, 10), true
	case json.Number:
		return string(t), true
	}
	return "", false
}
