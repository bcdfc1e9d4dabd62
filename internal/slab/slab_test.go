package slab

import (
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"testing"
)

// Boxed values must be indistinguishable from values Go boxed itself, and
// stay intact across blocks and garbage collections.
func TestBoxIsAnOrdinaryInterface(t *testing.T) {
	var ints Slab[int64]
	var strs Slab[string]
	var nums Slab[json.Number]
	var got []any
	var want []any
	for i := range 3 * blockLen {
		n := int64(i) * 1_000_003
		s := fmt.Sprintf("value-%d", i)
		got = append(got, ints.Box(n), strs.Box(s), nums.Box(json.Number(s)))
		want = append(want, n, s, json.Number(s))
	}
	runtime.GC()
	for i := range got {
		if got[i] != want[i] || !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("value %d: %#v, want %#v", i, got[i], want[i])
		}
		if fmt.Sprint(got[i]) != fmt.Sprint(want[i]) || reflect.TypeOf(got[i]) != reflect.TypeOf(want[i]) {
			t.Fatalf("value %d prints or types differently: %v (%T)", i, got[i], got[i])
		}
	}
	switch v := got[0].(type) {
	case int64:
		if v != 0 {
			t.Fatalf("type switch gave %d", v)
		}
	default:
		t.Fatalf("type switch missed int64: %T", v)
	}
	if _, ok := got[2].(string); ok {
		t.Fatal("a json.Number asserted as string")
	}
}

// One allocation per block, none per value.
func TestBoxAllocatesPerBlock(t *testing.T) {
	var ints Slab[int64]
	sink := make([]any, 0, blockLen)
	allocs := testing.AllocsPerRun(10, func() {
		sink = sink[:0]
		for i := range blockLen {
			sink = append(sink, ints.Box(int64(i)+1000))
		}
	})
	if allocs > 1 {
		t.Fatalf("%v allocations for %d values, want at most 1", allocs, blockLen)
	}
}

func BenchmarkBox(b *testing.B) {
	sink := make([]any, blockLen)
	b.Run("slab", func(b *testing.B) {
		var s Slab[int64]
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			sink[i%blockLen] = s.Box(int64(i) + 1000)
		}
	})
	b.Run("go", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			sink[i%blockLen] = any(int64(i) + 1000)
		}
	})
}

// Strings share blocks, survive later copies and garbage collections, and
// a string longer than a block gets its own.
func TestTextCopies(t *testing.T) {
	var text Text
	src := []byte("abc")
	var got []string
	for i := range 20_000 {
		src = fmt.Appendf(src[:0], "row-%d", i)
		got = append(got, text.String(src))
	}
	long := text.String(make([]byte, textBlock+1))
	runtime.GC()
	for i, s := range got {
		if want := fmt.Sprintf("row-%d", i); s != want {
			t.Fatalf("string %d is %q, want %q", i, s, want)
		}
	}
	if len(long) != textBlock+1 || text.String(nil) != "" {
		t.Fatal("long or empty string copied wrong")
	}
	allocs := testing.AllocsPerRun(100, func() { _ = text.String(src) })
	if allocs > 0.01 {
		t.Fatalf("%v allocations per string", allocs)
	}
}
