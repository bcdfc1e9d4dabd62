package iggyoutput

import (
	"fmt"
	"strings"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// TestFlussMessageIDMatchesRecipe: the native computation of the id recipe
// gives, for every message, exactly what the Bloblang interpolation gives
// (the same id, or an error where the interpolation fails), over values at
// and beyond the edges of every field, missing and null values, and values
// of other types.
func TestFlussMessageIDMatchesRecipe(t *testing.T) {
	build := func(messageID string) *Output {
		t.Helper()
		pc, err := Spec().ParseYAML(fmt.Sprintf("username: u\npassword: p\nstream: s\ntopic: t\nmessage_id: '%s'\n", messageID), nil)
		if err != nil {
			t.Fatal(err)
		}
		o, err := NewFromConfig(pc, service.MockResources())
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	fast := build(DeterministicIDMapping)
	// The same recipe written differently is not recognised: interpolated.
	slow := build(strings.Replace(DeterministicIDMapping, "${! ", "${!  ", 1))
	if !fast.conf.flussID || slow.conf.flussID {
		t.Fatalf("recipe recognised: fast %v, slow %v", fast.conf.flussID, slow.conf.flussID)
	}

	const missing = "missing"
	tables := []any{missing, nil, int64(-2), int64(-1), int64(0), int64(7), int64(1<<32 - 2), int64(1<<32 - 1), int64(1 << 40), "7", 7.0, int32(7)}
	parts := []any{missing, nil, int64(-2), int64(-1), int64(0), int64(3), int64(1<<32 - 2), int64(1<<32 - 1), "3"}
	buckets := []any{missing, int64(-1), int64(0), int64(5), int64(1<<16 - 1), int64(1 << 16), uint16(5)}
	offsets := []any{missing, int64(-1), int64(0), int64(123456), int64(1<<48 - 1), int64(1 << 48), "9"}
	set := func(m *service.Message, key string, v any) {
		if v != missing {
			m.MetaSetMut(key, v)
		}
	}
	var batch service.MessageBatch
	for _, tv := range tables {
		for _, pv := range parts {
			for _, bv := range buckets {
				for _, ov := range offsets {
					m := service.NewMessage([]byte("x"))
					set(m, "fluss_table_id", tv)
					set(m, "fluss_partition_id", pv)
					set(m, "fluss_bucket", bv)
					set(m, "fluss_offset", ov)
					batch = append(batch, m)
				}
			}
		}
	}
	type outcome struct {
		id  [16]byte
		err string
	}
	run := func(o *Output) []outcome {
		out := make([]outcome, len(batch))
		groups, err := o.groupBatch(batch, nil, func(i int, err error) { out[i].err = err.Error() })
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range groups {
			for k, i := range g.idx {
				out[i].id = g.msgs[k].ID
			}
		}
		return out
	}
	got, want := run(fast), run(slow)
	native, ids := 0, 0
	for i := range batch {
		if got[i] != want[i] {
			var meta []string
			_ = batch[i].MetaWalkMut(func(k string, v any) error {
				meta = append(meta, fmt.Sprintf("%s=%#v", k, v))
				return nil
			})
			t.Errorf("%v: native %x %q, interpolated %x %q", meta, got[i].id, got[i].err, want[i].id, want[i].err)
		}
		if _, ok := flussMessageID(batch[i]); ok {
			native++
		}
		if want[i].err == "" {
			ids++
		}
	}
	t.Logf("%d messages: %d with an id, %d of them computed natively", len(batch), ids, native)
	if native == 0 || native == len(batch) {
		t.Fatalf("%d of %d computed natively: the cases do not cover both paths", native, len(batch))
	}
}
