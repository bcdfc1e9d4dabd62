// Package speclint builds the Bloblang lint rules of our components'
// configuration fields, so that `fluss-iggy lint` rejects, with the field's
// line and a message that names the field, every value that `run` would
// reject: wrong types, values outside a range, unknown enum values (listed
// with the valid ones; Benthos's own enum check only says "not a valid
// option").
//
// Each field builder returns the text for ConfigField.LintRule, which
// replaces Benthos's default lint of the field; int fields are declared
// with IntField so that their rules see every value.
package speclint

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// Enum rejects a value that is not one of options.
func Enum(field string, options ...string) string {
	return fmt.Sprintf(`root = if ![%s].contains(this.string()) { [ "field %s: %%q is not one of: %s".format(this.string()) ] }`,
		quote(options), field, strings.Join(options, ", "))
}

// wholeNumber matches what Benthos reads as an int field.
const wholeNumber = `!this.string().re_match("^-?[0-9]+$")`

// IntRange rejects a value that is not a whole number from min to max.
func IntRange(field string, min, max int64) string {
	return fmt.Sprintf(`root = if %[4]s { [ "field %[1]s: %%v is not a whole number".format(this) ] } else if this.number() < %[2]d || this.number() > %[3]d { [ "field %[1]s: %%v is outside %[2]d to %[3]d".format(this) ] }`,
		field, min, max, wholeNumber)
}

// MinInt rejects a value that is not a whole number of at least min.
func MinInt(field string, min int64) string {
	return fmt.Sprintf(`root = if %[3]s { [ "field %[1]s: %%v is not a whole number".format(this) ] } else if this.number() < %[2]d { [ "field %[1]s: %%v is less than %[2]d".format(this) ] }`,
		field, min, wholeNumber)
}

// IntField declares an integer field whose lint rules run on any value.
// Benthos never runs a field's lint rule on a value of the wrong YAML type
// for an int field (it assumes the type is checked elsewhere, and lint
// never does), so "partitions: four" would pass `lint` and fail `run`. The
// field is declared untyped; ParsedConfig.FieldInt reads it as before, and
// the docs generator shows it as an int. Give it IntRange or MinInt.
func IntField(name string) *service.ConfigField {
	return service.NewAnyField(name)
}

// durationRE is Go's duration syntax (time.ParseDuration) without a sign.
const durationRE = `^(([0-9]+[.]?[0-9]*|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+$`

// PositiveDuration rejects a value that is not a Go duration above zero.
func PositiveDuration(field string) string {
	return fmt.Sprintf(`root = if this.type() != "string" || !this.re_match("%s") || this.re_match("^[0.a-zµμ]*$") { [ "field %s: %%v is not a positive duration such as 500ms, 10s or 1m".format(this) ] }`,
		durationRE, field)
}

// HostPort rejects a value that is not host:port.
func HostPort(field string) string {
	return fmt.Sprintf(`root = if this.type() != "string" || !this.re_match("^(\\[[0-9A-Fa-f:.]+\\]|[^:\\s]*):[0-9]{1,5}$") { [ "field %s: %%v is not host:port".format(this) ] }`, field)
}

// DurationOr accepts one of the words or a positive duration.
func DurationOr(field string, words ...string) string {
	return fmt.Sprintf(`root = if this.type() != "string" || (![%s].contains(this) && (!this.re_match("%s") || this.re_match("^[0.a-zµμ]*$"))) { [ "field %s: %%v is not %s or a positive duration such as 72h".format(this) ] }`,
		quote(words), durationRE, field, strings.Join(words, ", "))
}

// SizeOr accepts one of the words or a byte size such as 10GiB or 500MB.
func SizeOr(field string, words ...string) string {
	return fmt.Sprintf(`root = if this.type() != "string" || (![%s].contains(this) && !this.re_match("(?i)^[0-9]+([.][0-9]+)? ?([kmgtpe]i?)?b?$")) { [ "field %s: %%v is not %s or a size such as 10GiB or 500MB".format(this) ] }`,
		quote(words), field, strings.Join(words, ", "))
}

func quote(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = strconv.Quote(w)
	}
	return strings.Join(q, ", ")
}
