#!/usr/bin/env bash
# fuzz.sh [PACKAGES] (`make fuzz`): runs every fuzz target of PACKAGES
# (default ./..., the whole module) for FUZZTIME (default 20s) each,
# minimising new inputs for at most FUZZMINIMIZETIME (default 1s; go
# test's 60s default can use up the whole run on large seeds).
#
# A run that ends with nothing but "context deadline exceeded", having
# written no failing input, is the Go 1.26 fuzz coordinator's race at the
# -fuzztime deadline (go.dev/issue/75804, fixed in Go 1.27), not a finding:
# the target's corpus is then replayed with `go test -run` and only a
# failure there counts. Any other failure, or a written failing input,
# fails the run.
set -euo pipefail

go="${GO:-go}"
fuzztime="${FUZZTIME:-20s}"
minimize="${FUZZMINIMIZETIME:-1s}"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT

(($# > 0)) || set -- ./...
for pkg in $("$go" list "$@"); do
	# sort -u: a TestMain that runs the tests twice (output/iggy) lists them twice.
	for f in $("$go" test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' | sort -u || true); do
		echo "fuzz $pkg $f ($fuzztime)"
		if "$go" test -run '^$' -fuzz "^$f\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" "$pkg" >"$out" 2>&1; then
			tail -n 2 "$out"
			continue
		fi
		cat "$out"
		if grep -q 'Failing input written' "$out" ||
			! grep -q '^    context deadline exceeded$' "$out" ||
			[[ $(grep -c '^--- FAIL' "$out") -ne 1 ]]; then
			echo "fuzz: $f in $pkg failed" >&2
			exit 1
		fi
		echo "fuzz: $f stopped on Go's fuzz-deadline race (go.dev/issue/75804), no failing input; replaying its corpus"
		"$go" test -count=1 -run "^$f\$" "$pkg"
	done
done
