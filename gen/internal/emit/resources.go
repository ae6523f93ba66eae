package emit

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/dave/jennifer/jen"

	"github.com/mcpgen/mcpgen/gen/internal/ir"
)

// Names of the declarations generated for resources and prompts; package
// names checks them for collisions.
// A name that already ends in the kind does not get it twice (the prompt
// args-prompt is GetArgsPrompt, not GetArgsPromptPrompt). The Client has a
// method of the same name as ReadFunc and PromptFunc.
func ReadFunc(goName string) string    { return "Read" + goName }
func ResourceVar(goName string) string { return withSuffix(goName, "Resource") }
func PromptFunc(goName string) string  { return "Get" + withSuffix(goName, "Prompt") }
func PromptVar(goName string) string   { return withSuffix(goName, "Prompt") }

func withSuffix(name, suffix string) string {
	if strings.HasSuffix(name, suffix) {
		return name
	}
	return name + suffix
}

const contextPath = "context"

// resourceDecls returns one group per resource (descriptor and accessor)
// and per prompt (descriptor and getter), in the order given (sorted by
// key and name by the caller).
func (e *emitter) resourceDecls(rs []*ir.Resource, ps []*ir.Prompt, s Server) [][]jen.Code {
	var out [][]jen.Code
	for _, r := range rs {
		out = append(out, append(e.resource(r), e.resourceMethod(r, s)...))
	}
	for _, p := range ps {
		out = append(out, append(e.prompt(p), e.promptMethod(p, s)...))
	}
	return out
}

// readParams are an accessor's parameters after ctx and the Caller, as
// declarations (with types) and as arguments.
func readParams(r *ir.Resource) (decl, args []jen.Code) {
	for _, tv := range r.Vars {
		var t *jen.Statement
		switch {
		case tv.List:
			t = jen.Index().String()
		case tv.Optional:
			t = jen.Op("*").String()
		default:
			t = jen.String()
		}
		decl = append(decl, jen.Id(tv.Param).Add(t))
		args = append(args, jen.Id(tv.Param))
	}
	return decl, args
}

func readResultType(r *ir.Resource) *jen.Statement {
	if r.Content == nil {
		return jen.Op("*").Add(rt("ResourceResult"))
	}
	return jen.Op("*").Add(rt("TypedResource")).Types(jen.Id(r.Content.Type.GoName))
}

// resourceMethod is the Client's accessor: the package-level one with the
// Client's Caller and options.
func (e *emitter) resourceMethod(r *ir.Resource, s Server) []jen.Code {
	decl, args := readParams(r)
	out := []jen.Code{jen.Line()}
	out = append(out, comment(wrap(fmt.Sprintf("%s reads the %q %s as the package-level %s does, through the Client's Caller and with the Client's options before opts, so an identity given to %s reaches the read.", ReadFunc(r.GoName), r.Name, kindOf(r), ReadFunc(r.GoName), s.NewClient()))...)...)
	params := append([]jen.Code{jen.Id("ctx").Qual(contextPath, "Context")}, decl...)
	params = append(params, jen.Id("opts").Op("...").Add(rt("ReadOption")))
	call := append([]jen.Code{jen.Id("ctx"), jen.Id("c").Dot("caller")}, args...)
	call = append(call, jen.Id("c").Dot("readOptions").Call(jen.Id("opts")).Op("..."))
	return append(out, jen.Func().Params(jen.Id("c").Op("*").Id(s.ClientType())).Id(ReadFunc(r.GoName)).Params(params...).
		Params(readResultType(r), jen.Error()).Block(jen.Return(jen.Id(ReadFunc(r.GoName)).Call(call...))))
}

// promptParams are a getter's parameters after ctx and the Caller.
func promptParams(p *ir.Prompt) (decl, args []jen.Code) {
	for _, a := range p.Args {
		if a.Required {
			decl = append(decl, jen.Id(a.Param).String())
		} else {
			decl = append(decl, jen.Id(a.Param).Op("*").String())
		}
		args = append(args, jen.Id(a.Param))
	}
	return decl, args
}

func (e *emitter) promptMethod(p *ir.Prompt, s Server) []jen.Code {
	decl, args := promptParams(p)
	out := []jen.Code{jen.Line()}
	out = append(out, comment(wrap(fmt.Sprintf("%s gets the %q prompt as the package-level %s does, through the Client's Caller and with the Client's options before opts, so an identity given to %s reaches the get.", PromptFunc(p.GoName), p.Name, PromptFunc(p.GoName), s.NewClient()))...)...)
	params := append([]jen.Code{jen.Id("ctx").Qual(contextPath, "Context")}, decl...)
	params = append(params, jen.Id("opts").Op("...").Add(rt("ReadOption")))
	call := append([]jen.Code{jen.Id("ctx"), jen.Id("c").Dot("caller")}, args...)
	call = append(call, jen.Id("c").Dot("readOptions").Call(jen.Id("opts")).Op("..."))
	return append(out, jen.Func().Params(jen.Id("c").Op("*").Id(s.ClientType())).Id(PromptFunc(p.GoName)).Params(params...).
		Params(jen.Op("*").Add(rt("PromptResult")), jen.Error()).Block(jen.Return(jen.Id(PromptFunc(p.GoName)).Call(call...))))
}

// reservedVars lists the variables of a template that appear in a {+...}
// or {#...} expression, whose values RFC 6570 expands with reserved
// characters (/ ? # ...) kept.
func reservedVars(tmpl string) []string {
	var out []string
	for rest := tmpl; ; {
		i := strings.Index(rest, "{")
		if i < 0 {
			return out
		}
		j := strings.Index(rest[i:], "}")
		if j < 0 {
			return out
		}
		expr := rest[i+1 : i+j]
		rest = rest[i+j+1:]
		if expr == "" || (expr[0] != '+' && expr[0] != '#') {
			continue
		}
		for _, v := range strings.Split(expr[1:], ",") {
			v, _, _ = strings.Cut(strings.TrimSuffix(v, "*"), ":")
			if v != "" && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
}

func kindOf(r *ir.Resource) string {
	if r.Template {
		return "resource template"
	}
	return "resource"
}

func (e *emitter) resource(r *ir.Resource) []jen.Code {
	v := ResourceVar(r.GoName)
	out := comment(wrap(fmt.Sprintf("%s describes the %q %s (%s).", v, r.Name, kindOf(r), r.Key))...)
	fields := jen.Dict{}
	if r.Template {
		fields[jen.Id("URITemplate")] = jen.Lit(r.Key)
	} else {
		fields[jen.Id("URI")] = jen.Lit(r.Key)
	}
	fields[jen.Id("Name")] = jen.Lit(r.Name)
	fields[jen.Id("GoName")] = jen.Lit(r.GoName)
	for k, s := range map[string]string{"Title": r.Title, "Description": r.Description, "MIMEType": r.MIMEType} {
		if s != "" {
			fields[jen.Id(k)] = jen.Lit(s)
		}
	}
	if r.Content != nil {
		fields[jen.Id("Schema")] = jen.Qual(jsonPath, "RawMessage").Call(rawString(string(r.Schema)))
	}
	out = append(out, jen.Var().Id(v).Op("=").Op("&").Add(rt("ResourceDescriptor")).Values(fields), jen.Line())

	// The doc comment: what is read, how it is returned, the server's
	// description.
	var doc []string
	if r.Template {
		if raw := reservedVars(r.Key); len(raw) > 0 {
			var params []string
			for _, tv := range r.Vars {
				if slices.Contains(raw, tv.Name) {
					params = append(params, tv.Param)
				}
			}
			doc = append(doc, wrap(fmt.Sprintf("%s reads the %q resource template %s, its variables expanded as RFC 6570 says. %s %s in a reserved expansion ({+...} or {#...}): reserved characters in %s (/ ? # & and the like) are kept, so a value can change the URI's path or query; pass only values you trust or have checked. The other variables are percent-encoded.",
				ReadFunc(r.GoName), r.Name, r.Key, joinAnd(params), map[bool]string{true: "is", false: "are"}[len(params) == 1], map[bool]string{true: "it", false: "them"}[len(params) == 1]))...)
		} else {
			doc = append(doc, wrap(fmt.Sprintf("%s reads the %q resource template %s, its variables expanded as RFC 6570 says (values percent-encoded, so reserved characters in them cannot change the URI's structure).", ReadFunc(r.GoName), r.Name, r.Key))...)
		}
	} else {
		doc = append(doc, wrap(fmt.Sprintf("%s reads the %q resource (%s).", ReadFunc(r.GoName), r.Name, r.Key))...)
	}
	if r.Content != nil {
		doc = append(doc, wrap(fmt.Sprintf("Its content must be one JSON text item, which is decoded into %s and validated (the config binds this schema); anything else is a *mcpruntime.ResourceContentError.", r.Content.Type.GoName))...)
	} else {
		mt := "no mime type"
		if r.MIMEType != "" {
			mt = "mime type " + r.MIMEType
		}
		doc = append(doc, wrap(fmt.Sprintf("The server declares %s; the result keeps every contents item as text or blob with its own mime type (see ResourceResult.Text and Blob).", mt))...)
	}
	doc = append(doc, wrap("A resource the server no longer has is a *mcpruntime.ResourceExpiredError.")...)
	for _, s := range []string{r.Title, r.Description} {
		if s != "" && !strings.Contains(strings.Join(doc, "\n"), s) {
			doc = append(doc, "", s)
		}
	}
	var optional []string
	for _, tv := range r.Vars {
		if tv.Optional {
			optional = append(optional, tv.Param)
		}
	}
	if len(optional) > 0 {
		doc = append(doc, "")
		doc = append(doc, wrap(fmt.Sprintf("Query variables are optional: a nil %s leaves it out.", strings.Join(optional, ", ")))...)
	}
	out = append(out, comment(doc...)...)

	params := []jen.Code{jen.Id("ctx").Qual(contextPath, "Context"), jen.Id("c").Add(rt("Caller"))}
	vars := jen.Dict{}
	for _, tv := range r.Vars {
		var t *jen.Statement
		switch {
		case tv.List:
			t = jen.Index().String()
		case tv.Optional:
			t = jen.Op("*").String()
		default:
			t = jen.String()
		}
		params = append(params, jen.Id(tv.Param).Add(t))
		vars[jen.Lit(tv.Name)] = jen.Id(tv.Param)
	}
	params = append(params, jen.Id("opts").Op("...").Add(rt("ReadOption")))
	read := rt("ReadResource").Call(jen.Id("ctx"), jen.Id("c"), jen.Id(v), jen.Id("opts").Op("..."))
	if r.Template {
		read = rt("ReadTemplate").Call(jen.Id("ctx"), jen.Id("c"), jen.Id(v), rt("TemplateVars").Values(vars), jen.Id("opts").Op("..."))
	}
	fn := jen.Func().Id(ReadFunc(r.GoName)).Params(params...)
	if r.Content == nil {
		out = append(out, fn.Params(jen.Op("*").Add(rt("ResourceResult")), jen.Error()).Block(jen.Return(read)))
		return out
	}
	typ := r.Content.Type.GoName
	out = append(out, fn.Params(jen.Op("*").Add(rt("TypedResource")).Types(jen.Id(typ)), jen.Error()).Block(
		jen.List(jen.Id("res"), jen.Id("err")).Op(":=").Add(read),
		jen.If(jen.Id("err").Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Id("err"))),
		jen.Return(rt("DecodeResource").Call(jen.Id("res"), jen.Id(v), jen.Id("Decode"+typ))),
	))
	return out
}

func (e *emitter) prompt(p *ir.Prompt) []jen.Code {
	v := PromptVar(p.GoName)
	out := comment(fmt.Sprintf("%s describes the %q prompt.", v, p.Name))
	fields := jen.Dict{jen.Id("Name"): jen.Lit(p.Name), jen.Id("GoName"): jen.Lit(p.GoName)}
	if p.Title != "" {
		fields[jen.Id("Title")] = jen.Lit(p.Title)
	}
	if p.Description != "" {
		fields[jen.Id("Description")] = jen.Lit(p.Description)
	}
	if len(p.Args) > 0 {
		var args []jen.Code
		for _, a := range p.Args {
			d := jen.Dict{jen.Id("Name"): jen.Lit(a.Name)}
			if a.Title != "" {
				d[jen.Id("Title")] = jen.Lit(a.Title)
			}
			if a.Description != "" {
				d[jen.Id("Description")] = jen.Lit(a.Description)
			}
			if a.Required {
				d[jen.Id("Required")] = jen.True()
			}
			args = append(args, jen.Values(d))
		}
		fields[jen.Id("Arguments")] = jen.Index().Add(rt("PromptArgument")).ValuesFunc(func(g *jen.Group) {
			for _, a := range args {
				g.Line().Add(a)
			}
			g.Line()
		})
	}
	out = append(out, jen.Var().Id(v).Op("=").Op("&").Add(rt("PromptDescriptor")).Values(fields), jen.Line())

	doc := wrap(fmt.Sprintf("%s gets the %q prompt: its messages with their roles and every content kind.", PromptFunc(p.GoName), p.Name))
	for _, s := range []string{p.Title, p.Description} {
		if s != "" {
			doc = append(doc, "", s)
		}
	}
	if len(p.Args) > 0 {
		doc = append(doc, "")
		doc = append(doc, wrap("Arguments (required ones are values, optional ones pointers: nil leaves them out):")...)
		doc = append(doc, "")
		for _, a := range p.Args {
			line := "  - " + a.Param
			if !a.Required {
				line += " (optional)"
			}
			if d := firstLine(a.Description); d != "" {
				line += ": " + d
			}
			doc = append(doc, line)
		}
	}
	out = append(out, comment(doc...)...)
	params := []jen.Code{jen.Id("ctx").Qual(contextPath, "Context"), jen.Id("c").Add(rt("Caller"))}
	required := jen.Dict{}
	var optional []jen.Code
	for _, a := range p.Args {
		if a.Required {
			params = append(params, jen.Id(a.Param).String())
			required[jen.Lit(a.Name)] = jen.Id(a.Param)
			continue
		}
		params = append(params, jen.Id(a.Param).Op("*").String())
		optional = append(optional, jen.If(jen.Id(a.Param).Op("!=").Nil()).Block(
			jen.Id("args").Index(jen.Lit(a.Name)).Op("=").Op("*").Id(a.Param)))
	}
	params = append(params, jen.Id("opts").Op("...").Add(rt("ReadOption")))
	body := []jen.Code{jen.Id("args").Op(":=").Map(jen.String()).String().Values(required)}
	body = append(body, optional...)
	body = append(body, jen.Return(rt("GetPrompt").Call(jen.Id("ctx"), jen.Id("c"), jen.Id(v), jen.Id("args"), jen.Id("opts").Op("..."))))
	out = append(out, jen.Func().Id(PromptFunc(p.GoName)).Params(params...).Params(jen.Op("*").Add(rt("PromptResult")), jen.Error()).Block(body...))
	return out
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// wrap is one generated sentence as comment text: comment breaks it into
// lines that fit (docText).
func wrap(p string) []string { return []string{p} }

// rawString is a Go raw string literal of s when it can be one (easier to
// read in generated code), else an interpreted one.
func rawString(s string) jen.Code {
	if strings.ContainsAny(s, "`\r") || !utf8.ValidString(s) {
		return jen.Lit(s)
	}
	return jen.Op("`" + s + "`")
}
