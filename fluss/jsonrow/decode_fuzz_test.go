package jsonrow

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// fuzzSchemas are the tables FuzzRowBuilder decodes rows of: the
// all-types table, then one column "v" of each type of the encoder's
// value cases and of testdata/java-inputs.tsv, in a fixed order. The
// fuzzer picks one by a byte.
func fuzzSchemas(f *testing.F) []*types.Schema {
	f.Helper()
	cols, err := types.ParseColumns(allTypes)
	if err != nil {
		f.Fatal(err)
	}
	out := []*types.Schema{types.MustSchema(cols, "id")}
	var typs []string
	for _, c := range valueCases {
		typs = append(typs, c.typ)
	}
	for _, in := range javaInputs(f) {
		typs = append(typs, in[0])
	}
	slices.Sort(typs)
	for _, typ := range slices.Compact(typs) {
		dt, err := types.ParseDataType(typ)
		if err != nil {
			f.Fatalf("%s: %v", typ, err)
		}
		out = append(out, types.MustSchema([]types.Column{types.NewColumn("v", dt)}))
	}
	return out
}

// javaInputs returns the type and value of each case of java-inputs.tsv.
func javaInputs(f *testing.F) [][2]string {
	f.Helper()
	var out [][2]string
	for _, line := range readLines(f, "java-inputs.tsv") {
		if typ, value, ok := strings.Cut(string(line), "\t"); ok && line[0] != '#' {
			out = append(out, [2]string{typ, value})
		}
	}
	return out
}

// FuzzRowBuilder: decoding never panics; a row AppendJSON accepts renders
// (Encoder) as canonical JSON that reads back to the same record (up to
// the order of MAP entries, which the canonical JSON sorts); a row
// that is valid JSON reads the same structured (encoding/json with
// UseNumber) as the JSON AnyWriter writes for that value does.
func FuzzRowBuilder(f *testing.F) {
	schemas := fuzzSchemas(f)
	index := map[string]uint8{}
	for i, s := range schemas {
		index[s.Columns[0].Type.String()] = uint8(i)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(f, 0)
	rec := buildRecord(f, mem, schemas[0], allTypesRows(8))
	for _, line := range encodeRows(f, schemas[0], rec) {
		f.Add(uint8(0), []byte(line))
	}
	rec.Release()
	for _, c := range valueCases {
		i := index[types.MustParseDataType(c.typ).String()]
		for _, w := range c.want {
			f.Add(i, []byte(`{"v":`+w+`}`))
		}
	}
	for _, in := range javaInputs(f) {
		f.Add(index[types.MustParseDataType(in[0]).String()], []byte(`{"v":`+in[1]+`}`))
	}
	f.Add(uint8(0), []byte(`{"id":1,"zz":[{"a":1,"a":2}]}`))
	f.Add(uint8(0), []byte(`{"id":1,"m":{"a":1,"a":2},"mk":[{"key":1,"value":"a"},{"key":1,"value":"b"}]}`))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		s := schemas[int(which)%len(schemas)]
		fuzzRow(t, s, data)
	})
}

func fuzzRow(t *testing.T, s *types.Schema, data []byte) {
	b := newTestBuilder(t, s)
	err := b.AppendJSON(data)
	if err != nil && b.Len() != 0 {
		t.Fatalf("failed row appended: %v", err)
	}
	if s.HasPrimaryKey() {
		k := newTestBuilder(t, s)
		keyErr := k.AppendJSONKey(data)
		if keyErr != nil && (k.Len() != 0 || err == nil) {
			t.Fatalf("key row: %v (%d rows; the full row: %v)", keyErr, k.Len(), err)
		}
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if d.Decode(&v) == nil {
		fuzzStructured(t, s, v)
	}
	if err != nil {
		return
	}
	rec := b.NewRecord()
	defer rec.Release()
	canon := encodeRows(t, s, rec)
	again := newTestBuilder(t, s)
	if err := again.AppendJSON([]byte(canon[0])); err != nil {
		t.Fatalf("%s read as %s, which fails: %v", data, canon[0], err)
	}
	rec2 := again.NewRecord()
	defer rec2.Release()
	if got := encodeRows(t, s, rec2); got[0] != canon[0] {
		t.Fatalf("%s read as %s, which reads as %s", data, canon[0], got[0])
	}
	// The canonical JSON sorts MAP entries; without MAPs the records are equal.
	if !strings.Contains(s.String(), "MAP<") {
		sameRecords(t, s, rec, rec2)
	}
}

// fuzzStructured checks that v reads as AppendJSON reads its AnyWriter text.
func fuzzStructured(t *testing.T, s *types.Schema, v any) {
	var aw AnyWriter
	text, err := aw.Append(nil, v)
	if err != nil {
		return
	}
	a, b := newTestBuilder(t, s), newTestBuilder(t, s)
	errA, errB := a.AppendStructured(v), b.AppendJSON(text)
	if (errA == nil) != (errB == nil) {
		t.Fatalf("structured %s: %v; its JSON: %v", text, errA, errB)
	}
	if errA != nil {
		return
	}
	ra, rb := a.NewRecord(), b.NewRecord()
	defer ra.Release()
	defer rb.Release()
	sameRecords(t, s, ra, rb)
}
