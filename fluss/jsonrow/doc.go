// Package jsonrow renders rows of Arrow record batches decoded from Fluss
// logs as canonical JSON (docs/json-mapping.md), byte for byte the text the
// Java fixture tool (scripts/FlussTool.java) prints for the same rows.
//
// An Encoder is compiled once from the Fluss row type (which carries what
// Arrow cannot: TIME/TIMESTAMP precision for fraction digits, CHAR vs STRING
// keys of maps, local-zoned timestamps); Bind prepares it for one record
// batch (a few allocations per batch), after which AppendRow appends row i
// to a caller-owned buffer with no allocation and no reflection.
//
// The rendering, value by value (no whitespace anywhere):
//
//   - null: null. BOOLEAN: true / false. TINYINT..BIGINT: exact integers.
//   - FLOAT, DOUBLE: NaN, +Inf, -Inf as the strings "NaN", "Infinity",
//     "-Infinity"; zero as 0 or -0; otherwise the shortest decimal that reads
//     back as the same float32 (FLOAT) or float64 (DOUBLE), in plain notation
//     when 1e-6 <= |v| < 1e21 (100, 0.000001, 123.456) and d[.ddd]e±x
//     otherwise (1e+21, 1.5e-7, 5e-324): the ECMAScript / encoding/json rule.
//   - DECIMAL(p,s): a string with exactly s fraction digits ("-0.05", "7").
//   - CHAR, STRING: a string; '"' and '\' escaped, control characters as
//     \b \t \n \f \r or \u00xx (lower-case hex), everything else (including
//     DEL, U+2028, non-ASCII) copied as UTF-8; invalid UTF-8 becomes U+FFFD
//     the way Java's UTF-8 decoder replaces it.
//   - BINARY, BYTES: standard padded base64 in a string.
//   - DATE: "YYYY-MM-DD"; years outside 0..9999 as java.time writes them
//     ("+10000-01-01", "-0001-12-31").
//   - TIME(p): "HH:MM:SS" plus '.' and p fraction digits when p > 0; the
//     value is the 32-bit millisecond of the day Fluss stores (sub-millisecond
//     digits are zero; out-of-range values wrap modulo one day, as in Java).
//   - TIMESTAMP(p): "YYYY-MM-DDTHH:MM:SS" plus p fraction digits, no zone;
//     TIMESTAMP_LTZ(p): the same instant in UTC followed by "Z".
//   - ARRAY: a JSON array.
//   - MAP: entries sorted by the JSON text of their key, compared as bytes,
//     stably; an object {"k":v,...} when the key type is CHAR or STRING,
//     otherwise an array [{"key":k,"value":v},...].
//   - ROW and the top-level row: an object of the fields in declared order.
package jsonrow
