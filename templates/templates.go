// Package templates embeds the non-Go artefacts mcpgen writes into a
// user's repository, such as the files `mcpgen init` scaffolds.
package templates

import "embed"

// FS holds the templates, by path (init/mcpgen.yaml.tmpl, ...).
//
//go:embed init
var FS embed.FS
