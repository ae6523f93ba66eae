package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// CheckTools checks the entries of s that name tools or arguments against
// the tools its manifest holds (wire name → the input schema's argument
// names): a rename, override or gate key that names no tool, and an
// identity argument that no tool takes, are errors positioned in the
// config file, as *Error values sorted by position. The config alone
// cannot tell; the manifest can.
func (s *Server) CheckTools(tools map[string][]string) error {
	var errs []*Error
	at := func(p Pos, path, format string, args ...any) {
		errs = append(errs, &Error{File: p.File, Line: p.Line, Col: p.Col, Path: path, Msg: fmt.Sprintf(format, args...), Server: s.ID})
	}
	noTool := func(what, name string, p Pos) {
		at(p, s.path+"."+what, "%q names no tool in %s (%s)", name, s.Manifest, listSome(slices.Sorted(maps.Keys(tools))))
	}
	for name := range s.Tools.Rename {
		if _, ok := tools[name]; !ok {
			noTool("tools.rename", name, s.Tools.RenamePos[name])
		}
	}
	for name, ov := range s.Tools.Override {
		if _, ok := tools[name]; !ok {
			noTool("tools.override", name, ov.Pos)
		}
	}
	if s.Gate != nil {
		for name := range s.Gate.Tools {
			if _, ok := tools[name]; !ok {
				noTool("gate.tools", name, s.Gate.ToolPos[name])
			}
		}
	}
	if id := s.Identity; id != nil && id.Argument != "" {
		seen := map[string]bool{}
		var all []string
		takes := false
		for _, args := range tools {
			for _, a := range args {
				takes = takes || a == id.Argument
				if !seen[a] {
					seen[a] = true
					all = append(all, a)
				}
			}
		}
		if !takes {
			slices.Sort(all)
			at(id.Pos, s.path+".identity.argument", "no tool of server %q takes argument %q, so the caller's identity would never be sent (the tools' arguments: %s)",
				s.ID, id.Argument, listSome(all))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	d := &decoder{errs: errs} // err sorts them by position
	return d.err()
}

// CheckNames checks the keys of names against the tools the manifest
// holds (wire name → the tool's JSON object): a key whose tool is not
// there, or whose pointer names nothing in that tool (for "*#", in any
// tool), is an error at its place in the config, as *Error values sorted
// by position. What a pointer there names must also be something the
// generator names (a type, field, constant or variant), which generating
// checks.
func (s *Server) CheckNames(tools map[string]json.RawMessage) error {
	var errs []*Error
	for key := range s.Names {
		p := s.NamesPos[key]
		at := func(format string, args ...any) {
			errs = append(errs, &Error{File: p.File, Line: p.Line, Col: p.Col, Path: s.path + ".names", Msg: fmt.Sprintf(format, args...), Server: s.ID})
		}
		tool, ptr, _ := strings.Cut(key, "#")
		if tool == "*" {
			if !slices.ContainsFunc(slices.Collect(maps.Values(tools)), func(raw json.RawMessage) bool { return pointerIn(raw, ptr) }) {
				at("%q: no tool in %s has anything at %s", key, s.Manifest, ptr)
			}
			continue
		}
		raw, ok := tools[tool]
		switch {
		case !ok:
			at("%q: %q names no tool in %s (%s)", key, tool, s.Manifest, listSome(slices.Sorted(maps.Keys(tools))))
		case !pointerIn(raw, ptr):
			at("%q: tool %q has nothing at %s", key, tool, ptr)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	d := &decoder{errs: errs}
	return d.err()
}

// pointerIn reports whether the JSON Pointer ptr names a value in raw.
func pointerIn(raw json.RawMessage, ptr string) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	for _, tok := range strings.Split(ptr, "/")[1:] {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[tok]; !ok {
				return false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) || tok != strconv.Itoa(i) {
				return false
			}
			v = x[i]
		default:
			return false
		}
	}
	return true
}

// listSome names up to a dozen items, and how many more there are.
func listSome(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	const most = 12
	if len(items) <= most {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:most], ", "), len(items)-most)
}

// CheckResources checks the keys of resources.bind against the uris and
// uriTemplates the manifest lists: a key that names none is an error at
// its place in the config.
func (s *Server) CheckResources(keys map[string]bool) error {
	var errs []*Error
	for key, b := range s.Resources.Bind {
		if keys[key] {
			continue
		}
		what := "resource uri"
		if strings.Contains(key, "{") {
			what = "resource template's uriTemplate"
		}
		errs = append(errs, &Error{File: b.Pos.File, Line: b.Pos.Line, Col: b.Pos.Col, Path: s.path + ".resources.bind", Server: s.ID,
			Msg: fmt.Sprintf("%q names no resource or resource template in %s (a key is a %s exactly as the manifest lists it: %s)", key, s.Manifest, what, listSome(slices.Sorted(maps.Keys(keys))))})
	}
	if len(errs) == 0 {
		return nil
	}
	d := &decoder{errs: errs}
	return d.err()
}
