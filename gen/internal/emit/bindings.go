package emit

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dave/jennifer/jen"

	"github.com/mcpgen/mcpgen/gen/internal/ir"
)

// Tool is one tool's typed binding: what its descriptor says and the roots
// of its Input and Output types.
type Tool struct {
	Name        string // wire name
	GoName      string
	Title       string
	Description string
	Annotations Annotations
	// InputSchema is the schema a language model is shown: compact JSON,
	// without the identity argument. OutputSchema is nil when the tool
	// declares none.
	InputSchema, OutputSchema []byte
	SchemaHash                string
	// IdentityArg is the argument the runtime fills with the caller's
	// token; "" when the tool has none.
	IdentityArg string
	// TaskSupport is the tool's execution.taskSupport when it is
	// "optional" or "required"; "" otherwise.
	TaskSupport string
	Input       *ir.Root
	Output      *ir.Root // nil: the tool declares no output schema
}

// Annotations are a tool's hints with the specification's defaults
// applied.
type Annotations struct {
	Title                                        string
	ReadOnly, Destructive, Idempotent, OpenWorld bool
	// Defaulted lists the hints (readOnlyHint, ...) the server did not send,
	// Invalid those it sent with a value that is not a boolean; the
	// defaults apply to both.
	Defaulted, Invalid []string
	// Notes explain hints that were sent but unusable (not booleans).
	Notes []string
}

// Server holds what the per-server declarations of a file need.
type Server struct {
	// Label names the server in comments (its id, or the input's name).
	Label string
	// Prefix goes before the per-server names when one package holds the
	// tools of several servers ("" otherwise).
	Prefix string
	// Identity is the descriptors' Server: the manifest's id, "/", and its
	// serverInfo name ("" when both are empty).
	Identity string
	// Gate is the configured approval policy (nil: none configured, no
	// GateOptions function).
	Gate *Gate
}

// Gate is a server's approval policy from the config.
type Gate struct {
	Default string     // annotations, always, never ("" = annotations)
	Tools   []GateRule // sorted by tool
}

// GateRule is one tool's policy.
type GateRule struct{ Tool, Policy string }

// Per-server declaration names, and the methods Client has besides one per
// tool. Package names checks them for collisions.
func (s Server) ClientType() string      { return s.Prefix + "Client" }
func (s Server) NewClient() string       { return "New" + s.Prefix + "Client" }
func (s Server) ToolNameType() string    { return s.Prefix + "ToolName" }
func (s Server) DescriptorsFunc() string { return s.Prefix + "Descriptors" }
func (s Server) GateOptionsFunc() string { return s.Prefix + "GateOptions" }
func (s Server) InvokersFunc() string    { return s.Prefix + "Invokers" }
func (s Server) PackageNames() []string {
	ns := []string{s.ClientType(), s.NewClient(), s.ToolNameType(), s.DescriptorsFunc(), s.InvokersFunc()}
	if s.Gate != nil {
		ns = append(ns, s.GateOptionsFunc())
	}
	return ns
}
func ToolConst(goName string) string       { return "Tool" + goName }
func ResumeMethod(goName string) string    { return "Resume" + goName }
func LinksMethod(goName string) string     { return goName + "Links" }
func DescriptorVar(goName string) string   { return goName + "Descriptor" }
func Factory(goName string) string         { return "New" + goName }
func clientField(goName string) string     { return "tool" + goName }
func (t *Tool) outputType() *jen.Statement { return typeArg(t.Output) }

// ClientMethods are Client's methods that are not named after a tool,
// resource or prompt.
var ClientMethods = []string{"CheckTools", "Toolset", "ReadLink"}

// ToolMethods are the Client methods named after one tool: the call, the
// typed Resume of a held call, and the resource links of a result.
func ToolMethods(goName string) []string {
	return []string{goName, ResumeMethod(goName), LinksMethod(goName)}
}

func typeArg(r *ir.Root) *jen.Statement {
	if r == nil {
		return rt("NoOutput")
	}
	return jen.Id(r.Type.GoName)
}

// bindings returns the groups of declarations that turn the types into
// something a program or an agent calls: the per-server declarations, then
// each tool's descriptor and factory.
func (e *emitter) bindings(f File) []item {
	// The items keep f; they need only its tools and server.
	f.Roots, f.Types, f.Resources, f.Prompts, f.Readers = nil, nil, nil, nil, nil
	one := func(build func(e *emitter) []jen.Code) item {
		return func(e *emitter) [][]jen.Code { return [][]jen.Code{build(e)} }
	}
	out := []item{
		one(func(e *emitter) []jen.Code { return e.toolNames(f) }),
		one(func(e *emitter) []jen.Code { return e.descriptors(f) }),
		one(func(e *emitter) []jen.Code { return e.invokers(f) }),
		one(func(e *emitter) []jen.Code { return e.client(f) }),
	}
	for _, t := range f.Tools {
		out = append(out, one(func(e *emitter) []jen.Code { return e.descriptor(f, t) }), one(func(e *emitter) []jen.Code { return e.factory(t) }))
	}
	for _, t := range f.Tools {
		out = append(out, func(e *emitter) [][]jen.Code { return e.clientMethods(f, t) })
	}
	if f.Server.Gate != nil {
		out = append(out, one(func(e *emitter) []jen.Code { return e.gateOptions(f) }))
	}
	return out
}

// gatePolicies maps config policies to the runtime's.
var gatePolicies = map[string]string{"": "GateMutations", "annotations": "GateMutations", "always": "GateAlways", "never": "GateNever"}

// gateOptions emits the configured approval policy as options for
// mcpruntime.NewGate, so the config, not hand-written code, says which
// calls wait for a person.
func (e *emitter) gateOptions(f File) []jen.Code {
	g := f.Server.Gate
	out := doc(fmt.Sprintf("%s returns the approval policy configured for the %s server, for mcpruntime.NewGate: by default %s, with per-tool rules where the config gives them. Add mcpruntime.GateAfterTaint() to also gate mutations once a run has read external content.",
		f.Server.GateOptionsFunc(), f.Server.Label, map[string]string{"": "calls to tools not annotated read-only need approval", "annotations": "calls to tools not annotated read-only need approval", "always": "every call needs approval", "never": "no call needs approval"}[g.Default]))
	return append(out, jen.Func().Id(f.Server.GateOptionsFunc()).Params().Index().Add(rt("GateOption")).Block(
		jen.Return(jen.Index().Add(rt("GateOption")).ValuesFunc(func(v *jen.Group) {
			v.Line().Add(rt("GateDefault")).Call(rt(gatePolicies[g.Default]))
			for _, r := range g.Tools {
				v.Line().Add(rt("GateTool")).Call(jen.Lit(r.Tool), rt(gatePolicies[r.Policy]))
			}
			v.Line()
		}))))
}

func (e *emitter) toolNames(f File) []jen.Code {
	s := f.Server
	out := doc(fmt.Sprintf("%s is the wire name of one of the %s server's tools; %s.Toolset takes the constants below.", s.ToolNameType(), f.Server.Label, s.ClientType()))
	out = append(out, jen.Type().Id(s.ToolNameType()).String())
	if len(f.Tools) == 0 {
		return out
	}
	consts := []jen.Code{}
	for _, t := range f.Tools {
		consts = append(consts, jen.Id(ToolConst(t.GoName)).Id(s.ToolNameType()).Op("=").Lit(t.Name))
	}
	out = append(out, jen.Line())
	out = append(out, comment(fmt.Sprintf("The %s server's tools.", f.Server.Label))...)
	out = append(out, jen.Const().Defs(consts...))
	return out
}

func (e *emitter) descriptors(f File) []jen.Code {
	var ptrs []jen.Code
	for _, t := range f.Tools {
		ptrs = append(ptrs, jen.Op("&").Id(DescriptorVar(t.GoName)))
	}
	out := doc(fmt.Sprintf("%s returns the descriptors of the %s server's tools, sorted by wire name, e.g. to advertise them to a language model.", f.Server.DescriptorsFunc(), f.Server.Label))
	return append(out, jen.Func().Id(f.Server.DescriptorsFunc()).Params().Index().Op("*").Add(rt("Descriptor")).Block(
		jen.Return(jen.Index().Op("*").Add(rt("Descriptor")).ValuesFunc(func(g *jen.Group) {
			for _, p := range ptrs {
				g.Line().Add(p)
			}
			if len(ptrs) > 0 {
				g.Line()
			}
		}))))
}

// invokers emits a function with the signature of manager.ToolSource's
// Bind, so a connection manager can build every typed tool of the server
// over its own connection.
func (e *emitter) invokers(f File) []jen.Code {
	out := doc(fmt.Sprintf("%s builds every typed tool of the %s server over c, each with opts; its signature is that of ToolSource.Bind in package runtime/manager, for a connection manager.", f.Server.InvokersFunc(), f.Server.Label))
	return append(out, jen.Func().Id(f.Server.InvokersFunc()).Params(jen.Id("c").Add(rt("Caller")), jen.Id("opts").Op("...").Add(rt("Option"))).Index().Add(rt("Invoker")).Block(
		jen.Return(jen.Index().Add(rt("Invoker")).ValuesFunc(func(g *jen.Group) {
			for _, t := range f.Tools {
				g.Line().Id(Factory(t.GoName)).Call(jen.Id("c"), jen.Id("opts").Op("..."))
			}
			if len(f.Tools) > 0 {
				g.Line()
			}
		}))))
}

func (e *emitter) client(f File) []jen.Code {
	s := f.Server
	out := doc(fmt.Sprintf("%s calls the %s server's tools with typed inputs and outputs, and reads its resources and prompts. Every call and read goes through one Caller, so a sequence of them shares its session, and with the options given to %s (identity, timeout). It is safe for concurrent use if the Caller is.", s.ClientType(), s.Label, s.NewClient()))
	out = append(out, jen.Type().Id(s.ClientType()).StructFunc(func(g *jen.Group) {
		g.Id("caller").Add(rt("Caller"))
		g.Id("opts").Index().Add(rt("Option"))
		for _, t := range f.Tools {
			g.Id(clientField(t.GoName)).Op("*").Add(rt("Tool")).Types(jen.Id(t.Input.Type.GoName), t.outputType())
		}
	}))
	out = append(out, jen.Line())
	out = append(out, doc(fmt.Sprintf("%s returns a %s over c; opts apply to every tool (per-call timeout, identity, gate) and, those that make sense for them (timeout, identity, server name), to every resource read and prompt get. It never touches the network.", s.NewClient(), s.ClientType()))...)
	out = append(out, jen.Func().Id(s.NewClient()).Params(jen.Id("c").Add(rt("Caller")), jen.Id("opts").Op("...").Add(rt("Option"))).Op("*").Id(s.ClientType()).Block(
		jen.Return(jen.Op("&").Id(s.ClientType()).Values(jen.DictFunc(func(d jen.Dict) {
			d[jen.Id("caller")] = jen.Id("c")
			d[jen.Id("opts")] = jen.Id("opts")
			for _, t := range f.Tools {
				d[jen.Id(clientField(t.GoName))] = jen.Id(Factory(t.GoName)).Call(jen.Id("c"), jen.Id("opts").Op("..."))
			}
		})))))
	var names []jen.Code
	for _, t := range f.Tools {
		names = append(names, jen.Lit(t.Name))
	}
	out = append(out, jen.Line())
	out = append(out, doc("CheckTools verifies that the server offers every tool these bindings declare. The error is a *mcpruntime.MissingToolError listing what the server offers instead. It returns nil without asking when the Caller cannot list tools (mcpruntime.ToolLister).")...)
	out = append(out, jen.Func().Params(jen.Id("c").Op("*").Id(s.ClientType())).Id("CheckTools").Params(jen.Id("ctx").Qual("context", "Context")).Error().Block(
		jen.Return(rt("CheckTools").Call(append([]jen.Code{jen.Id("ctx"), jen.Id("c").Dot("caller")}, names...)...))))
	out = append(out, jen.Line())
	out = append(out, doc("Toolset returns a least-privilege toolset of just the named tools, for a language-model agent: an agent holding it can call these tools and no others, and cannot reach the connection behind them.")...)
	out = append(out, jen.Func().Params(jen.Id("c").Op("*").Id(s.ClientType())).Id("Toolset").Params(jen.Id("tools").Op("...").Id(s.ToolNameType())).Params(jen.Op("*").Add(rt("Toolset")), jen.Error()).Block(
		jen.Id("invokers").Op(":=").Make(jen.Index().Add(rt("Invoker")), jen.Lit(0), jen.Len(jen.Id("tools"))),
		jen.For(jen.List(jen.Id("_"), jen.Id("name")).Op(":=").Range().Id("tools")).Block(
			jen.Id("t").Op(":=").Id("c").Dot("invoker").Call(jen.Id("name")),
			jen.If(jen.Id("t").Op("==").Nil()).Block(
				jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit(fmt.Sprintf("toolset: the %s server has no tool %%q", s.Label)), jen.String().Call(jen.Id("name"))))),
			jen.Id("invokers").Op("=").Append(jen.Id("invokers"), jen.Id("t"))),
		jen.Return(rt("NewToolset").Call(jen.Id("invokers").Op("...")))))
	out = append(out, jen.Line())
	out = append(out, doc("ReadLink reads the resource a link in a tool result points to (see the <Tool>Links methods), with the Client's options; opts come after them. With mcpruntime.Refresh, an expired link of an idempotent tool is refreshed by calling the tool once more.")...)
	out = append(out, jen.Func().Params(jen.Id("c").Op("*").Id(s.ClientType())).Id("ReadLink").
		Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("l").Add(rt("ResourceLink")), jen.Id("opts").Op("...").Add(rt("ReadOption"))).
		Params(jen.Op("*").Add(rt("ResourceResult")), jen.Error()).
		Block(jen.Return(rt("ReadLink").Call(jen.Id("ctx"), jen.Id("c").Dot("caller"), jen.Id("l"), jen.Id("c").Dot("readOptions").Call(jen.Id("opts")).Op("...")))))
	out = append(out, jen.Line())
	out = append(out, comment("readOptions puts the Client's options that apply to reads before opts.")...)
	out = append(out, jen.Func().Params(jen.Id("c").Op("*").Id(s.ClientType())).Id("readOptions").
		Params(jen.Id("opts").Index().Add(rt("ReadOption"))).Index().Add(rt("ReadOption")).
		Block(jen.Return(jen.Append(jen.Index().Add(rt("ReadOption")).Values(rt("WithToolOptions").Call(jen.Id("c").Dot("opts").Op("..."))), jen.Id("opts").Op("...")))))
	out = append(out, jen.Line())
	out = append(out, jen.Func().Params(jen.Id("c").Op("*").Id(s.ClientType())).Id("invoker").Params(jen.Id("name").Id(s.ToolNameType())).Add(rt("Invoker")).BlockFunc(func(g *jen.Group) {
		if len(f.Tools) > 0 {
			g.Switch(jen.Id("name")).BlockFunc(func(g *jen.Group) {
				for _, t := range f.Tools {
					g.Case(jen.Id(ToolConst(t.GoName))).Block(jen.Return(jen.Id("c").Dot(clientField(t.GoName))))
				}
			})
		}
		g.Return(jen.Nil())
	}))
	return out
}

// clientMethods are the client's three methods of tool t, each its own
// group.
func (e *emitter) clientMethods(f File, t *Tool) [][]jen.Code {
	var out [][]jen.Code
	{
		// A tool that runs only as a task cannot be called and waited on
		// in one request: its method starts the task, and its Resume
		// starts the held one, so the Client offers what works.
		call, resume, ret := "Call", "Resume", jen.Op("*").Add(rt("TypedResult")).Types(t.outputType())
		d := doc(fmt.Sprintf("%s calls the %q tool (see %s).", t.GoName, t.Name, Factory(t.GoName)))
		rd := doc(fmt.Sprintf("%s makes the %q call that a gate held, once approved: id is the approval's ID (from the *mcpruntime.ApprovalRequiredError the call returned), and the call runs exactly once however often it is resumed. It must run as the principal that made the call.", ResumeMethod(t.GoName), t.Name))
		if t.TaskSupport == "required" {
			call, resume, ret = "Start", "ResumeStart", jen.Op("*").Add(rt("Task")).Types(t.outputType())
			d = doc(fmt.Sprintf("%s starts the %q tool, which runs only as a task (see %s); Wait on the task for its result.", t.GoName, t.Name, Factory(t.GoName)))
			rd = doc(fmt.Sprintf("%s starts the %q task that a gate held, once approved: id is the approval's ID (from the *mcpruntime.ApprovalRequiredError the start returned), and the task starts exactly once however often it is resumed. It must run as the principal that made the start.", ResumeMethod(t.GoName), t.Name))
		}
		out = append(out, append(d, jen.Func().Params(jen.Id("c").Op("*").Id(f.Server.ClientType())).Id(t.GoName).
			Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("in").Id(t.Input.Type.GoName)).
			Params(ret.Clone(), jen.Error()).
			Block(jen.Return(jen.Id("c").Dot(clientField(t.GoName)).Dot(call).Call(jen.Id("ctx"), jen.Id("in"))))))
		out = append(out, append(rd, jen.Func().Params(jen.Id("c").Op("*").Id(f.Server.ClientType())).Id(ResumeMethod(t.GoName)).
			Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("id").String()).
			Params(ret.Clone(), jen.Error()).
			Block(jen.Return(jen.Id("c").Dot(clientField(t.GoName)).Dot(resume).Call(jen.Id("ctx"), jen.Id("id"))))))
		d = doc(fmt.Sprintf("%s returns the resource links in res, the result of %s for in, for ReadLink: each remembers the call, so an expired link can be refreshed by making it again.", LinksMethod(t.GoName), t.GoName))
		out = append(out, append(d, jen.Func().Params(jen.Id("c").Op("*").Id(f.Server.ClientType())).Id(LinksMethod(t.GoName)).
			Params(jen.Id("in").Id(t.Input.Type.GoName), jen.Id("res").Op("*").Add(rt("TypedResult")).Types(t.outputType())).
			Index().Add(rt("ResourceLink")).
			Block(jen.Return(rt("LinksOf").Call(jen.Id("c").Dot(clientField(t.GoName)), jen.Id("in"), jen.Id("res"))))))
	}
	return out
}

func (e *emitter) descriptor(f File, t *Tool) []jen.Code {
	lines := []string{fmt.Sprintf("%s describes the %q tool as snapshotted in %s.", DescriptorVar(t.GoName), t.Name, f.Source)}
	a := t.Annotations
	switch n := len(a.Defaulted); {
	case n == 1:
		lines = append(lines, fmt.Sprintf("The server sent no %s; the specification's default applies.", a.Defaulted[0]))
	case n > 1:
		lines = append(lines, fmt.Sprintf("The server sent none of %s, so the specification's defaults apply.", joinAnd(a.Defaulted)))
	}
	lines = append(lines, a.Notes...)
	if t.IdentityArg != "" {
		lines = append(lines, fmt.Sprintf("InputSchema leaves out %q, the argument that carries the caller's identity.", t.IdentityArg))
	}
	switch t.TaskSupport {
	case "optional":
		lines = append(lines, "The tool may run as a task: Start starts one, Call makes a plain call.")
	case "required":
		lines = append(lines, "The tool runs only as a task: start it with Start (Call refuses it; Invoke waits for the task).")
	}
	out := doc(strings.Join(lines, " "))
	fields := []jen.Code{
		jen.Id("Name").Op(":").Lit(t.Name),
		jen.Id("GoName").Op(":").Lit(t.GoName),
	}
	if t.Title != "" {
		fields = append(fields, jen.Id("Title").Op(":").Lit(t.Title))
	}
	if t.Description != "" {
		fields = append(fields, jen.Id("Description").Op(":").Lit(t.Description))
	}
	fields = append(fields, jen.Id("Annotations").Op(":").Add(rt("Annotations")).ValuesFunc(func(g *jen.Group) {
		if a.Title != "" {
			g.Line().Id("Title").Op(":").Lit(a.Title)
		}
		g.Line().Id("ReadOnly").Op(":").Lit(a.ReadOnly)
		g.Line().Id("Destructive").Op(":").Lit(a.Destructive)
		g.Line().Id("Idempotent").Op(":").Lit(a.Idempotent)
		g.Line().Id("OpenWorld").Op(":").Lit(a.OpenWorld)
		g.Line()
	}))
	fields = append(fields, jen.Id("InputSchema").Op(":").Add(rawJSON(t.InputSchema)))
	if t.OutputSchema != nil {
		fields = append(fields, jen.Id("OutputSchema").Op(":").Add(rawJSON(t.OutputSchema)))
	}
	fields = append(fields, jen.Id("SchemaHash").Op(":").Lit(t.SchemaHash))
	if f.Server.Identity != "" {
		fields = append(fields, jen.Id("Server").Op(":").Lit(f.Server.Identity))
	}
	switch t.TaskSupport {
	case "optional":
		fields = append(fields, jen.Id("TaskSupport").Op(":").Add(rt("TaskOptional")))
	case "required":
		fields = append(fields, jen.Id("TaskSupport").Op(":").Add(rt("TaskRequired")))
	}
	return append(out, jen.Var().Id(DescriptorVar(t.GoName)).Op("=").Add(rt("Descriptor")).ValuesFunc(func(g *jen.Group) {
		for _, c := range fields {
			g.Line().Add(c)
		}
		g.Line()
	}))
}

func (e *emitter) factory(t *Tool) []jen.Code {
	in := t.Input.Type.GoName
	var what string
	if t.Output != nil {
		what = fmt.Sprintf("the %s with everything else the server sent", t.Output.Type.GoName)
	} else {
		what = "everything the server sent (the tool declares no output schema)"
	}
	lines := []string{fmt.Sprintf("%s returns the %q tool over c. Call takes %s and returns %s; Invoke takes a language model's JSON arguments and returns text for it. It never touches the network.", Factory(t.GoName), t.Name, in, what)}
	if t.IdentityArg != "" {
		lines = append(lines, "", fmt.Sprintf("The tool takes the caller's token in %q, which is not in %s: the runtime sets it on every call from the identity given with mcpruntime.WithIdentity, and a call without one fails before anything is sent.", t.IdentityArg, in))
	}
	opts := jen.Id("opts").Op("...")
	if t.IdentityArg != "" {
		opts = jen.Append(jen.Index().Add(rt("Option")).Values(rt("WithIdentityArgument").Call(jen.Lit(t.IdentityArg))), jen.Id("opts").Op("...")).Op("...")
	}
	return append(doc(lines...), jen.Func().Id(Factory(t.GoName)).
		Params(jen.Id("c").Add(rt("Caller")), jen.Id("opts").Op("...").Add(rt("Option"))).
		Op("*").Add(rt("Tool")).Types(jen.Id(in), t.outputType()).
		Block(jen.Return(rt("NewTool").Types(jen.Id(in), t.outputType()).Call(jen.Op("&").Id(DescriptorVar(t.GoName)), jen.Id("c"), opts))))
}

// rawJSON writes a schema as json.RawMessage(`...`), readable in review;
// text a raw string cannot hold falls back to a quoted literal.
func rawJSON(b []byte) *jen.Statement {
	s := string(b)
	if utf8.ValidString(s) && !strings.ContainsAny(s, "`\r\ufeff") {
		return jen.Qual(jsonPath, "RawMessage").Call(jen.Op("`" + s + "`"))
	}
	return jen.Qual(jsonPath, "RawMessage").Call(jen.Op(strconv.Quote(s)))
}

func joinAnd(ss []string) string {
	switch len(ss) {
	case 0:
		return ""
	case 1:
		return ss[0]
	}
	return strings.Join(ss[:len(ss)-1], ", ") + " and " + ss[len(ss)-1]
}

// doc renders paragraphs as // lines wrapped at about 80 columns; "" is a
// blank line between paragraphs.
func doc(paras ...string) []jen.Code { return comment(paras...) }
