module github.com/mcpgen/mcpgen/adapters/langchaingo

go 1.26.0

require github.com/mcpgen/mcpgen v0.0.0

require (
	github.com/dlclark/regexp2 v1.11.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/pkoukk/tiktoken-go v0.1.6 // indirect
	github.com/tmc/langchaingo v0.1.14
	go.starlark.net v0.0.0-20230302034142-4b1e35fe2254 // indirect
	golang.org/x/sys v0.35.0 // indirect
)

replace github.com/mcpgen/mcpgen => ../..

require (
	github.com/stretchr/testify v1.11.1 // indirect
	golang.org/x/text v0.43.0 // indirect
)
