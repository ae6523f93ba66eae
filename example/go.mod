module github.com/mcpgen/mcpgen/example

go 1.26.0

require (
	github.com/mark3labs/mcp-go v1.2.1
	github.com/mcpgen/mcpgen v0.0.0
	github.com/mcpgen/mcpgen/adapters/postgres v0.0.0
)

require (
	github.com/dave/jennifer v1.7.1 // indirect
	github.com/google/jsonschema-go v0.4.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/pgx/v5 v5.13.0 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2 // indirect
	github.com/spf13/cast v1.7.1 // indirect
	github.com/spf13/pflag v1.1.0 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/sync v0.22.0 // indirect
	golang.org/x/text v0.41.0 // indirect
)

replace github.com/mcpgen/mcpgen => ../

replace github.com/mcpgen/mcpgen/adapters/postgres => ../adapters/postgres

tool github.com/mcpgen/mcpgen/cmd/mcpgen
