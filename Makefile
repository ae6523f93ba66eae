# mcpgen's tasks. `make demo` and `make test` are the two commands a fresh
# machine needs (see README.md); .ci/run calls `make test`.

GO      ?= go
BIN     := bin
MCPGEN  := $(BIN)/mcpgen

.PHONY: all build test generate demo bench check fmt vet

# The npm packages the integration tests use (reference servers, the
# conformance suite, Node 22), installed again whenever their pins change,
# so the test command needs no step before it.
NPM_STAMP := tools/npm/node_modules/.installed
$(NPM_STAMP): tools/npm/package.json tools/npm/package-lock.json
	npm ci --prefix tools/npm --no-audit --no-fund
	touch $@

all: build

build:
	$(GO) build -o $(MCPGEN) ./cmd/mcpgen

# Every module of go.work besides the root, read from go.work so a module
# added there is tested: the example, the PostgreSQL and agent adapters
# (each pulls its own dependencies; the root module pulls none of them)
# and the agent example.
MODULES := $(filter-out $(CURDIR),$(patsubst $(CURDIR)/%,%,$(shell $(GO) list -m -f '{{.Dir}}')))

# The test suite, all of it under the race detector: the root module, then
# every other module of go.work (the root's ./... does not reach them).
# Every package runs raced, not a list of the concurrent ones, so a package
# that starts goroutines cannot be left out; the servers the tests build
# are built with -race as well.
# The scratch modules the tests build (an init'd module, generated code
# compiled on its own) run with GOPROXY=off and GOWORK=off, so they need
# the root module's own build list in the module cache, which the
# workspace's build list (newer versions) does not download.
test: $(NPM_STAMP)
	GOWORK=off $(GO) mod download
	@case " $(MODULES) " in *" example "*) ;; *) echo "make test: go list -m did not list the go.work modules ($(MODULES))"; exit 1;; esac
	$(GO) test -race ./...
	for m in $(MODULES); do (cd $$m && $(GO) test -race ./...) || exit 1; done

# Regenerates the example's bindings and the ready-made ones in bindings/
# from their committed manifests (no server is contacted).
generate:
	cd example && $(GO) generate ./...
	$(GO) generate ./bindings/...

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
# repeats the short benchmarks; the table shows medians. The long ones run
# once: the 11,700-tool generation, the incremental build of the generated
# github package (3 builds) and the 50-goroutine load (100,000 calls an op).
BENCH_COUNT ?= 5
bench:
	{ $(GO) test -run '^$$' -bench 'Generate/(github|synthetic-1000$$)' -benchmem -count $(BENCH_COUNT) ./gen && \
	  $(GO) test -run '^$$' -bench 'Generate/synthetic-10000' -benchtime 1x -benchmem ./gen && \
	  $(GO) test -run '^$$' -bench CompileGenerated -benchtime 3x ./gen && \
	  $(GO) test -run '^$$' -bench 'GenerateCommand/github$$' -benchtime 5x ./cmd/mcpgen && \
	  $(GO) test -run '^$$' -bench 'GenerateCommand/github-x100' -benchtime 1x ./cmd/mcpgen && \
	  $(GO) test -run '^$$' -bench '^Benchmark(Rehydrate|Validate|Call|ModelArgs)$$' -benchmem -count $(BENCH_COUNT) ./internal/benchdata && \
	  $(GO) test -run '^$$' -bench '^BenchmarkLoad$$' -benchtime 1x -benchmem ./internal/benchdata && \
	  $(GO) test -run '^$$' -bench SnapshotEverything -benchtime 5x ./snapshot; } > bench.out
	$(GO) run ./internal/benchtable < bench.out

fmt:
	@out="$$(gofmt -l . )"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	for m in $(MODULES); do (cd $$m && $(GO) vet ./...) || exit 1; done

# Everything CI cares about, plus stale generated code: regenerate and
# fail if the committed files differ.
check: fmt vet test
	$(MAKE) generate
	$(GO) generate ./internal/benchdata ./gen/internal/usecases/...
	git diff --exit-code -- example bindings internal/benchdata gen/internal/usecases
