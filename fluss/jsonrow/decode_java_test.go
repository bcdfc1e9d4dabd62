package jsonrow

import (
	"bytes"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss/records"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// TestDecodeAgainstJava compares AppendJSON with the Java tool's reading
// of the same values (testdata/java-inputs.tsv: edge cases and 2,250
// generated values of every scalar type; testdata/java-cases.tsv: what
// the tool's JsonParser and FromJson made of them, rendered by its
// Renderer, see testdata/javaprobe/Probe.java). Each value must be
// accepted exactly when Java accepts it, and then render the same.
func TestDecodeAgainstJava(t *testing.T) {
	inputs := readLines(t, "java-inputs.tsv")
	results := readLines(t, "java-cases.tsv")
	if len(inputs) != len(results) {
		t.Fatalf("%d inputs, %d results", len(inputs), len(results))
	}
	builders := map[string]*RowBuilder{}
	checked, divergent := 0, 0
	for i, in := range inputs {
		if len(in) == 0 || in[0] == '#' {
			continue
		}
		typ, value, _ := strings.Cut(string(in), "\t")
		verdict, want := javaResult(t, string(results[i]))
		b := builders[typ]
		if b == nil {
			dt, err := types.ParseDataType(typ)
			if err != nil {
				t.Fatalf("line %d: %v", i+1, err)
			}
			b = newTestBuilder(t, types.MustSchema([]types.Column{types.NewColumn("v", dt)}))
			builders[typ] = b
		}
		row := []byte(`{"v":` + value + `}`)
		err := b.AppendJSON(row)
		switch {
		case verdict == "err" && err == nil:
			rec := b.NewRecord()
			got := encodeRows(t, b.row2schema(), rec)
			rec.Release()
			t.Errorf("line %d: %s %s: accepted as %s; Java: %s", i+1, typ, value, got[0], want)
		case verdict == "ok" && err != nil && strings.Contains(err.Error(), "is out of the range of"):
			// Java holds values the Arrow column cannot (and wraps DATE
			// beyond 32 bits): check that it is so.
			if !beyondArrow(t, typ, value, want) {
				t.Errorf("line %d: %s %s: %v, but it fits; Java: %s", i+1, typ, value, err, want)
			}
			divergent++
		case verdict == "ok" && err != nil:
			t.Errorf("line %d: %s %s: %v; Java: %s", i+1, typ, value, err, want)
		case verdict == "ok":
			rec := b.NewRecord()
			got := encodeRows(t, b.row2schema(), rec)
			rec.Release()
			if got[0] != want {
				t.Errorf("line %d: %s %s: %s; Java: %s", i+1, typ, value, got[0], want)
			}
		}
		checked++
	}
	if checked < 2400 || divergent > 100 {
		t.Fatalf("%d cases, %d beyond the Arrow columns", checked, divergent)
	}
}

// beyondArrow reports, with the time package and big integers, whether a
// value Java accepted lies outside what the Arrow column of typ holds:
// DATE days beyond int32 (value is the input: Java's output wrapped), or
// TIMESTAMP beyond int64 counts of the column's unit (javaOut is Java's
// rendering, in UTC for TIMESTAMP_LTZ).
func beyondArrow(t *testing.T, typ, value, javaOut string) bool {
	t.Helper()
	if typ == "DATE" {
		sec, _ := isoToUnix(t, strings.Trim(value, `"`)+"T00:00:00")
		return sec/86400 < math.MinInt32 || sec/86400 > math.MaxInt32
	}
	text := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(javaOut, `{"v":"`), `"}`), "Z")
	sec, nanos := isoToUnix(t, text)
	dt := types.MustParseDataType(typ)
	per := map[arrow.TimeUnit]int64{arrow.Second: 1, arrow.Millisecond: 1e3, arrow.Microsecond: 1e6, arrow.Nanosecond: 1e9}[types.ArrowTimeUnit(dt.Precision)]
	v := new(big.Int).Mul(big.NewInt(sec), big.NewInt(per))
	v.Add(v, big.NewInt(nanos/(1e9/per)))
	millis := new(big.Int).Mul(big.NewInt(sec), big.NewInt(1000))
	return !v.IsInt64() || !millis.IsInt64()
}

// isoToUnix reads [±]YYYY-MM-DDTHH:MM:SS[.f] (UTC) with the time package.
func isoToUnix(t *testing.T, s string) (int64, int64) {
	t.Helper()
	sign := int64(1)
	if s[0] == '+' || s[0] == '-' {
		if s[0] == '-' {
			sign = -1
		}
		s = s[1:]
	}
	ys, rest, _ := strings.Cut(s, "-")
	y, err := strconv.ParseInt(ys, 10, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	tm, err := time.Parse("2006-01-02T15:04:05.999999999", "2000-"+rest)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	tm = time.Date(int(sign*y), tm.Month(), tm.Day(), tm.Hour(), tm.Minute(), tm.Second(), tm.Nanosecond(), time.UTC)
	return tm.Unix(), int64(tm.Nanosecond())
}

// TestDecodeJavaWrittenRows reads back the canonical JSON of rows the
// Java client wrote to a real cluster (fluss/records/testdata cluster
// seeds of the tool's --all-types table: its generator's edge values,
// nested nulls, every precision) and renders them byte for byte again.
func TestDecodeJavaWrittenRows(t *testing.T) {
	s := types.MustSchema(allTypesColumns(t))
	as, err := s.ArrowSchema()
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dec, err := records.NewDecoder(func(int16) (*arrow.Schema, error) { return as, nil }, records.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, seed := range []string{"cluster-log-none.bin", "cluster-log-lz4_frame.bin", "cluster-log-zstd.bin", "cluster-pk-changelog.bin"} {
		data, err := os.ReadFile(filepath.Join("..", "records", "testdata", seed))
		if err != nil {
			t.Fatal(err)
		}
		res, err := dec.Decode(data, 0)
		if err != nil {
			t.Fatalf("%s: %v", seed, err)
		}
		for _, batch := range res.Batches {
			lines := encodeRows(t, s, batch.Record)
			if got := rowsOf(t, s, lines...); strings.Join(got, "\n") != strings.Join(lines, "\n") {
				t.Errorf("%s batch at %d: rows differ", seed, batch.FirstOffset)
			}
			rows += len(lines)
			if testing.Verbose() && rows == len(lines) {
				t.Logf("first row: %s", lines[0])
			}
		}
		res.Release()
	}
	if rows < 100 {
		t.Fatalf("only %d rows", rows)
	}
}

// allTypesColumns reads the column list of the Java tool's --all-types
// table (the schema of the cluster seeds) from its source.
func allTypesColumns(t *testing.T) []types.Column {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "scripts", "flusstool", "AllTypes.java"))
	if err != nil {
		t.Fatal(err)
	}
	_, decl, ok := strings.Cut(string(src), "ALL_TYPES =")
	decl, _, ok2 := strings.Cut(decl, ");")
	if !ok || !ok2 {
		t.Fatal("no ALL_TYPES declaration in AllTypes.java")
	}
	// String.join(", ", "a INT", "b ROW<..."\n + "...>", ...): literals
	// joined by + form one column.
	var items []string
	joined := false
	for _, m := range regexp.MustCompile(`"((?:[^"\\]|\\.)*)"|\+|,`).FindAllStringSubmatch(decl, -1) {
		switch m[0] {
		case "+":
			joined = true
		case ",":
			joined = false
		default:
			if joined {
				items[len(items)-1] += m[1]
			} else {
				items = append(items, m[1])
			}
		}
	}
	cols, err := types.ParseColumns(strings.Join(items[1:], ", ")) // items[0] is the separator
	if err != nil {
		t.Fatal(err)
	}
	return cols
}

// row2schema is the one-column schema of a test builder.
func (b *RowBuilder) row2schema() *types.Schema {
	cols := make([]types.Column, len(b.row.Fields))
	for i, f := range b.row.Fields {
		cols[i] = types.NewColumn(f.Name, f.Type)
	}
	return types.MustSchema(cols)
}

func readLines(t testing.TB, name string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
}

// javaResult splits a result line: its last two fields are ok and the
// rendered row, or err and Java's message (the value before them may hold
// tabs).
func javaResult(t *testing.T, line string) (verdict, text string) {
	t.Helper()
	last := strings.LastIndexByte(line, '\t')
	prev := strings.LastIndexByte(line[:max(last, 0)], '\t')
	if last < 0 || prev < 0 {
		t.Fatalf("bad result line %q", line)
	}
	return line[prev+1 : last], line[last+1:]
}
