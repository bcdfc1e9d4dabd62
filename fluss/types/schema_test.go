package types

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func testSchema(t *testing.T) *Schema {
	t.Helper()
	cols, err := ParseColumns("id BIGINT, name STRING, score DOUBLE, dt STRING")
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSchema(cols, "id", "dt")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestProject(t *testing.T) {
	s := testSchema(t)
	p, err := s.Project([]string{"score", "id"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.ColumnNames(), []string{"score", "id"}) || p.PrimaryKey != nil {
		t.Fatalf("projection %s", p)
	}
	if p.Columns[1].ID != 0 || p.Columns[0].ID != 2 {
		t.Fatalf("ids not kept: %+v", p.Columns)
	}
	as, err := p.ArrowSchema()
	if err != nil || as.Field(0).Name != "score" || as.Field(1).Name != "id" || as.Field(1).Nullable {
		t.Fatalf("arrow %v %v", as, err)
	}
	p, err = s.Project([]string{"dt", "name", "id"})
	if err != nil || !reflect.DeepEqual(p.PrimaryKey, []string{"id", "dt"}) {
		t.Fatalf("pk kept: %v %v", p, err)
	}
	idx, err := s.ProjectionIndices([]string{"dt", "id"})
	if err != nil || !reflect.DeepEqual(idx, []int{3, 0}) {
		t.Fatalf("indices %v %v", idx, err)
	}

	_, err = s.Project([]string{"id", "nope"})
	var uce *UnknownColumnError
	if !errors.As(err, &uce) || uce.Column != "nope" || !strings.Contains(err.Error(), `unknown column "nope"`) ||
		!strings.Contains(err.Error(), "id, name, score, dt") {
		t.Fatalf("unknown column error %v", err)
	}
	if _, err := s.Project([]string{"id", "id"}); err == nil || !strings.Contains(err.Error(), `"id" is selected twice`) {
		t.Fatalf("duplicate error %v", err)
	}
	if _, err := s.ProjectIndices([]int{4}); err == nil {
		t.Fatal("out-of-range index accepted")
	}
}

func TestSchemaHelpers(t *testing.T) {
	s := testSchema(t)
	if got := s.String(); got != "(id BIGINT NOT NULL, name STRING, score DOUBLE, dt STRING NOT NULL, PRIMARY KEY (id, dt))" {
		t.Fatalf("String %q", got)
	}
	if c, ok := s.Column("score"); !ok || c.Type.Kind != KindDouble {
		t.Fatal("Column")
	}
	if _, ok := s.Column("x"); ok || s.ColumnIndex("x") != -1 {
		t.Fatal("missing column found")
	}
	rt := s.RowType()
	if rt.Kind != KindRow || len(rt.Fields) != 4 || rt.Fields[3].Name != "dt" || rt.Fields[3].Type.Nullable {
		t.Fatalf("RowType %s", rt)
	}
	c := s.Clone()
	c.Columns[0].Name = "changed"
	c.PrimaryKey[0] = "changed"
	if s.Columns[0].Name != "id" || s.PrimaryKey[0] != "id" {
		t.Fatal("Clone shares memory")
	}
	dt := MustParseDataType("ROW<a ARRAY<INT>, m MAP<STRING, INT>>")
	cl := dt.Clone()
	cl.Fields[0].Type.Elem.Kind = KindBigInt
	cl.Fields[1].Type.Value.Nullable = false
	if dt.Fields[0].Type.Elem.Kind != KindInt || !dt.Fields[1].Type.Value.Nullable {
		t.Fatal("DataType.Clone shares memory")
	}
	for _, bad := range [][]Column{
		nil,
		{{Name: "", Type: Int()}},
		{{Name: "a", Type: DataType{}}},
	} {
		if _, err := NewSchema(bad); err == nil {
			t.Errorf("NewSchema(%v): no error", bad)
		}
	}
	if _, err := NewSchema([]Column{NewColumn("a", Int())}, "a", "a"); err == nil {
		t.Error("duplicate pk accepted")
	}
}

func TestKinds(t *testing.T) {
	for k := KindBoolean; k < kindCount; k++ {
		got, ok := KindFromRootName(k.RootName())
		if !ok || got != k {
			t.Errorf("%v root name %q does not map back", k, k.RootName())
		}
	}
	if _, ok := KindFromRootName("VARCHAR"); ok {
		t.Error("VARCHAR accepted")
	}
	if Kind(99).String() != "INVALID" || Kind(-1).RootName() != "INVALID" {
		t.Error("out-of-range kind names")
	}
}
