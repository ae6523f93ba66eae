// Command testserver runs mcpgen's test MCP server over stdio. The mode
// comes from $MCPGEN_TESTSERVER_MODE (see package testserver).
package main

import (
	"os"

	"github.com/mcpgen/mcpgen/internal/testserver"
)

func main() {
	os.Exit(testserver.Main(os.Stdin, os.Stdout, os.Stderr))
}
