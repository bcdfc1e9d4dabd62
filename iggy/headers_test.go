package iggy

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"
)

// header appends one header to b as the servers store it.
func header(b []byte, kk HeaderKind, k []byte, vk HeaderKind, v []byte) []byte {
	b = append(binary.LittleEndian.AppendUint32(append(b, byte(kk)), uint32(len(k))), k...)
	return append(binary.LittleEndian.AppendUint32(append(b, byte(vk)), uint32(len(v))), v...)
}

func TestParseHeaders(t *testing.T) {
	le := binary.LittleEndian
	minus := make([]byte, 16)
	for i := range minus {
		minus[i] = 0xff
	}
	cases := []struct {
		kind  HeaderKind
		value []byte
		want  any
		text  string
	}{
		{HeaderString, []byte("+U"), "+U", "+U"},
		{HeaderRaw, []byte{0, 1}, []byte{0, 1}, "\x00\x01"},
		{HeaderBool, []byte{1}, true, "true"},
		{HeaderInt8, []byte{0xfe}, int8(-2), "-2"},
		{HeaderUint16, le.AppendUint16(nil, 65535), uint16(65535), "65535"},
		{HeaderInt32, le.AppendUint32(nil, uint32(0xffffffff)), int32(-1), "-1"},
		{HeaderInt64, le.AppendUint64(nil, 1<<40), int64(1 << 40), "1099511627776"},
		{HeaderUint64, le.AppendUint64(nil, math.MaxUint64), uint64(math.MaxUint64), "18446744073709551615"},
		{HeaderFloat, le.AppendUint32(nil, math.Float32bits(1.5)), float32(1.5), "1.5"},
		{HeaderDouble, le.AppendUint64(nil, math.Float64bits(-0.25)), -0.25, "-0.25"},
		{HeaderInt128, minus, "-1", "-1"},
		{HeaderUint128, minus, "340282366920938463463374607431768211455", "340282366920938463463374607431768211455"},
	}
	var block []byte
	for _, c := range cases {
		block = header(block, HeaderString, []byte("k"), c.kind, c.value)
	}
	hs, err := ParseHeaders(block)
	if err != nil || len(hs) != len(cases) {
		t.Fatalf("%d headers, %v", len(hs), err)
	}
	for i, c := range cases {
		h := hs[i]
		if h.Key.String() != "k" || h.Value.Kind != c.kind {
			t.Errorf("header %d: key %q kind %d", i, h.Key, h.Value.Kind)
		}
		if got := h.Value.Any(); !equalAny(got, c.want) {
			t.Errorf("kind %d: Any %#v, want %#v", c.kind, got, c.want)
		}
		if got := h.Value.String(); got != c.text {
			t.Errorf("kind %d: String %q, want %q", c.kind, got, c.text)
		}
	}
}

func equalAny(a, b any) bool {
	if x, ok := a.([]byte); ok {
		y, ok := b.([]byte)
		return ok && string(x) == string(y)
	}
	return a == b
}

func TestParseHeadersRejects(t *testing.T) {
	good := header(nil, HeaderString, []byte("k"), HeaderString, []byte("v"))
	cases := map[string][]byte{
		"short":         good[:3],
		"unknown kind":  header(nil, 16, []byte("k"), HeaderString, []byte("v")),
		"empty key":     header(nil, HeaderString, nil, HeaderString, []byte("v")),
		"long value":    header(nil, HeaderString, []byte("k"), HeaderString, make([]byte, 256)),
		"bool of 2":     header(nil, HeaderString, []byte("k"), HeaderBool, []byte{1, 0}),
		"past the end":  good[:len(good)-1],
		"key, no value": good[:6],
	}
	for name, b := range cases {
		if _, err := ParseHeaders(b); err == nil || !strings.Contains(err.Error(), "user header 0") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func FuzzParseHeaders(f *testing.F) {
	f.Add(header(nil, HeaderString, []byte("k"), HeaderInt128, make([]byte, 16)))
	f.Add(header(header(nil, HeaderRaw, []byte{0}, HeaderBool, []byte{1}), HeaderUint8, []byte{7}, HeaderDouble, make([]byte, 8)))
	f.Fuzz(func(t *testing.T, b []byte) {
		hs, err := ParseHeaders(b)
		if err != nil {
			return
		}
		var again []byte
		for _, h := range hs {
			_ = h.Key.String() + h.Value.String()
			again = header(again, h.Key.Kind, h.Key.Value, h.Value.Kind, h.Value.Value)
		}
		if string(again) != string(b) {
			t.Fatalf("re-encoded headers differ")
		}
	})
}
