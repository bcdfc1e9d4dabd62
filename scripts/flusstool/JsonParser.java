package flusstool;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

// ------------------------------------------------------------------
// JSON input

/** A JSON number kept as its text. */
record JNum(String text) {}

/** Minimal strict JSON parser: objects keep key order (LinkedHashMap). */
final class JsonParser {
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
