package flusstool;

import org.apache.fluss.client.Connection;
import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.client.table.scanner.ScanRecord;
import org.apache.fluss.client.table.scanner.log.LogScanner;
import org.apache.fluss.client.table.scanner.log.ScanRecords;
import org.apache.fluss.metadata.TableBucket;
import org.apache.fluss.metadata.TableInfo;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.record.ChangeType;
import org.apache.fluss.row.InternalRow;
import org.apache.fluss.types.DataField;
import org.apache.fluss.types.RowType;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static flusstool.Cli.*;
import static flusstool.Main.*;
import static flusstool.Readers.*;
import static flusstool.Tables.*;

/**
 * The state command: the current rows of a primary-key table, replayed from
 * its whole changelog (earliest to latest offset of every bucket) with the
 * official client's log scanner: +I and +U rows replace the key's row, -D
 * rows delete it, -U rows are ignored. It reads no KV snapshot, so it checks
 * `fluss-iggy fluss scan --snapshot` independently (the table's log must
 * still hold every change).
 *
 * <p>Output, one line per live key: {"partition":P|null,"bucket":B,"row":{..}}
 * with the row in the canonical JSON mapping (projected with --columns),
 * ordered by partition name, then by the UTF-8 bytes of the canonical JSON
 * object of the primary-key columns ({"id":3} before {"id":30} before
 * {"id":4}).
 */
final class State {
    private State() {}

    /** A live key's line. */
    record Entry(String line) {}

    static int state(Args a, Connection conn, Admin admin, PrintStream out) throws Exception {
        TablePath path = tablePath(a.positional(0, "DB.TABLE"));
        List<String> columns = a.list("columns");
        String onlyPartition = a.get("partition");
        a.done(1);
        requireTable(admin, path);
        try (Table table = openTable(conn, path)) {
            TableInfo ti = table.getTableInfo();
            if (ti.getPrimaryKeys().isEmpty()) {
                throw new UsageException(path + " has no primary key");
            }
            RowType rt = ti.getRowType();
            int[] pk = indices(rt, ti.getPrimaryKeys(), path);
            int[] cols = indices(rt, columns == null ? rt.getFieldNames() : columns, path);
            List<Target> all = targets(admin, path, ti, onlyPartition);
            String partition = null;
            boolean first = true;
            Map<String, Entry> rows = newRows();
            for (Target t : all) {
                if (!first && !java.util.Objects.equals(partition, t.partition())) {
                    print(rows, out);
                    rows = newRows();
                }
                first = false;
                partition = t.partition();
                if (t.end() > t.earliest()) {
                    replay(table, ti, rt, pk, cols, t, rows, path);
                }
            }
            print(rows, out);
        }
        return 0;
    }

    /** Rows by key JSON, iterated in the order of the key's UTF-8 bytes. */
    static Map<String, Entry> newRows() {
        return new TreeMap<>(
                (x, y) ->
                        Arrays.compareUnsigned(
                                x.getBytes(StandardCharsets.UTF_8), y.getBytes(StandardCharsets.UTF_8)));
    }

    static void print(Map<String, Entry> rows, PrintStream out) {
        for (Entry e : rows.values()) {
            out.append(e.line()).append('\n');
        }
    }

    static int[] indices(RowType rt, List<String> names, TablePath path) {
        int[] out = new int[names.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = rt.getFieldIndex(names.get(i));
            if (out[i] < 0) {
                throw new UsageException(path + " has no column '" + names.get(i) + "'");
            }
        }
        return out;
    }

    /** Renders the fields idx of row as a canonical JSON object. */
    static void object(StringBuilder sb, RowType rt, int[] idx, InternalRow row) {
        RowSrc src = new RowSrc(row);
        List<DataField> fields = rt.getFields();
        sb.append('{');
        for (int j = 0; j < idx.length; j++) {
            if (j > 0) {
                sb.append(',');
            }
            DataField f = fields.get(idx[j]);
            Json.string(sb, f.getName());
            sb.append(':');
            Renderer.value(sb, src, idx[j], f.getType());
        }
        sb.append('}');
    }

    /** Applies the changelog of one bucket, [earliest, end), to rows. */
    static void replay(Table table, TableInfo ti, RowType rt, int[] pk, int[] cols, Target t,
            Map<String, Entry> rows, TablePath path) throws Exception {
        TableBucket tb = tableBucket(ti.getTableId(), t);
        StringBuilder sb = new StringBuilder(1024);
        try (LogScanner s = newScanner(table, null)) {
            subscribe(s, t);
            long next = t.earliest();
            long lastProgress = System.nanoTime();
            while (next < t.end()) {
                ScanRecords recs = s.poll(Duration.ofMillis(200));
                long pos = position(s, tb);
                if (pos > next) {
                    next = pos;
                    lastProgress = System.nanoTime();
                }
                if (recs.isEmpty()) {
                    if (System.nanoTime() - lastProgress > TimeUnit.SECONDS.toNanos(timeoutSeconds)) {
                        throw new ToolException("state " + path + " " + t.describe() + ": stuck at offset "
                                + next + ", end offset " + t.end());
                    }
                    continue;
                }
                lastProgress = System.nanoTime();
                for (ScanRecord r : recs) {
                    long off = r.logOffset();
                    if (off >= t.end()) {
                        continue;
                    }
                    next = Math.max(next, off + 1);
                    apply(r, rt, pk, cols, t, rows, sb);
                }
            }
        }
    }

    static void apply(ScanRecord r, RowType rt, int[] pk, int[] cols, Target t,
            Map<String, Entry> rows, StringBuilder sb) {
        ChangeType ct = r.getChangeType();
        if (ct == ChangeType.UPDATE_BEFORE) {
            return;
        }
        sb.setLength(0);
        object(sb, rt, pk, r.getRow());
        String key = sb.toString();
        if (ct == ChangeType.DELETE) {
            rows.remove(key);
            return;
        }
        sb.setLength(0);
        sb.append("{\"partition\":");
        if (t.partition() == null) {
            sb.append("null");
        } else {
            Json.string(sb, t.partition());
        }
        sb.append(",\"bucket\":").append(t.bucket()).append(",\"row\":");
        object(sb, rt, cols, r.getRow());
        sb.append('}');
        rows.put(key, new Entry(sb.toString()));
    }
}
