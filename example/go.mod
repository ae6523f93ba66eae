module github.com/mcpgen/mcpgen/example

go 1.26.0

require github.com/mcpgen/mcpgen v0.0.0

replace github.com/mcpgen/mcpgen => ../
