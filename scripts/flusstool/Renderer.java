package flusstool;

import org.apache.fluss.row.InternalRow;
import org.apache.fluss.row.TimestampLtz;
import org.apache.fluss.row.TimestampNtz;
import org.apache.fluss.types.DataField;
import org.apache.fluss.types.DataType;
import org.apache.fluss.types.DataTypeRoot;
import org.apache.fluss.types.RowType;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;

import static flusstool.Cli.*;

// ------------------------------------------------------------------
// canonical JSON (docs/json-mapping.md): rendering rows read from Fluss

final class Renderer {
    final RowType rt;

    Renderer(RowType rt) {
        this.rt = rt;
    }

    void row(StringBuilder sb, InternalRow row) {
        rowOf(sb, rt, row);
    }

    static void rowOf(StringBuilder sb, RowType rt, InternalRow row) {
        RowSrc src = new RowSrc(row);
        List<DataField> fields = rt.getFields();
        sb.append('{');
        for (int i = 0; i < fields.size(); i++) {
            if (i > 0) {
                sb.append(',');
            }
            DataField f = fields.get(i);
            Json.string(sb, f.getName());
            sb.append(':');
            value(sb, src, i, f.getType());
        }
        sb.append('}');
    }

    static void value(StringBuilder sb, Src src, int i, DataType t) {
        if (src.isNullAt(i)) {
            sb.append("null");
            return;
        }
        switch (t.getTypeRoot()) {
            case BOOLEAN:
                sb.append(src.getBoolean(i) ? "true" : "false");
                break;
            case TINYINT:
                sb.append(src.getByte(i));
                break;
            case SMALLINT:
                sb.append(src.getShort(i));
                break;
            case INTEGER:
                sb.append(src.getInt(i));
                break;
            case BIGINT:
                sb.append(src.getLong(i));
                break;
            case FLOAT:
                Json.floatValue(sb, src.getFloat(i));
                break;
            case DOUBLE:
                Json.doubleValue(sb, src.getDouble(i));
                break;
            case DECIMAL:
                {
                    int p = org.apache.fluss.types.DataTypeChecks.getPrecision(t);
                    int s = org.apache.fluss.types.DataTypeChecks.getScale(t);
                    Json.decimal(sb, src.getDecimal(i, p, s).toBigDecimal(), s);
                    break;
                }
            case CHAR:
                Json.string(sb, src.getChar(i, org.apache.fluss.types.DataTypeChecks.getLength(t)).toString());
                break;
            case STRING:
                Json.string(sb, src.getString(i).toString());
                break;
            case BINARY:
                sb.append('"')
                        .append(
                                Base64.getEncoder()
                                        .encodeToString(
                                                src.getBinary(
                                                        i,
                                                        org.apache.fluss.types.DataTypeChecks.getLength(t))))
                        .append('"');
                break;
            case BYTES:
                sb.append('"').append(Base64.getEncoder().encodeToString(src.getBytes(i))).append('"');
                break;
            case DATE:
                sb.append('"');
                Json.date(sb, src.getInt(i));
                sb.append('"');
                break;
            case TIME_WITHOUT_TIME_ZONE:
                sb.append('"');
                Json.time(sb, src.getInt(i), org.apache.fluss.types.DataTypeChecks.getPrecision(t));
                sb.append('"');
                break;
            case TIMESTAMP_WITHOUT_TIME_ZONE:
                {
                    int p = org.apache.fluss.types.DataTypeChecks.getPrecision(t);
                    TimestampNtz ts = src.getTimestampNtz(i, p);
                    sb.append('"');
                    Json.timestamp(sb, ts.getMillisecond(), ts.getNanoOfMillisecond(), p);
                    sb.append('"');
                    break;
                }
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                {
                    int p = org.apache.fluss.types.DataTypeChecks.getPrecision(t);
                    TimestampLtz ts = src.getTimestampLtz(i, p);
                    sb.append('"');
                    Json.timestamp(sb, ts.getEpochMillisecond(), ts.getNanoOfMillisecond(), p);
                    sb.append("Z\"");
                    break;
                }
            case ARRAY:
                {
                    DataType et = ((org.apache.fluss.types.ArrayType) t).getElementType();
                    array(sb, src.getArray(i), et);
                    break;
                }
            case MAP:
                {
                    org.apache.fluss.types.MapType mt = (org.apache.fluss.types.MapType) t;
                    map(sb, src.getMap(i), mt.getKeyType(), mt.getValueType());
                    break;
                }
            case ROW:
                {
                    RowType nested = (RowType) t;
                    rowOf(sb, nested, src.getRow(i, nested.getFieldCount()));
                    break;
                }
            default:
                throw new ToolException("unsupported type " + t);
        }
    }

    static void array(StringBuilder sb, Object arr, DataType et) {
        ArraySrc a = new ArraySrc(arr);
        int n = a.size();
        sb.append('[');
        for (int j = 0; j < n; j++) {
            if (j > 0) {
                sb.append(',');
            }
            value(sb, a, j, et);
        }
        sb.append(']');
    }

    /**
     * MAP entries are written sorted by the canonical JSON text of their key, compared as
     * UTF-8 bytes (stable, so equal keys keep their stored order). The Java client hands maps
     * back in hash order, so storage order cannot be the canonical one.
     */
    static void map(StringBuilder sb, Object m, DataType kt, DataType vt) {
        ArraySrc keys = new ArraySrc(Nested.invoke(Nested.mapKeyArray, m));
        ArraySrc values = new ArraySrc(Nested.invoke(Nested.mapValueArray, m));
        int n = keys.size();
        boolean stringKeys =
                kt.getTypeRoot() == DataTypeRoot.STRING || kt.getTypeRoot() == DataTypeRoot.CHAR;
        List<byte[]> keyBytes = new ArrayList<>(n);
        List<String> keyTexts = new ArrayList<>(n);
        List<String> valueTexts = new ArrayList<>(n);
        StringBuilder tmp = new StringBuilder();
        for (int j = 0; j < n; j++) {
            if (keys.isNullAt(j)) {
                // JSON object keys cannot be null; Fluss map keys are NOT NULL.
                throw new ToolException("MAP with a null key");
            }
            tmp.setLength(0);
            value(tmp, keys, j, kt);
            String k = tmp.toString();
            keyTexts.add(k);
            keyBytes.add(k.getBytes(StandardCharsets.UTF_8));
            tmp.setLength(0);
            value(tmp, values, j, vt);
            valueTexts.add(tmp.toString());
        }
        Integer[] order = new Integer[n];
        for (int j = 0; j < n; j++) {
            order[j] = j;
        }
        Arrays.sort(order, (x, y) -> Arrays.compareUnsigned(keyBytes.get(x), keyBytes.get(y)));
        sb.append(stringKeys ? '{' : '[');
        for (int j = 0; j < n; j++) {
            if (j > 0) {
                sb.append(',');
            }
            int e = order[j];
            if (stringKeys) {
                sb.append(keyTexts.get(e)).append(':').append(valueTexts.get(e));
            } else {
                sb.append("{\"key\":")
                        .append(keyTexts.get(e))
                        .append(",\"value\":")
                        .append(valueTexts.get(e))
                        .append('}');
            }
        }
        sb.append(stringKeys ? '}' : ']');
    }
}
