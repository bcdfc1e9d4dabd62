package jsonrow

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// The java.time ISO forms the Java tool parses: LocalDate, LocalTime,
// LocalDateTime and OffsetDateTime (ISO_LOCAL_DATE, ISO_LOCAL_TIME,
// ISO_LOCAL_DATE_TIME, ISO_OFFSET_DATE_TIME), strictly as java.time does.

// setTemporal stores DATE, TIME, TIMESTAMP or TIMESTAMP_LTZ given as text.
func (b *RowBuilder) setTemporal(n *dnode, si int32, s []byte) error {
	days, i, err := parseISODate(s, n.kind != types.KindTime)
	if err != nil {
		return err
	}
	if n.kind == types.KindDate {
		if i != len(s) {
			return notDate()
		}
		return b.setDate(si, days)
	}
	if n.kind == types.KindTime {
		nanos, i, err := parseISOTime(s, 0)
		if err != nil {
			return err
		}
		if i != len(s) {
			return notTime()
		}
		b.setTime(n, si, nanos/1_000_000)
		return nil
	}
	if i >= len(s) || s[i] != 'T' && s[i] != 't' {
		return bad(`is not a timestamp: want "YYYY-MM-DDTHH:MM[:SS[.fraction]]"`)
	}
	nanos, i, err := parseISOTime(s, i+1)
	if err != nil {
		return err
	}
	var offset int64
	if n.kind == types.KindTimestampLTZ {
		if offset, i, err = parseOffset(s, i); err != nil {
			return err
		}
	}
	if i != len(s) {
		return bad("is not a timestamp: unexpected text after the time")
	}
	return b.setTimestamp(n, si, days*86400+nanos/1e9-offset, nanos%1e9)
}

// setDate stores a DATE, a 32-bit day count.
func (b *RowBuilder) setDate(si int32, days int64) error {
	if days < math.MinInt32 || days > math.MaxInt32 {
		return bad("is out of the range of DATE (-5877641-06-23 to +5881580-07-11)")
	}
	b.setScalar(si, days, 0)
	return nil
}

// setTime stores a TIME: milliseconds of the day, cut to its precision.
func (b *RowBuilder) setTime(n *dnode, si int32, millis int64) {
	if n.prec < 3 {
		millis -= millis % pow10[3-n.prec]
	}
	b.setScalar(si, millis, 0)
}

// setTimestamp stores an instant (seconds and nanoseconds since the
// epoch, 0 <= nanos < 1e9) cut to the precision of n. It fails when the
// Arrow column or Fluss's millisecond count cannot hold it.
func (b *RowBuilder) setTimestamp(n *dnode, si int32, sec, nanos int64) error {
	nanos -= nanos % pow10[9-n.prec]
	if !fitsUnit(sec, nanos, arrow.Millisecond) || !fitsUnit(sec, nanos, n.unit) {
		return bad(fmt.Sprintf("is out of the range of %s", n.typ))
	}
	b.setScalar(si, sec, nanos)
	return nil
}

// fitsUnit reports whether sec+nanos/1e9 counted in unit fits an int64.
func fitsUnit(sec, nanos int64, unit arrow.TimeUnit) bool {
	var per, sub int64
	switch unit {
	case arrow.Second:
		return true
	case arrow.Millisecond:
		per, sub = 1000, nanos/1_000_000
	case arrow.Microsecond:
		per, sub = 1_000_000, nanos/1000
	default:
		per, sub = 1_000_000_000, nanos
	}
	if sec >= 0 {
		return sec <= (math.MaxInt64-sub)/per
	}
	// sec*per + sub = (sec+1)*per - (per-sub), with 0 <= sub < per; the
	// division truncates toward zero, which for a negative bound is its
	// ceiling.
	return sec+1 >= (math.MinInt64+(per-sub))/per
}

func notDate() error { return bad(`is not a date: want "YYYY-MM-DD"`) }

func notTime() error { return bad(`is not a time: want "HH:MM[:SS[.fraction]]"`) }

func notOffset() error {
	return bad("is not a timestamp with a zone: want Z or an offset (+HH:MM) after the time")
}

// digitsAt reads exactly w ASCII digits at s[i:].
func digitsAt(s []byte, i, w int) (int64, bool) {
	if i+w > len(s) {
		return 0, false
	}
	var v int64
	for _, c := range s[i : i+w] {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

// parseISODate reads the ISO_LOCAL_DATE at the start of s (when date is
// set; else it reads nothing) and returns the day since 1970-01-01 and the
// index after it. Years are 4 digits, or 5 to 10 after '+', or 4 to 10
// after '-', within ±999,999,999; the day must exist.
func parseISODate(s []byte, date bool) (int64, int, error) {
	if !date {
		return 0, 0, nil
	}
	i := 0
	var sign byte
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		sign, i = s[0], 1
	}
	j := i
	for j < len(s) && j-i < 10 && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	nd := j - i
	year, _ := digitsAt(s, i, nd)
	switch {
	case sign == 0 && nd != 4, sign == '+' && nd <= 4, sign == '-' && (nd < 4 || year == 0):
		return 0, 0, notDate()
	case year > 999_999_999:
		return 0, 0, bad("has a year beyond ±999999999")
	case sign == '-':
		year = -year
	}
	month, okM := digitsAt(s, j+1, 2)
	day, okD := digitsAt(s, j+4, 2)
	if !okM || !okD || s[j] != '-' || s[j+3] != '-' {
		return 0, 0, notDate()
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) {
		return 0, 0, bad(fmt.Sprintf("is not a date: %04d-%02d has no day %d", year, month, day))
	}
	return daysFromCivil(year, month, day), j + 6, nil
}

// daysIn returns the number of days of a month of the proleptic Gregorian
// calendar.
func daysIn(year, month int64) int64 {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil returns the day count since 1970-01-01 of a proleptic
// Gregorian date (H. Hinnant's days-from-civil), the inverse of civil.
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if y < 0 {
		era = y - 399
	}
	era /= 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// parseISOTime reads an ISO_LOCAL_TIME at s[i:], HH:MM[:SS[.fraction]]
// with 0 to 9 fraction digits, and returns its nanosecond of the day and
// the index after it.
func parseISOTime(s []byte, i int) (int64, int, error) {
	h, okH := digitsAt(s, i, 2)
	m, okM := digitsAt(s, i+3, 2)
	if !okH || !okM || s[i+2] != ':' {
		return 0, 0, notTime()
	}
	i += 5
	var sec, frac int64
	if i < len(s) && s[i] == ':' {
		if v, ok := digitsAt(s, i+1, 2); ok {
			sec, i = v, i+3
			if i < len(s) && s[i] == '.' {
				frac, i = fraction(s, i+1)
			}
		}
	}
	if h > 23 || m > 59 || sec > 59 {
		return 0, 0, bad(fmt.Sprintf("is not a time: %02d:%02d:%02d is out of range", h, m, sec))
	}
	return ((h*60+m)*60+sec)*1e9 + frac, i, nil
}

// fraction reads up to 9 digits at s[i:] as nanoseconds.
func fraction(s []byte, i int) (int64, int) {
	var v int64
	k := 0
	for ; k < 9 && i+k < len(s) && s[i+k] >= '0' && s[i+k] <= '9'; k++ {
		v = v*10 + int64(s[i+k]-'0')
	}
	return v * pow10[9-k], i + k
}

// parseOffset reads the zone offset of ISO_OFFSET_DATE_TIME at s[i:], as
// java.time parses it there (leniently): Z, or ±HH, ±HH:MM or ±HH:MM:SS up
// to ±18:00; it returns the offset in seconds.
func parseOffset(s []byte, i int) (int64, int, error) {
	if i < len(s) && (s[i] == 'Z' || s[i] == 'z') {
		return 0, i + 1, nil
	}
	if i >= len(s) || s[i] != '+' && s[i] != '-' {
		return 0, 0, notOffset()
	}
	neg := s[i] == '-'
	h, ok := digitsAt(s, i+1, 2)
	if !ok {
		return 0, 0, notOffset()
	}
	i += 3
	var m, sec int64
	if v, ok := digitsAt(s, i+1, 2); ok && s[i] == ':' && v <= 59 {
		m, i = v, i+3
		if v, ok := digitsAt(s, i+1, 2); ok && s[i] == ':' && v <= 59 {
			sec, i = v, i+3
		}
	}
	off := (h*60+m)*60 + sec
	if h > 23 || off > 18*3600 {
		return 0, 0, bad("has a zone offset beyond ±18:00")
	}
	if neg {
		off = -off
	}
	return off, i, nil
}
