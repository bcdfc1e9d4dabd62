package jsonrow

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// plainASCII[c] is true for ASCII bytes copied as is into JSON strings.
var plainASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendString appends s as a JSON string: '"' and '\' are escaped with a
// backslash; U+0000..U+001F as \b, \t, \n, \f, \r or \u00XX (lower-case hex);
// everything else, including non-ASCII, is copied as UTF-8. Invalid UTF-8
// is replaced by U+FFFD exactly as Java decodes it (see invalidUTF8Len).
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start, i := 0, 0
	for {
		// Plain ASCII is copied in runs: skipped 8 bytes at a time, then
		// byte by byte up to the next byte that needs a look.
		for i+8 <= len(s) && plain8(load64(s, i)) {
			i += 8
		}
		for i < len(s) && s[i] < utf8.RuneSelf && plainASCII[s[i]] {
			i++
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			dst = appendEscaped(append(dst, s[start:i]...), c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
			i += invalidUTF8Len(s[i:])
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendEscaped appends the escape of ASCII byte c, '"', '\\' or a control
// character.
func appendEscaped(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}

// load64 returns the 8 bytes of s at i as a little-endian word (one load).
func load64(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// ones and high are a 64-bit word's bytes all 0x01 and all 0x80, for the
// tests of 8 bytes at once below.
const ones, high = 0x0101010101010101, 0x8080808080808080

// plain8 reports whether all 8 bytes of x are plain ASCII (plainASCII):
// none has its high bit set, is below 0x20, or is '"' or '\'. Each test
// is exact for the word as a whole (not for which byte it flags).
func plain8(x uint64) bool {
	hasZero := func(v uint64) uint64 { return (v - ones) &^ v & high }
	control := (x - 0x20*ones) &^ x & high
	return x&high|control|hasZero(x^'"'*ones)|hasZero(x^'\\'*ones) == 0
}

// isASCII reports whether b holds only bytes below 0x80.
func isASCII(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b)&high != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// invalidUTF8Len returns how many bytes of the ill-formed UTF-8 sequence at
// the start of s one U+FFFD replaces. It follows the JDK 17 UTF-8 decoder
// (new String(bytes, UTF_8), which Fluss strings go through on the Java side)
// so that both sides render invalid input identically: mostly the maximal
// subpart of the sequence (Unicode's recommended practice), but an encoded
// surrogate (ED A0..BF xx) is one replacement for its three bytes, and a
// sequence cut off by the end of the string is one replacement for all of
// its remaining bytes.
func invalidUTF8Len(s string) int {
	b1 := s[0]
	rem := len(s) - 1
	cont := func(b byte) bool { return b&0xC0 == 0x80 }
	switch {
	case b1 >= 0xC2 && b1 <= 0xDF:
		return 1
	case b1 >= 0xE0 && b1 <= 0xEF:
		if rem >= 2 {
			b2, b3 := s[1], s[2]
			e0overlong := b1 == 0xE0 && b2&0xE0 == 0x80
			if e0overlong || !cont(b2) || !cont(b3) {
				if e0overlong || !cont(b2) {
					return 1
				}
				return 2
			}
			return 3 // a surrogate code point
		}
		if rem == 1 && (b1 == 0xE0 && s[1]&0xE0 == 0x80 || !cont(s[1])) {
			return 1
		}
		return len(s)
	case b1 >= 0xF0 && b1 <= 0xF7:
		if rem >= 3 {
			b2 := s[1]
			if b1 > 0xF4 || b1 == 0xF0 && (b2 < 0x90 || b2 > 0xBF) || b1 == 0xF4 && b2&0xF0 != 0x80 || !cont(b2) {
				return 1
			}
			if !cont(s[2]) {
				return 2
			}
			return 3
		}
		if b1 > 0xF4 || rem >= 1 && (b1 == 0xF0 && (s[1] < 0x90 || s[1] > 0xBF) || b1 == 0xF4 && s[1]&0xF0 != 0x80 || !cont(s[1])) {
			return 1
		}
		if rem >= 2 && !cont(s[2]) {
			return 2
		}
		return len(s)
	default:
		return 1
	}
}

// appendBase64 appends b as a JSON string of standard padded base64.
func appendBase64(dst, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

// appendFloat appends a FLOAT (bitSize 32) or DOUBLE (64) value: NaN and
// infinities as the strings "NaN", "Infinity", "-Infinity"; other values as
// the shortest decimal that reads back to the same float32/float64, in
// plain notation when 1e-6 <= |v| < 1e21 and in exponent notation
// otherwise (d[.ddd]e±x, no leading zeros or '+' padding in the exponent
// beyond the sign) — the ECMAScript Number-to-String rule that Go's
// encoding/json also follows. -0 is written as -0.
func appendFloat(dst []byte, v float64, bitSize int) []byte {
	switch {
	case math.IsNaN(v):
		return append(dst, `"NaN"`...)
	case math.IsInf(v, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(v, -1):
		return append(dst, `"-Infinity"`...)
	}
	abs := math.Abs(v)
	format := byte('f')
	if abs != 0 {
		if bitSize == 64 && (abs < 1e-6 || abs >= 1e21) ||
			bitSize == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	n := len(dst)
	dst = strconv.AppendFloat(dst, v, format, -1, bitSize)
	if format == 'e' {
		// clean up e-09 to e-9 (as ECMAScript and encoding/json do)
		m := len(dst) - n
		if m >= 4 && dst[len(dst)-4] == 'e' && dst[len(dst)-3] == '-' && dst[len(dst)-2] == '0' {
			dst[len(dst)-2] = dst[len(dst)-1]
			dst = dst[:len(dst)-1]
		}
	}
	return dst
}

// appendDecimal appends the DECIMAL value with the given 128-bit two's
// complement unscaled value (hi:lo) and scale as a JSON string with exactly
// scale fraction digits ("-0.05", "12.30", "7").
func appendDecimal(dst []byte, hi int64, lo uint64, scale int) []byte {
	neg := hi < 0
	uhi := uint64(hi)
	if neg {
		var borrow uint64
		lo, borrow = bits.Sub64(0, lo, 0)
		uhi, _ = bits.Sub64(0, uhi, borrow)
	}
	// digits of the magnitude, least significant chunk first
	var buf [40]byte
	pos := len(buf)
	const chunk = 10_000_000_000_000_000_000 // 1e19
	for {
		var r uint64
		var q1, q0 uint64
		q1, r = bits.Div64(0, uhi, chunk)
		q0, r = bits.Div64(r, lo, chunk)
		uhi, lo = q1, q0
		if uhi == 0 && lo == 0 {
			for r > 0 {
				pos--
				buf[pos] = byte('0' + r%10)
				r /= 10
			}
			break
		}
		for k := 0; k < 19; k++ {
			pos--
			buf[pos] = byte('0' + r%10)
			r /= 10
		}
	}
	digits := buf[pos:]
	dst = append(dst, '"')
	if neg {
		dst = append(dst, '-')
	}
	if scale <= 0 {
		if len(digits) == 0 {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
		return append(dst, '"')
	}
	if len(digits) <= scale {
		dst = append(dst, '0', '.')
		for k := len(digits); k < scale; k++ {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
		return append(dst, '"')
	}
	intLen := len(digits) - scale
	dst = append(dst, digits[:intLen]...)
	dst = append(dst, '.')
	dst = append(dst, digits[intLen:]...)
	return append(dst, '"')
}

// civil returns the proleptic Gregorian date of a day count since 1970-01-01
// (H. Hinnant's days-to-civil algorithm).
func civil(days int64) (year int64, month, day int) {
	z := days + 719468
	era := z
	if z < 0 {
		era = z - 146096
	}
	era /= 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if mp >= 10 {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return y, int(m), int(d)
}

// appendYear writes an ISO-8601 year as java.time does: 4 digits with
// leading zeros for 0..9999, '+' and all digits above 9999, '-' and at least
// 4 digits below 0.
func appendYear(dst []byte, y int64) []byte {
	switch {
	case y > 9999:
		dst = append(dst, '+')
		return strconv.AppendInt(dst, y, 10)
	case y < 0:
		dst = append(dst, '-')
		if y > -10000 {
			return append4(dst, int(-y))
		}
		return strconv.AppendUint(dst, uint64(-y), 10) // -y of MinInt64 wraps to itself as uint64 correctly
	default:
		return append4(dst, int(y))
	}
}

func append2(dst []byte, v int) []byte {
	return append(dst, byte('0'+v/10), byte('0'+v%10))
}

func append4(dst []byte, v int) []byte {
	return append(dst, byte('0'+v/1000), byte('0'+v/100%10), byte('0'+v/10%10), byte('0'+v%10))
}

// appendDate appends "YYYY-MM-DD" without quotes.
func appendDate(dst []byte, days int64) []byte {
	y, m, d := civil(days)
	dst = appendYear(dst, y)
	dst = append(dst, '-')
	dst = append2(dst, m)
	dst = append(dst, '-')
	return append2(dst, d)
}

// appendClock appends "HH:MM:SS" and, when precision > 0, '.' and the first
// precision digits of the 9-digit nanosecond fraction, without quotes.
func appendClock(dst []byte, secOfDay int64, nanos int64, precision int) []byte {
	h := secOfDay / 3600
	if h < 100 {
		dst = append2(dst, int(h))
	} else {
		dst = strconv.AppendInt(dst, h, 10)
	}
	dst = append(dst, ':')
	dst = append2(dst, int(secOfDay/60%60))
	dst = append(dst, ':')
	dst = append2(dst, int(secOfDay%60))
	return appendFraction(dst, nanos, precision)
}

var pow10 = [...]int64{1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000}

func appendFraction(dst []byte, nanos int64, precision int) []byte {
	if precision <= 0 {
		return dst
	}
	if precision > 9 {
		precision = 9
	}
	v := nanos / pow10[9-precision]
	n := len(dst) + 1 + precision
	dst = append(dst, ".000000000"[:1+precision]...)
	for k := n - 1; k > n-1-precision && v > 0; k-- {
		dst[k] = byte('0' + v%10)
		v /= 10
	}
	return dst
}

// floorDiv returns floor(a/b) and the non-negative remainder, b > 0.
func floorDiv(a, b int64) (int64, int64) {
	q, r := a/b, a%b
	if r < 0 {
		q--
		r += b
	}
	return q, r
}

// appendTimestamp appends "YYYY-MM-DDTHH:MM:SS[.f…]" (no quotes) for an
// instant given as seconds and nanoseconds (0..999999999) since the epoch.
func appendTimestamp(dst []byte, sec, nanos int64, precision int) []byte {
	var c dateCache
	return c.appendTimestamp(dst, sec, nanos, precision)
}

// dateCache remembers the text of the last date rendered: the values of a
// column often fall on the same day, and the calendar arithmetic dominates.
type dateCache struct {
	days int64
	n    int // length of text; 0 = empty
	text [24]byte
}

func (c *dateCache) appendDate(dst []byte, days int64) []byte {
	if c.n == 0 || c.days != days {
		t := appendDate(c.text[:0], days)
		if len(t) > len(c.text) { // cannot happen for int64 inputs; never index past the array
			c.n = 0
			return append(dst, t...)
		}
		c.n = len(t)
		c.days = days
	}
	return append(dst, c.text[:c.n]...)
}

func (c *dateCache) appendTimestamp(dst []byte, sec, nanos int64, precision int) []byte {
	days, secOfDay := floorDiv(sec, 86400)
	dst = c.appendDate(dst, days)
	dst = append(dst, 'T')
	return appendClock(dst, secOfDay, nanos, precision)
}

// AppendString appends s as a canonical JSON string (the rule used for CHAR
// and STRING values and for object keys), for callers that build JSON lines
// around rows, e.g. partition names.
func AppendString(dst []byte, s string) []byte { return appendString(dst, s) }

// AppendFloat64 appends v as a canonical JSON DOUBLE value.
func AppendFloat64(dst []byte, v float64) []byte { return appendFloat(dst, v, 64) }
