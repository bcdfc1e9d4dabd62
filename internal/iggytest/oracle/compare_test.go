package oracle

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/zeebo/xxh3"
)

// masks are the fields the byte comparison leaves out, and why. Nothing
// else is masked: the scenario gives both clients the same ids, origin
// timestamps and headers, so the rest of every frame must be equal.
var masks = []struct{ field, reason string }{
	{"header.client", "random per client by design (iggy session.rs: generate_client_id); " +
		"checked instead: non-zero, and one id on every request from the login on"},
	{"login.sdk_name", "each client's own name (rust-sdk, fluss-iggy)"},
	{"login.sdk_name.length", "the length of that name"},
	{"login.sdk_version", "each client's own version string"},
	{"login.sdk_version.length", "the length of that string"},
	{"header.request_checksum", "XXH3-64 of the body, which holds the masked login strings; " +
		"checked instead: zero on both sides, or a valid stamp on both (vsr.rs: encode_request_header)"},
	{"batch.checksum", "covers the frame checksums; checked instead: valid on both sides (batch.rs: calculate_batch_checksum)"},
	{"message[*].checksum", "covers the frame's bytes, each compared on its own; checked instead: valid on both sides"},
}

// masked returns why a field is masked, or "".
func masked(name string) string {
	for _, m := range masks {
		if m.field == name || strings.HasPrefix(m.field, "message[*]") && strings.HasPrefix(name, "message[") &&
			strings.HasSuffix(name, strings.TrimPrefix(m.field, "message[*]")) {
			return m.reason
		}
	}
	return ""
}

// sdkOnly are requests the SDK makes that a single-connection producer
// need not make; unpaired, they are noted, not counted as differences.
var sdkOnly = map[string]string{
	"cluster metadata": "after login the SDK reads the cluster roster to know where to fail over " +
		"(iggy tcp_client.rs: learn_roster_once); a client of one node needs none",
	"get topic": "the SDK reads the topic to learn its partition count before it resolves Balanced and " +
		"MessagesKey to a partition (iggy_common traits/binary_impls/messages.rs: resolve_partitioning); " +
		"a client that already read the topic need not read it again",
}

// comparison is the outcome of comparing our frames with the SDK's.
type comparison struct {
	diffs []string // differences: each one a failure
	notes []string // SDK-only requests and what was checked in place of masked fields
}

// compareFrames pairs our requests with the SDK's by kind (the n-th get
// topic of ours with the SDK's n-th) and compares each pair field by field.
func compareFrames(ours, sdk []*request) comparison {
	var c comparison
	seen := map[string]int{}
	for si, s := range sdk {
		k := s.kind()
		n := seen[k]
		seen[k]++
		oi := nthOfKind(ours, k, n)
		switch {
		case oi < 0 && sdkOnly[k] != "":
			c.notes = append(c.notes, fmt.Sprintf("%s #%d (SDK frame %d): only the SDK sends it: %s", k, n+1, si+1, sdkOnly[k]))
		case oi < 0:
			c.diffs = append(c.diffs, fmt.Sprintf("%s #%d (SDK frame %d, %s): the SDK sends it, our client does not [%s]", k, n+1, si+1, s, definedIn(s, "")))
		default:
			for _, d := range diffFields(ours[oi], s) {
				c.diffs = append(c.diffs, fmt.Sprintf("%s #%d (our frame %d, SDK frame %d): %s", k, n+1, oi+1, si+1, d))
			}
		}
	}
	for k, n := range kindCounts(ours) {
		for i := seen[k]; i < n; i++ {
			oi := nthOfKind(ours, k, i)
			c.diffs = append(c.diffs, fmt.Sprintf("%s #%d (our frame %d, %s): our client sends it, the SDK does not", k, i+1, oi+1, ours[oi]))
		}
	}
	c.diffs = append(c.diffs, compareSequences(ours, sdk)...)
	return c
}

// nthOfKind returns the index of the n-th (from 0) request of kind in rs,
// or -1.
func nthOfKind(rs []*request, kind string, n int) int {
	for i, r := range rs {
		if r.kind() == kind {
			if n == 0 {
				return i
			}
			n--
		}
	}
	return -1
}

func kindCounts(rs []*request) map[string]int {
	n := map[string]int{}
	for _, r := range rs {
		n[r.kind()]++
	}
	return n
}

// diffFields compares two requests of one kind field by field, by name:
// bytes that differ, fields one side lacks, and field groups in another
// order.
func diffFields(o, s *request) []string {
	var d []string
	if o.err != nil {
		d = append(d, fmt.Sprintf("our body does not decode: %v", o.err))
	}
	if s.err != nil {
		d = append(d, fmt.Sprintf("the SDK's body does not decode: %v", s.err))
	}
	d = append(d, checkMaskedFields(o, s)...)
	on, sn := fieldsByName(o), fieldsByName(s)
	for _, sf := range s.fields {
		of, ok := on[sf.name]
		ov, sv := o.raw[of.off:of.end], s.raw[sf.off:sf.end]
		switch {
		case !ok || masked(sf.name) != "" || bytes.Equal(ov, sv):
		case sf.name == "header.size" && unmaskedSize(o) == unmaskedSize(s):
			// The sizes differ by the masked login strings only.
		default:
			d = append(d, fmt.Sprintf("%s @%d (SDK @%d): ours %s, SDK %s [%s]", sf.name, of.off, sf.off, show(ov), show(sv), definedIn(s, sf.name)))
		}
	}
	d = append(d, unmatched(s, on, "missing in ours; the SDK sends")...)
	d = append(d, unmatched(o, sn, "only in ours")...)
	og, sg := groupOrder(o, sn), groupOrder(s, on)
	for i := range min(len(og), len(sg)) {
		if og[i] != sg[i] {
			d = append(d, fmt.Sprintf("order of the fields both send: ours %s; SDK %s [%s]",
				strings.Join(og, ", "), strings.Join(sg, ", "), definedIn(s, sg[i]+".")))
			break
		}
	}
	return d
}

func fieldsByName(r *request) map[string]field {
	m := make(map[string]field, len(r.fields))
	for _, f := range r.fields {
		m[f.name] = f
	}
	return m
}

// group is the part of a field name up to its first dot: "header",
// "options[durability]", "message[2]".
func group(name string) string {
	g, _, _ := strings.Cut(name, ".")
	return g
}

// unmatched describes r's fields that other lacks, one line per group.
func unmatched(r *request, other map[string]field, what string) []string {
	var lines []string
	var parts []string
	var g string
	var off int
	flush := func() {
		if len(parts) > 0 {
			lines = append(lines, fmt.Sprintf("%s @%d: %s %s [%s]", g, off, what, strings.Join(parts, ", "), definedIn(r, g+".")))
		}
		parts = nil
	}
	for _, f := range r.fields {
		if _, ok := other[f.name]; ok || masked(f.name) != "" {
			flush()
			continue
		}
		if group(f.name) != g || len(parts) == 0 {
			flush()
			g, off = group(f.name), f.off
		}
		label := strings.TrimPrefix(strings.TrimPrefix(f.name, g), ".")
		if label == "" {
			label = "value"
		}
		parts = append(parts, label+" "+show(r.raw[f.off:f.end]))
	}
	flush()
	return lines
}

// unmaskedSize is the frame size without its masked body fields.
func unmaskedSize(r *request) int {
	n := len(r.raw)
	for _, f := range r.fields[len(headerFields):] {
		if masked(f.name) != "" {
			n -= f.end - f.off
		}
	}
	return n
}

// checkMaskedFields checks what stands in for the masked checksums: the
// request checksum zero on both sides or a valid stamp on both, and every
// batch and message checksum valid.
func checkMaskedFields(o, s *request) []string {
	var d []string
	if oc, sc := stampKind(o), stampKind(s); oc != sc {
		d = append(d, fmt.Sprintf("header.request_checksum @144: ours %s, SDK %s [%s]", oc, sc, definedIn(s, "header.request_checksum")))
	}
	if s.kind() != "send messages" || o.err != nil || s.err != nil {
		return d
	}
	if err := checkSums(batchOf(o)); err != nil {
		d = append(d, fmt.Sprintf("our batch: %v", err))
	}
	if err := checkSums(batchOf(s)); err != nil {
		d = append(d, fmt.Sprintf("the SDK's batch: %v", err))
	}
	return d
}

// stampKind classifies a request checksum.
func stampKind(r *request) string {
	lo, hi := le.Uint64(r.raw[offReqSum:]), le.Uint64(r.raw[offReqSum+8:])
	switch {
	case lo == 0 && hi == 0:
		return "0 (unstamped)"
	case hi == 0 && lo == xxh3.Hash(r.body()):
		return "the XXH3-64 of the body"
	}
	return "neither 0 nor the XXH3-64 of the body"
}

// groupOrder lists the field groups of r's body in order, of the fields
// named in keep.
func groupOrder(r *request, keep map[string]field) []string {
	var g []string
	for _, f := range r.fields[len(headerFields):] {
		if _, ok := keep[f.name]; !ok {
			continue
		}
		if name := group(f.name); len(g) == 0 || g[len(g)-1] != name {
			g = append(g, name)
		}
	}
	return g
}

// compareSequences compares the request numbers and sessions of the
// replicated requests as sequences, and checks our client ids.
func compareSequences(ours, sdk []*request) []string {
	var d []string
	if o, s := numbering(ours), numbering(sdk); o != s {
		d = append(d, fmt.Sprintf("request numbers and sessions of the replicated requests: ours %s; SDK %s [iggy-0.11.0 src/vsr.rs: encode_request_header, src/session.rs]", o, s))
	}
	var login []byte
	for i, r := range ours {
		id := r.raw[offClient : offClient+16]
		switch {
		case r.op() == opRegister:
			login = id
		case login != nil && !bytes.Equal(id, login):
			d = append(d, fmt.Sprintf("our request %d (%s) carries client id %x, not the login's %x", i+1, r, id, login))
		}
		if bytes.Equal(id, make([]byte, 16)) {
			d = append(d, fmt.Sprintf("our request %d (%s) carries client id 0", i+1, r))
		}
	}
	return d
}

// numbering renders the kind, request number and session of every
// replicated request (login included) in order.
func numbering(rs []*request) string {
	var parts []string
	for _, r := range rs {
		if r.op() != opNonReplicated {
			parts = append(parts, fmt.Sprintf("%s %d/%#x", r.kind(), r.number(), r.session()))
		}
	}
	return strings.Join(parts, ", ")
}

// show renders a field's bytes: printable text quoted, integers of 1, 2,
// 4 or 8 bytes as numbers with their hex, anything else as hex.
func show(b []byte) string {
	if len(b) > 1 && printable(b) {
		return fmt.Sprintf("%q", b)
	}
	switch len(b) {
	case 0:
		return "(none)"
	case 1:
		return fmt.Sprintf("%d (%02x)", b[0], b[0])
	case 2:
		return fmt.Sprintf("%d (%x)", le.Uint16(b), b)
	case 4:
		return fmt.Sprintf("%d (%x)", le.Uint32(b), b)
	case 8:
		return fmt.Sprintf("%d (%x)", le.Uint64(b), b)
	}
	if len(b) > 48 {
		return fmt.Sprintf("%s… (%d bytes)", hex.EncodeToString(b[:48]), len(b))
	}
	return hex.EncodeToString(b)
}

func printable(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// definedIn names the file of the 0.11.0 crates that defines a field of a
// request of r's kind.
func definedIn(r *request, name string) string {
	const bp, common = "iggy_binary_protocol-0.11.0/src/", "iggy_common-0.11.0/src/"
	switch {
	case name == "header.request" || name == "header.session":
		return "iggy-0.11.0/src/vsr.rs, src/session.rs"
	case name == "header.request_checksum":
		return "iggy-0.11.0/src/vsr.rs: encode_request_header"
	case strings.HasPrefix(name, "header."):
		return bp + "consensus/header.rs: RequestHeader"
	case strings.HasPrefix(name, "options["):
		return bp + "primitives/options.rs; " + common + "types/options/mod.rs: TopicCreateOptions::to_wire"
	case strings.HasPrefix(name, "partitioning."):
		return common + "traits/binary_impls/messages.rs: resolve_partitioning; " + bp + "primitives/partitioning.rs"
	case strings.HasPrefix(name, "batch.") || strings.HasPrefix(name, "message["):
		return bp + "batch.rs; " + bp + "requests/messages/send_messages.rs"
	}
	files := map[string]string{
		"login":         bp + "requests/users/login_register.rs, version.rs",
		"get stream":    bp + "requests/streams/get_stream.rs",
		"create stream": bp + "requests/streams/create_stream.rs",
		"get topic":     bp + "requests/topics/get_topic.rs",
		"create topic":  bp + "requests/topics/create_topic.rs",
		"send messages": bp + "requests/messages/send_messages.rs",
		"poll messages": bp + "requests/messages/poll_messages.rs",
		"ping":          bp + "requests/system/ping.rs",
	}
	if f, ok := files[r.kind()]; ok {
		return f
	}
	return bp + "codes.rs"
}
