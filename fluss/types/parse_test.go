package types

import (
	"strings"
	"testing"
)

func TestParseDataType(t *testing.T) {
	cases := []struct {
		in   string
		want DataType
		str  string // canonical String(); "" = in
	}{
		{"BOOLEAN", Boolean(), ""},
		{"boolean not null", Boolean().NotNull(), "BOOLEAN NOT NULL"},
		{"TINYINT", TinyInt(), ""},
		{"SMALLINT", SmallInt(), ""},
		{"INT", Int(), ""},
		{"INTEGER NULL", Int(), "INT"},
		{"BIGINT NOT NULL", BigInt().NotNull(), ""},
		{"FLOAT", Float(), ""},
		{"DOUBLE", Double(), ""},
		{"DOUBLE PRECISION", Double(), "DOUBLE"},
		{"DECIMAL", Decimal(10, 0), "DECIMAL(10, 0)"},
		{"DECIMAL(5)", Decimal(5, 0), "DECIMAL(5, 0)"},
		{"DECIMAL(10,2) NOT NULL", Decimal(10, 2).NotNull(), "DECIMAL(10, 2) NOT NULL"},
		{"numeric(38, 38)", Decimal(38, 38), "DECIMAL(38, 38)"},
		{"CHAR", Char(1), "CHAR(1)"},
		{"CHAR(12)", Char(12), ""},
		{"STRING", String(), ""},
		{"BINARY(16)", Binary(16), ""},
		{"BYTES", Bytes(), ""},
		{"DATE", Date(), ""},
		{"TIME", Time(0), "TIME(0)"},
		{"TIME(3) WITHOUT TIME ZONE", Time(3), "TIME(3)"},
		{"TIMESTAMP", Timestamp(6), "TIMESTAMP(6)"},
		{"TIMESTAMP(9)", Timestamp(9), ""},
		{"TIMESTAMP(0) WITHOUT TIME ZONE", Timestamp(0), "TIMESTAMP(0)"},
		{"TIMESTAMP_LTZ", TimestampLTZ(6), "TIMESTAMP_LTZ(6)"},
		{"TIMESTAMP_LTZ(3) NOT NULL", TimestampLTZ(3).NotNull(), ""},
		{"timestamp(3) with local time zone", TimestampLTZ(3), "TIMESTAMP_LTZ(3)"},
		{"TIMESTAMP_WITH_LOCAL_TIME_ZONE(9)", TimestampLTZ(9), "TIMESTAMP_LTZ(9)"},
		{"TIME_WITHOUT_TIME_ZONE(2)", Time(2), "TIME(2)"},
		{"ARRAY<INT>", ArrayOf(Int()), ""},
		{"ARRAY<INT NOT NULL> NOT NULL", ArrayOf(Int().NotNull()).NotNull(), ""},
		{"MAP<STRING, ARRAY<INT>>", MapOf(String(), ArrayOf(Int())), ""},
		{"map<int not null,map<string,bytes>>", MapOf(Int().NotNull(), MapOf(String(), Bytes())), "MAP<INT NOT NULL, MAP<STRING, BYTES>>"},
		{"ROW<a INT, b STRING>", RowOf(NewField("a", Int()), NewField("b", String())), ""},
		{"ROW(a INT NOT NULL, `b c` STRING 'the ''b''')", RowOf(NewField("a", Int().NotNull()), Field{Name: "b c", Type: String(), Description: "the 'b'"}), "ROW<a INT NOT NULL, `b c` STRING 'the ''b'''>"},
		{"ROW<>", RowOf(), ""},
		{"ROW<`a``b` ROW<x ARRAY<MAP<STRING, TIMESTAMP(3)>>> NOT NULL>", RowOf(NewField("a`b", RowOf(NewField("x", ArrayOf(MapOf(String(), Timestamp(3))))).NotNull())), ""},
		{"ROW<`not` INT>", RowOf(NewField("not", Int())), ""},
	}
	for _, c := range cases {
		got, err := ParseDataType(c.in)
		if err != nil {
			t.Errorf("ParseDataType(%q): %v", c.in, err)
			continue
		}
		if !got.Equal(c.want) {
			t.Errorf("ParseDataType(%q) = %s, want %s", c.in, got, c.want)
		}
		str := c.str
		if str == "" {
			str = c.in
		}
		if got.String() != str {
			t.Errorf("ParseDataType(%q).String() = %q, want %q", c.in, got.String(), str)
		}
		again, err := ParseDataType(got.String())
		if err != nil || !again.Equal(got) {
			t.Errorf("reparse of %q: %v, %v", got.String(), again, err)
		}
		if got.Kind == KindRow {
			for i, f := range got.Fields {
				if c.want.Fields[i].Description != f.Description {
					t.Errorf("%q field %d description %q", c.in, i, f.Description)
				}
			}
		}
	}
}

func TestParseDataTypeErrors(t *testing.T) {
	cases := map[string]string{
		"":                     "expected a type",
		"VARCHAR(3)":           `unknown type "VARCHAR"`,
		"INT NOT":              "expected NULL",
		"DECIMAL(39, 2)":       "precision 39 out of range",
		"DECIMAL(0)":           "precision 0 out of range",
		"DECIMAL(5, 6)":        "scale 6 out of range",
		"DECIMAL(5, 2, 1)":     "expected ')'",
		"CHAR(0)":              "length 0 out of range",
		"BINARY(99999999999)":  "out of range",
		"TIME(10)":             "precision 10 out of range",
		"TIMESTAMP(12)":        "precision 12 out of range",
		"TIMESTAMP WITH TIME":  "expected LOCAL",
		"ARRAY<INT":            "expected '>'",
		"ARRAY INT":            "expected '<'",
		"MAP<INT>":             "expected ','",
		"ROW<a INT, a STRING>": `"a" appears twice`,
		"ROW<a>":               "expected a type",
		"ROW<`` INT>":          "empty name",
		"ROW<a INT b INT>":     "expected ','",
		"ROW a INT":            "expected '<' or '('",
		"INT INT":              "unexpected",
		"ROW<`a INT>":          "invalid input",
		"INT $":                "invalid input",
		"ROW<a ROW<b INT>, c>": "expected a type",
		strings.Repeat("ARRAY<", 100) + "INT" + strings.Repeat(">", 100): "nesting deeper",
	}
	for in, want := range cases {
		_, err := ParseDataType(in)
		if err == nil {
			t.Errorf("ParseDataType(%q): no error, want %q", in, want)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("ParseDataType(%q) error %q, want it to contain %q", in, err, want)
		}
	}
}

func TestParseColumns(t *testing.T) {
	cols, err := ParseColumns("id BIGINT NOT NULL, name STRING COMMENT 'the name', `tag list` ARRAY<STRING>")
	if err != nil {
		t.Fatal(err)
	}
	if len(cols) != 3 || cols[0].Name != "id" || !cols[0].Type.Equal(BigInt().NotNull()) ||
		cols[1].Comment != "the name" || cols[2].Name != "tag list" || !cols[2].Type.Equal(ArrayOf(String())) {
		t.Fatalf("unexpected columns %+v", cols)
	}
	for in, want := range map[string]string{
		"":                "expected a name",
		"a INT,":          "expected a name",
		"a INT, a STRING": `"a" appears twice`,
		"a INT b STRING":  "expected ','",
		"a INT COMMENT 3": "quoted comment",
		"a":               "expected a type",
	} {
		if _, err := ParseColumns(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseColumns(%q) error %v, want %q", in, err, want)
		}
	}
}

func FuzzParseDataType(f *testing.F) {
	for _, s := range []string{
		"DECIMAL(10,2) NOT NULL", "MAP<STRING, ARRAY<INT>>", "ROW<a INT, b STRING>",
		"ROW(`a``b` TIMESTAMP(3) WITH LOCAL TIME ZONE 'x''y')", "TIME(9) WITHOUT TIME ZONE NOT NULL",
		"ARRAY<ARRAY<BINARY(3)>>", "CHAR(5) NULL", "numeric", "TIMESTAMP_LTZ(0)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		dt, err := ParseDataType(s)
		if err != nil {
			return
		}
		again, err := ParseDataType(dt.String())
		if err != nil {
			t.Fatalf("String() of %q = %q does not parse: %v", s, dt.String(), err)
		}
		if !again.Equal(dt) {
			t.Fatalf("String() round trip of %q: %s != %s", s, again, dt)
		}
		j, err := dt.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON of %s: %v", dt, err)
		}
		fromJSON, err := ParseDataTypeJSON(j)
		if err != nil || !fromJSON.Equal(dt) {
			t.Fatalf("JSON round trip of %s via %s: %v %v", dt, j, fromJSON, err)
		}
		if _, err := ArrowType(dt); err != nil {
			t.Fatalf("ArrowType(%s): %v", dt, err)
		}
	})
}
