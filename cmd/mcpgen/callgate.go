package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mcpgen/mcpgen/config"
	"github.com/mcpgen/mcpgen/manifest"
)

// gateReason says why the config's gate holds a call of tool for approval,
// or "" when it does not: the tool's own policy, else the default;
// "annotations" holds every tool not annotated read-only (the
// specification's default for a tool without annotations). A server
// without a gate in the config holds nothing, as the generated
// GateOptions would not.
func gateReason(s *config.Server, m *manifest.Manifest, tool string) string {
	if s.Gate == nil {
		return ""
	}
	policy, from := s.Gate.Default, "gate.default"
	if p, ok := s.Gate.Tools[tool]; ok {
		policy, from = p, "gate.tools."+tool
	}
	switch policy {
	case config.GateNever:
		return ""
	case config.GateAlways:
		return fmt.Sprintf("%s is %q", from, policy)
	}
	if readOnly(m, tool) {
		return ""
	}
	return fmt.Sprintf("%s is %q and the tool is not annotated read-only", from, policy)
}

// readOnly reports whether the manifest annotates tool readOnlyHint: true.
func readOnly(m *manifest.Manifest, tool string) bool {
	i := slices.IndexFunc(m.Tools, func(e manifest.Entry) bool { return e.Key == tool })
	if i < 0 {
		return false
	}
	var t struct {
		Annotations struct {
			ReadOnly *bool `json:"readOnlyHint"`
		} `json:"annotations"`
	}
	return json.Unmarshal(m.Tools[i].Raw, &t) == nil && t.Annotations.ReadOnly != nil && *t.Annotations.ReadOnly
}

// errNotApproved: the person at the terminal said no.
var errNotApproved = errors.New("not approved: nothing was sent")

// askApproval asks on out and reads the answer from in: only y or yes
// approves; anything else, or the end of input, does not.
func askApproval(in io.Reader, out io.Writer, server, tool, reason string, args json.RawMessage) error {
	fmt.Fprintf(out, "Tool %q of server %q needs approval (%s in the config).\n  arguments: %s\nCall it? [y/N] ", tool, server, reason, args)
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return errNotApproved
}
