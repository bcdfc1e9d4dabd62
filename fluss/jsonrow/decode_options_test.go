package jsonrow

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// structuredRows builds one record from structured rows with a fresh builder.
func structuredRows(t *testing.T, s *types.Schema, rows ...any) []string {
	t.Helper()
	b := newTestBuilder(t, s)
	for _, r := range rows {
		if err := b.AppendStructured(r); err != nil {
			t.Fatalf("%#v: %v", r, err)
		}
	}
	rec := b.NewRecord()
	defer rec.Release()
	return encodeRows(t, s, rec)
}

func TestDecodeIgnoreUnknownKeys(t *testing.T) {
	s := types.MustSchema([]types.Column{
		types.NewColumn("a", types.Int()),
		types.NewColumn("r", types.MustParseDataType("ROW<x INT>")),
	})
	b := newTestBuilder(t, s, IgnoreUnknownKeys())
	rows := []string{
		`{"z":{"deep":[1,{"q":null}]},"a":1,"r":{"y":"?","x":2},"w":"x"}`,
		`{"a":2,"zz":1,"zz":2}`, // a key twice is invalid JSON, known or not
		`{"a":3,"u":[1,}`,       // skipped values are checked
	}
	if err := b.AppendJSON([]byte(rows[0])); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows[1:] {
		if err := b.AppendJSON([]byte(r)); err == nil {
			t.Errorf("%s accepted", r)
		}
	}
	if err := b.AppendStructured(map[string]any{"a": 4, "q": []any{1}, "r": map[string]any{"x": 5, "y": 6}}); err != nil {
		t.Fatal(err)
	}
	rec := b.NewRecord()
	defer rec.Release()
	got := strings.Join(encodeRows(t, s, rec), "\n")
	if want := `{"a":1,"r":{"x":2}}` + "\n" + `{"a":4,"r":{"x":5}}`; got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// TestDecodeKeysOnly: the Key appends read only the primary-key columns;
// the others are null even when NOT NULL, and their values are skipped
// (still checked as JSON).
func TestDecodeKeysOnly(t *testing.T) {
	s := types.MustSchema([]types.Column{
		types.NewColumn("k1", types.String()), types.NewColumn("v", types.Int().NotNull()),
		types.NewColumn("k2", types.Date()), types.NewColumn("w", types.MustParseDataType("ARRAY<INT NOT NULL>")),
	}, "k1", "k2")
	b := newTestBuilder(t, s)
	for _, r := range []string{`{"k1":"a","k2":"2024-01-01"}`, `{"v":"not an int","w":[null],"k2":"2024-01-02","k1":"b"}`} {
		if err := b.AppendJSONKey([]byte(r)); err != nil {
			t.Fatalf("%s: %v", r, err)
		}
	}
	if err := b.AppendStructuredKey(map[string]any{"k1": "c", "k2": "2024-01-03", "v": "x"}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{`{"k1":"a"}`, `{"k1":"a","k2":"2024-01-01","v":[1,}`, `{"k1":"a","k2":"2024-01-01","x":1}`, `{"k1":1,"k2":"2024-01-01"}`} {
		if err := b.AppendJSONKey([]byte(r)); err == nil {
			t.Errorf("key row %s accepted", r)
		}
	}
	if err := b.AppendJSONKey([]byte(`{"k1":"a"}`)); err == nil || err.Error() != `jsonrow: column "k2" (DATE NOT NULL): missing, and the type is NOT NULL` {
		t.Errorf("missing key column: %v", err)
	}
	if err := b.AppendJSON([]byte(`{"k1":"a","k2":"2024-01-01"}`)); err == nil {
		t.Error("a full row without its NOT NULL column accepted")
	}
	rec := b.NewRecord()
	defer rec.Release()
	got := strings.Join(encodeRows(t, s, rec), "\n")
	want := `{"k1":"a","v":null,"k2":"2024-01-01","w":null}` + "\n" +
		`{"k1":"b","v":null,"k2":"2024-01-02","w":null}` + "\n" +
		`{"k1":"c","v":null,"k2":"2024-01-03","w":null}`
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}

	logTable := newTestBuilder(t, types.MustSchema([]types.Column{types.NewColumn("a", types.Int())}))
	if err := logTable.AppendJSONKey([]byte(`{"a":1}`)); err == nil || !strings.Contains(err.Error(), "no key columns") {
		t.Errorf("key append without a primary key: %v", err)
	}
	if _, err := NewSchemaRowBuilder(s, WithKeyColumns("nope")); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown key column: %v", err)
	}
}

func TestNewRowBuilderErrors(t *testing.T) {
	if _, err := NewRowBuilder(types.Int(), nil); err == nil {
		t.Error("non-ROW type accepted")
	}
	row := types.MustParseDataType("ROW<a INT, d DECIMAL(10, 2), ts TIMESTAMP(3)>")
	good, err := types.ArrowSchemaOfRow(row)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewRowBuilder(row, good)
	if err != nil {
		t.Fatal(err)
	}
	b.Release()
	for _, bad := range []*arrow.Schema{
		arrow.NewSchema(good.Fields()[:2], nil),
		arrow.NewSchema([]arrow.Field{good.Field(0), {Name: "d", Type: &arrow.Decimal128Type{Precision: 10, Scale: 3}}, good.Field(2)}, nil),
		arrow.NewSchema([]arrow.Field{good.Field(0), good.Field(1), {Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}}}, nil),
	} {
		if _, err := NewRowBuilder(row, bad); err == nil {
			t.Errorf("schema %s accepted", bad)
		}
	}
}

// TestDecodeStructuredGoTypes: Go values encoding/json does not produce
// read as their JSON would be (AnyWriter), time.Time by the column's type.
func TestDecodeStructuredGoTypes(t *testing.T) {
	cols, err := types.ParseColumns("i TINYINT, b BIGINT, f FLOAT, d DOUBLE, dec DECIMAL(22, 2), s STRING, by BYTES, " +
		"dt DATE, tm TIME(3), ts TIMESTAMP(6), ltz TIMESTAMP_LTZ(3), ts0 TIMESTAMP(0)")
	if err != nil {
		t.Fatal(err)
	}
	s := types.MustSchema(cols)
	zone := time.FixedZone("x", 2*3600)
	at := time.Date(2024, 2, 29, 23, 30, 15, 123456789, zone)
	got := structuredRows(t, s,
		map[string]any{"i": int8(-128), "b": uint64(math.MaxInt64), "f": float32(0.1), "d": float32(0.1), "dec": uint64(math.MaxUint64),
			"s": []byte("hi"), "by": []byte{0, 1}, "dt": at, "tm": at, "ts": at, "ltz": at, "ts0": time.Date(1969, 12, 31, 23, 59, 59, 5e8, time.UTC)},
		map[string]any{"i": uint8(7), "b": int32(-1), "f": 0.1, "d": 0.1, "dec": 12.5, "s": at, "by": "AAE=", "dt": "2024-02-29"},
	)
	want := []string{
		`{"i":-128,"b":9223372036854775807,"f":0.1,"d":0.1,"dec":"18446744073709551615.00","s":"aGk=","by":"AAE=",` +
			`"dt":"2024-02-29","tm":"23:30:15.123","ts":"2024-02-29T23:30:15.123456","ltz":"2024-02-29T21:30:15.123Z","ts0":"1969-12-31T23:59:59"}`,
		`{"i":7,"b":-1,"f":0.1,"d":0.1,"dec":"12.50","s":"2024-02-29T23:30:15.123456789+02:00","by":"AAE=",` +
			`"dt":"2024-02-29","tm":null,"ts":null,"ltz":null,"ts0":null}`,
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
	b := newTestBuilder(t, s)
	if err := b.AppendStructured(map[string]any{"ts": int64(0)}); err == nil {
		t.Error("a number for TIMESTAMP accepted")
	}
}

// TestDecodeStructuredNumbers: json.Number keeps integers beyond 2^53
// exact; float64 forms of the same rows read as their JSON text does.
func TestDecodeStructuredNumbers(t *testing.T) {
	s := types.MustSchema([]types.Column{types.NewColumn("b", types.BigInt()), types.NewColumn("d", types.Decimal(38, 10)), types.NewColumn("f", types.Float())})
	line := `{"b":9007199254740993,"d":0.1000000001,"f":16777217}`
	var withNumbers, withFloats any
	d := json.NewDecoder(strings.NewReader(line))
	d.UseNumber()
	if err := d.Decode(&withNumbers); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(line), &withFloats); err != nil {
		t.Fatal(err)
	}
	got := structuredRows(t, s, withNumbers, withFloats)
	if want := `{"b":9007199254740993,"d":"0.1000000001","f":16777216}`; got[0] != want || got[0] != rowsOf(t, s, line)[0] {
		t.Fatalf("json.Number row %s, want %s", got[0], want)
	}
	if want := `{"b":9007199254740992,"d":"0.1000000001","f":16777216}`; got[1] != want {
		t.Fatalf("float64 row %s, want %s", got[1], want)
	}
}
