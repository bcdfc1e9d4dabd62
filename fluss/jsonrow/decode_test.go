package jsonrow

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// newTestBuilder returns a builder for s on a checked allocator, released
// (and the allocator checked) when the test ends.
func newTestBuilder(t testing.TB, s *types.Schema, opts ...BuilderOption) *RowBuilder {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	b, err := NewSchemaRowBuilder(s, append([]BuilderOption{WithBuilderAllocator(mem)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.Release()
		mem.AssertSize(t, 0)
	})
	return b
}

// encodeRows renders every row of rec as canonical JSON.
func encodeRows(t testing.TB, s *types.Schema, rec arrow.RecordBatch) []string {
	t.Helper()
	enc, err := NewSchemaEncoder(s)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := 0; i < int(rec.NumRows()); i++ {
		row, err := enc.AppendRecordRow(nil, rec, i)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(row))
	}
	return out
}

// sameRecords fails unless a and b hold the same values (NaN equal to NaN,
// -0 apart from 0: the canonical text tells those apart).
func sameRecords(t testing.TB, s *types.Schema, a, b arrow.RecordBatch) {
	t.Helper()
	if !array.RecordApproxEqual(a, b, array.WithNaNsEqual(true), array.WithAbsTolerance(0)) {
		t.Fatalf("records differ:\n%v\n%v", a, b)
	}
	ea, eb := encodeRows(t, s, a), encodeRows(t, s, b)
	if strings.Join(ea, "\n") != strings.Join(eb, "\n") {
		t.Fatalf("records render differently:\n%s\n%s", strings.Join(ea, "\n"), strings.Join(eb, "\n"))
	}
}

// mergesDuplicates are value cases whose Arrow maps hold a key twice:
// reading their JSON merges the entries (as Java does), so they do not
// come back byte for byte.
func mergesDuplicates(c valueCase) bool {
	for _, w := range c.want {
		if strings.Contains(w, `{"key":2,"value":"b"},{"key":2,"value":"d"}`) {
			return true
		}
	}
	return false
}

// TestDecodeValueCasesRoundTrip reads back the canonical JSON of every
// encoder value case: the Encoder renders the record built from it byte
// for byte as it was, and the structured forms of the same JSON build the
// same record.
func TestDecodeValueCasesRoundTrip(t *testing.T) {
	for _, c := range valueCases {
		if mergesDuplicates(c) {
			continue
		}
		t.Run(c.typ, func(t *testing.T) {
			s := types.MustSchema([]types.Column{types.NewColumn("v", types.MustParseDataType(c.typ))})
			var lines []string
			for _, w := range c.want {
				lines = append(lines, `{"v":`+w+`}`)
			}
			roundTrip(t, s, lines)
		})
	}
}

// roundTrip checks that lines, canonical JSON rows of s, decode to a
// record that encodes to lines again, and that their structured forms
// (encoding/json with UseNumber) decode to the same record. Their float64
// forms (no UseNumber) must decode as the JSON AnyWriter writes for them.
func roundTrip(t *testing.T, s *types.Schema, lines []string) {
	t.Helper()
	fromBytes, fromNumbers := newTestBuilder(t, s), newTestBuilder(t, s)
	fromFloats, fromFloatText := newTestBuilder(t, s), newTestBuilder(t, s)
	var aw AnyWriter
	for i, line := range lines {
		if err := fromBytes.AppendJSON([]byte(line)); err != nil {
			t.Fatalf("row %d %s: %v", i, line, err)
		}
		if err := fromNumbers.AppendStructured(decodeJSON(t, line, true)); err != nil {
			t.Fatalf("row %d structured %s: %v", i, line, err)
		}
		floats := decodeJSON(t, line, false)
		text, err := aw.Append(nil, floats)
		if err != nil {
			t.Fatal(err)
		}
		errA, errB := fromFloats.AppendStructured(floats), fromFloatText.AppendJSON(text)
		if (errA == nil) != (errB == nil) {
			t.Fatalf("row %d float64 form %s: structured %v, its JSON %v", i, text, errA, errB)
		}
	}
	recs := make([]arrow.RecordBatch, 4)
	for i, b := range []*RowBuilder{fromBytes, fromNumbers, fromFloats, fromFloatText} {
		recs[i] = b.NewRecord()
		defer recs[i].Release()
	}
	got := encodeRows(t, s, recs[0])
	if strings.Join(got, "\n") != strings.Join(lines, "\n") {
		t.Fatalf("round trip:\n got %s\nwant %s", strings.Join(got, "\n"), strings.Join(lines, "\n"))
	}
	sameRecords(t, s, recs[0], recs[1])
	sameRecords(t, s, recs[2], recs[3])
}

func decodeJSON(t testing.TB, line string, useNumber bool) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(line))
	if useNumber {
		d.UseNumber()
	}
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return v
}

// TestDecodeAllTypesRoundTrip reads back the canonical JSON of a table of
// every type (nulls, nested values, 38-digit decimals, all precisions).
func TestDecodeAllTypesRoundTrip(t *testing.T) {
	cols, err := types.ParseColumns(allTypes)
	if err != nil {
		t.Fatal(err)
	}
	s := types.MustSchema(cols)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := buildRecord(t, mem, s, allTypesRows(40))
	defer rec.Release()
	roundTrip(t, s, encodeRows(t, s, rec))

	// The record read back equals the one the rows were rendered from.
	b := newTestBuilder(t, s)
	for _, line := range encodeRows(t, s, rec) {
		if err := b.AppendJSON([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	back := b.NewRecord()
	defer back.Release()
	sameRecords(t, s, rec, back)
}

// TestDecodeNewRecordCycles fills several record batches from one builder
// (its Arrow builders are reused) and checks each.
func TestDecodeNewRecordCycles(t *testing.T) {
	cols, _ := types.ParseColumns(allTypes)
	s := types.MustSchema(cols)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	src := buildRecord(t, mem, s, allTypesRows(30))
	defer src.Release()
	lines := encodeRows(t, s, src)
	b := newTestBuilder(t, s)
	for _, n := range []int{7, 0, 1, 22} {
		for _, line := range lines[:n] {
			if err := b.AppendJSON([]byte(line)); err != nil {
				t.Fatal(err)
			}
		}
		if b.Len() != n {
			t.Fatalf("Len %d, want %d", b.Len(), n)
		}
		rec := b.NewRecord()
		got := encodeRows(t, s, rec)
		rec.Release()
		if strings.Join(got, "\n") != strings.Join(lines[:n], "\n") {
			t.Fatalf("batch of %d rows:\n%s", n, strings.Join(got, "\n"))
		}
		if b.Len() != 0 {
			t.Fatal("Len not reset by NewRecord")
		}
	}
}

// TestDecodeSchemaMatchesWriter: the records carry the schema they were
// built for (fluss.Writer compares it with Schema.Equal).
func TestDecodeSchemaMatchesWriter(t *testing.T) {
	cols, _ := types.ParseColumns(allTypes)
	s := types.MustSchema(cols, "id")
	want, err := s.ArrowSchema()
	if err != nil {
		t.Fatal(err)
	}
	b := newTestBuilder(t, s)
	if err := b.AppendJSON([]byte(`{"id":1,"i":2}`)); err != nil {
		t.Fatal(err)
	}
	rec := b.NewRecord()
	defer rec.Release()
	if !rec.Schema().Equal(want) || !b.Schema().Equal(want) {
		t.Fatalf("schema %s, want %s", rec.Schema(), want)
	}
}

// TestDecodeAtomicRows: a row failing anywhere (last column, deep in a
// nested value, after its JSON ends) leaves no trace; the rows around it
// are intact.
func TestDecodeAtomicRows(t *testing.T) {
	s := types.MustSchema([]types.Column{
		types.NewColumn("a", types.Int()), types.NewColumn("s", types.String()),
		types.NewColumn("m", types.MustParseDataType("MAP<STRING, ARRAY<ROW<x INT NOT NULL>>>")),
		types.NewColumn("z", types.Decimal(5, 2)),
	})
	b := newTestBuilder(t, s)
	good := []string{`{"a":1,"s":"x","m":{"k":[{"x":1}]},"z":"1.50"}`, `{"a":2,"s":null,"m":null,"z":null}`}
	bad := []string{
		`{"a":9,"s":"y","m":{"k":[{"x":1},{"x":null}]},"z":"1"}`,
		`{"a":9,"s":"y","m":{"k":[{"x":1}]},"z":"1.555"}`,
		`{"a":9,"s":"y","m":{"k":[{"x":1}]},"z":"1"} x`,
		`{"a":9,"s":"y","m":{"k":[{"x":1}]},"z":"1"`,
		`{"a":9,"s":"y","m":{"k":[{"x":1}],"k":[]},"z":"1"}`,
	}
	for i, line := range bad {
		if err := b.AppendJSON([]byte(good[0])); err != nil {
			t.Fatal(err)
		}
		if err := b.AppendJSON([]byte(line)); err == nil {
			t.Fatalf("bad row %d accepted: %s", i, line)
		}
		if err := b.AppendJSON([]byte(good[1])); err != nil {
			t.Fatal(err)
		}
	}
	rec := b.NewRecord()
	defer rec.Release()
	for c := 0; c < int(rec.NumCols()); c++ {
		if rec.Column(c).Len() != 2*len(bad) {
			t.Fatalf("column %d has %d values, want %d", c, rec.Column(c).Len(), 2*len(bad))
		}
	}
	got := encodeRows(t, s, rec)
	for i, g := range got {
		if g != good[i%2] {
			t.Fatalf("row %d: %s, want %s", i, g, good[i%2])
		}
	}
}

// TestDecodeNoAllocs: a row from bytes allocates nothing of its own; what
// remains is the Arrow buffers' growth, amortised over the rows.
func TestDecodeNoAllocs(t *testing.T) {
	cols, _ := types.ParseColumns(mixed10)
	s := types.MustSchema(cols)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	src := buildRecord(t, mem, s, mixed10Rows(64))
	defer src.Release()
	var data [][]byte
	for _, l := range encodeRows(t, s, src) {
		data = append(data, []byte(l))
	}
	b, err := NewSchemaRowBuilder(s) // the Go allocator: the checked one allocates to track
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	const rows = 50_000
	allocs := testing.AllocsPerRun(1, func() {
		for i := 0; i < rows; i++ {
			if err := b.AppendJSON(data[i%len(data)]); err != nil {
				t.Fatal(err)
			}
		}
	}) / rows
	// The buffers of 10 columns (18 with offsets, validity, children) double
	// about 16 times each for 100,000 rows: about 0.003 allocations per row.
	if allocs > 0.01 {
		t.Fatalf("%.4f allocations per row", allocs)
	}
}

// TestDecodeErrorValueText: the value in an error is the JSON text of the
// value, cut after about 60 bytes.
func TestDecodeErrorValueText(t *testing.T) {
	s := types.MustSchema([]types.Column{types.NewColumn("n", types.Int())})
	b := newTestBuilder(t, s)
	long := `"` + strings.Repeat("é", 50) + `"`
	err := b.AppendJSON([]byte(`{"n":` + long + `}`))
	var de *DecodeError
	if !asDecodeError(err, &de) {
		t.Fatalf("error %v is no *DecodeError", err)
	}
	if len(de.Value) > maxShown || !strings.HasSuffix(de.Value, "...") || !strings.HasPrefix(long, strings.TrimSuffix(de.Value, "...")) {
		t.Fatalf("value %q", de.Value)
	}
}

func asDecodeError(err error, de **DecodeError) bool {
	e, ok := err.(*DecodeError)
	*de = e
	return ok
}

// rowsOf builds one record from JSON rows with a fresh builder.
func rowsOf(t *testing.T, s *types.Schema, lines ...string) []string {
	t.Helper()
	b := newTestBuilder(t, s)
	for _, l := range lines {
		if err := b.AppendJSON([]byte(l)); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
	}
	rec := b.NewRecord()
	defer rec.Release()
	return encodeRows(t, s, rec)
}

// TestDecodeAcceptedForms: spellings other than the canonical one, and
// what they store (checked against the Java tool where it reads them:
// testdata/java-cases.txt holds more).
func TestDecodeAcceptedForms(t *testing.T) {
	cases := []struct{ typ, in, want string }{
		{"INT", ` 1.0e1 `, `10`},
		{"BIGINT", `-0.0`, `0`},
		{"TINYINT", `1.27E2`, `127`},
		{"DOUBLE", `1e400`, `"Infinity"`},
		{"FLOAT", `1e39`, `"Infinity"`},
		{"DOUBLE", `-1e-400`, `-0`},
		{"DOUBLE", `"N\u0061N"`, `"NaN"`},
		{"DECIMAL(5, 2)", `999.990`, `"999.99"`},
		{"DECIMAL(5, 2)", `"+.5"`, `"0.50"`},
		{"DECIMAL(5, 2)", `"5."`, `"5.00"`},
		{"DECIMAL(5, 2)", `"1E+2"`, `"100.00"`},
		{"DECIMAL(5, 2)", `"-0.00"`, `"0.00"`},
		{"DECIMAL(5, 2)", `"0e99999"`, `"0.00"`},
		{"DECIMAL(38, 0)", `"999999999999999999999999999999999999990e-1"`, `"99999999999999999999999999999999999999"`},
		{"CHAR(2)", `"longer than two"`, `"longer than two"`},
		{"STRING", `"\ud83d\ude00 \ud800A \udc00 \u00e9\/"`, `"😀 ?A ? é/"`},
		{"STRING", "\"bad \xff utf8\"", "\"bad \uFFFD utf8\""},
		{"BYTES", `"AAE"`, `"AAE="`},
		{"BYTES", `"AB=="`, `"AA=="`},
		{"BINARY(1)", `"AA"`, `"AA=="`},
		{"DATE", `"+12024-01-01"`, `"+12024-01-01"`},
		{"DATE", `"-0004-02-29"`, `"-0004-02-29"`},
		{"TIME(3)", `"12:00"`, `"12:00:00.000"`},
		{"TIME(3)", `"12:00:00."`, `"12:00:00.000"`},
		{"TIME(9)", `"12:00:00.9999999"`, `"12:00:00.999000000"`},
		{"TIME(1)", `"12:00:00.99"`, `"12:00:00.9"`},
		{"TIMESTAMP(3)", `"2024-01-01t00:00"`, `"2024-01-01T00:00:00.000"`},
		{"TIMESTAMP(2)", `"1969-12-31T23:59:59.999"`, `"1969-12-31T23:59:59.99"`},
		{"TIMESTAMP(0)", `"1969-12-31T23:59:59.5"`, `"1969-12-31T23:59:59"`},
		{"TIMESTAMP(9)", `"2262-04-11T23:47:16.854775807"`, `"2262-04-11T23:47:16.854775807"`},
		{"TIMESTAMP(9)", `"1677-09-21T00:12:43.145224192"`, `"1677-09-21T00:12:43.145224192"`},
		{"TIMESTAMP_LTZ(3)", `"2024-01-01T00:00+02"`, `"2023-12-31T22:00:00.000Z"`},
		{"TIMESTAMP_LTZ(3)", `"2024-01-01T00:00:00-18:00"`, `"2024-01-01T18:00:00.000Z"`},
		{"TIMESTAMP_LTZ(3)", `"2024-01-01T00:00+02:00:30"`, `"2023-12-31T21:59:30.000Z"`},
		{"TIMESTAMP_LTZ(6)", `"2024-01-01T12:00:00.z"`, `"2024-01-01T12:00:00.000000Z"`},
		{"MAP<DATE, INT>", `{"2024-01-01":1}`, `[{"key":"2024-01-01","value":1}]`},
		{"MAP<INT, STRING>", `[{"key":1,"value":"a"},{"key":1,"value":"b"},{"key":2,"value":"c","x":[1]}]`, `[{"key":1,"value":"b"},{"key":2,"value":"c"}]`},
		{"MAP<DECIMAL(5, 2), INT>", `{"1.0":1,"1.00":2}`, `[{"key":"1.00","value":2}]`},
		{"MAP<BYTES, INT>", `[{"key":"AA==","value":1},{"key":"AA==","value":2}]`, `[{"key":"AA==","value":1},{"key":"AA==","value":2}]`},
		{"MAP<DOUBLE, INT>", `[{"key":0,"value":1},{"key":-0,"value":2},{"key":"NaN","value":3},{"key":"NaN","value":4}]`, `[{"key":"NaN","value":4},{"key":-0,"value":2},{"key":0,"value":1}]`},
		{"MAP<ROW<a BYTES>, INT>", `[{"key":{"a":"AA=="},"value":1},{"key":{"a":"AA=="},"value":2}]`, `[{"key":{"a":"AA=="},"value":2}]`},
		{"MAP<STRING, INT>", `[{"value":1,"key":"z"},{"key":"a"}]`, `{"a":null,"z":1}`},
		{"ROW<a INT, b STRING>", `{"b":"x"}`, `{"a":null,"b":"x"}`},
	}
	for _, c := range cases {
		s := types.MustSchema([]types.Column{types.NewColumn("v", types.MustParseDataType(c.typ))})
		got := rowsOf(t, s, `{"v":`+c.in+`}`)
		if want := `{"v":` + c.want + `}`; got[0] != want {
			t.Errorf("%s %s: got %s, want %s", c.typ, c.in, got[0], want)
		}
	}
}

func ExampleRowBuilder() {
	s := types.MustSchema([]types.Column{
		types.NewColumn("id", types.BigInt()),
		types.NewColumn("price", types.Decimal(10, 2)),
		types.NewColumn("tags", types.ArrayOf(types.String())),
	}, "id")
	b, err := NewSchemaRowBuilder(s)
	if err != nil {
		panic(err)
	}
	defer b.Release()
	fmt.Println(b.AppendJSON([]byte(`{"id":1,"price":"12.5","tags":["a"]}`)))
	fmt.Println(b.AppendStructured(map[string]any{"id": 2, "price": 3.25}))
	fmt.Println(b.AppendJSON([]byte(`{"id":3,"price":"12.345"}`)))
	fmt.Println(b.AppendJSONKey([]byte(`{"id":4,"price":"not read"}`)))
	rec := b.NewRecord()
	defer rec.Release()
	enc, _ := NewSchemaEncoder(s)
	for i := 0; i < int(rec.NumRows()); i++ {
		row, _ := enc.AppendRecordRow(nil, rec, i)
		fmt.Println(string(row))
	}
	// Output:
	// <nil>
	// <nil>
	// jsonrow: column "price" (DECIMAL(10, 2)): "12.345" has 3 fraction digits, at most 2
	// <nil>
	// {"id":1,"price":"12.50","tags":["a"]}
	// {"id":2,"price":"3.25","tags":null}
	// {"id":4,"price":null,"tags":null}
}
