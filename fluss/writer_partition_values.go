package fluss

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// floatPartition renders a FLOAT (bits 32) or DOUBLE (bits 64) as Fluss
// names partitions: Java's Float/Double.toString with "." replaced by "_",
// and NaN, Inf, -Inf. The digits are the shortest that read back as the
// value, as Java 19 and later print them (Java 17 prints more digits for a
// few values).
func floatPartition(v float64, bits int) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strings.Replace(javaFloatString(v, bits), ".", "_", 1)
}

// javaFloatString prints a finite v as Java's Double.toString (bits 64) or
// Float.toString (bits 32): plain notation with at least one fractional
// digit from 10^-3 up to 10^7, computerized scientific notation (1.0E7,
// 1.5E-4) outside it.
func javaFloatString(v float64, bits int) string {
	if v == 0 {
		if math.Signbit(v) {
			return "-0.0"
		}
		return "0.0"
	}
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	sci := v < 1e-3 || v >= 1e7
	e := strconv.FormatFloat(v, 'e', -1, bits) // d.ddde±XX
	if sci && !strings.Contains(e, ".") {
		// Java prints at least two digits in this notation, the two closest
		// to v (4.9E-324, not 5.0E-324) when they read back as v.
		if two := strconv.FormatFloat(v, 'e', 1, bits); readsBack(two, v, bits) {
			e = two
		}
	}
	mant, expPart, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expPart)
	digits := strings.Replace(mant, ".", "", 1)
	if sci {
		frac := digits[1:]
		if frac == "" {
			frac = "0"
		}
		return sign + digits[:1] + "." + frac + "E" + strconv.Itoa(exp)
	}
	if exp < 0 {
		return sign + "0." + strings.Repeat("0", -exp-1) + digits
	}
	if len(digits) <= exp+1 {
		return sign + digits + strings.Repeat("0", exp+1-len(digits)) + ".0"
	}
	return sign + digits[:exp+1] + "." + digits[exp+1:]
}

// timestampPartition renders a TIMESTAMP or TIMESTAMP_LTZ value (v in
// unit since the epoch) as Fluss names partitions: the UTC date and time
// as yyyy-MM-dd-HH-mm-ss_ followed by the fraction of the second without
// trailing zeros (nothing for a whole second).
func timestampPartition(v int64, unit arrow.TimeUnit) (string, error) {
	per := int64(unit.Multiplier()) // nanoseconds per unit
	perSec := int64(time.Second) / per
	sec, rem := v/perSec, v%perSec
	if rem < 0 {
		sec, rem = sec-1, rem+perSec
	}
	t := time.Unix(sec, rem*per).UTC()
	if t.Year() < 1 || t.Year() > 9999 {
		return "", fmt.Errorf("timestamp %s is outside the years 1 to 9999 this writer names partitions for", t.Format(time.RFC3339Nano))
	}
	frac := strings.TrimRight(fmt.Sprintf("%09d", t.Nanosecond()), "0")
	return fmt.Sprintf("%04d-%02d-%02d-%02d-%02d-%02d_%s", t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second(), frac), nil
}

// readsBack tells whether the decimal s parses back to v at bits.
func readsBack(s string, v float64, bits int) bool {
	f, err := strconv.ParseFloat(s, bits)
	return err == nil && f == v
}
