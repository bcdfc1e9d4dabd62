package jsonrow

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// errorsSchema is the table of the error cases.
const errorsSchema = "id BIGINT NOT NULL, price DECIMAL(10, 2), qty INT, tags ARRAY<STRING NOT NULL>, " +
	"addr ROW<street STRING, zip INT NOT NULL>, attrs MAP<STRING, INT>, m MAP<INT, STRING>, d DATE, " +
	"ts TIMESTAMP_LTZ(3), bin BINARY(2), f FLOAT, ok BOOLEAN, t TIME(3), n TIMESTAMP(9)"

func errorsBuilder(t *testing.T, opts ...BuilderOption) *RowBuilder {
	t.Helper()
	cols, err := types.ParseColumns(errorsSchema)
	if err != nil {
		t.Fatal(err)
	}
	return newTestBuilder(t, types.MustSchema(cols, "id"), opts...)
}

// TestDecodeErrors pins the text of the errors of bad rows: which column
// (and where in it), its type, the value and what is wrong.
func TestDecodeErrors(t *testing.T) {
	const cols = "columns: id, price, qty, tags, addr, attrs, m, d, ts, bin, f, ok, t, n"
	cases := []struct{ in, want string }{
		{``, `jsonrow: no JSON object: the input is empty`},
		{" \n", `jsonrow: no JSON object: the input is empty`},
		{`[1]`, `jsonrow: [1] is an array, want a JSON object (a row)`},
		{`x`, `jsonrow: invalid JSON at byte 0: expected a JSON object, found 'x'`},
		{`{"id":1} {}`, `jsonrow: invalid JSON at byte 9: expected the end of the input after the row object, found '{'`},
		{`{"id":1,}`, `jsonrow: invalid JSON at byte 8: expected a key, found '}'`},
		{`{"id":1 "qty":2}`, `jsonrow: invalid JSON at byte 8: expected ',' or '}' after an object member, found '"'`},
		{`{"id":1`, `jsonrow: invalid JSON: unexpected end of input, expected ',' or '}' after an object member`},
		{`{"id":1,"zzz":2}`, `jsonrow: unknown key "zzz": no column of that name (` + cols + `)`},
		{`{"qty":1}`, `jsonrow: column "id" (BIGINT NOT NULL): missing, and the type is NOT NULL`},
		{`{"id":null}`, `jsonrow: column "id" (BIGINT NOT NULL): null for a NOT NULL type`},
		{`{"id":1,"id":2}`, `jsonrow: key "id" appears twice in an object`},
		{`{"id":1,"price":"12.345"}`, `jsonrow: column "price" (DECIMAL(10, 2)): "12.345" has 3 fraction digits, at most 2`},
		{`{"id":1,"price":123456789.5}`, `jsonrow: column "price" (DECIMAL(10, 2)): 123456789.5 has 9 integer digits, at most 8`},
		{`{"id":1,"price":"abc"}`, `jsonrow: column "price" (DECIMAL(10, 2)): "abc" is not a decimal number`},
		{`{"id":1,"price":true}`, `jsonrow: column "price" (DECIMAL(10, 2)): true is a boolean, want a number or a string of one`},
		{`{"id":1,"price":"1e99999999999"}`, `jsonrow: column "price" (DECIMAL(10, 2)): "1e99999999999" has an exponent out of range`},
		{`{"id":1.5}`, `jsonrow: column "id" (BIGINT NOT NULL): 1.5 is not an integer`},
		{`{"id":9223372036854775808}`, `jsonrow: column "id" (BIGINT NOT NULL): 9223372036854775808 is out of range [-9223372036854775808, 9223372036854775807]`},
		{`{"id":"1"}`, `jsonrow: column "id" (BIGINT NOT NULL): "1" is a string, want an integer`},
		{`{"id":1,"qty":1e400}`, `jsonrow: column "qty" (INT): 1e400 is out of range [-2147483648, 2147483647]`},
		{`{"id":1,"qty":01}`, `jsonrow: column "qty" (INT): invalid JSON at byte 14: invalid number 01`},
		{`{"id":1,"tags":["a",null]}`, `jsonrow: column "tags[1]" (STRING NOT NULL): null for a NOT NULL type`},
		{`{"id":1,"tags":["a",5]}`, `jsonrow: column "tags[1]" (STRING NOT NULL): 5 is a number, want a string`},
		{`{"id":1,"tags":{"a":1}}`, `jsonrow: column "tags" (ARRAY<STRING NOT NULL>): {"a":1} is an object, want an array`},
		{`{"id":1,"tags":["a",]}`, `jsonrow: column "tags[1]" (STRING NOT NULL): invalid JSON at byte 20: expected a value, found ']'`},
		{`{"id":1,"tags":["\q"]}`, `jsonrow: column "tags[0]" (STRING NOT NULL): invalid JSON at byte 17: invalid escape, found '\'`},
		{`{"id":1,"tags":["\u12"]}`, `jsonrow: column "tags[0]" (STRING NOT NULL): invalid JSON at byte 17: \u must be followed by 4 hex digits, found '\'`},
		{"{\"id\":1,\"tags\":[\"a\tb\"]}", `jsonrow: column "tags[0]" (STRING NOT NULL): invalid JSON at byte 18: control character in a string (escape it), found byte 0x09`},
		{`{"id":1,"tags":["abc`, `jsonrow: column "tags[0]" (STRING NOT NULL): invalid JSON: unexpected end of input, unterminated string`},
		{`{"id":1,"addr":{"street":"x"}}`, `jsonrow: column "addr.zip" (INT NOT NULL): missing, and the type is NOT NULL`},
		{`{"id":1,"addr":{"zip":1,"city":"y"}}`, `jsonrow: column "addr" (ROW<street STRING, zip INT NOT NULL>): unknown key "city": no field of that name (fields: street, zip)`},
		{`{"id":1,"addr":{"zip":"1"}}`, `jsonrow: column "addr.zip" (INT NOT NULL): "1" is a string, want an integer`},
		{`{"id":1,"addr":[1]}`, `jsonrow: column "addr" (ROW<street STRING, zip INT NOT NULL>): [1] is an array, want an object`},
		{`{"id":1,"attrs":{"k":"v"}}`, `jsonrow: column "attrs[k]" (INT): "v" is a string, want an integer`},
		{`{"id":1,"attrs":{"k":1,"k":2}}`, `jsonrow: column "attrs" (MAP<STRING, INT>): key "k" appears twice in an object`},
		{`{"id":1,"m":{"1":"a"}}`, `jsonrow: column "m.key" (INT NOT NULL): "1" is a string, want an integer`},
		{`{"id":1,"m":[{"key":1}, 5]}`, `jsonrow: column "m[1]" (MAP<INT, STRING>): 5 is a number, want a {"key":…,"value":…} object`},
		{`{"id":1,"m":[{"value":"a"}]}`, `jsonrow: column "m[0].key" (INT NOT NULL): missing, and a MAP key is NOT NULL`},
		{`{"id":1,"m":[{"key":null,"value":"a"}]}`, `jsonrow: column "m[0].key" (INT NOT NULL): null for a NOT NULL type`},
		{`{"id":1,"m":[{"key":1,"key":2}]}`, `jsonrow: column "m[0]" (MAP<INT, STRING>): key "key" appears twice in an object`},
		{`{"id":1,"d":"2024-02-30"}`, `jsonrow: column "d" (DATE): "2024-02-30" is not a date: 2024-02 has no day 30`},
		{`{"id":1,"d":"2024-1-1"}`, `jsonrow: column "d" (DATE): "2024-1-1" is not a date: want "YYYY-MM-DD"`},
		{`{"id":1,"d":"+9999999-01-01"}`, `jsonrow: column "d" (DATE): "+9999999-01-01" is out of the range of DATE (-5877641-06-23 to +5881580-07-11)`},
		{`{"id":1,"ts":"2024-01-01T00:00"}`, `jsonrow: column "ts" (TIMESTAMP_LTZ(3)): "2024-01-01T00:00" is not a timestamp with a zone: want Z or an offset (+HH:MM) after the time`},
		{`{"id":1,"ts":"2024-01-01T00:00+19:00"}`, `jsonrow: column "ts" (TIMESTAMP_LTZ(3)): "2024-01-01T00:00+19:00" has a zone offset beyond ±18:00`},
		{`{"id":1,"ts":"2024-01-01 00:00Z"}`, `jsonrow: column "ts" (TIMESTAMP_LTZ(3)): "2024-01-01 00:00Z" is not a timestamp: want "YYYY-MM-DDTHH:MM[:SS[.fraction]]"`},
		{`{"id":1,"n":"2262-04-11T23:47:16.854775808"}`, `jsonrow: column "n" (TIMESTAMP(9)): "2262-04-11T23:47:16.854775808" is out of the range of TIMESTAMP(9)`},
		{`{"id":1,"t":"24:00"}`, `jsonrow: column "t" (TIME(3)): "24:00" is not a time: 24:00:00 is out of range`},
		{`{"id":1,"t":"12:00:00.1234567891"}`, `jsonrow: column "t" (TIME(3)): "12:00:00.1234567891" is not a time: want "HH:MM[:SS[.fraction]]"`},
		{`{"id":1,"bin":"AAAA"}`, `jsonrow: column "bin" (BINARY(2)): "AAAA" is 3 bytes, BINARY(2) takes exactly 2`},
		{`{"id":1,"bin":"AA=="}`, `jsonrow: column "bin" (BINARY(2)): "AA==" is 1 byte, BINARY(2) takes exactly 2`},
		{`{"id":1,"bin":"A"}`, `jsonrow: column "bin" (BINARY(2)): "A" is not base64`},
		{`{"id":1,"bin":"AA="}`, `jsonrow: column "bin" (BINARY(2)): "AA=" is not base64: wrong padding`},
		{`{"id":1,"bin":"AA\nAA"}`, `jsonrow: column "bin" (BINARY(2)): "AA\nAA" is not base64: it has a line break`},
		{`{"id":1,"f":"nan"}`, `jsonrow: column "f" (FLOAT): "nan" is not a number, want a number, "NaN", "Infinity" or "-Infinity"`},
		{`{"id":1,"ok":"true"}`, `jsonrow: column "ok" (BOOLEAN): "true" is a string, want true or false`},
		{`{"id":1,"ok":1}`, `jsonrow: column "ok" (BOOLEAN): 1 is a number, want true or false`},
		{`{"id":1,"zzz":[1,{"a":1}]}`, `jsonrow: unknown key "zzz": no column of that name (` + cols + `)`},
	}
	b := errorsBuilder(t)
	for _, c := range cases {
		err := b.AppendJSON([]byte(c.in))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n got %v\nwant %s", c.in, err, c.want)
		}
	}
	if b.Len() != 0 {
		t.Fatalf("%d rows appended", b.Len())
	}
}

// TestDecodeStructuredErrors pins the errors of structured rows.
func TestDecodeStructuredErrors(t *testing.T) {
	cases := []struct {
		in   any
		want string
	}{
		{nil, `jsonrow: null, want an object (a row)`},
		{[]any{1}, `jsonrow: [1] is an array, want an object (a row)`},
		{map[string]any{"id": 1.5}, `jsonrow: column "id" (BIGINT NOT NULL): 1.5 is not an integer`},
		{map[string]any{"id": json.Number("1x")}, `jsonrow: column "id" (BIGINT NOT NULL): 1x is not a valid JSON number`},
		{map[string]any{"id": uint64(math.MaxUint64)}, `jsonrow: column "id" (BIGINT NOT NULL): 18446744073709551615 is out of range [-9223372036854775808, 9223372036854775807]`},
		{map[string]any{"id": 1, "qty": int64(1 << 40)}, `jsonrow: column "qty" (INT): 1099511627776 is out of range [-2147483648, 2147483647]`},
		{map[string]any{"id": 1, "zz": 1, "aa": 2}, `jsonrow: unknown key "aa": no column of that name (columns: id, price, qty, tags, addr, attrs, m, d, ts, bin, f, ok, t, n)`},
		{map[string]any{"price": 1}, `jsonrow: column "id" (BIGINT NOT NULL): missing, and the type is NOT NULL`},
		{map[string]any{"id": 1, "price": 1.005}, `jsonrow: column "price" (DECIMAL(10, 2)): 1.005 has 3 fraction digits, at most 2`},
		{map[string]any{"id": 1, "price": math.NaN()}, `jsonrow: column "price" (DECIMAL(10, 2)): "NaN" is not a decimal number`},
		{map[string]any{"id": 1, "tags": []string{"a"}}, `jsonrow: column "tags" (ARRAY<STRING NOT NULL>): is a Go []string, which has no JSON form here`},
		{map[string]any{"id": 1, "tags": []any{"a", nil}}, `jsonrow: column "tags[1]" (STRING NOT NULL): null for a NOT NULL type`},
		{map[string]any{"id": 1, "addr": map[string]any{"zip": 1, "x": 1}}, `jsonrow: column "addr" (ROW<street STRING, zip INT NOT NULL>): unknown key "x": no field of that name (fields: street, zip)`},
		{map[string]any{"id": 1, "addr": map[string]any{}}, `jsonrow: column "addr.zip" (INT NOT NULL): missing, and the type is NOT NULL`},
		{map[string]any{"id": 1, "attrs": map[string]any{"k": "v"}}, `jsonrow: column "attrs[k]" (INT): "v" is a string, want an integer`},
		{map[string]any{"id": 1, "m": map[string]any{"1": "a"}}, `jsonrow: column "m.key" (INT NOT NULL): "1" is a string, want an integer`},
		{map[string]any{"id": 1, "m": []any{"x"}}, `jsonrow: column "m[0]" (MAP<INT, STRING>): "x" is a string, want a {"key":…,"value":…} object`},
		{map[string]any{"id": 1, "m": []any{map[string]any{"value": "a"}}}, `jsonrow: column "m[0].key" (INT NOT NULL): missing, and a MAP key is NOT NULL`},
		{map[string]any{"id": 1, "bin": []byte{1}}, `jsonrow: column "bin" (BINARY(2)): "AQ==" is 1 byte, BINARY(2) takes exactly 2`},
		{map[string]any{"id": 1, "ok": "true"}, `jsonrow: column "ok" (BOOLEAN): "true" is a string, want true or false`},
		{map[string]any{"id": 1, "n": time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)}, `jsonrow: column "n" (TIMESTAMP(9)): "2300-01-01T00:00:00Z" is out of the range of TIMESTAMP(9)`},
		{map[string]any{"id": 1, "d": struct{}{}}, `jsonrow: column "d" (DATE): is a Go struct {}, which has no JSON form here`},
	}
	b := errorsBuilder(t)
	for _, c := range cases {
		err := b.AppendStructured(c.in)
		if err == nil || err.Error() != c.want {
			t.Errorf("%#v:\n got %v\nwant %s", c.in, err, c.want)
		}
	}
	if b.Len() != 0 {
		t.Fatalf("%d rows appended", b.Len())
	}
}
