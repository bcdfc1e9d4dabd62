package jsonrow

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// decodeNumber decodes JSON the way Benthos does (numbers as json.Number).
func decodeNumber(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	return v
}

// Every type's structured value serialises to its canonical JSON: value by
// value the same text as the encoder's, and row by row the same as the
// canonical row parsed and serialised again.
func TestValuesAllTypes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	cols, rec, enc, vals := boundValues(t, mem, allTypes, allTypesRows(20))
	defer rec.Release()
	var w AnyWriter
	for i := 0; i < int(rec.NumRows()); i++ {
		row := vals.Row(i)
		if len(row) != len(cols) {
			t.Fatalf("row %d has %d keys", i, len(row))
		}
		for c, col := range cols {
			got, err := w.Append(nil, row[col.Name])
			if err != nil {
				t.Fatal(err)
			}
			if want := enc.AppendValue(nil, c, i); string(got) != string(want) {
				t.Errorf("row %d column %s: %s, canonical %s", i, col.Name, got, want)
			}
		}
		got, err := w.Append(nil, row)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := w.Append(nil, decodeNumber(t, enc.AppendRow(nil, i)))
		if string(got) != string(want) || !json.Valid(got) {
			t.Fatalf("row %d:\n got %s\nwant %s", i, got, want)
		}
	}
	if id, ok := vals.Row(1)["id"].(int64); !ok || id != 1 {
		t.Fatalf("id is %#v", vals.Row(1)["id"])
	}
}

func TestAnyWriter(t *testing.T) {
	ts := time.Date(2026, 1, 31, 12, 0, 0, 123456789, time.UTC)
	cases := []struct {
		v    any
		want string
	}{
		{map[string]any{"b": int64(2), "a": "<&>\u2028\n", "c": []any{nil, true, 1.5, float32(0.1)}},
			`{"a":"<&>` + "\u2028" + `\n","b":2,"c":[null,true,1.5,0.1]}`},
		{map[string]any{"z": map[string]any{"y": 1, "x": uint8(2)}, "a": []byte{0xff}}, `{"a":"/w==","z":{"x":2,"y":1}}`},
		{math.NaN(), `"NaN"`},
		{math.Inf(-1), `"-Infinity"`},
		{1e21, `1e+21`},
		{json.Number("-12.5e3"), `-12.5e3`},
		{ts, `"2026-01-31T12:00:00.123456789Z"`},
		{struct {
			A int `json:"a"`
		}{3}, `{"a":3}`},
	}
	var w AnyWriter
	for _, c := range cases {
		got, err := w.Append(nil, c.v)
		if err != nil || string(got) != c.want {
			t.Errorf("%#v: got %s (%v), want %s", c.v, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "01", "1.", "-", "1e", "NaN", "0x10", "1 "} {
		if _, err := w.Append(nil, json.Number(bad)); err == nil {
			t.Errorf("json.Number(%q) accepted", bad)
		}
	}
	if _, err := w.Append(nil, map[string]any{"f": func() {}}); err == nil || !strings.Contains(err.Error(), "func") {
		t.Errorf("a func: %v", err)
	}
	if len(w.keys) != 0 {
		t.Errorf("keys left over: %v", w.keys)
	}
}

// AnyWriter writes what encoding/json writes for the values Benthos holds,
// except for the escapes the canonical form leaves out.
func TestAnyWriterMatchesEncodingJSON(t *testing.T) {
	v := decodeNumber(t, []byte(`{"id":42,"n":null,"s":"x\"y\\z\u0001","f":[1.25,-0,1e-7],"o":{"b":[],"a":{}}}`))
	got, err := (&AnyWriter{}).Append(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSpace(buf.String()); string(got) != want {
		t.Fatalf("got %s, encoding/json %s", got, want)
	}
}

func BenchmarkAnyWriterRow(b *testing.B) {
	v := map[string]any{"id": int64(1234567), "ts": "2025-01-01T00:00:00.037", "user_name": "user_abcdefgh", "category": "garden",
		"price": "79190.00", "quantity": int64(567), "score": json.Number("456.77"), "active": true, "day": "2022-01-08",
		"note": "some note text of about forty characters", "source": "fluss:db.t", "ingested_at": "2026-01-31T12:00:00.123456789Z"}
	b.Run("anywriter", func(b *testing.B) {
		var w AnyWriter
		var buf []byte
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			buf, _ = w.Append(buf[:0], v)
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var buf bytes.Buffer
			e := json.NewEncoder(&buf)
			e.SetEscapeHTML(false)
			_ = e.Encode(v)
		}
	})
}

// Objects with the same keys reuse the sorted order; nested objects and a
// different key set do not disturb it.
func TestAnyWriterKeyOrderReuse(t *testing.T) {
	var w AnyWriter
	for i, c := range []struct {
		v    map[string]any
		want string
	}{
		{map[string]any{"b": 1, "a": map[string]any{"d": 1, "c": 2}}, `{"a":{"c":2,"d":1},"b":1}`},
		{map[string]any{"b": 2, "a": map[string]any{"y": 1, "x": 2}}, `{"a":{"x":2,"y":1},"b":2}`},
		{map[string]any{"b": 3, "c": nil}, `{"b":3,"c":null}`},
		{map[string]any{"a": 4, "b": nil}, `{"a":4,"b":null}`},
	} {
		got, err := w.Append(nil, c.v)
		if err != nil || string(got) != c.want {
			t.Fatalf("object %d: %s (%v), want %s", i, got, err, c.want)
		}
	}
}

// An error inside an object written with the remembered keys leaves the
// writer ready for the next object.
func TestAnyWriterErrorOnRememberedKeys(t *testing.T) {
	var w AnyWriter
	good := map[string]any{"b": json.Number("1"), "a": "x"}
	bad := map[string]any{"a": "y", "b": json.Number("1x")}
	for i, c := range []struct {
		v       map[string]any
		want    string
		wantErr bool
	}{
		{good, `{"a":"x","b":1}`, false},
		{bad, "", true},
		{good, `{"a":"x","b":1}`, false},
		{map[string]any{"a": map[string]any{"z": 1, "y": 2}, "b": []any{map[string]any{"q": 1}}}, `{"a":{"y":2,"z":1},"b":[{"q":1}]}`, false},
	} {
		got, err := w.Append(nil, c.v)
		if (err != nil) != c.wantErr || (!c.wantErr && string(got) != c.want) {
			t.Fatalf("object %d: %s (%v), want %s (error %v)", i, got, err, c.want, c.wantErr)
		}
	}
	if w.depth != 0 {
		t.Fatalf("depth %d after the objects", w.depth)
	}
}

// String columns: an all-ASCII one (no value checked for UTF-8) and one
// with valid and invalid UTF-8 give the strings the canonical JSON decodes
// to, and keep them after the batch is released.
func TestValuesStrings(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rows := [][]any{
		{"plain", "é✓"},
		{"quote \" back \\ tab \t nul \x00", "bad \xff\xfe end"},
		{"", "\xed\xa0\x80 surrogate"},
		{nil, nil},
		{strings.Repeat("long ascii ", 20), "ok"},
	}
	cols, rec, enc, vals := boundValues(t, mem, "ascii STRING, mixed STRING", rows)
	var got, want []any
	for i := range rows {
		row := vals.Row(i)
		for c, col := range cols {
			got = append(got, row[col.Name])
			want = append(want, decodeNumber(t, enc.AppendValue(nil, c, i)))
		}
	}
	rec.Release()
	for j := range got {
		if got[j] != want[j] {
			t.Errorf("row %d column %s: %q, canonical %q", j/2, cols[j%2].Name, got[j], want[j])
		}
	}
	if got[2] != rows[1][0] || got[3] != "bad \uFFFD\uFFFD end" {
		t.Errorf("row 1: %q, %q", got[2], got[3])
	}
}

// boundValues builds a record batch of rows with the given columns and a
// Values bound to it; the caller releases the batch.
func boundValues(t *testing.T, mem memory.Allocator, columns string, rows [][]any) ([]types.Column, arrow.RecordBatch, *Encoder, *Values) {
	t.Helper()
	cols, err := types.ParseColumns(columns)
	if err != nil {
		t.Fatal(err)
	}
	s := types.MustSchema(cols)
	rec := buildRecord(t, mem, s, rows)
	enc, err := NewSchemaEncoder(s)
	if err != nil {
		rec.Release()
		t.Fatal(err)
	}
	vals := NewValues(enc)
	if err := vals.Bind(rec); err != nil {
		rec.Release()
		t.Fatal(err)
	}
	return cols, rec, enc, vals
}
