package types

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// refDescriptor is the PK table example of the protocol reference (§2.3).
const refDescriptor = `{"version":1,
 "schema":{"version":1,
   "columns":[{"name":"id","data_type":{"type":"INTEGER","nullable":false}},
              {"name":"v","data_type":{"type":"STRING"}},
              {"name":"ts","data_type":{"type":"TIMESTAMP_WITH_LOCAL_TIME_ZONE","precision":3}}],
   "primary_key":["id"]},
 "partition_key":[],
 "bucket_key":["id"], "bucket_count":1,
 "properties":{"table.replication.factor":"1"},
 "custom_properties":{}}`

// schema09 is a schema as a 0.9 server writes it (ids, field ids, highest_field_id).
const schema09 = `{"version":1,"columns":[
 {"name":"id","data_type":{"type":"BIGINT","nullable":false},"id":0},
 {"name":"r","data_type":{"type":"ROW","fields":[
   {"name":"x","field_type":{"type":"INTEGER"},"field_id":3},
   {"name":"y","field_type":{"type":"ARRAY","element_type":{"type":"CHAR","length":4}},"description":"why","field_id":4}]},"comment":"a row","id":1},
 {"name":"m","data_type":{"type":"MAP","key_type":{"type":"STRING","nullable":false},"value_type":{"type":"DECIMAL","precision":38,"scale":10}},"id":2},
 {"name":"agg","data_type":{"type":"BIGINT"},"agg_function":{"type":"sum","parameters":{}},"id":5}],
 "primary_key":["id"],"auto_increment_column":["id"],"highest_field_id":5}`

func TestParseTableDescriptorReference(t *testing.T) {
	d, err := ParseTableDescriptorJSON([]byte(refDescriptor))
	if err != nil {
		t.Fatal(err)
	}
	want := &TableDescriptor{
		Schema: Schema{
			Columns: []Column{
				{Name: "id", Type: Int().NotNull(), ID: 0},
				{Name: "v", Type: String(), ID: 1},
				{Name: "ts", Type: TimestampLTZ(3), ID: 2},
			},
			PrimaryKey: []string{"id"},
		},
		BucketKeys:       []string{"id"},
		BucketCount:      1,
		Properties:       map[string]string{"table.replication.factor": "1"},
		CustomProperties: map[string]string{},
	}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("got %+v\nwant %+v", d, want)
	}
	if d.IsPartitioned() || !d.HasPrimaryKey() || d.LogFormat() != "ARROW" || d.ArrowCompression() != "ZSTD" || d.ArrowZstdLevel() != 3 {
		t.Fatalf("descriptor helpers: %v %v %q %q %d", d.IsPartitioned(), d.HasPrimaryKey(), d.LogFormat(), d.ArrowCompression(), d.ArrowZstdLevel())
	}
	out, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	wantJSON := `{"version":1,"schema":{"version":1,"columns":[{"name":"id","data_type":{"type":"INTEGER","nullable":false}},{"name":"v","data_type":{"type":"STRING"}},{"name":"ts","data_type":{"type":"TIMESTAMP_WITH_LOCAL_TIME_ZONE","precision":3}}],"primary_key":["id"]},"partition_key":[],"bucket_key":["id"],"bucket_count":1,"properties":{"table.replication.factor":"1"},"custom_properties":{}}`
	if string(out) != wantJSON {
		t.Fatalf("marshal:\n got %s\nwant %s", out, wantJSON)
	}
	roundTripDescriptor(t, d)
}

func roundTripDescriptor(t *testing.T, d *TableDescriptor) {
	t.Helper()
	out, err := d.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseTableDescriptorJSON(out)
	if err != nil {
		t.Fatalf("reparse %s: %v", out, err)
	}
	if !reflect.DeepEqual(back, d) {
		t.Fatalf("round trip via %s:\n got %+v\nwant %+v", out, back, d)
	}
}

func TestSchemaJSON09(t *testing.T) {
	s, err := ParseSchemaJSON([]byte(schema09))
	if err != nil {
		t.Fatal(err)
	}
	if !s.HasColumnIDs || s.HighestFieldID != 5 || s.Columns[3].ID != 5 {
		t.Fatalf("ids: %+v", s)
	}
	r := s.Columns[1].Type
	if !r.HasFieldIDs || r.Fields[0].ID != 3 || r.Fields[1].ID != 4 || r.Fields[1].Description != "why" || s.Columns[1].Comment != "a row" {
		t.Fatalf("row: %+v", r)
	}
	if got := r.String(); got != "ROW<x INT, y ARRAY<CHAR(4)> 'why'>" {
		t.Fatalf("row string %q", got)
	}
	if string(s.Columns[3].AggFunction) != `{"type":"sum","parameters":{}}` {
		t.Fatalf("agg %s", s.Columns[3].AggFunction)
	}
	if !reflect.DeepEqual(s.AutoIncrementColumns, []string{"id"}) {
		t.Fatalf("auto inc %v", s.AutoIncrementColumns)
	}
	out, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var compact strings.Builder
	for _, line := range strings.Split(schema09, "\n") {
		compact.WriteString(strings.TrimLeft(line, " "))
	}
	if string(out) != compact.String() {
		t.Fatalf("marshal:\n got %s\nwant %s", out, compact.String())
	}
	var back Schema
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, s) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", &back, s)
	}
}

func TestSchemaPrimaryKeyForcedNotNull(t *testing.T) {
	s, err := ParseSchemaJSON([]byte(`{"version":1,"columns":[{"name":"a","data_type":{"type":"INTEGER"}},{"name":"b","data_type":{"type":"STRING"}}],"primary_key":["a"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Columns[0].Type.Nullable || !s.Columns[1].Type.Nullable {
		t.Fatalf("nullability %+v", s.Columns)
	}
	s2 := MustSchema([]Column{NewColumn("a", Int()), NewColumn("b", String())}, "a")
	if s2.Columns[0].Type.Nullable {
		t.Fatal("NewSchema did not force the primary key NOT NULL")
	}
}

func TestDataTypeJSONAllTypes(t *testing.T) {
	cases := map[string]string{
		"BOOLEAN":                  `{"type":"BOOLEAN"}`,
		"TINYINT NOT NULL":         `{"type":"TINYINT","nullable":false}`,
		"SMALLINT":                 `{"type":"SMALLINT"}`,
		"INT":                      `{"type":"INTEGER"}`,
		"BIGINT":                   `{"type":"BIGINT"}`,
		"FLOAT":                    `{"type":"FLOAT"}`,
		"DOUBLE":                   `{"type":"DOUBLE"}`,
		"DECIMAL(38, 18)":          `{"type":"DECIMAL","precision":38,"scale":18}`,
		"CHAR(3)":                  `{"type":"CHAR","length":3}`,
		"STRING":                   `{"type":"STRING"}`,
		"BINARY(8)":                `{"type":"BINARY","length":8}`,
		"BYTES":                    `{"type":"BYTES"}`,
		"DATE":                     `{"type":"DATE"}`,
		"TIME(3)":                  `{"type":"TIME_WITHOUT_TIME_ZONE","precision":3}`,
		"TIMESTAMP(9) NOT NULL":    `{"type":"TIMESTAMP_WITHOUT_TIME_ZONE","nullable":false,"precision":9}`,
		"TIMESTAMP_LTZ(0)":         `{"type":"TIMESTAMP_WITH_LOCAL_TIME_ZONE","precision":0}`,
		"ARRAY<INT NOT NULL>":      `{"type":"ARRAY","element_type":{"type":"INTEGER","nullable":false}}`,
		"MAP<STRING, DOUBLE>":      `{"type":"MAP","key_type":{"type":"STRING"},"value_type":{"type":"DOUBLE"}}`,
		"ROW<a INT, b STRING 'd'>": `{"type":"ROW","fields":[{"name":"a","field_type":{"type":"INTEGER"}},{"name":"b","field_type":{"type":"STRING"},"description":"d"}]}`,
	}
	for syntax, want := range cases {
		dt := MustParseDataType(syntax)
		got, err := json.Marshal(dt)
		if err != nil {
			t.Fatalf("%s: %v", syntax, err)
		}
		if string(got) != want {
			t.Errorf("%s: JSON %s, want %s", syntax, got, want)
		}
		back, err := ParseDataTypeJSON(got)
		if err != nil || !back.Equal(dt) {
			t.Errorf("%s: parse back %v %v", syntax, back, err)
		}
	}
}

func TestJSONErrors(t *testing.T) {
	types := map[string]string{
		`{}`:                                           `missing member "type"`,
		`{"type":"VARCHAR"}`:                           `unknown type "VARCHAR"`,
		`{"type":"CHAR"}`:                              `missing member "length"`,
		`{"type":"CHAR","length":"3"}`:                 `member "length"`,
		`{"type":"CHAR","length":1e3}`:                 `member "length"`,
		`{"type":"CHAR","length":99999999999}`:         `out of the int32 range`,
		`{"type":"DECIMAL","precision":40,"scale":1}`:  `precision 40 out of range`,
		`{"type":"ARRAY"}`:                             `missing member "element_type"`,
		`{"type":"MAP","key_type":{"type":"INTEGER"}}`: `missing member "value_type"`,
		`{"type":"ROW","fields":[{"name":"a","field_type":{"type":"INTEGER"},"field_id":1},{"name":"b","field_type":{"type":"INTEGER"}}]}`: `every field or none`,
		`{"type":"INTEGER","nullable":"no"}`: `member "nullable"`,
		`[]`:                                 `expected a JSON object`,
		`null`:                               `got null`,
		`{"type":"INTEGER"`:                  `data type JSON`,
	}
	for in, want := range types {
		if _, err := ParseDataTypeJSON([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseDataTypeJSON(%s) error %v, want %q", in, err, want)
		}
	}
	schemas := map[string]string{
		`{"version":2,"columns":[]}`:                     `unsupported JSON version 2`,
		`{"version":1}`:                                  `missing member "columns"`,
		`{"version":1,"columns":[]}`:                     `no columns`,
		`{"columns":[{"name":"a"}]}`:                     `missing member "data_type"`,
		`{"columns":[{"data_type":{"type":"INTEGER"}}]}`: `missing member "name"`,
		`{"columns":[{"name":"a","data_type":{"type":"INTEGER"}}],"primary_key":["b"]}`:                                `primary key column "b" is not a column`,
		`{"columns":[{"name":"a","data_type":{"type":"INTEGER"},"id":0},{"name":"b","data_type":{"type":"INTEGER"}}]}`: `every column or none`,
		`{"columns":[{"name":"a","data_type":{"type":"INTEGER"}},{"name":"a","data_type":{"type":"INTEGER"}}]}`:        `column "a" appears twice`,
	}
	for in, want := range schemas {
		if _, err := ParseSchemaJSON([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSchemaJSON(%s) error %v, want %q", in, err, want)
		}
	}
	descs := map[string]string{
		`{"version":1}`: `missing member "schema"`,
		`{"schema":{"columns":[{"name":"a","data_type":{"type":"INTEGER"}}]},"partition_key":["x"]}`: `partition key "x" is not a column`,
		`{"schema":{"columns":[{"name":"a","data_type":{"type":"INTEGER"}}]},"bucket_key":["x"]}`:    `bucket key "x" is not a column`,
		`{"schema":{"columns":[{"name":"a","data_type":{"type":"INTEGER"}}]},"properties":[]}`:       `member "properties"`,
	}
	for in, want := range descs {
		if _, err := ParseTableDescriptorJSON([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseTableDescriptorJSON(%s) error %v, want %q", in, err, want)
		}
	}
}

func TestTableDescriptorRoundTrips(t *testing.T) {
	if _, err := ParseColumns("id BIGINT, dt STRING, v ARRAY<MAP<STRING, ROW<a INT, b BYTES>>>, \"q\" DOUBLE"); err == nil {
		t.Fatal("expected an error for a double-quoted name")
	}
	cols, err := ParseColumns("id BIGINT, dt STRING, v ARRAY<MAP<STRING, ROW<a INT, b BYTES>>>, `we\"ird` DOUBLE COMMENT 'c\\x'")
	if err != nil {
		t.Fatal(err)
	}
	s := MustSchema(cols, "id", "dt")
	for _, d := range []*TableDescriptor{
		{Schema: *s, PartitionKeys: []string{"dt"}, BucketKeys: []string{"id"}, BucketCount: 3,
			Properties:       map[string]string{"table.log.arrow.compression.type": "lz4_frame", "table.auto-partition.enabled": "true"},
			CustomProperties: map[string]string{"owner": "ünïcode \"quoted\""}, Comment: "a table"},
		{Schema: *s, Properties: map[string]string{}, CustomProperties: map[string]string{}},
		{Schema: *s, BucketKeys: []string{}, Properties: map[string]string{}, CustomProperties: map[string]string{}},
	} {
		roundTripDescriptor(t, d)
	}
	d := &TableDescriptor{Schema: *s}
	out, _ := d.MarshalJSON()
	if !strings.Contains(string(out), `"partition_key":[]`) || !strings.Contains(string(out), `"properties":{}`) ||
		!strings.Contains(string(out), `"custom_properties":{}`) || strings.Contains(string(out), "bucket_key") {
		t.Fatalf("required members: %s", out)
	}
	d.BucketCount = 4
	out, _ = d.MarshalJSON()
	if !strings.Contains(string(out), `"bucket_key":[],"bucket_count":4`) {
		t.Fatalf("bucket_key with bucket_count: %s", out)
	}
	if (&TableDescriptor{Schema: *s, Properties: map[string]string{PropArrowCompression: "lz4_frame"}}).ArrowCompression() != "LZ4_FRAME" {
		t.Fatal("ArrowCompression not upper-cased")
	}
}

func FuzzParseSchemaJSON(f *testing.F) {
	f.Add([]byte(schema09))
	f.Add([]byte(refDescriptor))
	f.Add([]byte(`{"columns":[{"name":"a","data_type":{"type":"ROW","fields":[{"name":"x","field_type":{"type":"MAP","key_type":{"type":"STRING"},"value_type":{"type":"TIME_WITHOUT_TIME_ZONE","precision":3}}}]}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := ParseSchemaJSON(b); err == nil {
			out, err := s.MarshalJSON()
			if err != nil {
				t.Fatalf("marshal parsed schema: %v", err)
			}
			back, err := ParseSchemaJSON(out)
			if err != nil {
				t.Fatalf("reparse %s: %v", out, err)
			}
			if !reflect.DeepEqual(back, s) {
				t.Fatalf("round trip via %s:\n%+v\n%+v", out, back, s)
			}
			if _, err := s.ArrowSchema(); err != nil {
				t.Fatalf("ArrowSchema: %v", err)
			}
		}
		if d, err := ParseTableDescriptorJSON(b); err == nil {
			out, err := d.MarshalJSON()
			if err != nil {
				t.Fatalf("marshal parsed descriptor: %v", err)
			}
			if _, err := ParseTableDescriptorJSON(out); err != nil {
				t.Fatalf("reparse %s: %v", out, err)
			}
		}
		_, _ = ParseDataTypeJSON(b)
	})
}

func TestAggFunctionCompacted(t *testing.T) {
	s, err := ParseSchemaJSON([]byte(`{"columns":[{"name":"a","data_type":{"type":"BIGINT"},"agg_function":{ "type" : "sum" }}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(s.Columns[0].AggFunction) != `{"type":"sum"}` {
		t.Fatalf("agg %s", s.Columns[0].AggFunction)
	}
}
