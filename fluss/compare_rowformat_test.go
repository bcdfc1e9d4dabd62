package fluss_test

// Comparison tests for the row log formats (table.log.format COMPACTED and
// INDEXED): the Java fixture tool writes the rows, our scanner reads them,
// both scans must print the same lines (see compare_test.go).

import (
	"encoding/base64"
	"regexp"
	"strings"
	"testing"

	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

// TestCompareRowFormatAllTypes: every type incl. nested ones in COMPACTED
// and INDEXED log tables, two buckets, several batches; then a projection
// (applied by our scanner: servers project ARROW logs only).
func TestCompareRowFormatAllTypes(t *testing.T) {
	t.Parallel()
	c := cmpClient(t)
	db := cmpDatabase(t, c)
	for _, format := range []string{"COMPACTED", "INDEXED"} {
		t.Run(format, func(t *testing.T) {
			table := db + ".all_types_" + strings.ToLower(format)
			flusstest.RunJava(t, "create-table", table, "--all-types", "--buckets", "2", "--log-format", format)
			flusstest.RunJava(t, "append", table, "--rows", "300", "--seed", "11", "--flush-every", "100")
			fix := func(s string) string { return s }
			if format == "INDEXED" {
				fix = javaIndexedBinaries
			}
			want := javaScan(t, table)
			if n := countLines(want); n != 300 {
				t.Fatalf("java scan printed %d lines, want 300", n)
			}
			sameLines(t, table, want, fix(goScan(t, c, table)))
			cols := []string{"c_map_string_row", "id", "c_ts_9", "c_row_nested", "c_binary", "c_char"}
			sameLines(t, table+" projected", javaScan(t, table, cols...), fix(goScan(t, c, table, cols...)))
		})
	}
}

// TestCompareRowFormatPrimaryKey: the COMPACTED changelog of a primary-key
// table of every type: inserts, updates, deletes and the delete of a
// missing key (an empty batch). (A primary-key table cannot have INDEXED
// logs with the default COMPACTED kv format.)
func TestCompareRowFormatPrimaryKey(t *testing.T) {
	t.Parallel()
	c := cmpClient(t)
	db := cmpDatabase(t, c)
	table := db + ".pk_compacted"
	flusstest.RunJava(t, "create-table", table, "--all-types", "--primary-key", "id", "--buckets", "3", "--log-format", "COMPACTED")
	flusstest.RunJava(t, "upsert", table, "--rows", "120", "--seed", "1", "--flush-every", "40")
	flusstest.RunJava(t, "upsert", table, "--rows", "50", "--seed", "2", "--start", "30")
	flusstest.RunJava(t, "delete", table, "--rows", "20", "--seed", "2", "--start", "60")
	flusstest.RunJava(t, "delete", table, "--rows", "1", "--start", "100000")
	want := javaScan(t, table)
	for _, ct := range []string{`"+I"`, `"-U"`, `"+U"`, `"-D"`} {
		if !strings.Contains(want, `"change_type":`+ct) {
			t.Errorf("java scan has no %s row", ct)
		}
	}
	sameLines(t, table, want, goScan(t, c, table))
	cols := []string{"c_string", "id", "c_array_row"}
	sameLines(t, table+" projected", javaScan(t, table, cols...), goScan(t, c, table, cols...))
}

// TestCompareRowFormatAddColumn: COMPACTED batches written before and after
// ADD COLUMN, read with the current schema (old rows: null new columns).
// The Java 0.9.1 client cannot read such a table (a NullPointerException:
// its row-format reader has no schema getter for old schema ids), so the
// reference is its scan of an ARROW table written the same way (one
// bucket, so that offsets match).
func TestCompareRowFormatAddColumn(t *testing.T) {
	t.Parallel()
	c := cmpClient(t)
	db := cmpDatabase(t, c)
	for _, format := range []string{"ARROW", "COMPACTED"} {
		table := db + ".evolving_" + strings.ToLower(format)
		flusstest.RunJava(t, "create-table", table, "--columns", "id BIGINT, name STRING, tags ARRAY<STRING>",
			"--log-format", format)
		flusstest.RunJava(t, "append", table, "--rows", "80", "--seed", "3")
		flusstest.RunJava(t, "alter-table-add-column", table, "--columns", "extra INT, note ROW<a STRING, b DECIMAL(30, 2)>")
		flusstest.RunJava(t, "append", table, "--rows", "80", "--seed", "4", "--start", "80")
	}
	want := javaScan(t, db+".evolving_arrow")
	if !strings.Contains(want, `"extra":null`) {
		t.Errorf("java scan shows no null extra column for old rows")
	}
	sameLines(t, "evolving_compacted", want, goScan(t, c, db+".evolving_compacted"))
	cols := []string{"note", "id"}
	// The Java client cannot project old batches onto new columns either
	// (see TestCompareAddColumn): project its full scan here.
	sameLines(t, "evolving_compacted projected", projectLines(t, want, cols), goScan(t, c, db+".evolving_compacted", cols...))
}

// binaryValue finds the BINARY values of the all-types schema in a scan
// line: c_binary, and x of the rows in c_map_string_row.
var binaryValue = regexp.MustCompile(`"(c_binary|x)":"([A-Za-z0-9+/=]*)"`)

// javaIndexedBinaries renders BINARY values as the Java client reads them
// from INDEXED rows: IndexedRow.getBinary drops trailing zero bytes (the
// format pads BINARY(n) with zeros and cannot tell padding from data). Our
// scanner keeps the n bytes written, as the ARROW and COMPACTED formats do.
func javaIndexedBinaries(scan string) string {
	return binaryValue.ReplaceAllStringFunc(scan, func(m string) string {
		sub := binaryValue.FindStringSubmatch(m)
		b, err := base64.StdEncoding.DecodeString(sub[2])
		if err != nil {
			return m
		}
		for len(b) > 0 && b[len(b)-1] == 0 {
			b = b[:len(b)-1]
		}
		return `"` + sub[1] + `":"` + base64.StdEncoding.EncodeToString(b) + `"`
	})
}
