/*
 * FlussTool: the project's independent Fluss reader and writer, built only on
 * the official Java client (fluss-client). Tests use it to create tables, to
 * write rows the way real Fluss writers do, and to read rows back the way real
 * Fluss readers see them, rendered with the canonical JSON mapping of
 * docs/json-mapping.md so that its output can be compared byte for byte with
 * the Go decoder's.
 *
 * Java 17, no build: run it through scripts/fluss-java.sh, which compiles this
 * file and scripts/flusstool/*.java against the fluss-client jars and caches
 * the compiled classes. `scripts/fluss-java.sh help` prints the command-line
 * contract.
 *
 * This file is only the entry point; the tool lives in package flusstool:
 *   Main        usage, main(), dispatch, client configuration, shared helpers
 *   Cli         flag parsing (Args), DB.TABLE names, usage/tool exceptions
 *   Tables      DDL: databases, tables, partitions, columns, wait-ready
 *   AllTypes    the --all-types column set
 *   Writers     append / upsert / delete / generate, row sources
 *   Readers     scan (and --count-only), info, list-offsets, format-floats
 *   TypeParser  the Fluss type syntax of --columns
 *   Nested      reflection bridge to ARRAY/MAP/ROW classes (Fluss 0.9+)
 *   Json, Renderer        canonical JSON output (docs/json-mapping.md)
 *   JsonParser, FromJson  JSON input to Fluss rows
 *   Generator   the deterministic row generator of --rows
 *
 * Compatibility: the classes that only exist from Fluss 0.9 on (GenericArray,
 * GenericMap, InternalArray, InternalMap, DataGetters, TableChange.addColumn)
 * and Admin.alterTable (0.8 on) are reached through reflection, so the file
 * also compiles against the 0.8 and 0.7 clients; ARRAY, MAP and ROW values
 * and alter-table-add-column then fail with a clear message. The 0.7 client's
 * classes are com.alibaba.fluss.*: fluss-java.sh compiles a copy of these
 * sources with the org.apache.fluss prefix rewritten.
 */

public final class FlussTool {
    public static void main(String[] argv) {
        flusstool.Main.main(argv);
    }
}
