package oracle

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
)

// sdkFixture holds the request frames the 0.11.0 SDK wrote in the oracle
// scenario.
const sdkFixture = "testdata/sdk011_requests.txt"

// fixtureHead starts the fixture file.
const fixtureHead = `# Request frames of the released Iggy Rust SDK 0.11.0 (crates iggy, iggy_common,
# iggy_binary_protocol =0.11.0) in the oracle scenario (sdk011/src/main.rs), in the order
# the recording peer received them. The client id (header bytes 128..144) is random.
# Each frame: a "##" line, then its bytes in hex, 32 a line. Do not edit: regenerate
# with go test ./internal/iggytest/oracle -run TestOracle -update (README.md).
`

// writeFixture writes frames to path in the fixture format.
func writeFixture(path string, frames []*request) error {
	var b strings.Builder
	b.WriteString(fixtureHead)
	for i, r := range frames {
		raw := r.raw
		fmt.Fprintf(&b, "## %d %s\n", i+1, r)
		for p := 0; p < len(raw); p += 32 {
			b.WriteString(hex.EncodeToString(raw[p:min(p+32, len(raw))]))
			b.WriteByte('\n')
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// readFixture reads the frames of a fixture file: the hex lines joined,
// cut where each frame's size field says.
func readFixture(path string) ([]*request, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var all []byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		b, err := hex.DecodeString(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
		all = append(all, b...)
	}
	var frames []*request
	for len(all) > 0 {
		if len(all) < headerBytes {
			return nil, fmt.Errorf("%s: %d bytes left after frame %d, less than a header", path, len(all), len(frames))
		}
		size := int(le.Uint32(all[offSize:]))
		if size < headerBytes || size > len(all) {
			return nil, fmt.Errorf("%s: frame %d says %d bytes, %d left", path, len(frames)+1, size, len(all))
		}
		r, err := decodeRequest(all[:size:size])
		if err != nil {
			return nil, fmt.Errorf("%s: frame %d: %v", path, len(frames)+1, err)
		}
		frames = append(frames, r)
		all = all[size:]
	}
	return frames, nil
}
