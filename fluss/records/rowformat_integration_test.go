package records_test

import (
	"encoding/base64"
	"regexp"
	"strings"
	"testing"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/records"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

// TestIntegrationDecodeJavaRowFormats: rows of every type written by the
// official Java client to COMPACTED and INDEXED log tables, and the
// COMPACTED changelog of a primary-key table, are fetched raw, decoded by
// this package and rendered identically to the Java tool's scan. The rows
// are those of TestIntegrationDecodeJavaBatches (same seeds), so the
// captured batches (testdata/cluster-*-{compacted,indexed}.bin) decode to
// the records of its ARROW captures (TestRowFormatSeedsMatchArrow).
func TestIntegrationDecodeJavaRowFormats(t *testing.T) {
	addr := flusstest.Require(t)
	db := flusstest.UniqueName("records_rows")
	javaTool(t, addr, "create-database", db)
	t.Cleanup(func() { javaTool(t, addr, "drop-database", db, "--if-exists", "--cascade") })
	c := newClient(t, addr)
	for _, format := range []records.LogFormat{records.LogFormatCompacted, records.LogFormatIndexed} {
		t.Run("log-"+string(format), func(t *testing.T) {
			name := "java_log_" + strings.ToLower(string(format))
			javaTool(t, addr, "create-table", db+"."+name, "--all-types", "--log-format", string(format))
			javaTool(t, addr, "append", db+"."+name, "--rows", "65", "--seed", "1", "--flush-every", "15")
			want := splitLines(javaTool(t, addr, "scan", db+"."+name))
			got := scanFormatLines(t, c, fluss.NewTablePath(db, name), "cluster-log-"+strings.ToLower(string(format))+".bin", format)
			if format == records.LogFormatIndexed {
				got = javaIndexedBinaries(got)
			}
			requireSameLines(t, name, want, got)
		})
	}
	t.Run("pk-changelog-COMPACTED", func(t *testing.T) {
		table := db + ".java_pk_compacted"
		javaTool(t, addr, "create-table", table, "--all-types", "--primary-key", "id", "--log-format", "COMPACTED")
		javaTool(t, addr, "upsert", table, "--rows", "30", "--seed", "1")
		javaTool(t, addr, "upsert", table, "--rows", "10", "--seed", "2", "--start", "5")
		javaTool(t, addr, "delete", table, "--rows", "4", "--seed", "1", "--start", "20")
		javaTool(t, addr, "delete", table, "--rows", "1", "--seed", "1", "--start", "1000") // missing key: empty batch
		javaTool(t, addr, "upsert", table, "--rows", "2", "--seed", "3", "--start", "100")
		want := splitLines(javaTool(t, addr, "scan", table))
		got := scanFormatLines(t, c, fluss.NewTablePath(db, "java_pk_compacted"), "cluster-pk-changelog-compacted.bin", records.LogFormatCompacted)
		requireSameLines(t, table, want, got)
		for _, ct := range []string{"+I", "-U", "+U", "-D"} {
			if !strings.Contains(strings.Join(got, "\n"), `"change_type":"`+ct+`"`) {
				t.Errorf("no %s row in the changelog", ct)
			}
		}
	})
}

// binaryValue finds the BINARY values of the all-types schema in a scan
// line: c_binary, and x of the rows in c_map_string_row.
var binaryValue = regexp.MustCompile(`"(c_binary|x)":"([A-Za-z0-9+/=]*)"`)

// javaIndexedBinaries renders BINARY values as the Java client reads them
// from INDEXED rows: IndexedRow.getBinary drops trailing zero bytes (the
// format pads BINARY(n) with zeros and cannot tell padding from data). Our
// decoder keeps the n bytes written, as the ARROW and COMPACTED formats do.
func javaIndexedBinaries(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = binaryValue.ReplaceAllStringFunc(l, func(m string) string {
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
	return out
}
