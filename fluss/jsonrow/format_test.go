package jsonrow

import (
	"encoding/json"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "abc", "é✓😀", "\x00\x1f\"\\", "\xff\xc3", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := appendString(nil, s)
		if !json.Valid(out) || !utf8.Valid(out) {
			t.Fatalf("invalid JSON %q for %q", out, s)
		}
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatal(err)
		}
		want := strings.ToValidUTF8(s, "\uFFFD")
		if utf8.ValidString(s) && back != s {
			t.Fatalf("%q decodes to %q", s, back)
		}
		if !utf8.ValidString(s) && utf8.RuneCountInString(back) < utf8.RuneCountInString(want) {
			t.Fatalf("%q decodes to %q", s, back)
		}
	})
}

func FuzzAppendDecimal(f *testing.F) {
	f.Add(int64(0), uint64(0), uint8(0))
	f.Add(int64(-1), uint64(0), uint8(5))
	f.Add(int64(5421010862427522170), uint64(687399551400673279), uint8(38)) // 10^38-1
	f.Add(int64(0), uint64(10_000_000_000_000_000_000), uint8(1))
	f.Fuzz(func(t *testing.T, hi int64, lo uint64, scale uint8) {
		sc := int(scale % 39)
		got := string(appendDecimal(nil, hi, lo, sc))
		n := new(big.Int).Lsh(big.NewInt(hi), 64)
		n.Add(n, new(big.Int).SetUint64(lo))
		neg := n.Sign() < 0
		digits := new(big.Int).Abs(n).String()
		if sc > 0 {
			if len(digits) <= sc {
				digits = strings.Repeat("0", sc-len(digits)+1) + digits
			}
			digits = digits[:len(digits)-sc] + "." + digits[len(digits)-sc:]
		}
		if neg {
			digits = "-" + digits
		}
		if want := `"` + digits + `"`; got != want {
			t.Fatalf("decimal %d:%d scale %d = %s, want %s", hi, lo, sc, got, want)
		}
	})
}

func FuzzAppendFloat(f *testing.F) {
	for _, v := range []float64{0, 1, -1.5, 1e21, 1e-7, 5e-324, math.MaxFloat64, 0.1, 123456789} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		for _, bits := range []int{32, 64} {
			x := v
			if bits == 32 {
				x = float64(float32(v))
			}
			out := appendFloat(nil, x, bits)
			if !json.Valid(out) {
				t.Fatalf("invalid JSON %s for %v", out, x)
			}
			if math.IsNaN(x) || math.IsInf(x, 0) {
				continue
			}
			back, err := strconv.ParseFloat(string(out), bits)
			if err != nil || back != x || math.Signbit(back) != math.Signbit(x) {
				t.Fatalf("%v (%d bits) -> %s -> %v %v", x, bits, out, back, err)
			}
			// plain notation exactly in [1e-6, 1e21)
			abs := math.Abs(x)
			hasE := strings.ContainsAny(string(out), "e")
			if bits == 64 && abs != 0 && (abs < 1e-6 || abs >= 1e21) != hasE {
				t.Fatalf("%v -> %s: notation", x, out)
			}
			// encoding/json agrees for float64 values
			if bits == 64 {
				j, _ := json.Marshal(x)
				if string(j) != string(out) {
					t.Fatalf("%v: %s, encoding/json %s", x, out, j)
				}
			}
		}
	})
}

// TestPlain8 checks the word test of appendString's fast path against
// plainASCII: every byte value at every position of words otherwise plain,
// and random words.
func TestPlain8(t *testing.T) {
	want := func(w [8]byte) bool {
		for _, c := range w {
			if c >= utf8.RuneSelf || !plainASCII[c] {
				return false
			}
		}
		return true
	}
	check := func(w [8]byte) {
		t.Helper()
		if got := plain8(load64(string(w[:]), 0)); got != want(w) {
			t.Fatalf("plain8(%q) = %v", w[:], got)
		}
	}
	for _, fill := range []byte{' ', '!', '#', '[', ']', 'a', '~', 0x7f} {
		for p := 0; p < 8; p++ {
			for c := 0; c < 256; c++ {
				var w [8]byte
				for i := range w {
					w[i] = fill
				}
				w[p] = byte(c)
				check(w)
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 1_000_000; n++ {
		var w [8]byte
		for i := range w {
			// mostly printable, sometimes anything
			if r.IntN(8) == 0 {
				w[i] = byte(r.IntN(256))
			} else {
				w[i] = byte(0x20 + r.IntN(0x60))
			}
		}
		check(w)
	}
}

// TestIsASCII puts one byte of 0x80 or more at every position of buffers
// of every length up to 20 (the word loop and the tail).
func TestIsASCII(t *testing.T) {
	for n := 0; n <= 20; n++ {
		b := []byte(strings.Repeat("~", n))
		if !isASCII(b) {
			t.Fatalf("%q: not ASCII", b)
		}
		for p := 0; p < n; p++ {
			for _, c := range []byte{0x80, 0xc3, 0xff} {
				b[p] = c
				if isASCII(b) {
					t.Fatalf("%q: ASCII", b)
				}
			}
			b[p] = 0x7f
			if !isASCII(b) {
				t.Fatalf("%q: not ASCII", b)
			}
		}
	}
}
