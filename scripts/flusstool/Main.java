package flusstool;

import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.config.Configuration;

import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static flusstool.Cli.*;
import static flusstool.Tables.*;
import static flusstool.Writers.*;
import static flusstool.Readers.*;

/**
 * Entry point and dispatch: usage text, main(), error rendering, the command
 * switch, the client configuration and the helpers every command uses.
 */
public final class Main {

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
                    "  state DB.TABLE [--columns a,b] [--partition NAME]   current rows of a",
                    "      primary-key table replayed from its changelog, by partition and key",
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
                        out.println(c.name() + " " + c.type().asSerializableString());
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
                    case "state":
                        return State.state(a, conn, admin, out);
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
}
