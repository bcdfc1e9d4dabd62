package flussoutput

import (
	"fmt"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// TestChangeTypeOfDefault checks that the default change_type, read from
// the metadata directly, resolves as the expression does for every kind of
// metadata value, and that only the default expression is read so.
func TestChangeTypeOfDefault(t *testing.T) {
	values := []any{"+I", "-D", "", "+U", []byte("-D"), 5, 1.5, true, nil, map[string]any{"a": 1}, []any{"x"}}
	var batch service.MessageBatch
	batch = append(batch, service.NewMessage([]byte(`{}`))) // no metadata
	for _, v := range values {
		m := service.NewMessage([]byte(`{}`))
		m.MetaSetMut(metaChangeType, v)
		batch = append(batch, m)
	}
	conf := func(yaml string) *outputConfig {
		pc, err := Spec().ParseYAML("bootstrap_servers: [ localhost:1 ]\ndatabase: d\ntable: t\n"+yaml, service.NewEnvironment())
		if err != nil {
			t.Fatal(err)
		}
		c, err := parseConfig(pc)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	def := conf("")
	if !def.changeTypeIsMeta {
		t.Fatal("the default change_type is not recognised")
	}
	if other := conf(`change_type: '${! @fluss_change_type.or("+I") }'` + "\n"); other.changeTypeIsMeta {
		t.Fatal("another change_type is taken for the default")
	}
	got := changeTypeOf(batch, def.changeType, true)
	for i := range batch {
		want, wantErr := batch.TryInterpolatedString(i, def.changeType)
		s, err := got(i)
		if s != want || fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Errorf("message %d: %q, %v; the expression gives %q, %v", i, s, err, want, wantErr)
		}
	}
}
