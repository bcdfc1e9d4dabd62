package oracle

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite "+sdkFixture+" from the frames of the SDK oracle")

// TestOracle runs the scenario through the released 0.11.0 SDK (sdk011)
// against the recording peer: the SDK must accept every reply (which
// proves the peer answers in the released layout) and send what
// testdata/ holds. With -update it rewrites testdata/ instead.
func TestOracle(t *testing.T) {
	bin := oracleBinary(t)
	p := startPeer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, p.addr()).CombinedOutput()
	frames, problems := p.recorded()
	if err != nil {
		t.Fatalf("sdk011 %s: %v\n%s\nrequests: %d, peer problems: %q", p.addr(), err, out, len(frames), problems)
	}
	t.Logf("sdk011 output:\n%s", out)
	for _, pr := range problems {
		t.Errorf("the peer found in the SDK's requests: %s", pr)
	}
	// The SDK decoded every reply; check it also read back what it sent.
	if want := "polled partition 1: 5 messages"; !bytes.Contains(out, []byte(want)) {
		t.Errorf("sdk011 output lacks %q", want)
	}
	if *update {
		if err := writeFixture(sdkFixture, frames); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %d frames to %s", len(frames), sdkFixture)
		return
	}
	want, err := readFixture(sdkFixture)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != len(frames) {
		t.Fatalf("the SDK sent %d requests, %s holds %d: regenerate it (README.md)", len(frames), sdkFixture, len(want))
	}
	for i, r := range frames {
		raw := append([]byte(nil), r.raw...)
		copy(raw[offClient:offClient+16], want[i].raw[offClient:]) // random by design
		if !bytes.Equal(raw, want[i].raw) {
			t.Errorf("request %d (%s) is not the one in %s (%s): regenerate it (README.md) if the SDK or the scenario changed", i+1, r, sdkFixture, want[i])
		}
	}
}

// oracleBinary returns the sdk011 binary: $IGGY_ORACLE_BIN, else one built
// with cargo, else the test is skipped.
func oracleBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("IGGY_ORACLE_BIN"); bin != "" {
		return bin
	}
	cargo, err := exec.LookPath("cargo")
	if err != nil {
		t.Skip("IGGY_ORACLE_BIN is not set and cargo is not on PATH, so the SDK oracle cannot run; " +
			"TestClientMatchesSDK still compares our frames with " + sdkFixture)
	}
	target := oracleTargetDir()
	cmd := exec.Command(cargo, "build", "--locked", "--manifest-path", filepath.Join("sdk011", "Cargo.toml"))
	cmd.Env = append(os.Environ(), "CARGO_TARGET_DIR="+target)
	t.Logf("building the SDK oracle (a first build takes minutes): CARGO_TARGET_DIR=%s %s", target, strings.Join(cmd.Args, " "))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building sdk011: %v\n%s", err, out)
	}
	return filepath.Join(target, "debug", "sdk011")
}

// oracleTargetDir is where cargo builds sdk011: outside the repository, in
// the cache the Fluss jars use ($FLUSS_IGGY_CACHE, default
// ~/.cache/fluss-iggy), so later builds are quick.
func oracleTargetDir() string {
	if d := os.Getenv("FLUSS_IGGY_CACHE"); d != "" {
		return filepath.Join(d, "sdk011-target")
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "fluss-iggy", "sdk011-target")
	}
	return filepath.Join(os.TempDir(), "fluss-iggy-sdk011-target")
}

// TestClientMatchesSDK runs the scenario through our client against the
// recording peer and compares its requests with the SDK's (testdata/),
// byte for byte but for the masks in compare_test.go.
func TestClientMatchesSDK(t *testing.T) {
	sdk, err := readFixture(sdkFixture)
	if err != nil {
		t.Fatal(err)
	}
	p := startPeer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, bad := range runOurClient(ctx, p.addr()) {
		t.Errorf("our client: %s", bad)
	}
	ours, problems := p.recorded()
	for _, pr := range problems {
		t.Errorf("the peer found in our requests: %s", pr)
	}
	c := compareFrames(ours, sdk)
	for _, m := range masks {
		t.Logf("masked %s: %s", m.field, m.reason)
	}
	for _, n := range c.notes {
		t.Logf("note: %s", n)
	}
	if len(c.diffs) > 0 {
		t.Errorf("our requests differ from the Iggy SDK 0.11.0's in %d places:\n- %s", len(c.diffs), strings.Join(c.diffs, "\n- "))
	}
}

// TestCompareFindsDifferences checks the comparison on the SDK's own
// frames: none against themselves, and each planted change found and named.
func TestCompareFindsDifferences(t *testing.T) {
	sdk, err := readFixture(sdkFixture)
	if err != nil {
		t.Fatal(err)
	}
	if c := compareFrames(sdk, sdk); len(c.diffs) != 0 {
		t.Fatalf("the SDK's frames differ from themselves: %q", c.diffs)
	}
	plant := func(kind string, change func(r *request) *request, want string) {
		t.Helper()
		ours := append([]*request(nil), sdk...)
		for i, r := range ours {
			if r.kind() == kind {
				ours[i] = change(r)
				break
			}
		}
		c := compareFrames(ours, sdk)
		if !strings.Contains(strings.Join(c.diffs, "\n"), want) {
			t.Errorf("a planted change in %s: diffs %q lack %q", kind, c.diffs, want)
		}
	}
	edit := func(off int, v byte) func(*request) *request {
		return func(r *request) *request {
			raw := append([]byte(nil), r.raw...)
			raw[off] = v
			n, err := decodeRequest(raw)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	plant("send messages", edit(offRequest, 9), "header.request @168 (SDK @168): ours 9")
	plant("send messages", edit(offRequest, 9), "request numbers and sessions of the replicated requests")
	plant("create topic", edit(headerBytes+1, 9), "stream.length")
	plant("poll messages", edit(len(sdk[len(sdk)-1].raw)-1, 1), "auto_commit")
	plant("login", edit(offClient, 0x55), "carries client id")
}

// FuzzDecodeRequest: decoding never panics and its fields stay inside the
// frame.
func FuzzDecodeRequest(f *testing.F) {
	if sdk, err := readFixture(sdkFixture); err == nil {
		for _, r := range sdk {
			f.Add(r.raw)
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) >= headerBytes {
			le.PutUint32(raw[offSize:], uint32(len(raw)))
		}
		r, err := decodeRequest(raw)
		if err != nil {
			return
		}
		for _, fl := range r.fields {
			if fl.off < 0 || fl.end > len(raw) || fl.off > fl.end {
				t.Fatalf("field %s [%d, %d) outside a frame of %d bytes", fl.name, fl.off, fl.end, len(raw))
			}
		}
		if r.kind() == "send messages" && r.err == nil {
			_ = checkSums(batchOf(r))
		}
	})
}
