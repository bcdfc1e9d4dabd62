package flusstool;

import org.apache.fluss.client.Connection;
import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.client.table.writer.AppendWriter;
import org.apache.fluss.client.table.writer.UpsertWriter;
import org.apache.fluss.metadata.TableInfo;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.types.RowType;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static flusstool.Main.*;
import static flusstool.Cli.*;
import static flusstool.Tables.*;
import static flusstool.Readers.*;

/**
 * Writer commands: append, upsert and delete (from a JSON lines file or from
 * the deterministic generator), and generate.
 */
final class Writers {
    private Writers() {}


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
        try (Table table = openTable(conn, path)) {
            TableInfo ti = table.getTableInfo();
            RowType rt = ti.getRowType();
            boolean pkTable = ti.hasPrimaryKey();
            if (a.command.equals("append") && pkTable) {
                throw new UsageException(path + " has a primary key: use upsert/delete, not append");
            }
            if (!a.command.equals("append") && !pkTable) {
                throw new UsageException(path + " is a log table (no primary key): use append");
            }
            Nested.requireWritable(path, rt);
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
}
