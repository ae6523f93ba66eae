module github.com/mcpgen/mcpgen/adapters/langchaingo/internal/crmlangchain

go 1.26.0

require (
	github.com/mcpgen/mcpgen v0.0.0
	github.com/mcpgen/mcpgen/adapters/internal/crmtest v0.0.0
	github.com/mcpgen/mcpgen/adapters/langchaingo v0.0.0
	github.com/tmc/langchaingo v0.1.14
)

require (
	github.com/dlclark/regexp2 v1.11.0 // indirect
	github.com/google/jsonschema-go v0.4.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/mark3labs/mcp-go v1.2.1 // indirect
	github.com/mcpgen/mcpgen/example v0.0.0 // indirect
	github.com/pkoukk/tiktoken-go v0.1.6 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2 // indirect
	github.com/spf13/cast v1.7.1 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	go.starlark.net v0.0.0-20230302034142-4b1e35fe2254 // indirect
	golang.org/x/sys v0.35.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)

replace (
	github.com/mcpgen/mcpgen => ../../../..
	github.com/mcpgen/mcpgen/adapters/internal/crmtest => ../../../internal/crmtest
	github.com/mcpgen/mcpgen/adapters/langchaingo => ../..
	github.com/mcpgen/mcpgen/example => ../../../../example
)
