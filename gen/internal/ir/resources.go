package ir

import (
	"encoding/json"
	"fmt"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"go/token"
	"slices"
	"strings"

	"github.com/mcpgen/mcpgen/gen/internal/ident"
)

// Resource is one concrete resource or resource template to generate an
// accessor for.
type Resource struct {
	// Key is the uri, or the uriTemplate of a template.
	Key      string
	Template bool
	Name     string
	Title    string
	// Description and MIMEType as the server declares them.
	Description string
	MIMEType    string
	// Vars are a template's variables, in order of first appearance.
	Vars []*TemplateVar
	// GoName names the accessor (Read<GoName>) and descriptor
	// (<GoName>Resource); Pinned says a config binding chose it.
	GoName string
	Pinned bool
	// Content is the root of the type a config binding gives the content;
	// nil when the resource is read as text or blob. Schema is that
	// binding's schema as compact JSON.
	Content *Root
	Schema  []byte
	// File and Pointer locate the entry in its manifest.
	File, Pointer string
}

// TemplateVar is one variable of a resource template, and the Go parameter
// that carries it.
type TemplateVar struct {
	Name  string
	Param string
	// Operator is the first operator the variable appears with.
	Operator string
	// List: the explode modifier makes the value a list ([]string).
	List bool
	// Optional: query variables ({?x}, {&x}) may be left undefined, so the
	// parameter is a pointer (or a nil list).
	Optional bool
}

// Prompt is one prompt to generate a getter for.
type Prompt struct {
	Name, Title, Description string
	Args                     []*PromptArg
	GoName                   string
	File, Pointer            string
}

// PromptArg is one declared prompt argument and its Go parameter:
// required ones are values, optional ones pointers.
type PromptArg struct {
	Name, Title, Description string
	Required                 bool
	Param                    string
}

// EntryError is a problem with a resource, template or prompt entry at a
// JSON Pointer in its manifest.
type EntryError struct {
	File, Pointer, Msg string
}

func (e *EntryError) Error() string { return e.File + ":" + e.Pointer + ": " + e.Msg }

// reservedParams are the names generated accessors use themselves; a
// parameter that would take one gets a trailing underscore.
var reservedParams = []string{"ctx", "c", "opts", "args", "res", "err", "vars", "mcpruntime", "context", "json"}

// BuildResource reads one resources or resourceTemplates entry (raw is the
// object as the server sent it). goName, when not empty, is a pinned Go
// name.
func BuildResource(file, pointer string, raw json.RawMessage, template bool, goName string) (*Resource, []*EntryError) {
	var w struct {
		URI         string `json:"uri"`
		URITemplate string `json:"uriTemplate"`
		Name        string `json:"name"`
		Title       string `json:"title"`
		Description string `json:"description"`
		MIMEType    string `json:"mimeType"`
	}
	r := &Resource{Template: template, File: file, Pointer: pointer}
	var errs []*EntryError
	fail := func(ptr, format string, args ...any) {
		errs = append(errs, &EntryError{File: file, Pointer: pointer + ptr, Msg: fmt.Sprintf(format, args...)})
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		fail("", "invalid entry: %v", err)
		return nil, errs
	}
	r.Key, r.Name, r.Title, r.Description, r.MIMEType = w.URI, w.Name, w.Title, w.Description, w.MIMEType
	kind := "resource"
	if template {
		r.Key, kind = w.URITemplate, "resource template"
	}
	switch {
	case goName != "":
		if !ident.Valid(goName) {
			fail("", "pinned Go name %q for %s %q is not an exported Go identifier", goName, kind, r.Key)
		}
		r.GoName, r.Pinned = goName, true
	case ident.Ident(w.Name) == "":
		fail("/name", "%s %q: name %q has no letters, digits or symbols to build a Go name from; pin one (config resources.bind[...].goName)", kind, r.Key, w.Name)
	default:
		r.GoName = ident.Ident(w.Name)
	}
	if !template {
		return r, errs
	}
	vars, err := TemplateVariables(r.Key)
	if err != nil {
		fail("/uriTemplate", "%v", err)
		return r, errs
	}
	params := map[string]string{}
	for _, v := range vars {
		if p, dup := params[v.Param]; dup {
			fail("/uriTemplate", "template variables %q and %q both become the Go parameter %s", p, v.Name, v.Param)
			continue
		}
		params[v.Param] = v.Name
	}
	r.Vars = vars
	return r, errs
}

// TemplateVariables parses an RFC 6570 URI template with the runtime's
// parser (the one that expands it at run time, so what generates is what
// expands) and returns its variables in order of first appearance.
func TemplateVariables(tmpl string) ([]*TemplateVar, error) {
	t, err := mcpruntime.ParseURITemplate(tmpl)
	if err != nil {
		return nil, err
	}
	var out []*TemplateVar
	seen := map[string]*TemplateVar{}
	for _, rv := range t.Variables() {
		optional := rv.Operator == "?" || rv.Operator == "&"
		if v, ok := seen[rv.Name]; ok {
			if v.List != rv.Explode {
				return nil, fmt.Errorf("uri template %q: variable %q is used both as a list (with *) and as a string", tmpl, rv.Name)
			}
			// Required anywhere makes it required.
			v.Optional = v.Optional && optional
			continue
		}
		v := &TemplateVar{Name: rv.Name, Operator: rv.Operator, List: rv.Explode, Optional: optional, Param: paramName(rv.Name)}
		seen[rv.Name] = v
		out = append(out, v)
	}
	return out, nil
}

// paramName turns a wire name into an unexported Go parameter name:
// deal_id → dealID, URL → url, 2fa → v2fa, type → type_.
func paramName(s string) string {
	words := ident.Words(s)
	if len(words) == 0 {
		return "arg_"
	}
	var b strings.Builder
	b.WriteString(strings.ToLower(words[0]))
	for _, w := range words[1:] {
		if id := ident.Ident(w); strings.HasPrefix(id, "X") && !strings.HasPrefix(strings.ToUpper(w), "X") {
			b.WriteString(w) // a word starting with a digit
		} else {
			b.WriteString(id)
		}
	}
	p := b.String()
	if c := p[0]; c >= '0' && c <= '9' {
		p = "v" + p
	}
	if token.IsKeyword(p) || slices.Contains(reservedParams, p) || isPredeclared(p) {
		p += "_"
	}
	return p
}

func isPredeclared(s string) bool {
	switch s {
	case "string", "bool", "int", "byte", "rune", "error", "any", "nil", "true", "false", "len", "cap", "new", "make", "append", "copy", "delete", "panic", "print", "println", "max", "min", "clear", "close", "iota", "float64", "int64":
		return true
	}
	return false
}

// BuildPrompt reads one prompts entry.
func BuildPrompt(file, pointer string, raw json.RawMessage) (*Prompt, []*EntryError) {
	var w struct {
		Name        string `json:"name"`
		Title       string `json:"title"`
		Description string `json:"description"`
		Arguments   []struct {
			Name        string `json:"name"`
			Title       string `json:"title"`
			Description string `json:"description"`
			Required    bool   `json:"required"`
		} `json:"arguments"`
	}
	var errs []*EntryError
	fail := func(ptr, format string, args ...any) {
		errs = append(errs, &EntryError{File: file, Pointer: pointer + ptr, Msg: fmt.Sprintf(format, args...)})
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		fail("", "invalid prompt entry: %v", err)
		return nil, errs
	}
	p := &Prompt{Name: w.Name, Title: w.Title, Description: w.Description, GoName: ident.Ident(w.Name), File: file, Pointer: pointer}
	if p.GoName == "" {
		fail("/name", "prompt name %q has no letters, digits or symbols to build a Go name from", w.Name)
	}
	names := map[string]int{}
	params := map[string]string{}
	for i, a := range w.Arguments {
		at := fmt.Sprintf("/arguments/%d", i)
		if a.Name == "" {
			fail(at+"/name", "prompt %q: argument without a name", w.Name)
			continue
		}
		if j, dup := names[a.Name]; dup {
			fail(at+"/name", "prompt %q: argument %q is declared twice (also at /arguments/%d)", w.Name, a.Name, j)
			continue
		}
		names[a.Name] = i
		arg := &PromptArg{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required, Param: paramName(a.Name)}
		if prev, dup := params[arg.Param]; dup {
			fail(at+"/name", "prompt %q: arguments %q and %q both become the Go parameter %s", w.Name, prev, a.Name, arg.Param)
			continue
		}
		params[arg.Param] = a.Name
		p.Args = append(p.Args, arg)
	}
	return p, errs
}

// Subject names what the schema belongs to in messages: tool "x" or
// resource "uri".
func (s *Schema) Subject() string {
	if s.Resource {
		return fmt.Sprintf("resource %q", s.Tool)
	}
	return fmt.Sprintf("tool %q", s.Tool)
}
