package flusstool;

import org.apache.fluss.client.Connection;
import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.client.admin.OffsetSpec;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.client.table.scanner.Scan;
import org.apache.fluss.client.table.scanner.ScanRecord;
import org.apache.fluss.client.table.scanner.log.LogScanner;
import org.apache.fluss.client.table.scanner.log.ScanRecords;
import org.apache.fluss.metadata.PartitionInfo;
import org.apache.fluss.metadata.TableBucket;
import org.apache.fluss.metadata.TableInfo;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.types.DataField;
import org.apache.fluss.types.RowType;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static flusstool.Main.*;
import static flusstool.Cli.*;
import static flusstool.Tables.*;

/**
 * Reader commands: scan (rows or --count-only), info, list-offsets, and the
 * format-floats self-check.
 */
final class Readers {
    private Readers() {}


    // ------------------------------------------------------------------
    // scanning

    /** One bucket to read: partition (null if none), bucket, and [earliest, end). */
    record Target(String partition, long partitionId, int bucket, long earliest, long end) {
        String describe() {
            return (partition == null ? "" : "partition " + partition + " ") + "bucket " + bucket;
        }
    }

    static List<Target> targets(Admin admin, TablePath path, TableInfo ti, String onlyPartition)
            throws Exception {
        List<Integer> buckets = bucketList(ti.getNumBuckets());
        List<Target> out = new ArrayList<>();
        if (ti.isPartitioned()) {
            List<PartitionInfo> parts =
                    new ArrayList<>(await(admin.listPartitionInfos(path), "list partitions of " + path));
            parts.sort((x, y) -> x.getPartitionName().compareTo(y.getPartitionName()));
            boolean found = onlyPartition == null;
            for (PartitionInfo p : parts) {
                if (onlyPartition != null && !onlyPartition.equals(p.getPartitionName())) {
                    continue;
                }
                found = true;
                String name = p.getPartitionName();
                Map<Integer, Long> latest =
                        await(
                                admin.listOffsets(path, name, buckets, new OffsetSpec.LatestSpec()).all(),
                                "list latest offsets of " + path + " partition " + name);
                Map<Integer, Long> earliest =
                        await(
                                admin.listOffsets(path, name, buckets, new OffsetSpec.EarliestSpec()).all(),
                                "list earliest offsets of " + path + " partition " + name);
                for (int b : buckets) {
                    out.add(new Target(name, p.getPartitionId(), b, earliest.get(b), latest.get(b)));
                }
            }
            if (!found) {
                throw new ToolException(path + " has no partition named '" + onlyPartition + "'");
            }
        } else {
            if (onlyPartition != null) {
                throw new UsageException(path + " is not partitioned; drop --partition");
            }
            Map<Integer, Long> latest =
                    await(
                            admin.listOffsets(path, buckets, new OffsetSpec.LatestSpec()).all(),
                            "list latest offsets of " + path);
            Map<Integer, Long> earliest =
                    await(
                            admin.listOffsets(path, buckets, new OffsetSpec.EarliestSpec()).all(),
                            "list earliest offsets of " + path);
            for (int b : buckets) {
                out.add(new Target(null, -1, b, earliest.get(b), latest.get(b)));
            }
        }
        return out;
    }

    static LogScanner newScanner(Table table, List<String> columns) {
        Scan scan = table.newScan();
        if (columns != null) {
            scan = scan.project(columns);
        }
        return scan.createLogScanner();
    }

    static void subscribe(LogScanner s, Target t) {
        if (t.partition != null) {
            s.subscribe(t.partitionId, t.bucket, LogScanner.EARLIEST_OFFSET);
        } else {
            s.subscribe(t.bucket, LogScanner.EARLIEST_OFFSET);
        }
    }

    /**
     * The scanner's fetch position in a bucket (LogScannerImpl's private status), or -1 if it
     * cannot be read. Needed because a log can hold offsets that yield no record (a batch
     * written for deleting a key that does not exist): the records alone never reach the end.
     */
    static long position(LogScanner s, TableBucket tb) {
        if (!positionUsable) {
            return -1;
        }
        try {
            if (statusField == null || statusField.getDeclaringClass() != s.getClass()) {
                statusField = s.getClass().getDeclaredField("logScannerStatus");
                statusField.setAccessible(true);
            }
            Object status = statusField.get(s);
            if (getBucketOffset == null) {
                getBucketOffset = status.getClass().getDeclaredMethod("getBucketOffset", TableBucket.class);
                getBucketOffset.setAccessible(true);
            }
            Object v = getBucketOffset.invoke(status, tb);
            return v == null ? -1 : (Long) v;
        } catch (ReflectiveOperationException | RuntimeException e) {
            positionUsable = false;
            debug("cannot read the scanner position (%s); relying on record offsets", e);
            return -1;
        }
    }

    static boolean positionUsable = true;
    static java.lang.reflect.Field statusField;
    static Method getBucketOffset;

    static TableBucket tableBucket(long tableId, Target t) {
        return new TableBucket(tableId, t.partition == null ? null : t.partitionId, t.bucket);
    }

    static int scan(Args a, Connection conn, Admin admin, PrintStream out) throws Exception {
        TablePath path = tablePath(a.positional(0, "DB.TABLE"));
        List<String> columns = a.list("columns");
        boolean countOnly = a.has("count-only");
        String onlyPartition = a.get("partition");
        a.done(1);
        requireTable(admin, path);
        try (Table table = openTable(conn, path)) {
            TableInfo ti = table.getTableInfo();
            RowType rt = ti.getRowType();
            if (columns != null) {
                for (String c : columns) {
                    if (rt.getFieldIndex(c) < 0) {
                        throw new UsageException(path + " has no column '" + c + "'");
                    }
                }
                rt = rt.project(columns);
            }
            List<Target> all = targets(admin, path, ti, onlyPartition);
            List<Target> todo = new ArrayList<>();
            for (Target t : all) {
                if (t.end > t.earliest) {
                    todo.add(t);
                }
            }
            if (countOnly) {
                return countOnly(table, columns, todo, out);
            }
            Renderer renderer = new Renderer(rt);
            StringBuilder sb = new StringBuilder(1024);
            // One bucket at a time: the output is sorted without holding the
            // whole table in memory.
            for (Target t : todo) {
                TreeMap<Long, String> lines = new TreeMap<>();
                TableBucket tb = tableBucket(ti.getTableId(), t);
                try (LogScanner s = newScanner(table, columns)) {
                    subscribe(s, t);
                    long next = t.earliest;
                    long lastProgress = System.nanoTime();
                    while (next < t.end) {
                        ScanRecords recs = s.poll(Duration.ofMillis(200));
                        long pos = position(s, tb);
                        if (pos > next) {
                            next = pos;
                            lastProgress = System.nanoTime();
                        }
                        if (recs.isEmpty()) {
                            if (System.nanoTime() - lastProgress > TimeUnit.SECONDS.toNanos(timeoutSeconds)) {
                                throw new ToolException(
                                        "scan " + path + " " + t.describe() + ": stuck at offset " + next
                                                + ", end offset " + t.end + " (no records for "
                                                + timeoutSeconds + "s)");
                            }
                            continue;
                        }
                        lastProgress = System.nanoTime();
                        for (ScanRecord r : recs) {
                            long off = r.logOffset();
                            if (off >= t.end) {
                                continue;
                            }
                            next = Math.max(next, off + 1);
                            sb.setLength(0);
                            sb.append("{\"partition\":");
                            if (t.partition == null) {
                                sb.append("null");
                            } else {
                                Json.string(sb, t.partition);
                            }
                            sb.append(",\"bucket\":").append(t.bucket);
                            sb.append(",\"offset\":").append(off);
                            sb.append(",\"change_type\":\"")
                                    .append(r.getChangeType().shortString())
                                    .append("\",\"row\":");
                            try {
                                renderer.row(sb, r.getRow());
                            } catch (RuntimeException e) {
                                throw new ToolException(
                                        "scan " + path + " " + t.describe() + " offset " + off
                                                + ": rendering the row failed: " + describe(e),
                                        e);
                            }
                            sb.append('}');
                            lines.put(off, sb.toString());
                        }
                    }
                }
                for (String l : lines.values()) {
                    out.append(l).append('\n');
                }
            }
        }
        return 0;
    }

    static int countOnly(Table table, List<String> columns, List<Target> todo, PrintStream out)
            throws Exception {
        long count = 0;
        long t0 = System.nanoTime();
        if (!todo.isEmpty()) {
            try (LogScanner s = newScanner(table, columns)) {
                Map<TableBucket, Target> byBucket = new HashMap<>();
                Map<TableBucket, Long> next = new HashMap<>();
                long tableId = table.getTableInfo().getTableId();
                for (Target t : todo) {
                    subscribe(s, t);
                    TableBucket tb = tableBucket(tableId, t);
                    byBucket.put(tb, t);
                    next.put(tb, t.earliest);
                }
                int open = todo.size();
                long lastProgress = System.nanoTime();
                while (open > 0) {
                    ScanRecords recs = s.poll(Duration.ofMillis(200));
                    if (recs.isEmpty() && positionUsable) {
                        // offsets without records (see position()) still count as read
                        for (Map.Entry<TableBucket, Target> e : byBucket.entrySet()) {
                            long n = next.get(e.getKey());
                            long end = e.getValue().end;
                            if (n < end) {
                                long pos = position(s, e.getKey());
                                if (pos > n) {
                                    next.put(e.getKey(), pos);
                                    lastProgress = System.nanoTime();
                                    if (pos >= end) {
                                        open--;
                                    }
                                }
                            }
                        }
                    }
                    if (recs.isEmpty()) {
                        if (System.nanoTime() - lastProgress > TimeUnit.SECONDS.toNanos(timeoutSeconds)) {
                            StringBuilder behind = new StringBuilder();
                            for (Map.Entry<TableBucket, Target> e : byBucket.entrySet()) {
                                long n = next.get(e.getKey());
                                if (n < e.getValue().end) {
                                    behind.append(' ')
                                            .append(e.getValue().describe())
                                            .append(" at ")
                                            .append(n)
                                            .append('/')
                                            .append(e.getValue().end);
                                }
                            }
                            throw new ToolException(
                                    "scan " + table.getTableInfo().getTablePath() + ": no records for "
                                            + timeoutSeconds + "s; behind:" + behind);
                        }
                        continue;
                    }
                    lastProgress = System.nanoTime();
                    for (TableBucket tb : recs.buckets()) {
                        Target t = byBucket.get(tb);
                        if (t == null) {
                            continue;
                        }
                        long n = next.get(tb);
                        if (n >= t.end) {
                            continue;
                        }
                        for (ScanRecord r : recs.records(tb)) {
                            long off = r.logOffset();
                            if (off < t.end) {
                                count++;
                                n = Math.max(n, off + 1);
                            }
                        }
                        next.put(tb, n);
                        if (n >= t.end) {
                            open--;
                        }
                    }
                }
            }
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        out.println(
                "{\"rows\":" + count + ",\"seconds\":" + String.format(Locale.ROOT, "%.3f", secs)
                        + ",\"rows_per_sec\":" + (secs > 0 ? Math.round(count / secs) : 0) + "}");
        return 0;
    }

    static int info(Args a, Admin admin, PrintStream out) throws Exception {
        TablePath path = tablePath(a.positional(0, "DB.TABLE"));
        a.done(1);
        requireTable(admin, path);
        TableInfo ti = await(admin.getTableInfo(path), "get table info " + path);
        StringBuilder sb = new StringBuilder("{\"table\":");
        Json.string(sb, path.toString());
        sb.append(",\"table_id\":").append(ti.getTableId());
        sb.append(",\"schema_id\":").append(ti.getSchemaId());
        sb.append(",\"buckets\":").append(ti.getNumBuckets());
        sb.append(",\"primary_key\":");
        Json.stringList(sb, ti.getPrimaryKeys());
        sb.append(",\"bucket_keys\":");
        Json.stringList(sb, ti.getBucketKeys());
        sb.append(",\"partition_keys\":");
        Json.stringList(sb, ti.getPartitionKeys());
        sb.append(",\"columns\":[");
        List<DataField> fields = ti.getRowType().getFields();
        for (int i = 0; i < fields.size(); i++) {
            if (i > 0) {
                sb.append(',');
            }
            sb.append("{\"name\":");
            Json.string(sb, fields.get(i).getName());
            sb.append(",\"type\":");
            Json.string(sb, fields.get(i).getType().asSummaryString());
            sb.append('}');
        }
        sb.append("],\"partitions\":[");
        if (ti.isPartitioned()) {
            List<PartitionInfo> parts =
                    new ArrayList<>(await(admin.listPartitionInfos(path), "list partitions of " + path));
            parts.sort((x, y) -> x.getPartitionName().compareTo(y.getPartitionName()));
            for (int i = 0; i < parts.size(); i++) {
                if (i > 0) {
                    sb.append(',');
                }
                sb.append("{\"id\":").append(parts.get(i).getPartitionId()).append(",\"name\":");
                Json.string(sb, parts.get(i).getPartitionName());
                sb.append('}');
            }
        }
        sb.append("],\"properties\":{");
        Map<String, String> props = new TreeMap<>(ti.getProperties().toMap());
        boolean first = true;
        for (Map.Entry<String, String> e : props.entrySet()) {
            if (!first) {
                sb.append(',');
            }
            first = false;
            Json.string(sb, e.getKey());
            sb.append(':');
            Json.string(sb, e.getValue());
        }
        sb.append("}}");
        out.println(sb);
        return 0;
    }

    static int listOffsets(Args a, Admin admin, PrintStream out) throws Exception {
        TablePath path = tablePath(a.positional(0, "DB.TABLE"));
        String onlyPartition = a.get("partition");
        a.done(1);
        requireTable(admin, path);
        TableInfo ti = await(admin.getTableInfo(path), "get table info " + path);
        for (Target t : targets(admin, path, ti, onlyPartition)) {
            StringBuilder sb = new StringBuilder("{\"partition\":");
            if (t.partition == null) {
                sb.append("null");
            } else {
                Json.string(sb, t.partition);
            }
            sb.append(",\"bucket\":").append(t.bucket);
            sb.append(",\"earliest\":").append(t.earliest);
            sb.append(",\"latest\":").append(t.end).append('}');
            out.println(sb);
        }
        return 0;
    }

    static int formatFloats(String file, PrintStream out) throws IOException {
        StringBuilder sb = new StringBuilder();
        for (String line : Files.readAllLines(Path.of(file))) {
            line = line.trim();
            if (line.isEmpty()) {
                continue;
            }
            sb.setLength(0);
            if (line.length() == 8) {
                Json.floatValue(sb, Float.intBitsToFloat(Integer.parseUnsignedInt(line, 16)));
            } else {
                Json.doubleValue(sb, Double.longBitsToDouble(Long.parseUnsignedLong(line, 16)));
            }
            out.append(sb).append('\n');
        }
        return 0;
    }
}
