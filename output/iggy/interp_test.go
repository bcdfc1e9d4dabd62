package iggyoutput

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// TestFieldMatchesInterpolation: a field read through the metadata shortcut
// gives what Benthos's interpolation of the same text gives, for every kind
// of metadata value and for a missing key; fields that are more than one
// reference are not shortcut.
func TestFieldMatchesInterpolation(t *testing.T) {
	values := map[string]any{
		"s": "text", "i": int64(-42), "u": uint64(7), "f": 2.5, "b": true, "raw": []byte("bytes"),
		"t": time.Date(2026, 12, 2, 3, 4, 5, 6, time.UTC), "nil": nil, "obj": map[string]any{"a": []any{int64(1), "x"}},
	}
	var batch service.MessageBatch
	for range 3 {
		m := service.NewMessage([]byte("{}"))
		for k, v := range values {
			m.MetaSetMut(k, v)
		}
		batch = append(batch, m, service.NewMessage([]byte("no metadata")))
	}
	texts := []string{"${! @missing }", "${!@s}", "${!  @s  }"}
	for k := range values {
		texts = append(texts, "${! @"+k+" }")
	}
	for _, text := range texts {
		if f := matchesInterpolation(t, batch, text); f.meta == "" {
			t.Errorf("%q: not recognised as one metadata reference", text)
		}
	}
	for _, text := range []string{"${! @s }-x", "a${! @s }", "${! @s.a }", "${! @ }", "${! meta(\"s\") }", "${! @s }${! @i }", "plain"} {
		if f := mustField(t, text); f.meta != "" {
			t.Errorf("%q: taken for a reference to %q", text, f.meta)
		}
	}
}

// matchesInterpolation checks that the field text gives, for every message
// of batch, what Benthos's interpolation of it gives, and returns the field.
func matchesInterpolation(t *testing.T, batch service.MessageBatch, text string) field {
	t.Helper()
	f := mustField(t, text)
	want := batch.InterpolationExecutor(f.InterpolatedString)
	got := f.forBatch(batch)
	for i := range batch {
		w, werr := want.TryString(i)
		g, gerr := got.value(i)
		if w != g || fmt.Sprint(werr) != fmt.Sprint(gerr) {
			t.Errorf("%q message %d: %q, %v; interpolation gives %q, %v", text, i, g, gerr, w, werr)
		}
	}
	return f
}

func mustField(t *testing.T, text string) field {
	t.Helper()
	spec := service.NewConfigSpec().Field(service.NewInterpolatedStringField("f"))
	conf, err := spec.ParseYAML("f: '"+strings.ReplaceAll(text, "'", "''")+"'", nil)
	if err != nil {
		t.Fatalf("%q: %v", text, err)
	}
	f, err := parseField(conf, "f")
	if err != nil {
		t.Fatalf("%q: %v", text, err)
	}
	return f
}

// TestThisFieldMatchesInterpolation: a field read through the structured
// shortcut gives what Benthos's interpolation gives, for every kind of value
// (those it formats itself and those it leaves to Benthos), a missing field,
// a non-object value and messages that hold only bytes.
func TestThisFieldMatchesInterpolation(t *testing.T) {
	row := map[string]any{
		"s": "text", "i": int64(-42), "n": json.Number("1.50"), "f": 2.5, "b": true, "nil": nil,
		"big": int64(1) << 62, "obj": map[string]any{"a": []any{int64(1), "x"}}, "arr": []any{"a"},
	}
	var batch service.MessageBatch
	for _, v := range []any{row, []any{int64(1)}, "scalar"} {
		m := service.NewMessage(nil)
		m.SetStructuredMut(v)
		batch = append(batch, m)
	}
	batch = append(batch, service.NewMessage([]byte(`{"s":"from bytes","i":7}`)), service.NewMessage([]byte("not json")))
	withBytes := service.NewMessage(nil)
	withBytes.SetStructured(map[string]any{"s": "both"})
	_, _ = withBytes.AsBytes()
	batch = append(batch, withBytes)
	texts := []string{"${! this.missing }", "${!this.s}", "${!  this.s  }"}
	for k := range row {
		texts = append(texts, "${! this."+k+" }")
	}
	for _, text := range texts {
		if f := matchesInterpolation(t, batch, text); f.this == "" || f.meta != "" {
			t.Errorf("%q: not recognised as one field reference", text)
		}
	}
	for _, k := range []string{"s", "i", "n", "big"} {
		if _, ok := structuredField(batch[0], k); !ok {
			t.Errorf("field %q of a structured row not read by the shortcut", k)
		}
	}
	if _, ok := structuredField(service.NewMessage([]byte(`{"s":"x"}`)), "s"); ok {
		t.Error("the shortcut parsed a message that holds only bytes")
	}
	for _, text := range []string{"${! this.s }-x", "${! this.s.a }", "${! this }", "${! this.s.string() }", "${! this.s }${! this.i }", "${! content() }"} {
		if f := mustField(t, text); f.this != "" {
			t.Errorf("%q: taken for a reference to field %q", text, f.this)
		}
	}
}
