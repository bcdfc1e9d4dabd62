# fluss-iggy build, lint, test, demo and benchmark entry points.
# `make test` is the one test command (CI runs it, after `make lint`, through .ci/run).

GO        ?= go
BIN       := bin/fluss-iggy
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
DATE      ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS   := -s -w -X main.Version=$(VERSION) -X main.DateBuilt=$(DATE)
# go test runs up to GOMAXPROCS packages at once. Each package with Fluss integration
# tests uses the cluster at FLUSS_BOOTSTRAP or, when it is unset, starts one of its own
# (internal/flusstest); export FLUSS_BOOTSTRAP (make cluster-up prints it) to share one.
TEST_FLAGS ?= -race -count=1 -timeout 30m
# The packages `make test` tests and `make fuzz` fuzzes, e.g. TEST_PKGS=./resources/...
TEST_PKGS ?= ./...
FUZZ_PKGS ?= ./...
FUZZTIME  ?= 20s
# Minimising a new input (default 60s in go test) can take the whole FUZZTIME
# on large seeds (FuzzDecodeBatch ran 15 inputs in 20s); keep it short.
FUZZMINIMIZETIME ?= 1s
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: all build test compat lint generate check-generate fuzz bench clean cluster-up cluster-down

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/fluss-iggy

# test builds bin/fluss-iggy, runs every unit and integration test in TEST_PKGS with
# TEST_FLAGS (the race detector, no cached results) and, when they pass, `make fuzz`. The tests run through
# internal/testsummary (go test -json): the output looks like go test's, and at the
# end come the skipped tests with their reasons and the line
# "testsummary: N passed, N failed, N skipped". With CI set (CI=true), a skip that
# is not on internal/testsummary/allowlist.go fails the run. Integration tests
# start (or reuse, via FLUSS_BOOTSTRAP) a real Fluss cluster and need java and mvn;
# the redis cache tests need redis-server.
test: build
	$(GO) build -o bin/testsummary ./internal/testsummary
	bin/testsummary -go '$(GO)' -then '$(MAKE) --no-print-directory fuzz' -- $(TEST_FLAGS) $(TEST_PKGS)

# compat runs internal/compat (scans equal to the Java client's, a pipeline end to end)
# through internal/testsummary, as `make test` does, on a cluster of Fluss COMPAT_VERSION
# that it starts in a new directory and stops afterwards (also when make is killed:
# --owner-pid), printing the servers' log tails when the tests failed. CI runs it after
# `make test`.
COMPAT_VERSION ?= 0.7.0
compat: build
	$(GO) build -o bin/testsummary ./internal/testsummary
	@dir=$$(mktemp -d "$${TMPDIR:-/tmp}/fluss-compat.XXXXXX") && \
	trap 'rc=$$?; [ $$rc = 0 ] || scripts/fluss-cluster.sh logs --dir "$$dir" --lines 40; \
	  scripts/fluss-cluster.sh down --dir "$$dir"; exit $$rc' EXIT && \
	env=$$(FLUSS_VERSION=$(COMPAT_VERSION) scripts/fluss-cluster.sh up --dir "$$dir" --owner-pid $$$$) && \
	env FLUSS_VERSION=$(COMPAT_VERSION) FLUSS_IGGY_BIN=$(abspath $(BIN)) "$$(echo "$$env" | tail -n 1)" \
	  bin/testsummary -go '$(GO)' -- $(TEST_FLAGS) ./internal/compat

# fuzz runs each fuzz target in FUZZ_PKGS for FUZZTIME (scripts/fuzz.sh).
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) FUZZMINIMIZETIME=$(FUZZMINIMIZETIME) scripts/fuzz.sh $(FUZZ_PKGS)

# lint: gofmt on the tracked Go files, go vet, staticcheck (STATICCHECK, a pinned
# version run with go run), and `fluss-iggy lint` and `fluss-iggy test` on the shipped configs.
lint: build
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	$(BIN) lint config/resources/*.yaml
	$(BIN) lint -r 'config/resources/bbolt.yaml' $$(ls config/*.yaml | grep -v sharded)
	$(BIN) lint -r 'config/resources/redis.yaml' config/sharded.yaml
	$(BIN) test -r 'config/resources/bbolt.yaml' ./config/...

# generate regenerates the protobuf code (needs protoc and protoc-gen-go); check-generate
# regenerates it in place and fails when that changed fluss/internal/pb.
generate:
	$(GO) generate ./fluss/...

check-generate: generate
	@git diff --exit-code -- fluss/internal/pb || (echo "generated code is stale: run make generate"; exit 1)

# bench runs every benchmark stage on one table in one run and writes bench/results.md
# (bench/run-all.sh).
bench: build
	bench/run-all.sh

# cluster-up starts a local Fluss cluster in $TMPDIR/fluss-iggy-cluster (TMPDIR default /tmp)
# and prints FLUSS_BOOTSTRAP=... last; cluster-down stops it and deletes that directory.
cluster-up:
	scripts/fluss-cluster.sh up --conf kv.snapshot.interval=5s

cluster-down:
	scripts/fluss-cluster.sh down

# clean removes bin/ (the binary and bin/testsummary); ./state, the example's
# checkpoints, stays: delete it to read the example's table from the start again.
clean:
	rm -rf bin

# manifests checks deploy/kubernetes offline (internal/k8smanifest: strict decoding into the Kubernetes
# types, cross-references, the pipeline linted as each pod runs it) and the alert rules of deploy/prometheus
# (promtool check rules and test rules; needs promtool); make test runs the same tests.
.PHONY: manifests
manifests:
	$(GO) test -count=1 ./internal/k8smanifest
	$(GO) test -count=1 -run 'TestAlertRule|TestDeployFiles' ./internal/dashtest

# docs regenerates docs/components from the plugins' ConfigSpecs; check-docs fails when stale
# (make test also fails then, through internal/docgen's TestDocsUpToDate).
.PHONY: docs check-docs
docs:
	$(GO) run ./internal/docgen

check-docs:
	$(GO) run ./internal/docgen -check

# demo starts a local Fluss cluster (or uses the one at FLUSS_BOOTSTRAP), fills a demo table
# with the Java client and runs config/fluss_to_iggy.yaml into the Iggy at IGGY_TCP_ADDRESS or,
# when none answers there, into the bundled in-memory test server; it prints what arrived and
# stops everything it started (scripts/demo.sh).
# demo-table only creates and fills the table the example pipeline reads
# (FLUSS_DATABASE.FLUSS_TABLE, default demo.orders) in the cluster at FLUSS_BOOTSTRAP, and
# leaves it there (scripts/demo.sh --table-only).
.PHONY: demo demo-table
demo: build
	scripts/demo.sh

demo-table: build
	scripts/demo.sh --table-only
