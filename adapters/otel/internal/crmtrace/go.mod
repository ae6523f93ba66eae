module github.com/mcpgen/mcpgen/adapters/otel/internal/crmtrace

go 1.26.0

require (
	github.com/mcpgen/mcpgen v0.0.0
	github.com/mcpgen/mcpgen/adapters/internal/crmtest v0.0.0
	github.com/mcpgen/mcpgen/adapters/otel v0.0.0
	github.com/mcpgen/mcpgen/example v0.0.0
	go.opentelemetry.io/otel v1.47.0
	go.opentelemetry.io/otel/sdk v1.47.0
	go.opentelemetry.io/otel/sdk/metric v1.47.0
	go.opentelemetry.io/otel/trace v1.47.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/google/jsonschema-go v0.4.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/mark3labs/mcp-go v1.2.1 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2 // indirect
	github.com/spf13/cast v1.7.1 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)

replace (
	github.com/mcpgen/mcpgen => ../../../..
	github.com/mcpgen/mcpgen/adapters/internal/crmtest => ../../../internal/crmtest
	github.com/mcpgen/mcpgen/adapters/otel => ../..
	github.com/mcpgen/mcpgen/example => ../../../../example
)
