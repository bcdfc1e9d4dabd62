package flusstool;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.time.LocalDate;
import java.util.List;

// ------------------------------------------------------------------
// canonical JSON (docs/json-mapping.md)

final class Json {
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
