package iggyoutput

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// A message holding only a structured value is serialised by the output in
// the canonical forms, keys sorted; bytes are sent as they are.
func TestBuildStructuredPayload(t *testing.T) {
	b := newMessageBuilder(nil, nil, 3)
	withBytes := service.NewMessage([]byte(`{"z":1,"a":"<"}`))
	structuredMsg := service.NewMessage(nil)
	structuredMsg.SetStructuredMut(map[string]any{"z": json.Number("1"), "a": "<\u2028", "price": "9.50", "f": 0.1, "n": nil, "l": []any{int64(-3), true}})
	bad := service.NewMessage(nil)
	bad.SetStructuredMut(map[string]any{"f": func() {}})

	m, err := b.build(withBytes, 0)
	if err != nil || string(m.Payload) != `{"z":1,"a":"<"}` {
		t.Fatalf("bytes: %s %v", m.Payload, err)
	}
	m, err = b.build(structuredMsg, 1)
	want := `{"a":"<` + "\u2028" + `","f":0.1,"l":[-3,true],"n":null,"price":"9.50","z":1}`
	if err != nil || string(m.Payload) != want || !json.Valid(m.Payload) {
		t.Fatalf("structured: %s %v, want %s", m.Payload, err, want)
	}
	if _, err := b.build(bad, 2); err == nil || !strings.Contains(err.Error(), "serialising") {
		t.Fatalf("unserialisable value: %v", err)
	}
	// The payload is a slice of the batch's buffer that later messages do
	// not overwrite.
	m2, _ := b.build(structuredMsg, 1)
	if string(m.Payload) != want || string(m2.Payload) != want {
		t.Fatalf("payload overwritten: %s / %s", m.Payload, m2.Payload)
	}
}
