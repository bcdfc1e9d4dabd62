/*
 * FlussTool: the project's independent Fluss reader and writer, built only on
 * the official Java client (fluss-client). Tests use it to create tables, to
 * write rows the way real Fluss writers do, and to read rows back the way real
 * Fluss readers see them, rendered with the canonical JSON mapping of
 * docs/json-mapping.md so that its output can be compared byte for byte with
 * the Go decoder's.
 *
 * One file, Java 17, no build: run it through scripts/fluss-java.sh, which puts
 * the fluss-client jars on the classpath and caches the compiled classes.
 * `scripts/fluss-java.sh help` prints the command-line contract.
 *
 * Compatibility: the classes that only exist from Fluss 0.9 on (GenericArray,
 * GenericMap, InternalArray, InternalMap, DataGetters, TableChange.addColumn)
 * are reached through reflection, so the file also compiles against the 0.8
 * client; ARRAY, MAP and ROW values and alter-table-add-column then fail with
 * a clear message.
 */

import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.client.admin.OffsetSpec;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.client.table.scanner.Scan;
import org.apache.fluss.client.table.scanner.ScanRecord;
import org.apache.fluss.client.table.scanner.log.LogScanner;
import org.apache.fluss.client.table.scanner.log.ScanRecords;
import org.apache.fluss.client.table.writer.AppendWriter;
import org.apache.fluss.client.table.writer.UpsertWriter;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.metadata.DatabaseDescriptor;
import org.apache.fluss.metadata.PartitionInfo;
import org.apache.fluss.metadata.PartitionSpec;
import org.apache.fluss.metadata.Schema;
import org.apache.fluss.metadata.TableBucket;
import org.apache.fluss.metadata.TableDescriptor;
import org.apache.fluss.metadata.TableInfo;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.Decimal;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.row.InternalRow;
import org.apache.fluss.row.TimestampLtz;
import org.apache.fluss.row.TimestampNtz;
import org.apache.fluss.types.DataField;
import org.apache.fluss.types.DataType;
import org.apache.fluss.types.DataTypeRoot;
import org.apache.fluss.types.DataTypes;
import org.apache.fluss.types.RowType;

import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

public final class FlussTool {

    static final String USAGE =
            String.join(
                    "\n",
                    "Usage: fluss-java.sh COMMAND [ARGS] [OPTIONS]",
                    "",
                    "Connection options (every command):",
                    "  --bootstrap HOST:PORT[,..]  default $FLUSS_BOOTSTRAP",
                    "  --sasl-user U --sasl-password P   SASL/PLAIN credentials; default",
                    "                              $FLUSS_SASL_USERNAME / $FLUSS_SASL_PASSWORD",
                    "  --sasl-mechanism M          default $FLUSS_SASL_MECHANISM or PLAIN",
                    "  --no-sasl                   ignore the SASL environment variables",
                    "  --conf KEY=VALUE            extra client option (repeatable)",
                    "  --timeout SECONDS           limit for waits and blocking calls (default 120)",
                    "",
                    "Commands:",
                    "  create-database DB [--if-not-exists]",
                    "  drop-database DB [--if-exists] [--cascade]",
                    "  create-table DB.TABLE (--columns 'id BIGINT, name STRING' | --all-types)",
                    "      [--primary-key a,b] [--buckets N] [--bucket-key a,b]",
                    "      [--partition-key c[,d]] [--auto-partition YEAR|QUARTER|MONTH|DAY|HOUR]",
                    "      [--auto-partition-precreate N] [--auto-partition-retention N]",
                    "      [--auto-partition-time-zone ZONE] [--partitions V1,V2,..|'k=v,k2=v;k=w,k2=w']",
                    "      [--compression NONE|LZ4_FRAME|ZSTD] [--compression-level N]",
                    "      [--log-format ARROW|INDEXED|COMPACTED] [--kv-format COMPACTED|INDEXED]",
                    "      [--replication N] [--property KEY=VALUE].. [--comment TEXT] [--if-not-exists]",
                    "  add-partition DB.TABLE SPEC.. [--if-not-exists]   SPEC = VALUE or k=v[,k=v]",
                    "  drop-partition DB.TABLE SPEC.. [--if-exists]",
                    "  alter-table-add-column DB.TABLE --columns 'c INT[, d STRING]' [--comment TEXT]",
                    "  drop-table DB.TABLE [--if-exists]",
                    "  append DB.TABLE (--rows N [--seed S] [--start I] | --file ROWS.jsonl|-)",
                    "      [--flush-every N]",
                    "  upsert DB.TABLE (--rows N [--seed S] [--start I] | --file ROWS.jsonl|-)",
                    "      [--flush-every N] [--partial-update a,b]",
                    "  delete DB.TABLE (--rows N [--seed S] [--start I] | --file ROWS.jsonl|-)",
                    "      [--flush-every N]",
                    "  generate DB.TABLE --rows N [--seed S] [--start I]",
                    "      print the rows append/upsert would write, in the canonical mapping",
                    "  scan DB.TABLE [--columns a,b] [--count-only] [--partition NAME]",
                    "  info DB.TABLE        table id, schema, buckets, partitions as JSON",
                    "  list-offsets DB.TABLE [--partition NAME]   earliest/latest per bucket",
                    "  wait-ready [--tablets N]   wait until N tablet servers are alive",
                    "  format-floats FILE   internal self-check: one hex bit pattern per line",
                    "                       (8 hex digits = FLOAT, 16 = DOUBLE) -> canonical text",
                    "  parse-type COLUMNS   print the Fluss types a column list parses to",
                    "  help",
                    "",
                    "Output: scan and generate print rows in the canonical JSON mapping",
                    "(docs/json-mapping.md); list-offsets and info print JSON lines; the other",
                    "commands print one JSON status line such as",
                    "{\"command\":\"append\",\"target\":\"db.t\",\"rows\":1000,\"seconds\":0.835}.",
                    "Rows from --rows are deterministic in (seed, row index); see the doc, §6.",
                    "",
                    "Exit status: 0 ok, 1 failure (message on stderr), 2 usage error.");

    public static void main(String[] argv) {
        PrintStream out =
                new PrintStream(
                        new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16),
                        false,
                        StandardCharsets.UTF_8);
        int rc;
        try {
            rc = run(argv, out);
        } catch (UsageException e) {
            out.flush();
            System.err.println("fluss-java: " + e.getMessage());
            System.err.println("run 'fluss-java.sh help' for usage");
            rc = 2;
        } catch (Throwable t) {
            out.flush();
            System.err.println("fluss-java: error: " + describe(t));
            if (System.getenv("FLUSS_TOOL_DEBUG") != null) {
                t.printStackTrace();
            }
            rc = 1;
        }
        out.flush();
        System.err.flush();
        // The client keeps non-daemon threads; exit explicitly.
        Runtime.getRuntime().halt(rc);
    }

    static String describe(Throwable t) {
        StringBuilder sb = new StringBuilder();
        Set<Throwable> seen = new HashSet<>();
        while (t != null && seen.add(t)) {
            if (t instanceof ExecutionException
                    || t instanceof java.util.concurrent.CompletionException
                    || t instanceof InvocationTargetException) {
                t = t.getCause();
                continue;
            }
            if (sb.length() > 0) {
                sb.append(": caused by ");
            }
            if (t instanceof ToolException) {
                // its message already names the cause
                sb.append(t.getMessage());
                break;
            }
            sb.append(t.getClass().getSimpleName());
            if (t.getMessage() != null) {
                // server-side exceptions carry the server's stack trace: keep line one
                String m = t.getMessage();
                int nl = m.indexOf('\n');
                sb.append(": ").append(nl >= 0 ? m.substring(0, nl) : m);
            }
            t = t.getCause();
        }
        return sb.toString();
    }

    static final class UsageException extends RuntimeException {
        UsageException(String msg) {
            super(msg);
        }
    }

    static final class ToolException extends RuntimeException {
        ToolException(String msg) {
            super(msg);
        }

        ToolException(String msg, Throwable cause) {
            super(msg, cause);
        }
    }

    // ------------------------------------------------------------------
    // argument parsing

    static final Set<String> BOOLEAN_FLAGS =
            Set.of(
                    "all-types",
                    "count-only",
                    "if-not-exists",
                    "if-exists",
                    "cascade",
                    "no-sasl");
    static final Set<String> REPEATABLE = Set.of("conf", "property");
    static final Set<String> CONNECTION_FLAGS =
            Set.of(
                    "bootstrap",
                    "sasl-user",
                    "sasl-password",
                    "sasl-mechanism",
                    "no-sasl",
                    "conf",
                    "timeout");

    static final class Args {
        final String command;
        final List<String> positional = new ArrayList<>();
        final Map<String, List<String>> flags = new LinkedHashMap<>();
        final Set<String> used = new HashSet<>();

        Args(String[] argv) {
            if (argv.length == 0) {
                throw new UsageException("missing command");
            }
            command = argv[0];
            for (int i = 1; i < argv.length; i++) {
                String a = argv[i];
                if (a.startsWith("--") && a.length() > 2) {
                    String name = a.substring(2);
                    String value;
                    int eq = name.indexOf('=');
                    if (eq >= 0) {
                        value = name.substring(eq + 1);
                        name = name.substring(0, eq);
                    } else if (BOOLEAN_FLAGS.contains(name)) {
                        value = "true";
                    } else {
                        if (i + 1 >= argv.length) {
                            throw new UsageException("--" + name + " needs a value");
                        }
                        value = argv[++i];
                    }
                    List<String> vs = flags.computeIfAbsent(name, k -> new ArrayList<>());
                    if (!vs.isEmpty() && !REPEATABLE.contains(name)) {
                        throw new UsageException("--" + name + " given twice");
                    }
                    vs.add(value);
                } else {
                    positional.add(a);
                }
            }
        }

        String get(String name) {
            used.add(name);
            List<String> vs = flags.get(name);
            return vs == null ? null : vs.get(0);
        }

        String get(String name, String def) {
            String v = get(name);
            return v == null ? def : v;
        }

        List<String> all(String name) {
            used.add(name);
            return flags.getOrDefault(name, List.of());
        }

        boolean has(String name) {
            String v = get(name);
            if (v == null) {
                return false;
            }
            if (v.equals("true")) {
                return true;
            }
            if (v.equals("false")) {
                return false;
            }
            throw new UsageException("--" + name + " takes no value (or =true/=false)");
        }

        int getInt(String name, int def) {
            String v = get(name);
            if (v == null) {
                return def;
            }
            try {
                return Integer.parseInt(v);
            } catch (NumberFormatException e) {
                throw new UsageException("--" + name + " needs an integer, got '" + v + "'");
            }
        }

        long getLong(String name, long def) {
            String v = get(name);
            if (v == null) {
                return def;
            }
            try {
                return Long.parseLong(v);
            } catch (NumberFormatException e) {
                throw new UsageException("--" + name + " needs an integer, got '" + v + "'");
            }
        }

        List<String> list(String name) {
            String v = get(name);
            if (v == null) {
                return null;
            }
            List<String> out = new ArrayList<>();
            for (String s : v.split(",")) {
                s = s.trim();
                if (!s.isEmpty()) {
                    out.add(s);
                }
            }
            return out;
        }

        String positional(int i, String what) {
            if (positional.size() <= i) {
                throw new UsageException(command + ": missing " + what);
            }
            return positional.get(i);
        }

        /** Fails on flags the command did not read and on extra positionals. */
        void done(int maxPositional) {
            for (String f : flags.keySet()) {
                if (!used.contains(f) && !CONNECTION_FLAGS.contains(f)) {
                    throw new UsageException(command + ": unknown option --" + f);
                }
            }
            if (positional.size() > maxPositional) {
                throw new UsageException(
                        command + ": unexpected argument '" + positional.get(maxPositional) + "'");
            }
        }
    }

    static TablePath tablePath(String s) {
        int dot = s.indexOf('.');
        if (dot <= 0 || dot == s.length() - 1 || s.indexOf('.', dot + 1) >= 0) {
            throw new UsageException("table must be DB.TABLE, got '" + s + "'");
        }
        return TablePath.of(s.substring(0, dot), s.substring(dot + 1));
    }

    // ------------------------------------------------------------------
    // commands

    static long timeoutSeconds = 120;

    static int run(String[] argv, PrintStream out) throws Exception {
        if (argv.length == 0
                || argv[0].equals("help")
                || argv[0].equals("--help")
                || argv[0].equals("-h")) {
            out.println(USAGE);
            return argv.length == 0 ? 2 : 0;
        }
        Args a = new Args(argv);
        timeoutSeconds = a.getLong("timeout", 120);
        switch (a.command) {
            case "format-floats":
                a.done(1);
                return formatFloats(a.positional(0, "FILE"), out);
            case "parse-type":
                {
                    // internal: print the Fluss type that a column spec parses to
                    a.done(1);
                    for (Column c : TypeParser.parseColumns(a.positional(0, "COLUMNS"))) {
                        out.println(c.name + " " + c.type.asSerializableString());
                    }
                    return 0;
                }
            default:
                break;
        }
        Configuration conf = clientConf(a);
        long t0 = System.nanoTime();
        // The connection is not closed: every command has waited for its writes
        // and reads to complete, the process halts right after, and the client's
        // graceful shutdown (Netty's quiet period) would add seconds to each call.
        Connection conn = ConnectionFactory.createConnection(conf);
        debug("connected in %.0f ms", (System.nanoTime() - t0) / 1e6);
        {
            Admin admin = conn.getAdmin();
            try {
                switch (a.command) {
                    case "create-database":
                        return createDatabase(a, admin, out);
                    case "drop-database":
                        return dropDatabase(a, admin, out);
                    case "create-table":
                        return createTable(a, admin, out);
                    case "add-partition":
                        return addPartition(a, admin, out);
                    case "drop-partition":
                        return dropPartition(a, admin, out);
                    case "alter-table-add-column":
                        return addColumn(a, admin, out);
                    case "drop-table":
                        return dropTable(a, admin, out);
                    case "append":
                    case "upsert":
                    case "delete":
                        return write(a, conn, admin, out);
                    case "generate":
                        return generate(a, conn, admin, out);
                    case "scan":
                        return scan(a, conn, admin, out);
                    case "info":
                        return info(a, admin, out);
                    case "list-offsets":
                        return listOffsets(a, admin, out);
                    case "wait-ready":
                        return waitReady(a, admin, out);
                    default:
                        throw new UsageException("unknown command '" + a.command + "'");
                }
            } finally {
                debug("%s done after %.0f ms", a.command, (System.nanoTime() - t0) / 1e6);
            }
        }
    }

    static final boolean DEBUG = System.getenv("FLUSS_TOOL_DEBUG") != null;

    static void debug(String fmt, Object... args) {
        if (DEBUG) {
            System.err.println("fluss-java: debug: " + String.format(Locale.ROOT, fmt, args));
        }
    }

    static Configuration clientConf(Args a) {
        String bootstrap = a.get("bootstrap", System.getenv("FLUSS_BOOTSTRAP"));
        if (bootstrap == null || bootstrap.isBlank()) {
            throw new UsageException("no bootstrap address: give --bootstrap HOST:PORT or set FLUSS_BOOTSTRAP");
        }
        Configuration conf = new Configuration();
        conf.setString("bootstrap.servers", bootstrap);
        conf.setString("client.request-timeout", timeoutSeconds + "s");
        boolean noSasl = a.has("no-sasl");
        String user = a.get("sasl-user", noSasl ? null : System.getenv("FLUSS_SASL_USERNAME"));
        String pass = a.get("sasl-password", noSasl ? null : System.getenv("FLUSS_SASL_PASSWORD"));
        String mech =
                a.get(
                        "sasl-mechanism",
                        noSasl || System.getenv("FLUSS_SASL_MECHANISM") == null
                                ? "PLAIN"
                                : System.getenv("FLUSS_SASL_MECHANISM"));
        if ((user == null) != (pass == null)) {
            throw new UsageException("give both --sasl-user and --sasl-password, or neither");
        }
        if (user != null && !user.isEmpty()) {
            conf.setString("client.security.protocol", "SASL");
            conf.setString("client.security.sasl.mechanism", mech);
            conf.setString("client.security.sasl.username", user);
            conf.setString("client.security.sasl.password", pass);
        }
        for (String kv : a.all("conf")) {
            int eq = kv.indexOf('=');
            if (eq <= 0) {
                throw new UsageException("--conf expects KEY=VALUE, got '" + kv + "'");
            }
            conf.setString(kv.substring(0, eq), kv.substring(eq + 1));
        }
        return conf;
    }

    static <T> T await(CompletableFuture<T> f, String what) throws Exception {
        try {
            return f.get(timeoutSeconds, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new ToolException(what + ": " + describe(e.getCause()), e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            throw new ToolException(what + ": no answer within " + timeoutSeconds + "s");
        }
    }

    static void printStatus(PrintStream out, String command, String target, String extra) {
        StringBuilder sb = new StringBuilder("{\"command\":");
        Json.string(sb, command);
        sb.append(",\"target\":");
        Json.string(sb, target);
        if (extra != null) {
            sb.append(',').append(extra);
        }
        sb.append('}');
        out.println(sb);
    }

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

    /** Every Fluss type, alone and nested; the column set of --all-types. */
    static final String ALL_TYPES =
            String.join(
                    ", ",
                    "id BIGINT NOT NULL",
                    "c_boolean BOOLEAN",
                    "c_tinyint TINYINT",
                    "c_smallint SMALLINT",
                    "c_int INT",
                    "c_bigint BIGINT",
                    "c_float FLOAT",
                    "c_double DOUBLE",
                    "c_decimal_5_2 DECIMAL(5, 2)",
                    "c_decimal_18_6 DECIMAL(18, 6)",
                    "c_decimal_38_0 DECIMAL(38, 0)",
                    "c_decimal_38_18 DECIMAL(38, 18)",
                    "c_char CHAR(8)",
                    "c_string STRING",
                    "c_binary BINARY(4)",
                    "c_bytes BYTES",
                    "c_date DATE",
                    "c_time_0 TIME(0)",
                    "c_time_3 TIME(3)",
                    "c_time_6 TIME(6)",
                    "c_time_9 TIME(9)",
                    "c_ts_0 TIMESTAMP(0)",
                    "c_ts_1 TIMESTAMP(1)",
                    "c_ts_2 TIMESTAMP(2)",
                    "c_ts_3 TIMESTAMP(3)",
                    "c_ts_4 TIMESTAMP(4)",
                    "c_ts_5 TIMESTAMP(5)",
                    "c_ts_6 TIMESTAMP(6)",
                    "c_ts_7 TIMESTAMP(7)",
                    "c_ts_8 TIMESTAMP(8)",
                    "c_ts_9 TIMESTAMP(9)",
                    "c_ltz_0 TIMESTAMP_LTZ(0)",
                    "c_ltz_1 TIMESTAMP_LTZ(1)",
                    "c_ltz_2 TIMESTAMP_LTZ(2)",
                    "c_ltz_3 TIMESTAMP_LTZ(3)",
                    "c_ltz_4 TIMESTAMP_LTZ(4)",
                    "c_ltz_5 TIMESTAMP_LTZ(5)",
                    "c_ltz_6 TIMESTAMP_LTZ(6)",
                    "c_ltz_7 TIMESTAMP_LTZ(7)",
                    "c_ltz_8 TIMESTAMP_LTZ(8)",
                    "c_ltz_9 TIMESTAMP_LTZ(9)",
                    "c_int_not_null INT NOT NULL",
                    "c_string_not_null STRING NOT NULL",
                    "c_array_int ARRAY<INT>",
                    "c_array_string_not_null ARRAY<STRING NOT NULL>",
                    "c_array_double ARRAY<DOUBLE>",
                    "c_array_decimal ARRAY<DECIMAL(38, 10)>",
                    "c_array_ts ARRAY<TIMESTAMP(9)>",
                    "c_array_array ARRAY<ARRAY<BIGINT>>",
                    "c_map_string_int MAP<STRING, INT>",
                    "c_map_int_string MAP<INT, STRING>",
                    "c_map_bytes_ltz MAP<BYTES, TIMESTAMP_LTZ(3)>",
                    "c_map_string_array MAP<STRING, ARRAY<FLOAT>>",
                    "c_row ROW<a INT, b STRING, c DOUBLE>",
                    "c_row_nested ROW<inner ROW<d DECIMAL(20, 4), t TIMESTAMP(6)>,"
                            + " tags ARRAY<STRING>, attrs MAP<STRING, BOOLEAN>>",
                    "c_array_row ARRAY<ROW<k STRING, v DATE>>",
                    "c_map_string_row MAP<STRING, ROW<x BINARY(2), y TIME(3)>>");

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
            sb.column(c.name, c.type);
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
        List<Object> changes = new ArrayList<>();
        for (Column c : TypeParser.parseColumns(spec)) {
            changes.add(Nested.addColumnChange(c.name, c.type, comment));
        }
        @SuppressWarnings({"unchecked", "rawtypes"})
        CompletableFuture<Void> f = admin.alterTable(path, (List) changes, false);
        await(f, "alter table " + path);
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

    // ------------------------------------------------------------------
    // writing

    static int write(Args a, Connection conn, Admin admin, PrintStream out) throws Exception {
        TablePath path = tablePath(a.positional(0, "DB.TABLE"));
        String file = a.get("file");
        long rows = a.getLong("rows", -1);
        long seed = a.getLong("seed", 0);
        long start = a.getLong("start", 0);
        long flushEvery = a.getLong("flush-every", 0);
        List<String> partial = a.command.equals("upsert") ? a.list("partial-update") : null;
        a.done(1);
        requireTable(admin, path);
        if ((file == null) == (rows < 0)) {
            throw new UsageException(a.command + " needs exactly one of --rows N and --file F");
        }
        try (Table table = conn.getTable(path)) {
            TableInfo ti = table.getTableInfo();
            RowType rt = ti.getRowType();
            boolean pkTable = ti.hasPrimaryKey();
            if (a.command.equals("append") && pkTable) {
                throw new UsageException(path + " has a primary key: use upsert/delete, not append");
            }
            if (!a.command.equals("append") && !pkTable) {
                throw new UsageException(path + " is a log table (no primary key): use append");
            }
            AppendWriter appender = null;
            UpsertWriter upserter = null;
            if (a.command.equals("append")) {
                appender = table.newAppend().createWriter();
            } else if (partial != null) {
                upserter = table.newUpsert().partialUpdate(partial.toArray(new String[0])).createWriter();
            } else {
                upserter = table.newUpsert().createWriter();
            }
            final boolean isDelete = a.command.equals("delete");
            AtomicReference<Throwable> failure = new AtomicReference<>();
            AtomicLong done = new AtomicLong();
            long sent = 0;
            long t0 = System.nanoTime();
            RowSource source =
                    file != null
                            ? new JsonRowSource(file, rt)
                            : new GenRowSource(admin, path, ti, seed, start, rows);
            try {
                GenericRow row;
                while ((row = source.next()) != null) {
                    CompletableFuture<?> f;
                    if (appender != null) {
                        f = appender.append(row);
                    } else if (isDelete) {
                        f = upserter.delete(row);
                    } else {
                        f = upserter.upsert(row);
                    }
                    final String where = source.where();
                    f.whenComplete(
                            (r, e) -> {
                                if (e != null) {
                                    failure.compareAndSet(
                                            null, new ToolException(where + ": " + describe(e), e));
                                }
                                done.incrementAndGet();
                            });
                    sent++;
                    if (failure.get() != null) {
                        break;
                    }
                    if (flushEvery > 0 && sent % flushEvery == 0) {
                        if (appender != null) {
                            appender.flush();
                        } else {
                            upserter.flush();
                        }
                    }
                }
            } finally {
                source.close();
            }
            if (appender != null) {
                appender.flush();
            } else {
                upserter.flush();
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
            while (done.get() < sent && failure.get() == null && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            if (failure.get() != null) {
                Throwable t = failure.get();
                throw t instanceof Exception ? (Exception) t : new ToolException(describe(t), t);
            }
            if (done.get() < sent) {
                throw new ToolException(
                        a.command + " " + path + ": only " + done.get() + " of " + sent
                                + " rows acknowledged after " + timeoutSeconds + "s");
            }
            double secs = (System.nanoTime() - t0) / 1e9;
            printStatus(
                    out,
                    a.command,
                    path.toString(),
                    "\"rows\":" + sent + ",\"seconds\":" + String.format(Locale.ROOT, "%.3f", secs));
        }
        return 0;
    }

    interface RowSource extends AutoCloseable {
        /** The next row, or null at the end. */
        GenericRow next() throws Exception;

        /** Where the last row came from, for error messages. */
        String where();

        @Override
        default void close() throws IOException {}
    }

    static final class JsonRowSource implements RowSource {
        final BufferedReader reader;
        final String name;
        final RowType rt;
        long line;

        JsonRowSource(String file, RowType rt) throws IOException {
            this.name = file.equals("-") ? "stdin" : file;
            this.rt = rt;
            this.reader =
                    file.equals("-")
                            ? new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))
                            : Files.newBufferedReader(Path.of(file), StandardCharsets.UTF_8);
        }

        @Override
        public GenericRow next() throws IOException {
            String s;
            while ((s = reader.readLine()) != null) {
                line++;
                if (s.isBlank()) {
                    continue;
                }
                try {
                    Object v = new JsonParser(s).parseDocument();
                    return FromJson.row(v, rt, "row");
                } catch (RuntimeException e) {
                    throw new ToolException(where() + ": " + e.getMessage(), e);
                }
            }
            return null;
        }

        @Override
        public String where() {
            return name + " line " + line;
        }

        @Override
        public void close() throws IOException {
            if (!name.equals("stdin")) {
                reader.close();
            }
        }
    }

    static final class GenRowSource implements RowSource {
        final Generator gen;
        final long start;
        final long end;
        long next;

        GenRowSource(Admin admin, TablePath path, TableInfo ti, long seed, long start, long rows)
                throws Exception {
            this.gen = new Generator(admin, path, ti, seed);
            this.start = start;
            this.end = start + rows;
            this.next = start;
        }

        @Override
        public GenericRow next() {
            if (next >= end) {
                return null;
            }
            return gen.row(next++);
        }

        @Override
        public String where() {
            return "generated row " + (next - 1);
        }
    }

    static int generate(Args a, Connection conn, Admin admin, PrintStream out) throws Exception {
        TablePath path = tablePath(a.positional(0, "DB.TABLE"));
        long rows = a.getLong("rows", -1);
        long seed = a.getLong("seed", 0);
        long start = a.getLong("start", 0);
        a.done(1);
        requireTable(admin, path);
        if (rows < 0) {
            throw new UsageException("generate needs --rows N");
        }
        TableInfo ti = await(admin.getTableInfo(path), "get table info " + path);
        RowType rt = ti.getRowType();
        Generator gen = new Generator(admin, path, ti, seed);
        Renderer r = new Renderer(rt);
        StringBuilder sb = new StringBuilder(1024);
        for (long i = start; i < start + rows; i++) {
            sb.setLength(0);
            r.row(sb, gen.row(i));
            out.append(sb).append('\n');
        }
        return 0;
    }

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
        try (Table table = conn.getTable(path)) {
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

    // ------------------------------------------------------------------
    // Fluss type syntax

    record Column(String name, DataType type) {}

    /**
     * Parses column lists such as {@code id BIGINT NOT NULL, tags ARRAY<STRING>} in the Fluss
     * type syntax. Keywords are case-insensitive; names may be quoted with backticks.
     */
    static final class TypeParser {
        final String s;
        int pos;

        TypeParser(String s) {
            this.s = s;
        }

        static List<Column> parseColumns(String spec) {
            TypeParser p = new TypeParser(spec);
            List<Column> cols = new ArrayList<>();
            Set<String> names = new HashSet<>();
            do {
                String name = p.name();
                DataType t = p.type();
                if (!names.add(name)) {
                    throw p.error("duplicate column '" + name + "'");
                }
                cols.add(new Column(name, t));
            } while (p.accept(','));
            p.skipSpace();
            if (p.pos != p.s.length()) {
                throw p.error("unexpected text");
            }
            return cols;
        }

        static DataType parseType(String spec) {
            TypeParser p = new TypeParser(spec);
            DataType t = p.type();
            p.skipSpace();
            if (p.pos != p.s.length()) {
                throw p.error("unexpected text");
            }
            return t;
        }

        UsageException error(String msg) {
            return new UsageException(
                    "column spec: " + msg + " at position " + pos + " in '" + s + "'");
        }

        void skipSpace() {
            while (pos < s.length() && Character.isWhitespace(s.charAt(pos))) {
                pos++;
            }
        }

        boolean accept(char c) {
            skipSpace();
            if (pos < s.length() && s.charAt(pos) == c) {
                pos++;
                return true;
            }
            return false;
        }

        void expect(char c) {
            if (!accept(c)) {
                throw error("expected '" + c + "'");
            }
        }

        String name() {
            skipSpace();
            if (pos < s.length() && s.charAt(pos) == '`') {
                StringBuilder sb = new StringBuilder();
                pos++;
                while (true) {
                    if (pos >= s.length()) {
                        throw error("unterminated `name`");
                    }
                    char c = s.charAt(pos++);
                    if (c == '`') {
                        if (pos < s.length() && s.charAt(pos) == '`') {
                            sb.append('`');
                            pos++;
                            continue;
                        }
                        return sb.toString();
                    }
                    sb.append(c);
                }
            }
            int start = pos;
            while (pos < s.length()
                    && (Character.isLetterOrDigit(s.charAt(pos)) || s.charAt(pos) == '_' || s.charAt(pos) == '-')) {
                pos++;
            }
            if (start == pos) {
                throw error("expected a name");
            }
            return s.substring(start, pos);
        }

        String word() {
            skipSpace();
            int start = pos;
            while (pos < s.length() && (Character.isLetterOrDigit(s.charAt(pos)) || s.charAt(pos) == '_')) {
                pos++;
            }
            if (start == pos) {
                throw error("expected a type");
            }
            return s.substring(start, pos).toUpperCase(Locale.ROOT);
        }

        boolean acceptWord(String w) {
            skipSpace();
            int save = pos;
            if (pos < s.length() && Character.isLetter(s.charAt(pos))) {
                String got = word();
                if (got.equals(w)) {
                    return true;
                }
            }
            pos = save;
            return false;
        }

        int number() {
            skipSpace();
            int start = pos;
            while (pos < s.length() && Character.isDigit(s.charAt(pos))) {
                pos++;
            }
            if (start == pos) {
                throw error("expected a number");
            }
            return Integer.parseInt(s.substring(start, pos));
        }

        /** "(n)" if present, else def. */
        int optLength(int def) {
            if (accept('(')) {
                int n = number();
                expect(')');
                return n;
            }
            return def;
        }

        DataType type() {
            DataType t = baseType();
            if (acceptWord("NOT")) {
                if (!acceptWord("NULL")) {
                    throw error("expected NULL after NOT");
                }
                t = t.copy(false);
            } else if (acceptWord("NULL")) {
                t = t.copy(true);
            }
            return t;
        }

        DataType baseType() {
            String w = word();
            switch (w) {
                case "BOOLEAN":
                    return DataTypes.BOOLEAN();
                case "TINYINT":
                    return DataTypes.TINYINT();
                case "SMALLINT":
                    return DataTypes.SMALLINT();
                case "INT":
                case "INTEGER":
                    return DataTypes.INT();
                case "BIGINT":
                    return DataTypes.BIGINT();
                case "FLOAT":
                    return DataTypes.FLOAT();
                case "DOUBLE":
                    return DataTypes.DOUBLE();
                case "DECIMAL":
                case "NUMERIC":
                    {
                        int p = 10;
                        int sc = 0;
                        if (accept('(')) {
                            p = number();
                            if (accept(',')) {
                                sc = number();
                            }
                            expect(')');
                        }
                        return DataTypes.DECIMAL(p, sc);
                    }
                case "CHAR":
                    return DataTypes.CHAR(optLength(1));
                case "STRING":
                    return DataTypes.STRING();
                case "BINARY":
                    return DataTypes.BINARY(optLength(1));
                case "BYTES":
                    return DataTypes.BYTES();
                case "DATE":
                    return DataTypes.DATE();
                case "TIME":
                    return DataTypes.TIME(optLength(0));
                case "TIMESTAMP":
                    {
                        int p = optLength(6);
                        int save = pos;
                        if (acceptWord("WITH")) {
                            if (acceptWord("LOCAL") && acceptWord("TIME") && acceptWord("ZONE")) {
                                return DataTypes.TIMESTAMP_LTZ(p);
                            }
                            throw error("expected WITH LOCAL TIME ZONE");
                        }
                        if (acceptWord("WITHOUT")) {
                            if (acceptWord("TIME") && acceptWord("ZONE")) {
                                return DataTypes.TIMESTAMP(p);
                            }
                            throw error("expected WITHOUT TIME ZONE");
                        }
                        pos = save;
                        return DataTypes.TIMESTAMP(p);
                    }
                case "TIMESTAMP_LTZ":
                    return DataTypes.TIMESTAMP_LTZ(optLength(6));
                case "ARRAY":
                    {
                        expect('<');
                        DataType e = type();
                        expect('>');
                        return DataTypes.ARRAY(e);
                    }
                case "MAP":
                    {
                        expect('<');
                        DataType k = type();
                        expect(',');
                        DataType v = type();
                        expect('>');
                        return DataTypes.MAP(k.copy(false), v);
                    }
                case "ROW":
                    {
                        char close;
                        if (accept('<')) {
                            close = '>';
                        } else if (accept('(')) {
                            close = ')';
                        } else {
                            throw error("expected '<' after ROW");
                        }
                        List<DataField> fields = new ArrayList<>();
                        Set<String> names = new HashSet<>();
                        do {
                            String n = name();
                            DataType ft = type();
                            if (!names.add(n)) {
                                throw error("duplicate ROW field '" + n + "'");
                            }
                            fields.add(DataTypes.FIELD(n, ft));
                        } while (accept(','));
                        expect(close);
                        return DataTypes.ROW(fields.toArray(new DataField[0]));
                    }
                default:
                    throw error("unknown type " + w);
            }
        }
    }

    // ------------------------------------------------------------------
    // reflection bridge to the classes that Fluss 0.8 does not have

    static final class Nested {
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

    static final class RowSrc implements Src {
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

    static final class ArraySrc implements Src {
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

    // ------------------------------------------------------------------
    // canonical JSON (docs/json-mapping.md)

    static final class Json {
        static final char[] HEX = "0123456789abcdef".toCharArray();

        /** A JSON string: " \ and control characters escaped, everything else literal. */
        static void string(StringBuilder sb, String s) {
            sb.append('"');
            int n = s.length();
            for (int i = 0; i < n; i++) {
                char c = s.charAt(i);
                switch (c) {
                    case '"':
                        sb.append("\\\"");
                        break;
                    case '\\':
                        sb.append("\\\\");
                        break;
                    case '\b':
                        sb.append("\\b");
                        break;
                    case '\f':
                        sb.append("\\f");
                        break;
                    case '\n':
                        sb.append("\\n");
                        break;
                    case '\r':
                        sb.append("\\r");
                        break;
                    case '\t':
                        sb.append("\\t");
                        break;
                    default:
                        if (c < 0x20) {
                            sb.append("\\u00").append(HEX[c >> 4]).append(HEX[c & 0xf]);
                        } else {
                            sb.append(c);
                        }
                }
            }
            sb.append('"');
        }

        static void stringList(StringBuilder sb, List<String> l) {
            sb.append('[');
            for (int i = 0; i < l.size(); i++) {
                if (i > 0) {
                    sb.append(',');
                }
                string(sb, l.get(i));
            }
            sb.append(']');
        }

        static void doubleValue(StringBuilder sb, double d) {
            if (Double.isNaN(d)) {
                sb.append("\"NaN\"");
            } else if (d == Double.POSITIVE_INFINITY) {
                sb.append("\"Infinity\"");
            } else if (d == Double.NEGATIVE_INFINITY) {
                sb.append("\"-Infinity\"");
            } else if (d == 0) {
                sb.append(1 / d < 0 ? "-0" : "0");
            } else {
                double abs = Math.abs(d);
                boolean exp = abs < 1e-6 || abs >= 1e21;
                BigDecimal bd = shortest(d, false);
                decimalText(sb, bd, exp);
            }
        }

        static void floatValue(StringBuilder sb, float f) {
            if (Float.isNaN(f)) {
                sb.append("\"NaN\"");
            } else if (f == Float.POSITIVE_INFINITY) {
                sb.append("\"Infinity\"");
            } else if (f == Float.NEGATIVE_INFINITY) {
                sb.append("\"-Infinity\"");
            } else if (f == 0) {
                sb.append(1 / f < 0 ? "-0" : "0");
            } else {
                float abs = Math.abs(f);
                boolean exp = abs < 1e-6f || abs >= 1e21f;
                BigDecimal bd = shortest(f, true);
                decimalText(sb, bd, exp);
            }
        }

        /**
         * The decimal with the fewest significant digits that reads back (round to nearest
         * even) as the same float32 (isFloat) or float64; among those of that length the one
         * nearest to the exact value, ties to an even last digit.
         */
        static BigDecimal shortest(double v, boolean isFloat) {
            BigDecimal exact = new BigDecimal(v);
            // Java 17's toString always reads back but is not always the shortest or
            // the nearest; its digit count is only a starting point. A length that
            // works implies every longer one works, so shrink from there.
            String js = isFloat ? Float.toString((float) v) : Double.toString(v);
            int p = new BigDecimal(js).stripTrailingZeros().precision();
            int max = isFloat ? 9 : 17;
            BigDecimal best = candidate(exact, p, v, isFloat);
            while (best == null && p < max) {
                best = candidate(exact, ++p, v, isFloat);
            }
            while (p > 1) {
                BigDecimal shorter = candidate(exact, p - 1, v, isFloat);
                if (shorter == null) {
                    break;
                }
                best = shorter;
                p--;
            }
            return best != null ? best : exact.round(new MathContext(max, RoundingMode.HALF_EVEN));
        }

        /** The p-digit decimal nearest to exact that reads back as v, or null if none. */
        static BigDecimal candidate(BigDecimal exact, int p, double v, boolean isFloat) {
            BigDecimal down = exact.round(new MathContext(p, RoundingMode.DOWN));
            BigDecimal up = exact.round(new MathContext(p, RoundingMode.UP));
            boolean okDown = readsBack(down, v, isFloat);
            boolean okUp = readsBack(up, v, isFloat);
            if (okDown && okUp) {
                if (down.compareTo(up) == 0) {
                    return down;
                }
                int cmp = exact.subtract(down).abs().compareTo(up.subtract(exact).abs());
                if (cmp < 0) {
                    return down;
                }
                if (cmp > 0) {
                    return up;
                }
                return exact.round(new MathContext(p, RoundingMode.HALF_EVEN));
            }
            if (okDown) {
                return down;
            }
            if (okUp) {
                return up;
            }
            return null;
        }

        static boolean readsBack(BigDecimal bd, double v, boolean isFloat) {
            if (isFloat) {
                return Float.parseFloat(bd.toString()) == (float) v;
            }
            return Double.parseDouble(bd.toString()) == v;
        }

        /** Writes a nonzero decimal as digits in 'f' (plain) or 'e' (exponent) style. */
        static void decimalText(StringBuilder sb, BigDecimal bd, boolean expStyle) {
            bd = bd.stripTrailingZeros();
            if (bd.signum() < 0) {
                sb.append('-');
                bd = bd.negate();
            }
            String digits = bd.unscaledValue().toString();
            int n = digits.length();
            int x = n - 1 - bd.scale(); // value = d.ddd x 10^x
            if (expStyle) {
                sb.append(digits.charAt(0));
                if (n > 1) {
                    sb.append('.').append(digits, 1, n);
                }
                sb.append('e').append(x < 0 ? '-' : '+');
                int ax = Math.abs(x);
                if (x > 0 && ax < 10) {
                    sb.append('0');
                }
                sb.append(ax);
            } else if (x >= 0) {
                if (n <= x + 1) {
                    sb.append(digits);
                    for (int i = n; i < x + 1; i++) {
                        sb.append('0');
                    }
                } else {
                    sb.append(digits, 0, x + 1).append('.').append(digits, x + 1, n);
                }
            } else {
                sb.append("0.");
                for (int i = 0; i < -x - 1; i++) {
                    sb.append('0');
                }
                sb.append(digits);
            }
        }

        static void decimal(StringBuilder sb, BigDecimal v, int scale) {
            sb.append('"').append(v.setScale(scale, RoundingMode.UNNECESSARY).toPlainString()).append('"');
        }

        /** ISO date: 4-digit zero-padded year for 0..9999, else sign and at least 4 digits. */
        static void date(StringBuilder sb, long epochDay) {
            LocalDate d = LocalDate.ofEpochDay(epochDay);
            int y = d.getYear();
            if (y > 9999) {
                sb.append('+');
            } else if (y < 0) {
                sb.append('-');
            }
            pad(sb, Math.abs(y), 4);
            sb.append('-');
            pad(sb, d.getMonthValue(), 2);
            sb.append('-');
            pad(sb, d.getDayOfMonth(), 2);
        }

        static void pad(StringBuilder sb, long v, int width) {
            String s = Long.toString(v);
            for (int i = s.length(); i < width; i++) {
                sb.append('0');
            }
            sb.append(s);
        }

        /** HH:MM:SS plus, if p > 0, '.' and the first p digits of the 9-digit nanosecond. */
        static void timeOfDay(StringBuilder sb, long secondOfDay, int nanoOfSecond, int p) {
            pad(sb, secondOfDay / 3600, 2);
            sb.append(':');
            pad(sb, (secondOfDay / 60) % 60, 2);
            sb.append(':');
            pad(sb, secondOfDay % 60, 2);
            if (p > 0) {
                sb.append('.');
                String ns = Integer.toString(nanoOfSecond);
                StringBuilder nine = new StringBuilder(9);
                for (int i = ns.length(); i < 9; i++) {
                    nine.append('0');
                }
                nine.append(ns);
                sb.append(nine, 0, p);
            }
        }

        static void time(StringBuilder sb, int millisOfDay, int p) {
            long ms = Math.floorMod(millisOfDay, 86_400_000);
            timeOfDay(sb, ms / 1000, (int) (ms % 1000) * 1_000_000, p);
        }

        /** Epoch milliseconds + nano-of-millisecond (any sign) as date 'T' time. */
        static void timestamp(StringBuilder sb, long millis, int nanoOfMilli, int p) {
            long sec = Math.floorDiv(millis, 1000);
            long nano = Math.floorMod(millis, 1000) * 1_000_000L + nanoOfMilli;
            sec += Math.floorDiv(nano, 1_000_000_000L);
            nano = Math.floorMod(nano, 1_000_000_000L);
            long day = Math.floorDiv(sec, 86400);
            long secOfDay = Math.floorMod(sec, 86400);
            date(sb, day);
            sb.append('T');
            timeOfDay(sb, secOfDay, (int) nano, p);
        }
    }

    /** Renders rows of one row type as canonical JSON objects. */
    static final class Renderer {
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

    // ------------------------------------------------------------------
    // JSON input

    /** A JSON number kept as its text. */
    record JNum(String text) {}

    /** Minimal strict JSON parser: objects keep key order (LinkedHashMap). */
    static final class JsonParser {
        final String s;
        int pos;

        JsonParser(String s) {
            this.s = s;
        }

        Object parseDocument() {
            Object v = value();
            ws();
            if (pos != s.length()) {
                throw err("trailing text");
            }
            return v;
        }

        RuntimeException err(String m) {
            return new IllegalArgumentException("bad JSON: " + m + " at character " + pos);
        }

        void ws() {
            while (pos < s.length()) {
                char c = s.charAt(pos);
                if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
                    pos++;
                } else {
                    break;
                }
            }
        }

        Object value() {
            ws();
            if (pos >= s.length()) {
                throw err("unexpected end");
            }
            char c = s.charAt(pos);
            switch (c) {
                case '{':
                    {
                        pos++;
                        Map<String, Object> m = new LinkedHashMap<>();
                        ws();
                        if (peek('}')) {
                            pos++;
                            return m;
                        }
                        while (true) {
                            ws();
                            if (!peek('"')) {
                                throw err("expected a key");
                            }
                            String k = str();
                            ws();
                            if (!peek(':')) {
                                throw err("expected ':'");
                            }
                            pos++;
                            if (m.containsKey(k)) {
                                throw err("duplicate key \"" + k + "\"");
                            }
                            m.put(k, value());
                            ws();
                            if (peek(',')) {
                                pos++;
                                continue;
                            }
                            if (peek('}')) {
                                pos++;
                                return m;
                            }
                            throw err("expected ',' or '}'");
                        }
                    }
                case '[':
                    {
                        pos++;
                        List<Object> l = new ArrayList<>();
                        ws();
                        if (peek(']')) {
                            pos++;
                            return l;
                        }
                        while (true) {
                            l.add(value());
                            ws();
                            if (peek(',')) {
                                pos++;
                                continue;
                            }
                            if (peek(']')) {
                                pos++;
                                return l;
                            }
                            throw err("expected ',' or ']'");
                        }
                    }
                case '"':
                    return str();
                case 't':
                    lit("true");
                    return Boolean.TRUE;
                case 'f':
                    lit("false");
                    return Boolean.FALSE;
                case 'n':
                    lit("null");
                    return null;
                default:
                    if (c == '-' || (c >= '0' && c <= '9')) {
                        int start = pos;
                        pos++;
                        while (pos < s.length() && "0123456789+-.eE".indexOf(s.charAt(pos)) >= 0) {
                            pos++;
                        }
                        String t = s.substring(start, pos);
                        if (!t.matches("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?")) {
                            throw err("bad number " + t);
                        }
                        return new JNum(t);
                    }
                    throw err("unexpected character '" + c + "'");
            }
        }

        boolean peek(char c) {
            return pos < s.length() && s.charAt(pos) == c;
        }

        void lit(String w) {
            if (!s.startsWith(w, pos)) {
                throw err("expected " + w);
            }
            pos += w.length();
        }

        String str() {
            pos++; // opening quote
            StringBuilder sb = new StringBuilder();
            while (true) {
                if (pos >= s.length()) {
                    throw err("unterminated string");
                }
                char c = s.charAt(pos++);
                if (c == '"') {
                    return sb.toString();
                }
                if (c == '\\') {
                    if (pos >= s.length()) {
                        throw err("unterminated escape");
                    }
                    char e = s.charAt(pos++);
                    switch (e) {
                        case '"':
                        case '\\':
                        case '/':
                            sb.append(e);
                            break;
                        case 'b':
                            sb.append('\b');
                            break;
                        case 'f':
                            sb.append('\f');
                            break;
                        case 'n':
                            sb.append('\n');
                            break;
                        case 'r':
                            sb.append('\r');
                            break;
                        case 't':
                            sb.append('\t');
                            break;
                        case 'u':
                            if (pos + 4 > s.length()) {
                                throw err("short \\u escape");
                            }
                            sb.append((char) Integer.parseInt(s.substring(pos, pos + 4), 16));
                            pos += 4;
                            break;
                        default:
                            throw err("bad escape \\" + e);
                    }
                } else if (c < 0x20) {
                    throw err("control character in string");
                } else {
                    sb.append(c);
                }
            }
        }
    }

    /** Canonical JSON values to Fluss internal values (the inverse of Renderer). */
    static final class FromJson {
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

    // ------------------------------------------------------------------
    // deterministic row generator

    /**
     * Generates row i of a table from (seed, i) alone. Key columns (primary key, a column named
     * "id") come from i so that upsert/delete address the same rows; partition columns take the
     * values of the table's existing partitions.
     */
    static final class Generator {
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
}
