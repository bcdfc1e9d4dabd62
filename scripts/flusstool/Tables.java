package flusstool;

import org.apache.fluss.client.Connection;
import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.client.admin.OffsetSpec;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.metadata.DatabaseDescriptor;
import org.apache.fluss.metadata.LogFormat;
import org.apache.fluss.metadata.PartitionInfo;
import org.apache.fluss.metadata.PartitionSpec;
import org.apache.fluss.metadata.Schema;
import org.apache.fluss.metadata.TableDescriptor;
import org.apache.fluss.metadata.TableInfo;
import org.apache.fluss.metadata.TablePath;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static flusstool.Main.*;
import static flusstool.Cli.*;
import static flusstool.AllTypes.*;
import static flusstool.Readers.*;

/**
 * DDL commands: databases, tables, partitions, columns, and wait-ready.
 */
final class Tables {
    private Tables() {}


    static int createDatabase(Args a, Admin admin, PrintStream out) throws Exception {
        String db = a.positional(0, "DB");
        boolean ifNot = a.has("if-not-exists");
        a.done(1);
        await(admin.createDatabase(db, DatabaseDescriptor.EMPTY, ifNot), "create database " + db);
        printStatus(out, "create-database", db, null);
        return 0;
    }

    static int dropDatabase(Args a, Admin admin, PrintStream out) throws Exception {
        String db = a.positional(0, "DB");
        boolean ifExists = a.has("if-exists");
        boolean cascade = a.has("cascade");
        a.done(1);
        await(admin.dropDatabase(db, ifExists, cascade), "drop database " + db);
        printStatus(out, "drop-database", db, null);
        return 0;
    }


    static int createTable(Args a, Admin admin, PrintStream out) throws Exception {
        TablePath path = tablePath(a.positional(0, "DB.TABLE"));
        String columnsSpec = a.get("columns");
        boolean allTypes = a.has("all-types");
        if ((columnsSpec == null) == !allTypes) {
            throw new UsageException("create-table needs exactly one of --columns and --all-types");
        }
        List<Column> columns = TypeParser.parseColumns(allTypes ? ALL_TYPES : columnsSpec);
        Schema.Builder sb = Schema.newBuilder();
        for (Column c : columns) {
            sb.column(c.name(), c.type());
        }
        List<String> pk = a.list("primary-key");
        if (pk != null && !pk.isEmpty()) {
            sb.primaryKey(pk);
        }
        TableDescriptor.Builder tb = TableDescriptor.builder().schema(sb.build());
        int buckets = a.getInt("buckets", -1);
        List<String> bucketKeys = a.list("bucket-key");
        if (buckets > 0 || bucketKeys != null) {
            tb.distributedBy(buckets > 0 ? buckets : null, bucketKeys == null ? List.of() : bucketKeys);
        }
        List<String> partitionKeys = a.list("partition-key");
        if (partitionKeys != null && !partitionKeys.isEmpty()) {
            tb.partitionedBy(partitionKeys);
        }
        String auto = a.get("auto-partition");
        if (auto != null) {
            if (partitionKeys == null) {
                throw new UsageException("--auto-partition needs --partition-key");
            }
            tb.property("table.auto-partition.enabled", "true");
            tb.property("table.auto-partition.time-unit", auto.toUpperCase(Locale.ROOT));
            if (partitionKeys.size() > 1) {
                tb.property("table.auto-partition.key", partitionKeys.get(0));
            }
        }
        String precreate = a.get("auto-partition-precreate");
        if (precreate != null) {
            tb.property("table.auto-partition.num-precreate", precreate);
        }
        String retention = a.get("auto-partition-retention");
        if (retention != null) {
            tb.property("table.auto-partition.num-retention", retention);
        }
        String tz = a.get("auto-partition-time-zone");
        if (tz != null) {
            tb.property("table.auto-partition.time-zone", tz);
        }
        String compression = a.get("compression");
        if (compression != null) {
            tb.property("table.log.arrow.compression.type", compression.toUpperCase(Locale.ROOT));
        }
        String level = a.get("compression-level");
        if (level != null) {
            tb.property("table.log.arrow.compression.zstd.level", level);
        }
        String logFormat = a.get("log-format");
        if (logFormat != null) {
            requireLogFormat(logFormat.toUpperCase(Locale.ROOT));
            tb.property("table.log.format", logFormat.toUpperCase(Locale.ROOT));
        }
        String kvFormat = a.get("kv-format");
        if (kvFormat != null) {
            tb.property("table.kv.format", kvFormat.toUpperCase(Locale.ROOT));
        }
        String replication = a.get("replication");
        if (replication != null) {
            tb.property("table.replication.factor", replication);
        }
        for (String kv : a.all("property")) {
            int eq = kv.indexOf('=');
            if (eq <= 0) {
                throw new UsageException("--property expects KEY=VALUE, got '" + kv + "'");
            }
            tb.property(kv.substring(0, eq), kv.substring(eq + 1));
        }
        String comment = a.get("comment");
        if (comment != null) {
            tb.comment(comment);
        }
        boolean ifNot = a.has("if-not-exists");
        String partitionsArg = a.get("partitions");
        List<String> partitions = null;
        if (partitionsArg != null) {
            // one key: V1,V2,..; several keys: k=v,k2=v2;k=v3,k2=v4
            partitions = new ArrayList<>();
            for (String p : partitionsArg.split(partitionsArg.contains("=") ? ";" : ",")) {
                if (!p.isBlank()) {
                    partitions.add(p.trim());
                }
            }
        }
        a.done(1);
        // A bucket leader that is not elected within a minute of creation
        // (seen on loaded machines, e.g. when a tablet server's ZooKeeper
        // session lapses) is usually a lost notification: a table this
        // command created is dropped and created again, up to three times.
        final int attempts = ifNot ? 1 : 3;
        TableInfo ti = null;
        for (int attempt = 1; ti == null; attempt++) {
            await(admin.createTable(path, tb.build(), ifNot), "create table " + path);
            if (partitions != null) {
                for (String p : partitions) {
                    PartitionSpec spec = partitionSpec(p, partitionKeys);
                    await(admin.createPartition(path, spec, ifNot), "create partition " + p + " of " + path);
                }
            }
            long wait = attempt < attempts ? Math.min(60, timeoutSeconds) : timeoutSeconds;
            try {
                ti = waitTableReady(admin, path, wait);
            } catch (ToolException e) {
                if (attempt >= attempts) {
                    throw e;
                }
                System.err.println("fluss-java: " + e.getMessage() + "; dropping it and creating it again (attempt "
                        + (attempt + 1) + " of " + attempts + ")");
                await(admin.dropTable(path, true), "drop table " + path);
            }
        }
        printStatus(
                out,
                "create-table",
                path.toString(),
                "\"table_id\":" + ti.getTableId() + ",\"buckets\":" + ti.getNumBuckets());
        return 0;
    }

    /** Fails for a log format this client lacks (COMPACTED before 0.9). */
    static void requireLogFormat(String format) {
        List<String> known = new ArrayList<>();
        for (LogFormat f : LogFormat.values()) {
            known.add(f.name());
        }
        if (!known.contains(format)) {
            throw new ToolException(
                    "--log-format " + format + ": this Fluss client has only the log formats " + known
                            + (format.equals("COMPACTED") ? " (COMPACTED logs need Fluss 0.9 or later)" : ""));
        }
    }

    /** Waits until the table's buckets have leaders (list-offsets answers). */
    static TableInfo waitTableReady(Admin admin, TablePath path) throws Exception {
        return waitTableReady(admin, path, timeoutSeconds);
    }

    /** Waits up to waitSeconds until the table's buckets have leaders. */
    static TableInfo waitTableReady(Admin admin, TablePath path, long waitSeconds) throws Exception {
        TableInfo ti = await(admin.getTableInfo(path), "get table info " + path);
        List<Integer> buckets = bucketList(ti.getNumBuckets());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(waitSeconds);
        Throwable last = null;
        while (System.nanoTime() < deadline) {
            try {
                if (ti.isPartitioned()) {
                    for (PartitionInfo p :
                            await(admin.listPartitionInfos(path), "list partitions of " + path)) {
                        admin.listOffsets(path, p.getPartitionName(), buckets, new OffsetSpec.LatestSpec())
                                .all()
                                .get(waitSeconds, TimeUnit.SECONDS);
                    }
                } else {
                    admin.listOffsets(path, buckets, new OffsetSpec.LatestSpec())
                            .all()
                            .get(waitSeconds, TimeUnit.SECONDS);
                }
                return ti;
            } catch (ExecutionException e) {
                last = e.getCause();
                Thread.sleep(200);
            } catch (java.util.concurrent.TimeoutException e) {
                last = e;
            } catch (RuntimeException e) {
                // e.g. "Leader not found": bucket leaders are elected shortly after creation
                last = e;
                Thread.sleep(200);
            }
        }
        throw new ToolException(
                "table " + path + " has no bucket leaders after " + waitSeconds + "s: " + describe(last));
    }

    /**
     * conn.getTable(path), retried for up to 30 s while the server the client
     * asks for metadata does not know the table yet: a tablet server learns
     * of a new table from the coordinator asynchronously, and the 0.7 client
     * fails meanwhile with "table: DB.T not found in cluster" (seen once on a
     * loaded machine, right after create-table).
     */
    static Table openTable(Connection conn, TablePath path) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Math.min(30, timeoutSeconds));
        while (true) {
            try {
                return conn.getTable(path);
            } catch (RuntimeException e) {
                String m = String.valueOf(e.getMessage());
                if (!m.contains("not found in cluster") || System.nanoTime() > deadline) {
                    throw e;
                }
                debug("%s; asking again", m);
                Thread.sleep(200);
            }
        }
    }

    static void requireTable(Admin admin, TablePath path) throws Exception {
        if (!await(admin.tableExists(path), "check table " + path)) {
            throw new ToolException("table " + path + " does not exist");
        }
    }

    static List<Integer> bucketList(int n) {
        List<Integer> l = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            l.add(i);
        }
        return l;
    }

    static PartitionSpec partitionSpec(String spec, List<String> keys) {
        Map<String, String> m = new LinkedHashMap<>();
        if (spec.indexOf('=') < 0) {
            if (keys == null || keys.size() != 1) {
                throw new UsageException(
                        "partition '" + spec + "' gives no key, but the table has "
                                + (keys == null ? "unknown" : String.valueOf(keys.size()))
                                + " partition keys; use k=v[,k=v]");
            }
            m.put(keys.get(0), spec);
        } else {
            for (String kv : spec.split(",")) {
                int eq = kv.indexOf('=');
                if (eq <= 0) {
                    throw new UsageException("bad partition spec '" + spec + "'");
                }
                m.put(kv.substring(0, eq).trim(), kv.substring(eq + 1).trim());
            }
        }
        return new PartitionSpec(m);
    }

    static int addPartition(Args a, Admin admin, PrintStream out) throws Exception {
        TablePath path = tablePath(a.positional(0, "DB.TABLE"));
        a.positional(1, "partition SPEC");
        boolean ifNot = a.has("if-not-exists");
        a.done(Integer.MAX_VALUE);
        TableInfo ti = await(admin.getTableInfo(path), "get table info " + path);
        for (String s : a.positional.subList(1, a.positional.size())) {
            await(
                    admin.createPartition(path, partitionSpec(s, ti.getPartitionKeys()), ifNot),
                    "create partition " + s + " of " + path);
        }
        waitTableReady(admin, path);
        printStatus(out, "add-partition", path.toString(), null);
        return 0;
    }

    static int dropPartition(Args a, Admin admin, PrintStream out) throws Exception {
        TablePath path = tablePath(a.positional(0, "DB.TABLE"));
        a.positional(1, "partition SPEC");
        boolean ifExists = a.has("if-exists");
        a.done(Integer.MAX_VALUE);
        TableInfo ti = await(admin.getTableInfo(path), "get table info " + path);
        for (String s : a.positional.subList(1, a.positional.size())) {
            await(
                    admin.dropPartition(path, partitionSpec(s, ti.getPartitionKeys()), ifExists),
                    "drop partition " + s + " of " + path);
        }
        printStatus(out, "drop-partition", path.toString(), null);
        return 0;
    }

    static int addColumn(Args a, Admin admin, PrintStream out) throws Exception {
        TablePath path = tablePath(a.positional(0, "DB.TABLE"));
        String spec = a.get("columns");
        if (spec == null) {
            spec = a.get("column");
        }
        if (spec == null) {
            throw new UsageException("alter-table-add-column needs --columns 'name TYPE[, ...]'");
        }
        String comment = a.get("comment");
        a.done(1);
        Nested.alterTableMethod(); // fails first on a client without alterTable (0.7)
        List<Object> changes = new ArrayList<>();
        for (Column c : TypeParser.parseColumns(spec)) {
            changes.add(Nested.addColumnChange(c.name(), c.type(), comment));
        }
        await(Nested.alterTable(admin, path, changes), "alter table " + path);
        printStatus(out, "alter-table-add-column", path.toString(), null);
        return 0;
    }

    static int dropTable(Args a, Admin admin, PrintStream out) throws Exception {
        TablePath path = tablePath(a.positional(0, "DB.TABLE"));
        boolean ifExists = a.has("if-exists");
        a.done(1);
        await(admin.dropTable(path, ifExists), "drop table " + path);
        printStatus(out, "drop-table", path.toString(), null);
        return 0;
    }

    static int waitReady(Args a, Admin admin, PrintStream out) throws Exception {
        int tablets = a.getInt("tablets", 1);
        a.done(0);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        String last = "";
        while (System.nanoTime() < deadline) {
            try {
                List<org.apache.fluss.cluster.ServerNode> nodes =
                        admin.getServerNodes().get(timeoutSeconds, TimeUnit.SECONDS);
                long n =
                        nodes.stream()
                                .filter(s -> s.serverType() == org.apache.fluss.cluster.ServerType.TABLET_SERVER)
                                .count();
                if (n >= tablets) {
                    printStatus(out, "wait-ready", "cluster", "\"tablet_servers\":" + n);
                    return 0;
                }
                last = n + " tablet servers alive";
            } catch (ExecutionException e) {
                last = describe(e.getCause());
            }
            Thread.sleep(250);
        }
        throw new ToolException("cluster not ready after " + timeoutSeconds + "s: " + last);
    }
}
