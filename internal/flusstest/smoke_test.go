package flusstest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// scanLine is one line of `fluss-java.sh scan` (docs/json-mapping.md §3).
type scanLine struct {
	Partition  *string         `json:"partition"`
	Bucket     int             `json:"bucket"`
	Offset     int64           `json:"offset"`
	ChangeType string          `json:"change_type"`
	Row        json.RawMessage `json:"row"`
}

// parseScan splits scan output into lines, checking the envelope's key order.
func parseScan(t *testing.T, out string) []scanLine {
	t.Helper()
	var lines []scanLine
	envelope := regexp.MustCompile(`^\{"partition":(null|"[^"]*"),"bucket":\d+,"offset":\d+,"change_type":"[-+][AIUD]","row":\{.*\}\}$`)
	for i, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		if !envelope.MatchString(l) {
			t.Fatalf("scan line %d does not have the documented shape: %.300s", i, l)
		}
		var sl scanLine
		if err := json.Unmarshal([]byte(l), &sl); err != nil {
			t.Fatalf("scan line %d is not JSON: %v: %.300s", i, err, l)
		}
		lines = append(lines, sl)
	}
	return lines
}

// rowKeys returns the top-level keys of a JSON object in order.
func rowKeys(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("row is not an object: %s", raw)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("row %s: %v", raw, err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatalf("row %s: %v", raw, err)
		}
	}
	return keys
}

func decodeRow(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("row %s: %v", raw, err)
	}
	return m
}

// allTypesColumns is the column list of `create-table --all-types`, in order.
var allTypesColumns = []string{
	"id", "c_boolean", "c_tinyint", "c_smallint", "c_int", "c_bigint", "c_float", "c_double",
	"c_decimal_5_2", "c_decimal_18_6", "c_decimal_38_0", "c_decimal_38_18", "c_char", "c_string",
	"c_binary", "c_bytes", "c_date", "c_time_0", "c_time_3", "c_time_6", "c_time_9",
	"c_ts_0", "c_ts_1", "c_ts_2", "c_ts_3", "c_ts_4", "c_ts_5", "c_ts_6", "c_ts_7", "c_ts_8", "c_ts_9",
	"c_ltz_0", "c_ltz_1", "c_ltz_2", "c_ltz_3", "c_ltz_4", "c_ltz_5", "c_ltz_6", "c_ltz_7", "c_ltz_8", "c_ltz_9",
	"c_int_not_null", "c_string_not_null", "c_array_int", "c_array_string_not_null", "c_array_double",
	"c_array_decimal", "c_array_ts", "c_array_array", "c_map_string_int", "c_map_int_string",
	"c_map_bytes_ltz", "c_map_string_array", "c_row", "c_row_nested", "c_array_row", "c_map_string_row",
}

// TestSmokeJavaAllTypes is the CI smoke test of issue 2 §5: the Java tool
// creates a log table with every Fluss type, appends 1,000 generated rows,
// scans them back, and the test checks the count, the documented shape of
// every value, and that the scan equals what the generator wrote.
func TestSmokeJavaAllTypes(t *testing.T) {
	db := UniqueName("smoke")
	table := db + "." + UniqueName("all_types")
	RunJava(t, "create-database", db)
	RunJava(t, "create-table", table, "--all-types")
	status := RunJava(t, "append", table, "--rows", "1000", "--seed", "42")
	if !strings.Contains(status, `"rows":1000`) {
		t.Errorf("append status = %q, want rows 1000", status)
	}

	lines := parseScan(t, RunJava(t, "scan", table))
	if len(lines) != 1000 {
		t.Fatalf("scan returned %d rows, want 1000", len(lines))
	}
	count := RunJava(t, "scan", table, "--count-only")
	var c struct {
		Rows int64 `json:"rows"`
	}
	if err := json.Unmarshal([]byte(count), &c); err != nil || c.Rows != 1000 {
		t.Errorf("scan --count-only = %q (%v), want rows 1000", count, err)
	}

	// One bucket, one writer: offsets 0..999 in order, and id = row index.
	for i, l := range lines {
		if l.Partition != nil || l.Bucket != 0 || l.Offset != int64(i) || l.ChangeType != "+A" {
			t.Fatalf("line %d: partition %v bucket %d offset %d change %s; want null/0/%d/+A",
				i, l.Partition, l.Bucket, l.Offset, l.ChangeType, i)
		}
	}

	// The scan is exactly what the generator wrote (same seed, same rows).
	gen := strings.Split(strings.TrimSuffix(RunJava(t, "generate", table, "--rows", "1000", "--seed", "42"), "\n"), "\n")
	if len(gen) != 1000 {
		t.Fatalf("generate printed %d rows, want 1000", len(gen))
	}
	for i, l := range lines {
		if string(l.Row) != gen[i] {
			t.Fatalf("row %d read back differs from the row written:\nread    %s\nwritten %s", i, l.Row, gen[i])
		}
	}

	// Key order = column order.
	if keys := rowKeys(t, lines[0].Row); strings.Join(keys, ",") != strings.Join(allTypesColumns, ",") {
		t.Errorf("row keys = %v\nwant       %v", keys, allTypesColumns)
	}

	// The documented shape of the values (docs/json-mapping.md §2).
	fraction := func(p int) string {
		if p == 0 {
			return ""
		}
		return fmt.Sprintf(`\.\d{%d}`, p)
	}
	shapes := map[string]*regexp.Regexp{
		"c_decimal_5_2":   regexp.MustCompile(`^-?\d{1,3}\.\d{2}$`),
		"c_decimal_18_6":  regexp.MustCompile(`^-?\d{1,12}\.\d{6}$`),
		"c_decimal_38_0":  regexp.MustCompile(`^-?\d{1,38}$`),
		"c_decimal_38_18": regexp.MustCompile(`^-?\d{1,20}\.\d{18}$`),
		"c_date":          regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`),
		"c_time_0":        regexp.MustCompile(`^\d{2}:\d{2}:\d{2}$`),
		"c_time_3":        regexp.MustCompile(`^\d{2}:\d{2}:\d{2}\.\d{3}$`),
		"c_time_6":        regexp.MustCompile(`^\d{2}:\d{2}:\d{2}\.\d{3}000$`),
		"c_time_9":        regexp.MustCompile(`^\d{2}:\d{2}:\d{2}\.\d{3}000000$`),
	}
	for p := 0; p <= 9; p++ {
		ts := `^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}` + fraction(p)
		shapes[fmt.Sprintf("c_ts_%d", p)] = regexp.MustCompile(ts + `$`)
		shapes[fmt.Sprintf("c_ltz_%d", p)] = regexp.MustCompile(ts + `Z$`)
	}
	seenNull := map[string]bool{}
	seenValue := map[string]map[string]bool{"c_float": {}, "c_double": {}}
	var maxBigint, nonASCII, fullDecimal bool
	for i, l := range lines {
		row := decodeRow(t, l.Row)
		if got := row["id"].(json.Number).String(); got != strconv.Itoa(i) {
			t.Fatalf("row %d: id = %s", i, got)
		}
		for col, v := range row {
			if v == nil {
				seenNull[col] = true
				continue
			}
			if re, ok := shapes[col]; ok {
				s, isString := v.(string)
				if !isString || !re.MatchString(s) {
					t.Errorf("row %d: %s = %#v does not match %s", i, col, v, re)
				}
			}
		}
		for _, col := range []string{"c_float", "c_double"} {
			if s, ok := row[col].(string); ok {
				seenValue[col][s] = true
			}
		}
		if n, ok := row["c_bigint"].(json.Number); ok && n.String() == "9223372036854775807" {
			maxBigint = true
		}
		if s, ok := row["c_decimal_38_0"].(string); ok && len(strings.TrimPrefix(s, "-")) == 38 {
			fullDecimal = true
		}
		if s, ok := row["c_string"].(string); ok && strings.ContainsAny(s, "中é🙂") {
			nonASCII = true
		}
		if s, ok := row["c_bytes"].(string); ok {
			if _, err := base64.StdEncoding.DecodeString(s); err != nil {
				t.Errorf("row %d: c_bytes %q is not padded base64: %v", i, s, err)
			}
		}
	}
	for _, col := range allTypesColumns {
		notNull := col == "id" || col == "c_int_not_null" || col == "c_string_not_null"
		if notNull && seenNull[col] {
			t.Errorf("NOT NULL column %s came back null", col)
		}
		if !notNull && !seenNull[col] {
			t.Errorf("nullable column %s has no null in 1,000 rows", col)
		}
	}
	for _, col := range []string{"c_float", "c_double"} {
		for _, s := range []string{"NaN", "Infinity", "-Infinity"} {
			if !seenValue[col][s] {
				t.Errorf("%s never holds %q in 1,000 rows", col, s)
			}
		}
	}
	if !maxBigint || !fullDecimal || !nonASCII {
		t.Errorf("edge values missing: BIGINT max %v, 38-digit decimal %v, non-ASCII string %v", maxBigint, fullDecimal, nonASCII)
	}

	// A projection keeps the order asked for.
	proj := parseScan(t, RunJava(t, "scan", table, "--columns", "c_string,id"))
	if len(proj) != 1000 {
		t.Fatalf("projected scan returned %d rows", len(proj))
	}
	if keys := rowKeys(t, proj[7].Row); strings.Join(keys, ",") != "c_string,id" {
		t.Errorf("projected row keys = %v, want [c_string id]", keys)
	}
}

// TestSmokeJavaExactValues writes hand-made rows from a JSON-lines file and
// checks the scan's exact text, the edge cases of docs/json-mapping.md.
func TestSmokeJavaExactValues(t *testing.T) {
	db := UniqueName("smoke")
	table := db + "." + UniqueName("edge")
	RunJava(t, "create-database", db)
	RunJava(t, "create-table", table, "--columns",
		"id BIGINT NOT NULL, f FLOAT, d DOUBLE, dec DECIMAL(5,2), dec38 DECIMAL(38,0), s STRING, c CHAR(4), "+
			"bin BINARY(3), by BYTES, dt DATE, t0 TIME(0), t3 TIME(3), t6 TIME(6), ts0 TIMESTAMP(0), "+
			"ts3 TIMESTAMP(3), ts9 TIMESTAMP(9), ltz0 TIMESTAMP_LTZ(0), ltz6 TIMESTAMP_LTZ(6), "+
			"arr ARRAY<INT>, m1 MAP<STRING, INT>, m2 MAP<INT, STRING>, r ROW<a INT, b STRING>")
	input := strings.Join([]string{
		`{"id":9223372036854775807,"f":0.1,"d":1e21,"dec":"-1.5","dec38":"99999999999999999999999999999999999999","s":"a\"b\\c/\n\u0001é中🙂","c":"ab","bin":"AAEC","by":"","dt":"0001-01-01","t0":"23:59:59","t3":"00:00:00.001","t6":"12:34:56.789","ts0":"1969-12-31T23:59:59","ts3":"2024-02-29T12:00:00.5","ts9":"2024-01-02T03:04:05.123456789","ltz0":"1970-01-01T00:00:00Z","ltz6":"2024-01-02T03:04:05.123456+02:00","arr":[1,null,-2147483648],"m1":{"b":2,"a":1,"":null},"m2":[{"key":10,"value":"x"},{"key":-1,"value":null},{"key":9,"value":"y"}],"r":{"a":null,"b":"z"}}`,
		`{"id":-9223372036854775808,"f":"-Infinity","d":"NaN","dec":0,"dec38":"-1"}`,
		`{"id":1,"f":16777217,"d":-0.0,"dec":999.99,"dec38":0,"ts3":"1969-12-31T23:59:59.999","t6":"00:00:00.000999"}`,
	}, "\n") + "\n"
	file := filepath.Join(t.TempDir(), "rows.jsonl")
	if err := os.WriteFile(file, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	RunJava(t, "append", table, "--file", file)

	nulls := `"s":null,"c":null,"bin":null,"by":null,"dt":null,"t0":null,"t3":null,"t6":null,"ts0":null,"ts3":null,"ts9":null,"ltz0":null,"ltz6":null,"arr":null,"m1":null,"m2":null,"r":null`
	want := []string{
		`{"partition":null,"bucket":0,"offset":0,"change_type":"+A","row":{"id":9223372036854775807,"f":0.1,"d":1e+21,"dec":"-1.50","dec38":"99999999999999999999999999999999999999","s":"a\"b\\c/\n\u0001é中🙂","c":"ab","bin":"AAEC","by":"","dt":"0001-01-01","t0":"23:59:59","t3":"00:00:00.001","t6":"12:34:56.789000","ts0":"1969-12-31T23:59:59","ts3":"2024-02-29T12:00:00.500","ts9":"2024-01-02T03:04:05.123456789","ltz0":"1970-01-01T00:00:00Z","ltz6":"2024-01-02T01:04:05.123456Z","arr":[1,null,-2147483648],"m1":{"":null,"a":1,"b":2},"m2":[{"key":-1,"value":null},{"key":10,"value":"x"},{"key":9,"value":"y"}],"r":{"a":null,"b":"z"}}}`,
		`{"partition":null,"bucket":0,"offset":1,"change_type":"+A","row":{"id":-9223372036854775808,"f":"-Infinity","d":"NaN","dec":"0.00","dec38":"-1",` + nulls + `}}`,
		`{"partition":null,"bucket":0,"offset":2,"change_type":"+A","row":{"id":1,"f":16777216,"d":-0,"dec":"999.99","dec38":"0","s":null,"c":null,"bin":null,"by":null,"dt":null,"t0":null,"t3":null,"t6":"00:00:00.000000","ts0":null,"ts3":"1969-12-31T23:59:59.999","ts9":null,"ltz0":null,"ltz6":null,"arr":null,"m1":null,"m2":null,"r":null}}`,
	}
	got := strings.Split(strings.TrimSuffix(RunJava(t, "scan", table), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("scan returned %d lines, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d:\ngot  %s\nwant %s", i, got[i], want[i])
		}
	}
}
