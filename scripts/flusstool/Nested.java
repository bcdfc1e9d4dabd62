package flusstool;

import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.Decimal;
import org.apache.fluss.row.InternalRow;
import org.apache.fluss.row.TimestampLtz;
import org.apache.fluss.row.TimestampNtz;
import org.apache.fluss.types.DataType;
import org.apache.fluss.types.RowType;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static flusstool.Main.*;
import static flusstool.Cli.*;
import static flusstool.Tables.*;

// ------------------------------------------------------------------
// reflection bridge to the classes and methods that Fluss 0.8 (and 0.7) lack

final class Nested {
    static final boolean AVAILABLE;
    static final String WHY;
    static Constructor<?> genericArray;
    static Constructor<?> genericMap;
    static Method rowGetArray;
    static Method rowGetMap;
    static Method rowGetRow;
    static Method dgIsNullAt;
    static Method dgGetBoolean;
    static Method dgGetByte;
    static Method dgGetShort;
    static Method dgGetInt;
    static Method dgGetLong;
    static Method dgGetFloat;
    static Method dgGetDouble;
    static Method dgGetChar;
    static Method dgGetString;
    static Method dgGetDecimal;
    static Method dgGetTimestampNtz;
    static Method dgGetTimestampLtz;
    static Method dgGetBinary;
    static Method dgGetBytes;
    static Method dgGetArray;
    static Method dgGetMap;
    static Method dgGetRow;
    static Method arraySize;
    static Method mapKeyArray;
    static Method mapValueArray;

    static {
        boolean ok = false;
        String why = null;
        try {
            Class<?> ga = Class.forName("org.apache.fluss.row.GenericArray");
            Class<?> gm = Class.forName("org.apache.fluss.row.GenericMap");
            Class<?> dg = Class.forName("org.apache.fluss.row.DataGetters");
            Class<?> ia = Class.forName("org.apache.fluss.row.InternalArray");
            Class<?> im = Class.forName("org.apache.fluss.row.InternalMap");
            genericArray = ga.getConstructor(Object[].class);
            genericMap = gm.getConstructor(Map.class);
            rowGetArray = InternalRow.class.getMethod("getArray", int.class);
            rowGetMap = InternalRow.class.getMethod("getMap", int.class);
            rowGetRow = InternalRow.class.getMethod("getRow", int.class, int.class);
            dgIsNullAt = dg.getMethod("isNullAt", int.class);
            dgGetBoolean = dg.getMethod("getBoolean", int.class);
            dgGetByte = dg.getMethod("getByte", int.class);
            dgGetShort = dg.getMethod("getShort", int.class);
            dgGetInt = dg.getMethod("getInt", int.class);
            dgGetLong = dg.getMethod("getLong", int.class);
            dgGetFloat = dg.getMethod("getFloat", int.class);
            dgGetDouble = dg.getMethod("getDouble", int.class);
            dgGetChar = dg.getMethod("getChar", int.class, int.class);
            dgGetString = dg.getMethod("getString", int.class);
            dgGetDecimal = dg.getMethod("getDecimal", int.class, int.class, int.class);
            dgGetTimestampNtz = dg.getMethod("getTimestampNtz", int.class, int.class);
            dgGetTimestampLtz = dg.getMethod("getTimestampLtz", int.class, int.class);
            dgGetBinary = dg.getMethod("getBinary", int.class, int.class);
            dgGetBytes = dg.getMethod("getBytes", int.class);
            dgGetArray = dg.getMethod("getArray", int.class);
            dgGetMap = dg.getMethod("getMap", int.class);
            dgGetRow = dg.getMethod("getRow", int.class, int.class);
            arraySize = ia.getMethod("size");
            mapKeyArray = im.getMethod("keyArray");
            mapValueArray = im.getMethod("valueArray");
            ok = true;
        } catch (ReflectiveOperationException e) {
            why = e.toString();
        }
        AVAILABLE = ok;
        WHY = why;
    }

    static void require(String what) {
        if (!AVAILABLE) {
            throw new ToolException(
                    what + " needs ARRAY/MAP/ROW support from Fluss client 0.9 or later ("
                            + WHY + ")");
        }
    }

    /**
     * Fails when the table has ARRAY, MAP or ROW columns and this client (before
     * 0.9) cannot write them: it has no GenericArray/GenericMap, and the 0.7
     * writer rejects them anyway ("not supported in indexedRow").
     */
    static void requireWritable(TablePath path, RowType rt) {
        if (AVAILABLE) {
            return;
        }
        List<String> nested = new ArrayList<>();
        for (int i = 0; i < rt.getFieldCount(); i++) {
            String root = rt.getTypeAt(i).getTypeRoot().name();
            if (root.equals("ARRAY") || root.equals("MAP") || root.equals("ROW")) {
                nested.add(rt.getFieldNames().get(i));
            }
        }
        if (!nested.isEmpty()) {
            throw new ToolException(
                    path + " has ARRAY/MAP/ROW columns " + nested
                            + ", which this Fluss client cannot write (it has no"
                            + " GenericArray/GenericMap, and the 0.7 writer fails with \"not"
                            + " supported in indexedRow\"): writing them needs Fluss 0.9 or later");
        }
    }

    static Object invoke(Method m, Object target, Object... args) {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            Throwable c = e.getCause();
            if (c instanceof RuntimeException) {
                throw (RuntimeException) c;
            }
            throw new ToolException(describe(c), c);
        } catch (IllegalAccessException e) {
            throw new ToolException(e.toString(), e);
        }
    }

    static Object newArray(Object[] values) {
        require("an ARRAY value");
        try {
            return genericArray.newInstance((Object) values);
        } catch (ReflectiveOperationException e) {
            throw new ToolException(describe(e), e);
        }
    }

    static Object newMap(Map<Object, Object> values) {
        require("a MAP value");
        try {
            return genericMap.newInstance(values);
        } catch (ReflectiveOperationException e) {
            throw new ToolException(describe(e), e);
        }
    }

    /**
     * admin.alterTable(path, changes, false), which Fluss 0.7 lacks (it came
     * in 0.8, and adding columns in 0.9): called through reflection so that the
     * tool compiles against every client.
     */
    static CompletableFuture<?> alterTable(Admin admin, TablePath path, List<Object> changes) {
        return (CompletableFuture<?>) invoke(alterTableMethod(), admin, path, changes, false);
    }

    static Method alterTableMethod() {
        try {
            return Admin.class.getMethod("alterTable", TablePath.class, List.class, boolean.class);
        } catch (NoSuchMethodException e) {
            throw new ToolException(
                    "this Fluss client has no Admin.alterTable(path, changes, ignoreIfNotExists)"
                            + " (Fluss 0.7 and older): adding columns needs Fluss 0.9 or later");
        }
    }

    static Object addColumnChange(String name, DataType type, String comment) {
        try {
            Class<?> tc = Class.forName("org.apache.fluss.metadata.TableChange");
            Class<?> pos = Class.forName("org.apache.fluss.metadata.TableChange$ColumnPosition");
            Object last = pos.getMethod("last").invoke(null);
            return tc.getMethod("addColumn", String.class, DataType.class, String.class, pos)
                    .invoke(null, name, type, comment, last);
        } catch (ClassNotFoundException | NoSuchMethodException e) {
            throw new ToolException("this Fluss client has no TableChange.addColumn (needs 0.9 or later)");
        } catch (ReflectiveOperationException e) {
            throw new ToolException(describe(e), e);
        }
    }
}

/** Uniform read access to a row (direct calls) or an array (reflection). */
interface Src {
    boolean isNullAt(int i);

    boolean getBoolean(int i);

    byte getByte(int i);

    short getShort(int i);

    int getInt(int i);

    long getLong(int i);

    float getFloat(int i);

    double getDouble(int i);

    BinaryString getChar(int i, int n);

    BinaryString getString(int i);

    Decimal getDecimal(int i, int p, int s);

    TimestampNtz getTimestampNtz(int i, int p);

    TimestampLtz getTimestampLtz(int i, int p);

    byte[] getBinary(int i, int n);

    byte[] getBytes(int i);

    Object getArray(int i);

    Object getMap(int i);

    InternalRow getRow(int i, int n);
}

final class RowSrc implements Src {
    final InternalRow r;

    RowSrc(InternalRow r) {
        this.r = r;
    }

    public boolean isNullAt(int i) {
        return r.isNullAt(i);
    }

    public boolean getBoolean(int i) {
        return r.getBoolean(i);
    }

    public byte getByte(int i) {
        return r.getByte(i);
    }

    public short getShort(int i) {
        return r.getShort(i);
    }

    public int getInt(int i) {
        return r.getInt(i);
    }

    public long getLong(int i) {
        return r.getLong(i);
    }

    public float getFloat(int i) {
        return r.getFloat(i);
    }

    public double getDouble(int i) {
        return r.getDouble(i);
    }

    public BinaryString getChar(int i, int n) {
        return r.getChar(i, n);
    }

    public BinaryString getString(int i) {
        return r.getString(i);
    }

    public Decimal getDecimal(int i, int p, int s) {
        return r.getDecimal(i, p, s);
    }

    public TimestampNtz getTimestampNtz(int i, int p) {
        return r.getTimestampNtz(i, p);
    }

    public TimestampLtz getTimestampLtz(int i, int p) {
        return r.getTimestampLtz(i, p);
    }

    public byte[] getBinary(int i, int n) {
        return r.getBinary(i, n);
    }

    public byte[] getBytes(int i) {
        return r.getBytes(i);
    }

    public Object getArray(int i) {
        Nested.require("reading an ARRAY");
        return Nested.invoke(Nested.rowGetArray, r, i);
    }

    public Object getMap(int i) {
        Nested.require("reading a MAP");
        return Nested.invoke(Nested.rowGetMap, r, i);
    }

    public InternalRow getRow(int i, int n) {
        Nested.require("reading a ROW");
        return (InternalRow) Nested.invoke(Nested.rowGetRow, r, i, n);
    }
}

final class ArraySrc implements Src {
    final Object a;

    ArraySrc(Object a) {
        this.a = a;
    }

    int size() {
        return (Integer) Nested.invoke(Nested.arraySize, a);
    }

    public boolean isNullAt(int i) {
        return (Boolean) Nested.invoke(Nested.dgIsNullAt, a, i);
    }

    public boolean getBoolean(int i) {
        return (Boolean) Nested.invoke(Nested.dgGetBoolean, a, i);
    }

    public byte getByte(int i) {
        return (Byte) Nested.invoke(Nested.dgGetByte, a, i);
    }

    public short getShort(int i) {
        return (Short) Nested.invoke(Nested.dgGetShort, a, i);
    }

    public int getInt(int i) {
        return (Integer) Nested.invoke(Nested.dgGetInt, a, i);
    }

    public long getLong(int i) {
        return (Long) Nested.invoke(Nested.dgGetLong, a, i);
    }

    public float getFloat(int i) {
        return (Float) Nested.invoke(Nested.dgGetFloat, a, i);
    }

    public double getDouble(int i) {
        return (Double) Nested.invoke(Nested.dgGetDouble, a, i);
    }

    public BinaryString getChar(int i, int n) {
        return (BinaryString) Nested.invoke(Nested.dgGetChar, a, i, n);
    }

    public BinaryString getString(int i) {
        return (BinaryString) Nested.invoke(Nested.dgGetString, a, i);
    }

    public Decimal getDecimal(int i, int p, int s) {
        return (Decimal) Nested.invoke(Nested.dgGetDecimal, a, i, p, s);
    }

    public TimestampNtz getTimestampNtz(int i, int p) {
        return (TimestampNtz) Nested.invoke(Nested.dgGetTimestampNtz, a, i, p);
    }

    public TimestampLtz getTimestampLtz(int i, int p) {
        return (TimestampLtz) Nested.invoke(Nested.dgGetTimestampLtz, a, i, p);
    }

    public byte[] getBinary(int i, int n) {
        return (byte[]) Nested.invoke(Nested.dgGetBinary, a, i, n);
    }

    public byte[] getBytes(int i) {
        return (byte[]) Nested.invoke(Nested.dgGetBytes, a, i);
    }

    public Object getArray(int i) {
        return Nested.invoke(Nested.dgGetArray, a, i);
    }

    public Object getMap(int i) {
        return Nested.invoke(Nested.dgGetMap, a, i);
    }

    public InternalRow getRow(int i, int n) {
        return (InternalRow) Nested.invoke(Nested.dgGetRow, a, i, n);
    }
}
