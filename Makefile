# mcpgen's tasks. `make demo` and `make test` are the two commands a fresh
# machine needs (see README.md); .ci/run calls `make test`.

GO      ?= go
BIN     := bin
MCPGEN  := $(BIN)/mcpgen
# Packages with goroutines of their own (process and transport handling)
# also run under the race detector.
RACE_PKGS := ./snapshot/... ./cmd/mcpgen/...

.PHONY: all build test generate demo bench check fmt vet

all: build

build:
	$(GO) build -o $(MCPGEN) ./cmd/mcpgen

# The test suite: the root module, the race detector on the concurrent
# packages, then the example module.
test:
	$(GO) test ./... && $(GO) test -race $(RACE_PKGS) && (cd example && $(GO) test ./...)

generate:
	cd example && $(GO) generate ./...

# Offline: builds mcpgen and the example CRM server, then snapshots it into
# the example's manifest (through example/mcpgen.yaml when present).
demo: build
	$(GO) build -o $(BIN)/crm-server ./example/crm-server
	@if [ -f example/mcpgen.yaml ]; then \
		echo "cd example && ../$(MCPGEN) snapshot"; \
		cd example && ../$(MCPGEN) snapshot; \
	else \
		echo "$(MCPGEN) snapshot --stdio $(BIN)/crm-server --id crm -o example/mcp/crm.json"; \
		$(MCPGEN) snapshot --stdio $(BIN)/crm-server --id crm -o example/mcp/crm.json; \
	fi
	$(MAKE) generate

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./... && (cd example && $(GO) test -run '^$$' -bench . -benchmem ./...)

fmt:
	@out="$$(gofmt -l . )"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./... && (cd example && $(GO) vet ./...)

# Everything CI cares about, plus stale generated code: regenerate and
# fail if the committed files differ.
check: fmt vet test
	$(MAKE) generate
	git diff --exit-code -- example
