package iggyoutput_test

import (
	"encoding/binary"
	"math/big"
	"strings"
	"testing"

	iggyoutput "github.com/fluss-iggy/fluss-iggy/output/iggy"
)

// FuzzParseMessageID checks that any text either fails or gives the 128-bit
// number math/big reads from it (decimal, or 0x hex of at most 32 digits).
func FuzzParseMessageID(f *testing.F) {
	for _, s := range []string{"", "0", "255", "0xff", "0x", "340282366920938463463374607431768211456",
		"01234567-89ab-cdef-0123-456789abcdef", "{01234567-89ab-cdef-0123-456789abcdef}", "-1", "0x" + strings.Repeat("f", 33)} {
		f.Add(s)
	}
	max128 := new(big.Int).Lsh(big.NewInt(1), 128)
	f.Fuzz(func(t *testing.T, s string) {
		id, err := iggyoutput.ParseMessageID(s)
		var want *big.Int
		switch {
		case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
			if n, ok := new(big.Int).SetString(s[2:], 16); ok && len(s) <= 34 && !strings.ContainsAny(s[2:], "+-_") {
				want = n
			}
		case s != "" && strings.Trim(s, "0123456789") == "":
			if n, ok := new(big.Int).SetString(s, 10); ok && n.Cmp(max128) < 0 {
				want = n
			}
		default:
			return // UUID forms: uuid.Parse decides
		}
		if want == nil {
			if err == nil {
				t.Fatalf("%q parsed as %x, want an error", s, id)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		got := new(big.Int).Lsh(new(big.Int).SetUint64(binary.LittleEndian.Uint64(id[8:])), 64)
		got.Or(got, new(big.Int).SetUint64(binary.LittleEndian.Uint64(id[:8])))
		if got.Cmp(want) != 0 {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}
