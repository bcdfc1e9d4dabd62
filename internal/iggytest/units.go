package iggytest

import (
	"strconv"
	"strings"
	"unicode"
)

// Approximations of the humantime and byte-unit parsing a 0.9 server
// applies to String option values.

// parseHumanDuration reads "7 days", "1h 30m", "90s" or a bare number of
// seconds and returns microseconds.
func parseHumanDuration(s string) (uint64, bool) {
	units := map[string]float64{
		"us": 1, "usec": 1, "ms": 1e3, "msec": 1e3,
		"s": 1e6, "sec": 1e6, "secs": 1e6, "second": 1e6, "seconds": 1e6,
		"m": 60e6, "min": 60e6, "mins": 60e6, "minute": 60e6, "minutes": 60e6,
		"h": 3600e6, "hr": 3600e6, "hrs": 3600e6, "hour": 3600e6, "hours": 3600e6,
		"d": 86400e6, "day": 86400e6, "days": 86400e6,
		"w": 604800e6, "week": 604800e6, "weeks": 604800e6,
		"M": 2630016e6, "month": 2630016e6, "months": 2630016e6,
		"y": 31557600e6, "year": 31557600e6, "years": 31557600e6,
	}
	return sumQuantities(s, func(unit string) (float64, bool) {
		if unit == "" {
			return 1e6, true
		}
		f, ok := units[unit]
		return f, ok
	})
}

// parseByteSize reads "128MiB", "1 GB", "512 KiB" or a bare number of
// bytes.
func parseByteSize(s string) (uint64, bool) {
	units := map[string]float64{
		"": 1, "b": 1,
		"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
		"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
	}
	return sumQuantities(s, func(unit string) (float64, bool) {
		f, ok := units[strings.ToLower(unit)]
		return f, ok
	})
}

// sumQuantities adds up "<number><unit>" terms (spaces allowed anywhere
// between them) scaled by scale.
func sumQuantities(s string, scale func(string) (float64, bool)) (uint64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	var total float64
	for s != "" {
		i := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsDigit(r) && r != '.' })
		if i < 0 {
			i = len(s)
		}
		n, err := strconv.ParseFloat(s[:i], 64)
		if i == 0 || err != nil {
			return 0, false
		}
		s = strings.TrimLeft(s[i:], " ")
		j := strings.IndexFunc(s, func(r rune) bool { return unicode.IsDigit(r) || r == ' ' })
		if j < 0 {
			j = len(s)
		}
		f, ok := scale(s[:j])
		if !ok {
			return 0, false
		}
		total += n * f
		s = strings.TrimLeft(s[j:], " ")
	}
	if total >= 1<<64 {
		return 0, false
	}
	return uint64(total), true
}
