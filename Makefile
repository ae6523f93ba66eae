# mcpgen's tasks. `make demo` and `make test` are the two commands a fresh
# machine needs (see README.md); .ci/run calls `make test`.

GO      ?= go
BIN     := bin
MCPGEN  := $(BIN)/mcpgen
# Packages with goroutines of their own (process and transport handling)
# also run under the race detector.
RACE_PKGS := ./snapshot/... ./cmd/mcpgen/... ./runtime/...

.PHONY: all build test generate demo bench check fmt vet

all: build

build:
	$(GO) build -o $(MCPGEN) ./cmd/mcpgen

# Every module of go.work besides the root and the example, read from
# go.work so a module added there is tested: the agent adapters (each
# pulls its SDK; the root module pulls none) and the agent example. Their
# tests run the CRM server and the SDKs' goroutines, so they run under the
# race detector.
AGENT_MODULES := $(filter-out $(CURDIR) example,$(patsubst $(CURDIR)/%,%,$(shell $(GO) list -m -f '{{.Dir}}')))

# The test suite: the root module, the race detector on the concurrent
# packages, the example module, then every other module of go.work.
test:
	$(GO) test ./... && $(GO) test -race $(RACE_PKGS) && (cd example && $(GO) test ./...)
	for m in $(AGENT_MODULES); do (cd $$m && $(GO) test -race ./...) || exit 1; done

# Regenerates the example's bindings from its committed manifests (no
# server is contacted).
generate:
	cd example && $(GO) generate ./...

# Offline: builds mcpgen and the example CRM server, snapshots it into
# example/mcp/crm.json, regenerates the example's bindings and runs the
# demo program against the server. The server-everything manifest is
# committed, so node is not needed here.
demo: build
	$(GO) build -o $(BIN)/crm-server ./example/crm-server
	cd example && ../$(MCPGEN) snapshot --server crm
	$(MAKE) generate
	cd example && $(GO) run ./cmd/demo -server ../$(BIN)/crm-server

# Benchmarks, printed as one table of ratios against same-run baselines
# (docs/benchmarks.md). The raw output is kept in bench.out. BENCH_COUNT
# repeats the short benchmarks; the table shows medians.
BENCH_COUNT ?= 5
bench:
	{ $(GO) test -run '^$$' -bench 'Generate/(github|synthetic-1000$$)' -benchmem -count $(BENCH_COUNT) ./gen && \
	  $(GO) test -run '^$$' -bench 'Generate/synthetic-10000' -benchtime 1x -benchmem ./gen && \
	  $(GO) test -run '^$$' -bench GenerateCommand -benchtime 5x ./cmd/mcpgen && \
	  $(GO) test -run '^$$' -bench . -benchmem -count $(BENCH_COUNT) ./internal/benchdata && \
	  $(GO) test -run '^$$' -bench SnapshotEverything -benchtime 5x ./snapshot; } > bench.out
	$(GO) run ./internal/benchtable < bench.out

fmt:
	@out="$$(gofmt -l . )"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./... && (cd example && $(GO) vet ./...)
	for m in $(AGENT_MODULES); do (cd $$m && $(GO) vet ./...) || exit 1; done

# Everything CI cares about, plus stale generated code: regenerate and
# fail if the committed files differ.
check: fmt vet test
	$(MAKE) generate
	$(GO) generate ./internal/benchdata
	git diff --exit-code -- example internal/benchdata
