package iggyoutput

import (
	"encoding/binary"
	"fmt"
	"slices"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/iggy"
)

// TestUserHeadersKeyOrder: messages of one batch whose metadata keys change
// from one message to the next (the same set, another set of the same
// size, fewer, more, the first again) each get exactly their own headers,
// in key order, whether the remembered order applies or not.
func TestUserHeadersKeyOrder(t *testing.T) {
	spec := service.NewConfigSpec().Field(service.NewMetadataFilterField("headers"))
	pc, err := spec.ParseYAML("headers: {include_prefixes: [ \"\" ]}", nil)
	if err != nil {
		t.Fatal(err)
	}
	filter, err := pc.FieldMetadataFilter("headers")
	if err != nil {
		t.Fatal(err)
	}
	sets := [][]string{
		{"b", "a", "c"}, {"c", "b", "a"}, {"a", "b", "d"}, {"a", "b"}, {"d", "a", "c", "b"}, {"a", "c", "b"}, {"x"}, {"b", "c", "a"},
	}
	b := newMessageBuilder(filter, nil, len(sets))
	for i, keys := range sets {
		m := service.NewMessage([]byte("p"))
		want := map[string]string{}
		for _, k := range keys {
			v := fmt.Sprintf("%s%d", k, i)
			m.MetaSetMut(k, v)
			want[k] = v
		}
		hdr, err := b.userHeaders(m)
		if err != nil {
			t.Fatal(err)
		}
		got, order := decodeHeaders(t, hdr)
		if !slices.IsSorted(order) || len(got) != len(want) {
			t.Errorf("message %d (%v): headers %v in order %v", i, keys, got, order)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("message %d: header %s = %q, want %q", i, k, got[k], v)
			}
		}
	}
}

// decodeHeaders reads string headers in Iggy's wire form.
func decodeHeaders(t *testing.T, b []byte) (map[string]string, []string) {
	t.Helper()
	out := map[string]string{}
	var order []string
	part := func() (iggy.HeaderKind, string) {
		if len(b) < 5 {
			t.Fatalf("truncated header block: %x", b)
		}
		kind, n := iggy.HeaderKind(b[0]), int(binary.LittleEndian.Uint32(b[1:5]))
		if len(b) < 5+n {
			t.Fatalf("truncated header part: %x", b)
		}
		s := string(b[5 : 5+n])
		b = b[5+n:]
		return kind, s
	}
	for len(b) > 0 {
		kk, k := part()
		vk, v := part()
		if kk != iggy.HeaderString || vk != iggy.HeaderString {
			t.Fatalf("header %s: kinds %d, %d", k, kk, vk)
		}
		out[k] = v
		order = append(order, k)
	}
	return out, order
}
