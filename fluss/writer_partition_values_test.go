package fluss

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// The expected strings are what Java 17's Double.toString and
// Float.toString print for the values (javac/java on this machine), with
// "." replaced by "_".
func TestFloatPartitionLikeJava(t *testing.T) {
	tenth := 0.1 // a variable: 0.1 + 0.2 in constants is exactly 0.3
	doubles := map[float64]string{
		1.5: "1_5", -0.25: "-0_25", 1e7: "1_0E7", 9999999.0: "9999999_0", 0.001: "0_001", 0.00099: "9_9E-4",
		3.14159: "3_14159", 100.0: "100_0", 1e21: "1_0E21", 1.0e-10: "1_0E-10", 123456.789: "123456_789",
		math.Copysign(0, -1): "-0_0", tenth + 2*tenth: "0_30000000000000004", 2e-3: "0_002", 5e-324: "4_9E-324",
		1.7976931348623157e308: "1_7976931348623157E308", math.NaN(): "NaN", math.Inf(-1): "-Inf",
	}
	for v, want := range doubles {
		if got := floatPartition(v, 64); got != want {
			t.Errorf("DOUBLE %v: %q, want %q", v, got, want)
		}
	}
	floats := map[float32]string{
		1.5: "1_5", 0.1: "0_1", 3.14159: "3_14159", 1e7: "1_0E7", 1.0e-4: "1_0E-4", 16777216: "1_6777216E7",
		0.001: "0_001", 123.456: "123_456", -2.5e-5: "-2_5E-5", float32(math.Inf(1)): "Inf",
	}
	for v, want := range floats {
		if got := floatPartition(float64(v), 32); got != want {
			t.Errorf("FLOAT %v: %q, want %q", v, got, want)
		}
	}
}

func TestTimestampPartition(t *testing.T) {
	for _, c := range []struct {
		v    int64
		unit arrow.TimeUnit
		want string
	}{
		{1764928800123, arrow.Millisecond, "2025-12-05-10-00-00_123"},
		{1764928800000, arrow.Millisecond, "2025-12-05-10-00-00_"},
		{1764928800120000, arrow.Microsecond, "2025-12-05-10-00-00_12"},
		{1764928800000000001, arrow.Nanosecond, "2025-12-05-10-00-00_000000001"},
		{-1, arrow.Millisecond, "1969-12-31-23-59-59_999"},
		{0, arrow.Second, "1970-01-01-00-00-00_"},
	} {
		got, err := timestampPartition(c.v, c.unit)
		if err != nil || got != c.want {
			t.Errorf("%d %s: %q, %v; want %q", c.v, c.unit, got, err, c.want)
		}
	}
	if _, err := timestampPartition(math.MaxInt64/2, arrow.Millisecond); err == nil {
		t.Error("a timestamp in the year 146 million named a partition")
	}
}
