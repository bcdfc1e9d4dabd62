# fluss-iggy build, lint, test and benchmark entry points.
# `make test` is the one test command (CI runs it through .ci/run).

GO        ?= go
BIN       := bin/fluss-iggy
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
DATE      ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS   := -s -w -X main.Version=$(VERSION) -X main.DateBuilt=$(DATE)
# Packages whose tests share one Fluss cluster are run serially (-p 1) so that two
# clusters never compete for the two cores; pure unit packages run in parallel.
TEST_FLAGS ?= -race -count=1 -timeout 30m
FUZZTIME  ?= 20s
# Minimising a new input (default 60s in go test) can take the whole FUZZTIME
# on large seeds (FuzzDecodeBatch ran 15 inputs in 20s); keep it short.
FUZZMINIMIZETIME ?= 1s

.PHONY: all build test unit-test lint generate check-generate fuzz bench clean cluster-up cluster-down

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/fluss-iggy

# test runs every unit and integration test with the race detector, then a short
# fuzzing pass over each decoder. Integration tests start (or reuse, via
# FLUSS_BOOTSTRAP) a real Fluss cluster and need java and mvn.
test: build
	$(GO) test $(TEST_FLAGS) ./...
	$(MAKE) fuzz

# fuzz runs each fuzz target for FUZZTIME.
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) FUZZMINIMIZETIME=$(FUZZMINIMIZETIME) scripts/fuzz.sh

lint: build
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(BIN) lint config/resources/*.yaml
	$(BIN) lint -r 'config/resources/bbolt.yaml' $$(ls config/*.yaml | grep -v sharded)
	$(BIN) lint -r 'config/resources/redis.yaml' config/sharded.yaml
	$(BIN) test -r 'config/resources/bbolt.yaml' ./config/...

# generate regenerates the protobuf code; check-generate fails when it is stale.
generate:
	$(GO) generate ./fluss/...

check-generate: generate
	@git diff --exit-code -- fluss/internal/pb || (echo "generated code is stale: run make generate"; exit 1)

# bench runs every benchmark on one table in one run and writes bench/results.md.
bench: build
	bench/run-all.sh

cluster-up:
	scripts/fluss-cluster.sh up

cluster-down:
	scripts/fluss-cluster.sh down

clean:
	rm -rf bin

# docs regenerates docs/components from the plugins' ConfigSpecs; check-docs fails when stale
# (make test also fails then, through internal/docgen's TestDocsUpToDate).
.PHONY: docs check-docs
docs:
	$(GO) run ./internal/docgen

check-docs:
	$(GO) run ./internal/docgen -check

# demo starts a local Fluss cluster, fills the table demo.orders with the Java client and runs
# config/fluss_to_iggy.yaml into the Iggy at IGGY_TCP_ADDRESS or, when none answers there, into
# the bundled in-memory test server; it prints what arrived and stops everything (scripts/demo.sh).
.PHONY: demo
demo: build
	scripts/demo.sh
