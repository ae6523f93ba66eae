package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mcpgen/mcpgen/snapshot"
)

// protoFlags are the protocol flags of every command that talks to
// servers. Given, they override the config's protocolVersion and
// capabilities.
type protoFlags struct {
	fs           *pflag.FlagSet
	protocol     string
	capabilities []string
}

func addProtoFlags(fs *pflag.FlagSet) *protoFlags {
	p := &protoFlags{fs: fs}
	fs.StringVar(&p.protocol, "protocol", "", "pin the MCP protocol version ("+strings.Join(snapshot.ProtocolVersions, ", ")+"; default: negotiate)")
	fs.StringSliceVar(&p.capabilities, "capabilities", nil, "client capabilities to declare, comma-separated ("+strings.Join(snapshot.Capabilities, ", ")+")")
	return p
}

func (p *protoFlags) check() error {
	if p.protocol != "" && !slices.Contains(snapshot.ProtocolVersions, p.protocol) {
		return usagef("--protocol %q: unknown version (known: %s)", p.protocol, strings.Join(snapshot.ProtocolVersions, ", "))
	}
	for _, c := range p.capabilities {
		if !slices.Contains(snapshot.Capabilities, c) {
			return usagef("--capabilities: unknown capability %q (known: %s)", c, strings.Join(snapshot.Capabilities, ", "))
		}
	}
	return nil
}

// apply puts the flags that were given over o.
func (p *protoFlags) apply(o snapshot.Options) snapshot.Options {
	if p.protocol != "" {
		o.ProtocolVersion = p.protocol
	}
	if p.fs.Changed("capabilities") {
		o.Capabilities = slices.Clone(p.capabilities)
	}
	return o
}

func (p *protoFlags) String() string {
	return fmt.Sprintf("protocol %q, capabilities %v", p.protocol, p.capabilities)
}
