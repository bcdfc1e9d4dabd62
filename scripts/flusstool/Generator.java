package flusstool;

import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.metadata.PartitionInfo;
import org.apache.fluss.metadata.TableInfo;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.Decimal;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.row.TimestampLtz;
import org.apache.fluss.row.TimestampNtz;
import org.apache.fluss.types.DataField;
import org.apache.fluss.types.DataType;
import org.apache.fluss.types.DataTypeRoot;
import org.apache.fluss.types.RowType;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

import static flusstool.Main.*;
import static flusstool.Cli.*;
import static flusstool.Writers.*;

// ------------------------------------------------------------------
// deterministic row generator

/**
 * Generates row i of a table from (seed, i) alone. Key columns (primary key, a column named
 * "id") come from i so that upsert/delete address the same rows; partition columns take the
 * values of the table's existing partitions.
 */
final class Generator {
    static final long MS_PER_DAY = 86_400_000L;
    static final long SEC_1900 = -2_208_988_800L; // 1900-01-01T00:00:00Z
    static final long SEC_2200 = 7_258_118_400L; // 2200-01-01T00:00:00Z
    static final String[] STRING_PIECES = {
        "a", "b", "z", "Q", "0", "9", " ", "-", "_", ".", "\"", "\\", "/", "\n", "\t", "\r",
        "\u0000", "\u0001", "\u001f", "\u007f", "é", "ß", "Ω", "中", "文", "日本", "🙂", "🚀",
        "\u2028", "<", ">", "&", "'", "%", "ñ"
    };
    static final String[] CHAR_PIECES = {"a", "b", "c", "X", "1", " ", "é", "中", "\"", "\\"};
    static final String[] SPECIAL_STRINGS = {
        "",
        "plain ascii",
        "quote \" backslash \\ slash /",
        "ctl \b\f\n\r\t \u0000\u0001\u001f del \u007f",
        "ünïcödé Ελληνικά 中文 日本語 한국어",
        "astral 🙂🚀𝄞",
        "<script>&amp;</script> \u2028\u2029",
    };

    final RowType rt;
    final long seed;
    final Set<Integer> pk = new HashSet<>();
    final Set<Integer> idCols = new HashSet<>();
    final int[] partitionCols;
    final List<Map<String, String>> partitions = new ArrayList<>();
    final List<String> partitionKeys;

    Generator(Admin admin, TablePath path, TableInfo ti, long seed) throws Exception {
        this.rt = ti.getRowType();
        this.seed = seed;
        List<String> names = rt.getFieldNames();
        for (String k : ti.getPrimaryKeys()) {
            pk.add(names.indexOf(k));
        }
        for (int i = 0; i < names.size(); i++) {
            DataTypeRoot r = rt.getTypeAt(i).getTypeRoot();
            if (names.get(i).equalsIgnoreCase("id")
                    && (r == DataTypeRoot.TINYINT
                            || r == DataTypeRoot.SMALLINT
                            || r == DataTypeRoot.INTEGER
                            || r == DataTypeRoot.BIGINT
                            || r == DataTypeRoot.STRING
                            || r == DataTypeRoot.CHAR)) {
                idCols.add(i);
            }
        }
        partitionKeys = ti.getPartitionKeys();
        partitionCols = new int[partitionKeys.size()];
        for (int i = 0; i < partitionCols.length; i++) {
            partitionCols[i] = names.indexOf(partitionKeys.get(i));
        }
        if (ti.isPartitioned()) {
            List<PartitionInfo> parts =
                    new ArrayList<>(await(admin.listPartitionInfos(path), "list partitions of " + path));
            parts.sort((x, y) -> x.getPartitionName().compareTo(y.getPartitionName()));
            for (PartitionInfo p : parts) {
                partitions.add(p.getPartitionSpec().getSpecMap());
            }
        }
    }

    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    GenericRow row(long i) {
        SplittableRandom rnd = new SplittableRandom(mix(seed * 0x9E3779B97F4A7C15L + i));
        List<DataField> fields = rt.getFields();
        GenericRow row = new GenericRow(fields.size());
        for (int c = 0; c < fields.size(); c++) {
            DataType t = fields.get(c).getType();
            Object v;
            if (pk.contains(c) || idCols.contains(c)) {
                v = keyValue(t, i);
            } else {
                v = value(t, rnd, i, c);
            }
            row.setField(c, v);
        }
        if (partitionCols.length > 0) {
            Map<String, String> spec;
            if (!partitions.isEmpty()) {
                spec = partitions.get((int) Math.floorMod(i, (long) partitions.size()));
            } else {
                spec = new HashMap<>();
                for (String k : partitionKeys) {
                    spec.put(k, "p" + Math.floorMod(i, 3L));
                }
            }
            for (int k = 0; k < partitionCols.length; k++) {
                int c = partitionCols[k];
                row.setField(c, partitionValue(rt.getTypeAt(c), spec.get(partitionKeys.get(k)), partitionKeys.get(k)));
            }
        }
        return row;
    }

    static Object partitionValue(DataType t, String s, String key) {
        switch (t.getTypeRoot()) {
            case CHAR:
            case STRING:
                return BinaryString.fromString(s);
            case BOOLEAN:
                return Boolean.parseBoolean(s);
            case TINYINT:
                return Byte.parseByte(s);
            case SMALLINT:
                return Short.parseShort(s);
            case INTEGER:
                return Integer.parseInt(s);
            case BIGINT:
                return Long.parseLong(s);
            case DATE:
                return (int) LocalDate.parse(s).toEpochDay();
            default:
                throw new ToolException(
                        "cannot generate values for partition column " + key + " of type " + t
                                + "; write rows with --file instead");
        }
    }

    /** Key columns: a value that depends on i only and differs for different i. */
    static Object keyValue(DataType t, long i) {
        switch (t.getTypeRoot()) {
            case TINYINT:
                return (byte) i;
            case SMALLINT:
                return (short) i;
            case INTEGER:
                return (int) i;
            case BIGINT:
                return i;
            case CHAR:
            case STRING:
                return BinaryString.fromString("k" + i);
            case BYTES:
                return ("k" + i).getBytes(StandardCharsets.UTF_8);
            case DATE:
                return (int) i;
            case DECIMAL:
                {
                    int p = org.apache.fluss.types.DataTypeChecks.getPrecision(t);
                    int s = org.apache.fluss.types.DataTypeChecks.getScale(t);
                    return Decimal.fromBigDecimal(new BigDecimal(BigInteger.valueOf(i), 0).setScale(s), p, s);
                }
            case TIMESTAMP_WITHOUT_TIME_ZONE:
                return TimestampNtz.fromMillis(i * 1000);
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                return TimestampLtz.fromEpochMillis(i * 1000);
            default:
                return value(t, new SplittableRandom(mix(i)), i, 0);
        }
    }

    static <T> T pick(SplittableRandom rnd, T[] values) {
        return values[rnd.nextInt(values.length)];
    }

    /** A random value of type t; nulls (if nullable) and special values now and then. */
    static Object value(DataType t, SplittableRandom rnd, long row, int col) {
        if (t.isNullable() && rnd.nextInt(10) == 0) {
            return null;
        }
        boolean special = rnd.nextInt(5) == 0;
        switch (t.getTypeRoot()) {
            case BOOLEAN:
                return rnd.nextBoolean();
            case TINYINT:
                return special ? pick(rnd, new Byte[] {Byte.MIN_VALUE, Byte.MAX_VALUE, 0, -1}) : (byte) rnd.nextInt();
            case SMALLINT:
                return special
                        ? pick(rnd, new Short[] {Short.MIN_VALUE, Short.MAX_VALUE, 0, -1})
                        : (short) rnd.nextInt();
            case INTEGER:
                return special
                        ? pick(rnd, new Integer[] {Integer.MIN_VALUE, Integer.MAX_VALUE, 0, -1})
                        : rnd.nextInt();
            case BIGINT:
                return special
                        ? pick(
                                rnd,
                                new Long[] {
                                    Long.MIN_VALUE, Long.MAX_VALUE, 0L, -1L, (1L << 53) + 1, -(1L << 53) - 1
                                })
                        : rnd.nextLong();
            case FLOAT:
                if (special) {
                    return pick(
                            rnd,
                            new Float[] {
                                Float.NaN,
                                Float.POSITIVE_INFINITY,
                                Float.NEGATIVE_INFINITY,
                                -0.0f,
                                0.0f,
                                Float.MIN_VALUE,
                                Float.MIN_NORMAL,
                                Float.MAX_VALUE,
                                -Float.MAX_VALUE,
                                0.1f,
                                1e-7f,
                                1e21f,
                                1e20f,
                                16777217f,
                                1.0f
                            });
                }
                if (rnd.nextInt(4) == 0) {
                    return Float.intBitsToFloat(rnd.nextInt());
                }
                return (float) ((rnd.nextDouble() * 2 - 1) * Math.pow(10, rnd.nextInt(-12, 25)));
            case DOUBLE:
                if (special) {
                    return pick(
                            rnd,
                            new Double[] {
                                Double.NaN,
                                Double.POSITIVE_INFINITY,
                                Double.NEGATIVE_INFINITY,
                                -0.0,
                                0.0,
                                Double.MIN_VALUE,
                                Double.MIN_NORMAL,
                                Double.MAX_VALUE,
                                -Double.MAX_VALUE,
                                0.1,
                                1e-7,
                                1e21,
                                1e20,
                                1e23,
                                9007199254740993.0,
                                1.0 / 3,
                                1.0
                            });
                }
                if (rnd.nextInt(4) == 0) {
                    return Double.longBitsToDouble(rnd.nextLong());
                }
                return (rnd.nextDouble() * 2 - 1) * Math.pow(10, rnd.nextInt(-30, 30));
            case DECIMAL:
                {
                    int p = org.apache.fluss.types.DataTypeChecks.getPrecision(t);
                    int s = org.apache.fluss.types.DataTypeChecks.getScale(t);
                    BigInteger max = BigInteger.TEN.pow(p).subtract(BigInteger.ONE);
                    BigInteger unscaled;
                    if (special) {
                        unscaled =
                                pick(
                                        rnd,
                                        new BigInteger[] {
                                            max, max.negate(), BigInteger.ZERO, BigInteger.ONE, BigInteger.ONE.negate()
                                        });
                    } else {
                        int digits = 1 + rnd.nextInt(p);
                        StringBuilder sb = new StringBuilder();
                        for (int k = 0; k < digits; k++) {
                            sb.append((char) ('0' + rnd.nextInt(10)));
                        }
                        unscaled = new BigInteger(sb.toString());
                        if (rnd.nextBoolean()) {
                            unscaled = unscaled.negate();
                        }
                    }
                    return Decimal.fromBigDecimal(new BigDecimal(unscaled, s), p, s);
                }
            case CHAR:
                {
                    int n = org.apache.fluss.types.DataTypeChecks.getLength(t);
                    StringBuilder sb = new StringBuilder();
                    // at most n UTF-8 bytes: the INDEXED format stores CHAR(n) in n bytes
                    int len = rnd.nextInt(n + 1);
                    int bytes = 0;
                    for (int k = 0; k < len; k++) {
                        String piece = pick(rnd, CHAR_PIECES);
                        int pb = piece.getBytes(StandardCharsets.UTF_8).length;
                        if (bytes + pb > n) {
                            break;
                        }
                        sb.append(piece);
                        bytes += pb;
                    }
                    return BinaryString.fromString(sb.toString());
                }
            case STRING:
                {
                    if (special) {
                        return BinaryString.fromString(pick(rnd, SPECIAL_STRINGS));
                    }
                    StringBuilder sb = new StringBuilder();
                    int len = rnd.nextInt(16);
                    for (int k = 0; k < len; k++) {
                        sb.append(pick(rnd, STRING_PIECES));
                    }
                    return BinaryString.fromString(sb.toString());
                }
            case BINARY:
                {
                    byte[] b = new byte[org.apache.fluss.types.DataTypeChecks.getLength(t)];
                    if (special) {
                        Arrays.fill(b, rnd.nextBoolean() ? (byte) 0 : (byte) 0xff);
                    } else {
                        rnd.nextBytes(b);
                    }
                    return b;
                }
            case BYTES:
                {
                    byte[] b;
                    if (special) {
                        if (rnd.nextBoolean()) {
                            b = new byte[0];
                        } else {
                            b = new byte[256];
                            for (int k = 0; k < 256; k++) {
                                b[k] = (byte) k;
                            }
                        }
                    } else {
                        b = new byte[rnd.nextInt(24)];
                        rnd.nextBytes(b);
                    }
                    return b;
                }
            case DATE:
                if (special) {
                    return pick(
                            rnd,
                            new Integer[] {
                                (int) LocalDate.of(1, 1, 1).toEpochDay(),
                                (int) LocalDate.of(9999, 12, 31).toEpochDay(),
                                0,
                                -1,
                                (int) LocalDate.of(2000, 2, 29).toEpochDay()
                            });
                }
                return rnd.nextInt((int) (SEC_1900 / 86400), (int) (SEC_2200 / 86400));
            case TIME_WITHOUT_TIME_ZONE:
                {
                    int p = org.apache.fluss.types.DataTypeChecks.getPrecision(t);
                    int ms = special ? pick(rnd, new Integer[] {0, 86_399_999, 43_200_000}) : rnd.nextInt(86_400_000);
                    return (int) truncMillis(ms, p);
                }
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                {
                    int p = org.apache.fluss.types.DataTypeChecks.getPrecision(t);
                    long sec;
                    long nano;
                    if (special) {
                        long[][] cases =
                                p <= 6
                                        ? new long[][] {
                                            {0, 0},
                                            {-1, 0},
                                            {-62_135_596_800L, 0}, // 0001-01-01T00:00:00
                                            {253_402_300_799L, 999_999_999L}, // 9999-12-31T23:59:59.999..
                                            {951_782_400L, 123_456_789L} // 2000-02-29
                                        }
                                        : new long[][] {
                                            {0, 0},
                                            {-1, 0},
                                            {-9_214_646_400L, 0}, // 1678-01-01T00:00:00
                                            {9_214_646_399L, 999_999_999L}, // 2261-12-31T23:59:59.9..
                                            {951_782_400L, 123_456_789L}
                                        };
                        long[] cs = cases[rnd.nextInt(cases.length)];
                        sec = cs[0];
                        nano = cs[1];
                    } else {
                        sec = rnd.nextLong(SEC_1900, SEC_2200);
                        nano = rnd.nextInt(1_000_000_000);
                    }
                    nano = truncNanos(nano, p);
                    if (sec < 0 && p > 3) {
                        // Fluss's Java Arrow reader mishandles sub-millisecond digits
                        // before 1970 (negative nano-of-millisecond); keep those to ms.
                        nano = nano / 1_000_000 * 1_000_000;
                    }
                    long millis = sec * 1000 + nano / 1_000_000;
                    int nanoOfMilli = (int) (nano % 1_000_000);
                    if (t.getTypeRoot() == DataTypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE) {
                        return TimestampNtz.fromMillis(millis, nanoOfMilli);
                    }
                    return TimestampLtz.fromEpochMillis(millis, nanoOfMilli);
                }
            case ARRAY:
                {
                    DataType et = ((org.apache.fluss.types.ArrayType) t).getElementType();
                    int n = special ? 0 : rnd.nextInt(5);
                    Object[] vals = new Object[n];
                    for (int k = 0; k < n; k++) {
                        vals[k] = value(et, rnd, row, col);
                    }
                    return Nested.newArray(vals);
                }
            case MAP:
                {
                    org.apache.fluss.types.MapType mt = (org.apache.fluss.types.MapType) t;
                    int n = special ? 0 : rnd.nextInt(4);
                    Map<Object, Object> m = new LinkedHashMap<>();
                    Set<String> seen = new HashSet<>();
                    DataType kt = mt.getKeyType().copy(false);
                    RowType keyHolder = RowType.of(kt);
                    StringBuilder sb = new StringBuilder();
                    for (int k = 0, tries = 0; k < n && tries < 20; tries++) {
                        Object key = value(kt, rnd, row, col);
                        sb.setLength(0);
                        Renderer.rowOf(sb, keyHolder, GenericRow.of(key));
                        if (!seen.add(sb.toString())) {
                            continue;
                        }
                        m.put(key, value(mt.getValueType(), rnd, row, col));
                        k++;
                    }
                    return Nested.newMap(m);
                }
            case ROW:
                {
                    RowType nested = (RowType) t;
                    GenericRow r = new GenericRow(nested.getFieldCount());
                    for (int k = 0; k < nested.getFieldCount(); k++) {
                        r.setField(k, value(nested.getTypeAt(k), rnd, row, col));
                    }
                    return r;
                }
            default:
                throw new ToolException("cannot generate values of type " + t);
        }
    }

    static long truncMillis(long ms, int p) {
        if (p >= 3) {
            return ms;
        }
        long unit = p == 0 ? 1000 : p == 1 ? 100 : 10;
        return ms / unit * unit;
    }

    static long truncNanos(long nano, int p) {
        long unit = 1;
        for (int k = p; k < 9; k++) {
            unit *= 10;
        }
        return nano / unit * unit;
    }
}
