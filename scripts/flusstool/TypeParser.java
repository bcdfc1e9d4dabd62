package flusstool;

import org.apache.fluss.types.DataField;
import org.apache.fluss.types.DataType;
import org.apache.fluss.types.DataTypes;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import static flusstool.Cli.*;
import static flusstool.Readers.*;

// ------------------------------------------------------------------
// Fluss type syntax

record Column(String name, DataType type) {}

/**
 * Parses column lists such as {@code id BIGINT NOT NULL, tags ARRAY<STRING>} in the Fluss
 * type syntax. Keywords are case-insensitive; names may be quoted with backticks.
 */
final class TypeParser {
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
