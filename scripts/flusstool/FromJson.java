package flusstool;

import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.Decimal;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.row.TimestampLtz;
import org.apache.fluss.row.TimestampNtz;
import org.apache.fluss.types.DataField;
import org.apache.fluss.types.DataType;
import org.apache.fluss.types.RowType;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.util.Base64;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

// ------------------------------------------------------------------
// JSON input: parsed JSON values to Fluss rows

final class FromJson {
    @SuppressWarnings("unchecked")
    static GenericRow row(Object v, RowType rt, String where) {
        if (!(v instanceof Map)) {
            throw new IllegalArgumentException(where + ": expected a JSON object");
        }
        Map<String, Object> m = (Map<String, Object>) v;
        List<DataField> fields = rt.getFields();
        GenericRow row = new GenericRow(fields.size());
        Set<String> known = new HashSet<>();
        for (int i = 0; i < fields.size(); i++) {
            DataField f = fields.get(i);
            known.add(f.getName());
            String w = where + "." + f.getName();
            row.setField(i, value(m.get(f.getName()), f.getType(), w));
        }
        for (String k : m.keySet()) {
            if (!known.contains(k)) {
                throw new IllegalArgumentException(where + ": no column/field named \"" + k + "\"");
            }
        }
        return row;
    }

    static BigDecimal number(Object v, String where) {
        if (v instanceof JNum) {
            return new BigDecimal(((JNum) v).text());
        }
        throw new IllegalArgumentException(where + ": expected a number, got " + kind(v));
    }

    static String text(Object v, String where) {
        if (v instanceof String) {
            return (String) v;
        }
        throw new IllegalArgumentException(where + ": expected a string, got " + kind(v));
    }

    static String kind(Object v) {
        if (v == null) {
            return "null";
        }
        if (v instanceof JNum) {
            return "number " + ((JNum) v).text();
        }
        if (v instanceof String) {
            return "string";
        }
        if (v instanceof Boolean) {
            return "boolean";
        }
        if (v instanceof Map) {
            return "object";
        }
        return "array";
    }

    @SuppressWarnings("unchecked")
    static Object value(Object v, DataType t, String where) {
        if (v == null) {
            if (!t.isNullable()) {
                throw new IllegalArgumentException(where + ": null for NOT NULL type " + t);
            }
            return null;
        }
        try {
            switch (t.getTypeRoot()) {
                case BOOLEAN:
                    if (!(v instanceof Boolean)) {
                        throw new IllegalArgumentException("expected true/false, got " + kind(v));
                    }
                    return v;
                case TINYINT:
                    return number(v, where).byteValueExact();
                case SMALLINT:
                    return number(v, where).shortValueExact();
                case INTEGER:
                    return number(v, where).intValueExact();
                case BIGINT:
                    return number(v, where).longValueExact();
                case FLOAT:
                    if (v instanceof String) {
                        return Float.valueOf((float) specialFloat((String) v));
                    }
                    return Float.parseFloat(((JNum) requireNum(v)).text());
                case DOUBLE:
                    if (v instanceof String) {
                        return Double.valueOf(specialFloat((String) v));
                    }
                    return Double.parseDouble(((JNum) requireNum(v)).text());
                case DECIMAL:
                    {
                        int p = org.apache.fluss.types.DataTypeChecks.getPrecision(t);
                        int s = org.apache.fluss.types.DataTypeChecks.getScale(t);
                        BigDecimal bd =
                                v instanceof String ? new BigDecimal((String) v) : number(v, where);
                        bd = bd.setScale(s, RoundingMode.UNNECESSARY);
                        Decimal d = Decimal.fromBigDecimal(bd, p, s);
                        if (d == null) {
                            throw new IllegalArgumentException(bd + " does not fit DECIMAL(" + p + "," + s + ")");
                        }
                        return d;
                    }
                case CHAR:
                case STRING:
                    return BinaryString.fromString(text(v, where));
                case BINARY:
                    {
                        byte[] b = Base64.getDecoder().decode(text(v, where));
                        int n = org.apache.fluss.types.DataTypeChecks.getLength(t);
                        if (b.length != n) {
                            throw new IllegalArgumentException(
                                    "BINARY(" + n + ") needs exactly " + n + " bytes, got " + b.length);
                        }
                        return b;
                    }
                case BYTES:
                    return Base64.getDecoder().decode(text(v, where));
                case DATE:
                    return (int) LocalDate.parse(text(v, where)).toEpochDay();
                case TIME_WITHOUT_TIME_ZONE:
                    return (int) (LocalTime.parse(text(v, where)).toNanoOfDay() / 1_000_000L);
                case TIMESTAMP_WITHOUT_TIME_ZONE:
                    return TimestampNtz.fromLocalDateTime(LocalDateTime.parse(text(v, where)));
                case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                    return TimestampLtz.fromInstant(OffsetDateTime.parse(text(v, where)).toInstant());
                case ARRAY:
                    {
                        if (!(v instanceof List)) {
                            throw new IllegalArgumentException("expected an array, got " + kind(v));
                        }
                        List<Object> l = (List<Object>) v;
                        DataType et = ((org.apache.fluss.types.ArrayType) t).getElementType();
                        Object[] out = new Object[l.size()];
                        for (int i = 0; i < out.length; i++) {
                            out[i] = value(l.get(i), et, where + "[" + i + "]");
                        }
                        return Nested.newArray(out);
                    }
                case MAP:
                    {
                        org.apache.fluss.types.MapType mt = (org.apache.fluss.types.MapType) t;
                        Map<Object, Object> out = new LinkedHashMap<>();
                        if (v instanceof Map) {
                            for (Map.Entry<String, Object> e : ((Map<String, Object>) v).entrySet()) {
                                out.put(
                                        value(e.getKey(), mt.getKeyType(), where + ".key"),
                                        value(e.getValue(), mt.getValueType(), where + "[" + e.getKey() + "]"));
                            }
                        } else if (v instanceof List) {
                            int i = 0;
                            for (Object o : (List<Object>) v) {
                                if (!(o instanceof Map)) {
                                    throw new IllegalArgumentException("MAP entries must be {\"key\",\"value\"} objects");
                                }
                                Map<String, Object> e = (Map<String, Object>) o;
                                out.put(
                                        value(e.get("key"), mt.getKeyType(), where + "[" + i + "].key"),
                                        value(e.get("value"), mt.getValueType(), where + "[" + i + "].value"));
                                i++;
                            }
                        } else {
                            throw new IllegalArgumentException("expected an object or array, got " + kind(v));
                        }
                        return Nested.newMap(out);
                    }
                case ROW:
                    return row(v, (RowType) t, where);
                default:
                    throw new IllegalArgumentException("unsupported type " + t);
            }
        } catch (ArithmeticException | java.time.format.DateTimeParseException | NumberFormatException e) {
            throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
        } catch (IllegalArgumentException e) {
            if (e.getMessage() != null && e.getMessage().startsWith(where)) {
                throw e;
            }
            throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
        }
    }

    static Object requireNum(Object v) {
        if (!(v instanceof JNum)) {
            throw new IllegalArgumentException("expected a number, got " + kind(v));
        }
        return v;
    }

    static double specialFloat(String s) {
        switch (s) {
            case "NaN":
                return Double.NaN;
            case "Infinity":
                return Double.POSITIVE_INFINITY;
            case "-Infinity":
                return Double.NEGATIVE_INFINITY;
            default:
                throw new IllegalArgumentException("expected a number, \"NaN\", \"Infinity\" or \"-Infinity\"");
        }
    }
}
