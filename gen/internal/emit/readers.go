package emit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/mcpgen/mcpgen/gen/internal/ir"
)

// Reader is a resource or resource template the config makes a tool a
// language model can call (resources.bind[<uri>].tool).
type Reader struct {
	Resource *ir.Resource
	// Name is the tool's name for the model.
	Name string
}

// Names of the declarations generated for readers; package names checks
// them for collisions.
func ReaderFunc(goName string) string       { return "New" + goName + "Reader" }
func ReaderDescriptor(goName string) string { return goName + "ReaderDescriptor" }
func (s Server) ReadersFunc() string        { return s.Prefix + "Readers" }

// DefaultReaderName is a reader's tool name when the config gives none:
// read_ and the resource's name in lower case, each run of characters
// other than letters and digits as one '_', at most 64 characters.
func DefaultReaderName(resourceName string) string {
	var b strings.Builder
	b.WriteString("read_")
	under := true
	for _, r := range strings.ToLower(resourceName) {
		ok := r < 128 && (r >= '0' && r <= '9' || r >= 'a' && r <= 'z')
		switch {
		case ok:
			b.WriteRune(r)
			under = false
		case !under:
			b.WriteByte('_')
			under = true
		}
	}
	n := strings.TrimRight(b.String(), "_")
	if len(n) > 64 {
		n = strings.TrimRight(n[:64], "_")
	}
	return n
}

// readerDecls returns one group per reader (descriptor and factory) and
// the server's Readers function.
func (e *emitter) readerDecls(s Server, rs []*Reader) [][]jen.Code {
	if len(rs) == 0 {
		return nil
	}
	var out [][]jen.Code
	var all []jen.Code
	for _, r := range rs {
		out = append(out, e.reader(s, r))
		all = append(all, jen.Id(ReaderFunc(r.Resource.GoName)).Call(jen.Id("c"), jen.Id("opts").Op("...")))
	}
	fn := doc(fmt.Sprintf("%s returns the %s server's resources and resource templates that the config makes tools (resources.bind[<uri>].tool), each over c with opts, to put in a toolset beside its tools: mcpruntime.NewToolset(append(%s(c), %s(c)...)...).",
		s.ReadersFunc(), s.Label, s.InvokersFunc(), s.ReadersFunc()))
	fn = append(fn, jen.Func().Id(s.ReadersFunc()).Params(jen.Id("c").Add(rt("Caller")), jen.Id("opts").Op("...").Add(rt("ReadOption"))).
		Index().Add(rt("Invoker")).Block(jen.Return(jen.Index().Add(rt("Invoker")).ValuesFunc(func(g *jen.Group) {
		for _, c := range all {
			g.Line().Add(c)
		}
		g.Line()
	}))))
	return append(out, fn)
}

func (e *emitter) reader(s Server, rd *Reader) []jen.Code {
	r := rd.Resource
	dv := ReaderDescriptor(r.GoName)
	out := doc(fmt.Sprintf("%s describes the %q %s as a tool a language model can call, %q.", dv, r.Name, kindOf(r), rd.Name))
	fields := jen.Dict{
		jen.Id("Name"):        jen.Lit(rd.Name),
		jen.Id("GoName"):      jen.Lit(r.GoName + "Reader"),
		jen.Id("Description"): jen.Lit(readerDescription(r)),
		jen.Id("Annotations"): rt("Annotations").Values(jen.Dict{jen.Id("ReadOnly"): jen.True(), jen.Id("Idempotent"): jen.True(), jen.Id("OpenWorld"): jen.True()}),
		jen.Id("InputSchema"): jen.Qual(jsonPath, "RawMessage").Call(rawString(readerSchema(r))),
	}
	if r.Content != nil {
		fields[jen.Id("OutputSchema")] = jen.Qual(jsonPath, "RawMessage").Call(rawString(string(r.Schema)))
	}
	if s.Identity != "" {
		fields[jen.Id("Server")] = jen.Lit(s.Identity)
	}
	out = append(out, jen.Var().Id(dv).Op("=").Add(rt("Descriptor")).Values(fields), jen.Line())

	var what string
	var reserved []string
	for _, v := range r.Vars {
		if v.Operator == "+" || v.Operator == "#" {
			reserved = append(reserved, v.Name)
		}
	}
	switch {
	case len(reserved) > 0:
		what = fmt.Sprintf("Its arguments are the template's variables, checked as untrusted values (mcpimpl.CheckTemplateValues) and percent-encoded as %s does them; the operator of %s lets plain '/' separators through, but no dot segment, encoded separator or empty segment;", ReadFunc(r.GoName), strings.Join(reserved, ", "))
	case r.Template:
		what = fmt.Sprintf("Its arguments are the template's variables, checked as untrusted values (mcpimpl.CheckTemplateValues: nothing a server decoding them would read as another path) and percent-encoded as %s does them;", ReadFunc(r.GoName))
	default:
		what = "It takes no arguments;"
	}
	how := "the result is the content as text, a blob as a one-line description with its size and type (an image as an image)"
	if r.Content != nil {
		how = fmt.Sprintf("the content is decoded and validated as %s, and given to the model as structured content (so a toolset's rendering applies)", r.Content.Type.GoName)
	}
	out = append(out, doc(
		fmt.Sprintf("%s returns the %q %s (%s) as a tool for a language model. %s %s. The read takes %s's path: the size limit, identity and the taint record, with opts; a gate among them (mcpruntime.WithToolOptions(mcpruntime.WithGate(g))) holds calls for approval.",
			ReaderFunc(r.GoName), r.Name, kindOf(r), r.Key, what, how, ReadFunc(r.GoName)))...)
	args := []jen.Code{jen.Op("&").Id(dv), jen.Id(ResourceVar(r.GoName))}
	ctor := jen.Qual(ImplPath, "NewResourceReader")
	if r.Content != nil {
		ctor = jen.Qual(ImplPath, "NewTypedResourceReader")
		args = append(args, jen.Id("Decode"+r.Content.Type.GoName))
	}
	args = append(args, jen.Id("c"), jen.Id("opts").Op("..."))
	out = append(out, jen.Func().Id(ReaderFunc(r.GoName)).Params(jen.Id("c").Add(rt("Caller")), jen.Id("opts").Op("...").Add(rt("ReadOption"))).
		Add(rt("Invoker")).Block(jen.Return(ctor.Call(args...))))
	return out
}

// readerDescription is what the model is told the tool does.
func readerDescription(r *ir.Resource) string {
	var parts []string
	for _, s := range []string{r.Title, r.Description} {
		if s = strings.TrimSpace(s); s != "" && !strings.Contains(strings.Join(parts, " "), s) {
			if !strings.ContainsAny(s[len(s)-1:], ".!?") {
				s += "."
			}
			parts = append(parts, s)
		}
	}
	src := "Reads the resource " + r.Key
	if r.Template {
		src = "Reads the resource template " + r.Key
	}
	if r.MIMEType != "" {
		src += " (" + r.MIMEType + ")"
	}
	return strings.Join(append(parts, src+"."), " ")
}

// readerSchema is the tool's input schema: one string member per template
// variable (a list for an exploded one), required unless it is a query
// variable, nothing else allowed.
func readerSchema(r *ir.Resource) string {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	var required []string
	for i, v := range r.Vars {
		if i > 0 {
			b.WriteByte(',')
		}
		name, desc := jsonString(v.Name), jsonString(fmt.Sprintf("The value of {%s} in %s.", v.Name, r.Key))
		b.WriteString(name)
		switch {
		case v.List && v.Optional:
			fmt.Fprintf(&b, `:{"type":"array","items":{"type":"string"},"description":%s}`, desc)
		case v.List:
			fmt.Fprintf(&b, `:{"type":"array","items":{"type":"string","minLength":1},"minItems":1,"description":%s}`, desc)
		case v.Optional:
			fmt.Fprintf(&b, `:{"type":"string","description":%s}`, desc)
		default:
			fmt.Fprintf(&b, `:{"type":"string","minLength":1,"description":%s}`, desc)
		}
		if !v.Optional {
			required = append(required, name)
		}
	}
	b.WriteString("}")
	if len(required) > 0 {
		b.WriteString(`,"required":[` + strings.Join(required, ",") + "]")
	}
	b.WriteString(`,"additionalProperties":false}`)
	return b.String()
}

// jsonString is a JSON string literal without HTML escaping (the schema
// is read by people in the generated code too).
func jsonString(s string) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}
