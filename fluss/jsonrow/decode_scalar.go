package jsonrow

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// The conversions of JSON scalars to slots, shared by the byte and the
// structured paths. They return bad(...) errors that the caller completes
// with the value's text, type and path.

// setScalar stores a non-null scalar value in slot si.
func (b *RowBuilder) setScalar(si int32, i, j int64) {
	s := &b.tape[si]
	s.flags |= slotSet
	s.i, s.j = i, j
}

// setBool stores a JSON true or false.
func (b *RowBuilder) setBool(n *dnode, si int32, v bool) error {
	if n.kind != types.KindBoolean {
		return bad("is a boolean, " + n.want)
	}
	var i int64
	if v {
		i = 1
	}
	b.setScalar(si, i, 0)
	return nil
}

// setNumber stores a JSON number (its text, checked to be one).
func (b *RowBuilder) setNumber(n *dnode, si int32, num []byte) error {
	switch n.kind {
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
		v, err := b.exactInt(num)
		if err == nil && (v < n.lo || v > n.hi) {
			err = errOutOfRange
		}
		if err == errOutOfRange {
			return bad(fmt.Sprintf("is out of range [%d, %d]", n.lo, n.hi))
		}
		if err != nil {
			return err
		}
		b.setScalar(si, v, 0)
	case types.KindFloat:
		f, err := parseFloat(num, 32)
		if err != nil {
			return err
		}
		b.setScalar(si, int64(math.Float32bits(float32(f))), 0)
	case types.KindDouble:
		f, err := parseFloat(num, 64)
		if err != nil {
			return err
		}
		b.setScalar(si, int64(math.Float64bits(f)), 0)
	case types.KindDecimal:
		return b.setDecimal(n, si, num)
	default:
		return bad("is a number, " + n.want)
	}
	return nil
}

// parseFloat parses a JSON number correctly rounded, like Java's
// Float.parseFloat and Double.parseDouble: beyond the range it is infinite
// (no error), below it zero.
func parseFloat(num []byte, bitSize int) (float64, error) {
	f, err := strconv.ParseFloat(unsafeString(num), bitSize)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, bad("is not a number")
	}
	return f, nil
}

// setString stores a JSON string (its decoded text) for n.
func (b *RowBuilder) setString(n *dnode, si int32, s []byte) error {
	switch n.kind {
	case types.KindChar, types.KindString:
		start := len(b.text)
		b.text = append(b.text, s...)
		b.setScalar(si, int64(start), int64(len(b.text)))
	case types.KindFloat, types.KindDouble:
		f, ok := specialFloat(s)
		if !ok {
			return bad("is not a number, " + n.want)
		}
		if n.kind == types.KindFloat {
			b.setScalar(si, int64(math.Float32bits(float32(f))), 0)
		} else {
			b.setScalar(si, int64(math.Float64bits(f)), 0)
		}
	case types.KindDecimal:
		return b.setDecimal(n, si, s)
	case types.KindBinary, types.KindBytes:
		return b.setBase64(n, si, s)
	case types.KindDate, types.KindTime, types.KindTimestamp, types.KindTimestampLTZ:
		return b.setTemporal(n, si, s)
	default:
		return bad("is a string, " + n.want)
	}
	return nil
}

// specialFloat reads the strings FLOAT and DOUBLE take.
func specialFloat(s []byte) (float64, bool) {
	switch string(s) {
	case "NaN":
		return math.NaN(), true
	case "Infinity":
		return math.Inf(1), true
	case "-Infinity":
		return math.Inf(-1), true
	}
	return 0, false
}

// setBase64 stores BINARY(n) or BYTES given as base64, read as
// java.util.Base64's basic decoder does: the standard alphabet, padding
// optional but right when present, no line breaks.
func (b *RowBuilder) setBase64(n *dnode, si int32, s []byte) error {
	enc := base64.StdEncoding
	switch {
	case bytes.IndexByte(s, '\r') >= 0 || bytes.IndexByte(s, '\n') >= 0:
		return bad("is not base64: it has a line break")
	case len(s)%4 != 0 && bytes.IndexByte(s, '=') >= 0:
		return bad("is not base64: wrong padding")
	case len(s)%4 != 0:
		enc = base64.RawStdEncoding
	}
	start := len(b.text)
	out, err := enc.AppendDecode(b.text, s)
	if err != nil {
		b.text = b.text[:start]
		return bad("is not base64")
	}
	b.text = out
	if size := len(out) - start; n.kind == types.KindBinary && size != n.length {
		b.text = b.text[:start]
		return badLength(size, n.length)
	}
	b.setScalar(si, int64(start), int64(len(b.text)))
	return nil
}

// badLength is the error of a BINARY(n) value of another length.
func badLength(size, n int) error {
	unit := "bytes"
	if size == 1 {
		unit = "byte"
	}
	return bad(fmt.Sprintf("is %d %s, BINARY(%d) takes exactly %d", size, unit, n, n))
}

// errOutOfRange marks an integer beyond int64.
var errOutOfRange = errors.New("out of range")

// decimalText is a decimal number split into its significant digits
// (no leading or trailing zeros; none for zero) and the power of ten
// they are multiplied by.
type decimalText struct {
	neg    bool
	digits []byte
	exp    int64
}

// splitDecimal splits s written as java.math.BigDecimal reads it (a sign,
// digits with at most one '.', an exponent), the grammar of DECIMAL
// strings and a superset of JSON numbers. The exponent must fit an int
// and so must the scale, as in Java. The digits go to b.num.
func (b *RowBuilder) splitDecimal(s []byte) (decimalText, error) {
	var d decimalText
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		d.neg = s[i] == '-'
		i++
	}
	b.num = b.num[:0]
	nd, frac, dot := 0, int64(0), false
	for ; i < len(s); i++ {
		c := s[i]
		if c == '.' && !dot {
			dot = true
			continue
		}
		if c < '0' || c > '9' {
			break
		}
		nd++
		if dot {
			frac++
		}
		if c != '0' || len(b.num) > 0 {
			b.num = append(b.num, c)
		}
	}
	if nd == 0 {
		return d, bad("is not a decimal number")
	}
	exp, i, err := splitExponent(s, i)
	if err != nil {
		return d, err
	}
	if i != len(s) {
		return d, bad("is not a decimal number")
	}
	if scale := frac - exp; scale < math.MinInt32 || scale > math.MaxInt32 {
		return d, bad("has an exponent out of range")
	}
	d.exp = exp - frac
	for len(b.num) > 0 && b.num[len(b.num)-1] == '0' {
		b.num = b.num[:len(b.num)-1]
		d.exp++
	}
	d.digits = b.num
	return d, nil
}

// splitExponent reads the exponent at s[i:], if any.
func splitExponent(s []byte, i int) (int64, int, error) {
	if i >= len(s) || s[i] != 'e' && s[i] != 'E' {
		return 0, i, nil
	}
	i++
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	var exp int64
	start := i
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if exp <= math.MaxInt32+1 {
			exp = exp*10 + int64(s[i]-'0')
		}
	}
	if i == start {
		return 0, i, bad("is not a decimal number")
	}
	if neg {
		exp = -exp
	}
	if exp < math.MinInt32 || exp > math.MaxInt32 {
		return 0, i, bad("has an exponent out of range")
	}
	return exp, i, nil
}

// exactInt reads a JSON number that must be an integer (1.0 and 1e2 are;
// 1.5 is not), as BigDecimal's longValueExact does.
func (b *RowBuilder) exactInt(num []byte) (int64, error) {
	if v, ok := plainInt(num); ok {
		return v, nil
	}
	d, err := b.splitDecimal(num)
	if err != nil {
		return 0, err
	}
	if len(d.digits) == 0 {
		return 0, nil
	}
	if d.exp < 0 {
		return 0, bad("is not an integer")
	}
	if int64(len(d.digits))+d.exp > 19 {
		return 0, errOutOfRange
	}
	var u uint64
	for _, c := range d.digits {
		u = u*10 + uint64(c-'0')
	}
	for k := int64(0); k < d.exp; k++ {
		u *= 10 // at most 19 digits: no overflow
	}
	return signed(u, d.neg)
}

// plainInt reads an integer of at most 18 digits without '.' or exponent.
func plainInt(num []byte) (int64, bool) {
	i := 0
	neg := len(num) > 0 && num[0] == '-'
	if neg {
		i = 1
	}
	if len(num)-i > 18 || len(num) == i {
		return 0, false
	}
	var v int64
	for ; i < len(num); i++ {
		c := num[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// signed applies a sign to a magnitude, failing beyond int64.
func signed(u uint64, neg bool) (int64, error) {
	switch {
	case neg && u <= 1<<63:
		return int64(-u), nil
	case !neg && u <= math.MaxInt64:
		return int64(u), nil
	}
	return 0, errOutOfRange
}

// setDecimal stores DECIMAL(p,s) given as a number or a string: exact (no
// rounding: at most s fraction digits that are not zero) and at most p-s
// integer digits, as BigDecimal.setScale(s, UNNECESSARY) and Fluss's
// Decimal.fromBigDecimal check.
func (b *RowBuilder) setDecimal(n *dnode, si int32, s []byte) error {
	d, err := b.splitDecimal(s)
	if err != nil {
		return err
	}
	var hi, lo uint64
	if len(d.digits) > 0 {
		if d.exp < -int64(n.scale) {
			return bad(fmt.Sprintf("has %d fraction digits, at most %d", -d.exp, n.scale))
		}
		if ints := int64(len(d.digits)) + d.exp; ints > int64(n.prec-n.scale) {
			return bad(fmt.Sprintf("has %d integer digits, at most %d", ints, n.prec-n.scale))
		}
		for _, c := range d.digits {
			hi, lo = mulAdd128(hi, lo, 10, uint64(c-'0'))
		}
		for k := d.exp + int64(n.scale); k > 0; k-- {
			hi, lo = mulAdd128(hi, lo, 10, 0)
		}
		if d.neg {
			var borrow uint64
			lo, borrow = bits.Sub64(0, lo, 0)
			hi, _ = bits.Sub64(0, hi, borrow)
		}
	}
	b.setScalar(si, int64(lo), int64(hi))
	return nil
}

// mulAdd128 returns hi:lo × m + a (no overflow for at most 38 digits).
func mulAdd128(hi, lo, m, a uint64) (uint64, uint64) {
	h, l := bits.Mul64(lo, m)
	l, carry := bits.Add64(l, a, 0)
	return hi*m + h + carry, l
}
