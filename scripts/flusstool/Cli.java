package flusstool;

import org.apache.fluss.metadata.TablePath;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Command-line parsing: the exceptions main() maps to exit codes, the flag
 * parser (Args) and DB.TABLE names.
 */
final class Cli {
    private Cli() {}


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
}
