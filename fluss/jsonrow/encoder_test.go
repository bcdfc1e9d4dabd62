package jsonrow

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

func ms(y int, mo time.Month, d, h, mi, s, nsec int) int64 {
	return time.Date(y, mo, d, h, mi, s, nsec, time.UTC).UnixMilli()
}

func days(y int, mo time.Month, d int) int64 {
	return time.Date(y, mo, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
}

type valueCase struct {
	typ  string
	vals []any
	want []string
}

var valueCases = []valueCase{
	{"BOOLEAN", []any{true, false, nil}, []string{"true", "false", "null"}},
	{"TINYINT", []any{int64(-128), int64(127), int64(0)}, []string{"-128", "127", "0"}},
	{"SMALLINT", []any{int64(-32768), int64(32767)}, []string{"-32768", "32767"}},
	{"INT NOT NULL", []any{int64(math.MinInt32), int64(math.MaxInt32)}, []string{"-2147483648", "2147483647"}},
	{"BIGINT", []any{int64(math.MaxInt64), int64(math.MinInt64), int64(1 << 53), int64(1<<53 + 1), nil},
		[]string{"9223372036854775807", "-9223372036854775808", "9007199254740992", "9007199254740993", "null"}},
	{"FLOAT", []any{1.5, 0.1, math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0.0, 1e21, 1e-7, 123456789.0, 3.4028234663852886e38, 1e20, 1e-6, nil},
		[]string{"1.5", "0.1", `"NaN"`, `"Infinity"`, `"-Infinity"`, "-0", "0", "1e+21", "1e-7", "123456790", "3.4028235e+38", "100000000000000000000", "0.000001", "null"}},
	{"DOUBLE", []any{0.1, 1e20, 1e21, 123.456, 5e-324, math.MaxFloat64, -2.5e-7, 100.0, math.NaN(), math.Inf(-1), 0.30000000000000004},
		[]string{"0.1", "100000000000000000000", "1e+21", "123.456", "5e-324", "1.7976931348623157e+308", "-2.5e-7", "100", `"NaN"`, `"-Infinity"`, "0.30000000000000004"}},
	{"DECIMAL(10, 2)", []any{"12.3", "-0.05", "0", "-12345678.9", "99999999.99", nil},
		[]string{`"12.30"`, `"-0.05"`, `"0.00"`, `"-12345678.90"`, `"99999999.99"`, "null"}},
	{"DECIMAL(5, 0)", []any{"7", "-7", "0"}, []string{`"7"`, `"-7"`, `"0"`}},
	{"DECIMAL(38, 0)", []any{"99999999999999999999999999999999999999", "-99999999999999999999999999999999999999", "10000000000000000000", "-10000000000000000000", "9999999999999999999"},
		[]string{`"99999999999999999999999999999999999999"`, `"-99999999999999999999999999999999999999"`, `"10000000000000000000"`, `"-10000000000000000000"`, `"9999999999999999999"`}},
	{"DECIMAL(38, 38)", []any{"0.12345678901234567890123456789012345678", "-0.00000000000000000000000000000000000001", "0"},
		[]string{`"0.12345678901234567890123456789012345678"`, `"-0.00000000000000000000000000000000000001"`, `"0.00000000000000000000000000000000000000"`}},
	{"DECIMAL(38, 10)", []any{"-1234567890123456789012345678.0123456789", "0.5"},
		[]string{`"-1234567890123456789012345678.0123456789"`, `"0.5000000000"`}},
	{"DECIMAL(20, 1)", []any{"1000000000000000000.0", "-1000000000000000000.0"},
		[]string{`"1000000000000000000.0"`, `"-1000000000000000000.0"`}},
	{"CHAR(3)", []any{"abc", "a", nil}, []string{`"abc"`, `"a"`, "null"}},
	{"STRING", []any{"", "héllo wörld ✓ 😀 日本", "q\" b\\ n\n t\t r\r b\b f\f z\x00 u\x1f d\x7f", "</script>&'", "\u2028\u2029", "bad\xffutf8\xc3", "\xe2\x82|\xe2\x82x|\xed\xa0\x80|\xf0\x9f\x98|\xc0\xaf|\xf4\x90\x80\x80|\xf0\x9f\x98\x80"},
		[]string{`""`, `"héllo wörld ✓ 😀 日本"`, `"q\" b\\ n\n t\t r\r b\b f\f z\u0000 u\u001f d` + "\x7f" + `"`, `"</script>&'"`, "\"\u2028\u2029\"", "\"bad\uFFFDutf8\uFFFD\"",
			"\"\uFFFD|\uFFFDx|\uFFFD|\uFFFD|\uFFFD\uFFFD|\uFFFD\uFFFD\uFFFD\uFFFD|\U0001F600\""}},
	{"BINARY(3)", []any{[]byte{0, 1, 2}, []byte{0xff, 0xfe, 0xfd}, nil}, []string{`"AAEC"`, `"//79"`, "null"}},
	{"BYTES", []any{[]byte{}, []byte{0xff}, []byte("ab"), []byte("abc")}, []string{`""`, `"/w=="`, `"YWI="`, `"YWJj"`}},
	{"DATE", []any{int64(0), int64(-1), days(2000, 2, 29), days(1, 1, 1), days(999, 12, 31), days(9999, 12, 31), days(1582, 10, 4), int64(-719528), int64(-719529), int64(2932897), nil},
		[]string{`"1970-01-01"`, `"1969-12-31"`, `"2000-02-29"`, `"0001-01-01"`, `"0999-12-31"`, `"9999-12-31"`, `"1582-10-04"`, `"0000-01-01"`, `"-0001-12-31"`, `"+10000-01-01"`, "null"}},
	{"TIME(0)", []any{int64(0), int64(86399), int64(45296)}, []string{`"00:00:00"`, `"23:59:59"`, `"12:34:56"`}},
	{"TIME(1)", []any{int64(45296789)}, []string{`"12:34:56.7"`}},
	{"TIME(3)", []any{int64(45296789), int64(0), int64(86399999), nil}, []string{`"12:34:56.789"`, `"00:00:00.000"`, `"23:59:59.999"`, "null"}},
	{"TIME(6)", []any{int64(45296789000)}, []string{`"12:34:56.789000"`}},
	// Fluss TIME is milliseconds of the day: digits below the millisecond are
	// dropped and values wrap modulo one day, exactly like the Java reader.
	{"TIME(9)", []any{int64(45296789123456), int64(86399999999999), int64(86400000000000), int64(-1000000)},
		[]string{`"12:34:56.789000000"`, `"23:59:59.999000000"`, `"00:00:00.000000000"`, `"23:59:59.999000000"`}},
	{"TIME(4)", []any{int64(45296789999), int64(-1)}, []string{`"12:34:56.7890"`, `"00:00:00.0000"`}},
	{"TIMESTAMP(0)", []any{int64(0), int64(-1), int64(-62135596800), int64(253402300799)},
		[]string{`"1970-01-01T00:00:00"`, `"1969-12-31T23:59:59"`, `"0001-01-01T00:00:00"`, `"9999-12-31T23:59:59"`}},
	{"TIMESTAMP(2)", []any{int64(1234), int64(-10)}, []string{`"1970-01-01T00:00:01.23"`, `"1969-12-31T23:59:59.99"`}},
	{"TIMESTAMP(3)", []any{int64(-1), int64(1700000000123), ms(999, 6, 15, 1, 2, 3, 4e6), ms(1, 1, 1, 0, 0, 0, 0) - 1, nil},
		[]string{`"1969-12-31T23:59:59.999"`, `"2023-11-14T22:13:20.123"`, `"0999-06-15T01:02:03.004"`, `"0000-12-31T23:59:59.999"`, "null"}},
	{"TIMESTAMP(6)", []any{int64(-1), int64(1700000000123456)}, []string{`"1969-12-31T23:59:59.999999"`, `"2023-11-14T22:13:20.123456"`}},
	{"TIMESTAMP(9)", []any{int64(1700000000123456789), int64(-1), int64(math.MinInt64), int64(math.MaxInt64)},
		[]string{`"2023-11-14T22:13:20.123456789"`, `"1969-12-31T23:59:59.999999999"`, `"1677-09-21T00:12:43.145224192"`, `"2262-04-11T23:47:16.854775807"`}},
	{"TIMESTAMP_LTZ(0)", []any{int64(-62135596800), int64(1)}, []string{`"0001-01-01T00:00:00Z"`, `"1970-01-01T00:00:01Z"`}},
	{"TIMESTAMP_LTZ(3)", []any{int64(-1), int64(1700000000123), nil}, []string{`"1969-12-31T23:59:59.999Z"`, `"2023-11-14T22:13:20.123Z"`, "null"}},
	{"TIMESTAMP_LTZ(6)", []any{int64(1700000000123456)}, []string{`"2023-11-14T22:13:20.123456Z"`}},
	{"TIMESTAMP_LTZ(9)", []any{int64(-999999999)}, []string{`"1969-12-31T23:59:59.000000001Z"`}},
	{"ARRAY<INT>", []any{[]any{int64(1), nil, int64(3)}, []any{}, nil}, []string{"[1,null,3]", "[]", "null"}},
	{"ARRAY<ARRAY<STRING>>", []any{[]any{[]any{"a"}, []any{}, nil}}, []string{`[["a"],[],null]`}},
	{"ARRAY<DECIMAL(4, 2)>", []any{[]any{"1.5", nil}}, []string{`["1.50",null]`}},
	{"MAP<STRING, INT>", []any{[]kv{{"a", int64(1)}, {"b\"", nil}}, []kv{}, nil}, []string{`{"a":1,"b\"":null}`, `{}`, "null"}},
	{"MAP<CHAR(2), ARRAY<INT>>", []any{[]kv{{"xy", []any{int64(1)}}, {"z", nil}}}, []string{`{"xy":[1],"z":null}`}},
	{"MAP<INT, STRING>", []any{[]kv{{int64(1), "x"}, {int64(2), nil}}, []kv{}}, []string{`[{"key":1,"value":"x"},{"key":2,"value":null}]`, `[]`}},
	{"MAP<DATE, DOUBLE>", []any{[]kv{{int64(0), math.NaN()}}}, []string{`[{"key":"1970-01-01","value":"NaN"}]`}},
	{"MAP<BYTES, BOOLEAN>", []any{[]kv{{[]byte("k"), true}}}, []string{`[{"key":"aw==","value":true}]`}},
	// MAP entries are sorted by the canonical JSON text of the key, as bytes, stably.
	{"MAP<STRING, INT>", []any{[]kv{{"z", int64(1)}, {"é", int64(2)}, {"a\"", int64(3)}, {"A", int64(4)}, {"", int64(5)}, {"a", int64(6)}}},
		[]string{`{"":5,"A":4,"a":6,"a\"":3,"z":1,"é":2}`}},
	{"MAP<INT, STRING>", []any{[]kv{{int64(10), "a"}, {int64(2), "b"}, {int64(-1), "c"}, {int64(2), "d"}}},
		[]string{`[{"key":-1,"value":"c"},{"key":10,"value":"a"},{"key":2,"value":"b"},{"key":2,"value":"d"}]`}},
	{"MAP<STRING, MAP<STRING, INT>>", []any{[]kv{{"y", []kv{{"b", int64(1)}, {"a", int64(2)}}}, {"x", []kv{}}}},
		[]string{`{"x":{},"y":{"a":2,"b":1}}`}},
	{"ARRAY<MAP<DOUBLE, BOOLEAN>>", []any{[]any{[]kv{{0.5, true}, {-0.5, false}}, nil, []kv{{math.Inf(1), true}, {math.NaN(), nil}}}},
		[]string{`[[{"key":-0.5,"value":false},{"key":0.5,"value":true}],null,[{"key":"Infinity","value":true},{"key":"NaN","value":null}]]`}},
	{"ROW<a INT, b STRING>", []any{[]any{int64(1), "x"}, []any{nil, nil}, nil}, []string{`{"a":1,"b":"x"}`, `{"a":null,"b":null}`, "null"}},
	{"ROW<`we\"ird` ROW<x INT>, b ARRAY<ROW<y STRING>>, m MAP<STRING, ROW<z TIMESTAMP(3)>>>",
		[]any{
			[]any{[]any{int64(5)}, []any{[]any{"p"}, nil, []any{nil}}, []kv{{"k", []any{int64(0)}}, {"n", nil}}},
			[]any{nil, []any{}, nil},
		},
		[]string{
			`{"we\"ird":{"x":5},"b":[{"y":"p"},null,{"y":null}],"m":{"k":{"z":"1970-01-01T00:00:00.000"},"n":null}}`,
			`{"we\"ird":null,"b":[],"m":null}`,
		}},
}

func TestEncodeValues(t *testing.T) {
	for _, c := range valueCases {
		t.Run(c.typ, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			s := types.MustSchema([]types.Column{types.NewColumn("v", types.MustParseDataType(c.typ))})
			rows := make([][]any, len(c.vals))
			for i, v := range c.vals {
				rows[i] = []any{v}
			}
			rec := buildRecord(t, mem, s, rows)
			defer rec.Release()
			enc, err := NewSchemaEncoder(s)
			if err != nil {
				t.Fatal(err)
			}
			if err := enc.Bind(rec); err != nil {
				t.Fatal(err)
			}
			var buf []byte
			for i, want := range c.want {
				buf = enc.AppendRow(buf[:0], i)
				if got := string(buf); got != `{"v":`+want+`}` {
					t.Errorf("row %d: got %s, want {\"v\":%s}", i, got, want)
				}
				if !json.Valid(buf) {
					t.Errorf("row %d: invalid JSON %s", i, buf)
				}
				if got := string(enc.AppendValue(nil, 0, i)); got != want {
					t.Errorf("AppendValue row %d: got %s, want %s", i, got, want)
				}
			}
		})
	}
}

// allTypes is a table with every Fluss type, used by several tests.
const allTypes = "id BIGINT NOT NULL, b BOOLEAN, ti TINYINT, si SMALLINT, i INT, f FLOAT, d DOUBLE, " +
	"dec DECIMAL(12, 3), big DECIMAL(38, 4), c CHAR(4), s STRING, bin BINARY(2), by BYTES, dt DATE, " +
	"t0 TIME(0), t3 TIME(3), t6 TIME(6), t9 TIME(9), ts0 TIMESTAMP(0), ts3 TIMESTAMP(3), ts6 TIMESTAMP(6), ts9 TIMESTAMP(9), " +
	"l0 TIMESTAMP_LTZ(0), l3 TIMESTAMP_LTZ(3), l6 TIMESTAMP_LTZ(6), l9 TIMESTAMP_LTZ(9), " +
	"arr ARRAY<STRING>, m MAP<STRING, INT>, mk MAP<INT, STRING>, r ROW<x INT, y ARRAY<DOUBLE>>"

func allTypesRows(n int) [][]any {
	rows := make([][]any, n)
	for i := range rows {
		v := int64(i)
		row := []any{
			v, i%2 == 0, v % 100, v * 3, v * 1000, float64(i) / 4, float64(i) * 1.1,
			"123456789.125", "-1234567890123456789012345678901234.5678", "ab", "row é " + string(rune('a'+i%26)), []byte{byte(i), 1}, []byte("bytes"), v - 5,
			v, v * 1000, v * 1000000, v * 1000000000, v, v * 1000, v * 1000000, v * 1000000000,
			-v, -v * 1000, -v * 1000000, -v * 1000000000,
			[]any{"x", nil, "z"}, []kv{{"k1", v}, {"k2", nil}}, []kv{{v, "s"}}, []any{v, []any{0.5, nil}},
		}
		if i%7 == 3 {
			for c := 1; c < len(row); c++ {
				row[c] = nil
			}
		}
		rows[i] = row
	}
	return rows
}

func TestEncodeAllTypes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	cols, err := types.ParseColumns(allTypes)
	if err != nil {
		t.Fatal(err)
	}
	s := types.MustSchema(cols)
	rec := buildRecord(t, mem, s, allTypesRows(10))
	defer rec.Release()
	enc, err := NewSchemaEncoder(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := enc.AppendRecordRow(nil, rec, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":1,"b":false,"ti":1,"si":3,"i":1000,"f":0.25,"d":1.1,"dec":"123456789.125","big":"-1234567890123456789012345678901234.5678",` +
		`"c":"ab","s":"row é b","bin":"AQE=","by":"Ynl0ZXM=","dt":"1969-12-28",` +
		`"t0":"00:00:01","t3":"00:00:01.000","t6":"00:00:01.000000","t9":"00:00:01.000000000",` +
		`"ts0":"1970-01-01T00:00:01","ts3":"1970-01-01T00:00:01.000","ts6":"1970-01-01T00:00:01.000000","ts9":"1970-01-01T00:00:01.000000000",` +
		`"l0":"1969-12-31T23:59:59Z","l3":"1969-12-31T23:59:59.000Z","l6":"1969-12-31T23:59:59.000000Z","l9":"1969-12-31T23:59:59.000000000Z",` +
		`"arr":["x",null,"z"],"m":{"k1":1,"k2":null},"mk":[{"key":1,"value":"s"}],"r":{"x":1,"y":[0.5,null]}}`
	if string(got) != want {
		t.Fatalf("row 1:\n got %s\nwant %s", got, want)
	}
	got, _ = enc.AppendRecordRow(got[:0], rec, 3)
	if !strings.HasPrefix(string(got), `{"id":3,"b":null,"ti":null,`) || !strings.HasSuffix(string(got), `"m":null,"mk":null,"r":null}`) {
		t.Fatalf("null row: %s", got)
	}
	var names []string
	var obj map[string]json.RawMessage
	for i := 0; i < int(rec.NumRows()); i++ {
		got, err = enc.AppendRecordRow(got[:0], rec, i)
		if err != nil || json.Unmarshal(got, &obj) != nil || len(obj) != len(cols) {
			t.Fatalf("row %d: %s %v", i, got, err)
		}
	}
	for _, c := range cols {
		names = append(names, `"`+c.Name+`":`)
	}
	last := -1
	for _, n := range names {
		p := strings.Index(string(got), n)
		if p <= last {
			t.Fatalf("key %s out of column order in %s", n, got)
		}
		last = p
	}

	// A slice of the batch renders the same rows (offsets of nested arrays).
	sl := rec.NewSlice(4, 9)
	defer sl.Release()
	var a, b []byte
	for i := 0; i < 5; i++ {
		a, _ = enc.AppendRecordRow(a[:0], rec, i+4)
		b, err = enc.AppendRecordRow(b[:0], sl, i)
		if err != nil || string(a) != string(b) {
			t.Fatalf("slice row %d: %s != %s (%v)", i, b, a, err)
		}
	}
	if _, err := enc.AppendRecordRow(nil, sl, 5); err == nil {
		t.Fatal("row out of range accepted")
	}
}

func TestEncodeNoAllocs(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	cols, _ := types.ParseColumns(allTypes)
	s := types.MustSchema(cols)
	rec := buildRecord(t, mem, s, allTypesRows(64))
	defer rec.Release()
	enc, err := NewSchemaEncoder(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := enc.Bind(rec); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 1<<16)
	row := 0
	allocs := testing.AllocsPerRun(200, func() {
		buf = enc.AppendRow(buf[:0], row%64)
		row++
	})
	if allocs != 0 {
		t.Fatalf("AppendRow allocates %.1f times per row", allocs)
	}
}

func TestEncoderErrors(t *testing.T) {
	if _, err := NewEncoder(types.Int(), nil); err == nil {
		t.Error("non-ROW row type accepted")
	}
	row := types.MustParseDataType("ROW<a INT, b STRING>")
	wrongCount := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int32}}, nil)
	if _, err := NewEncoder(row, wrongCount); err == nil || !strings.Contains(err.Error(), "1 fields") {
		t.Errorf("field count mismatch: %v", err)
	}
	wrongType := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int32}, {Name: "b", Type: arrow.PrimitiveTypes.Int32}}, nil)
	if _, err := NewEncoder(row, wrongType); err == nil || !strings.Contains(err.Error(), `column "b"`) {
		t.Errorf("type mismatch: %v", err)
	}
	dec := types.MustParseDataType("ROW<d DECIMAL(10, 2)>")
	wrongScale := arrow.NewSchema([]arrow.Field{{Name: "d", Type: &arrow.Decimal128Type{Precision: 10, Scale: 3}}}, nil)
	if _, err := NewEncoder(dec, wrongScale); err == nil || !strings.Contains(err.Error(), "scale") {
		t.Errorf("scale mismatch: %v", err)
	}

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s1 := types.MustSchema([]types.Column{types.NewColumn("a", types.Int())})
	rec := buildRecord(t, mem, s1, [][]any{{int64(1)}})
	defer rec.Release()
	enc, err := NewEncoder(row, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := enc.Bind(rec); err == nil || !strings.Contains(err.Error(), "1 columns") {
		t.Errorf("bind with wrong column count: %v", err)
	}
	s2 := types.MustSchema([]types.Column{types.NewColumn("a", types.String()), types.NewColumn("b", types.String())})
	rec2 := buildRecord(t, mem, s2, [][]any{{"x", "y"}})
	defer rec2.Release()
	if err := enc.Bind(rec2); err == nil || !strings.Contains(err.Error(), `column "a"`) {
		t.Errorf("bind with wrong array type: %v", err)
	}
	if got := string(enc.AppendRow(nil, 0)); got != `{"a":null,"b":null}` {
		t.Errorf("unbound encoder wrote %s", got)
	}
	if enc.RowType().Kind != types.KindRow {
		t.Error("RowType")
	}
}

func TestDateAgainstTime(t *testing.T) {
	// every day from 0001-01-01 to 9999-12-31, stepping by 17 days
	for d := days(1, 1, 1); d <= days(9999, 12, 31); d += 7 {
		want := time.Unix(d*86400, 0).UTC().Format("2006-01-02")
		if got := string(appendDate(nil, d)); got != want {
			t.Fatalf("day %d: %s, want %s", d, got, want)
		}
	}
}

func TestTimestampAgainstTime(t *testing.T) {
	for sec := int64(-62135596800); sec < 253402300799; sec += 86400*97 + 3607 {
		for _, nanos := range []int64{0, 1, 999999999, 123456789} {
			tm := time.Unix(sec, nanos).UTC()
			want := tm.Format("2006-01-02T15:04:05.000000000")
			if got := string(appendTimestamp(nil, sec, nanos, 9)); got != want {
				t.Fatalf("%d.%09d: %s, want %s", sec, nanos, got, want)
			}
		}
	}
}

func TestEncodeLargeMapSortedNoAllocs(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := types.MustSchema([]types.Column{types.NewColumn("m", types.MustParseDataType("MAP<STRING, BIGINT>"))})
	var entries []kv
	var want []string
	for i := 0; i < 40; i++ {
		k := fmt.Sprintf("k%02d", 39-i)
		entries = append(entries, kv{k, int64(i)})
	}
	for i := 0; i < 40; i++ {
		want = append(want, fmt.Sprintf(`"k%02d":%d`, i, 39-i))
	}
	entries = append(entries, kv{"k05", int64(100)}) // duplicate key: stays after the first
	want = append(want[:6], append([]string{`"k05":100`}, want[6:]...)...)
	rec := buildRecord(t, mem, s, [][]any{{entries}})
	defer rec.Release()
	enc, err := NewSchemaEncoder(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := enc.Bind(rec); err != nil {
		t.Fatal(err)
	}
	got := enc.AppendRow(nil, 0)
	if exp := `{"m":{` + strings.Join(want, ",") + `}}`; string(got) != exp {
		t.Fatalf("got  %s\nwant %s", got, exp)
	}
	allocs := testing.AllocsPerRun(100, func() { got = enc.AppendRow(got[:0], 0) })
	if allocs != 0 {
		t.Fatalf("large map allocates %.1f times per row", allocs)
	}
}

func TestExtremeTimestamps(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := types.MustSchema([]types.Column{types.NewColumn("a", types.Timestamp(0)), types.NewColumn("b", types.TimestampLTZ(3)), types.NewColumn("c", types.Date())})
	rec := buildRecord(t, mem, s, [][]any{
		{int64(math.MaxInt64), int64(math.MaxInt64), int64(math.MaxInt32)},
		{int64(math.MinInt64), int64(math.MinInt64), int64(math.MinInt32)},
		{int64(math.MaxInt64), int64(0), int64(0)},
	})
	defer rec.Release()
	enc, err := NewSchemaEncoder(s)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"a":"+292277026596-12-04T15:30:07","b":"+292278994-08-17T07:12:55.807Z","c":"+5881580-07-11"}`,
		`{"a":"-292277022657-01-27T08:29:52","b":"-292275055-05-16T16:47:04.192Z","c":"-5877641-06-23"}`,
		`{"a":"+292277026596-12-04T15:30:07","b":"1970-01-01T00:00:00.000Z","c":"1970-01-01"}`,
	}
	for i, w := range want {
		got, err := enc.AppendRecordRow(nil, rec, i)
		if err != nil || string(got) != w {
			t.Errorf("row %d: %s (%v), want %s", i, got, err, w)
		}
	}
}
