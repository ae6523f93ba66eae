// Package emit renders the IR as Go source with jennifer. It is the only
// package that knows Go syntax; one small function per construct.
package emit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"math/big"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"github.com/dave/jennifer/jen"

	"github.com/mcpgen/mcpgen/gen/internal/ir"
	"github.com/mcpgen/mcpgen/gen/internal/names"
	"github.com/mcpgen/mcpgen/manifest"
)

// RuntimePath is the import path of the support package generated code
// uses; it is imported under the name mcpruntime.
const RuntimePath = "github.com/mcpgen/mcpgen/runtime"

// ImplPath is the import path of the runtime's package for generated code
// only: decoders, encoders and validation helpers.
const ImplPath = "github.com/mcpgen/mcpgen/runtime/mcpimpl"

// implNames are the identifiers generated code takes from ImplPath; every
// other runtime identifier is the user-facing package's.
var implNames = map[string]bool{}

func init() {
	for _, n := range []string{"CanonicalJSON", "BigMultipleOf", "CheckAs", "CheckRaw", "CompareNumber", "Const", "Decode", "DecodeBigInteger", "DecodeBool", "DecodeFunc", "DecodeInner",
		"DecodeInnerNullAware", "DecodeInteger", "DecodeNullAware", "DecodeNumber", "DecodeObject", "DecodeRaw",
		"DecodeRawAs", "DecodeRawValue", "DecodeRawValueAs", "DecodeString", "EqualJSON", "Extra", "ExtraMembers", "ExtraOf", "Has", "HasMember", "IndexPointer",
		"JSONKind", "KeepUnknown", "KeyPointer", "MapOf", "Matches", "Member", "MultipleOf", "NonNilMap", "NonNilSlice", "NullOr", "NullableOf",
		"Object", "ObjectEncoder", "PointerTo", "QuoteList", "Required", "SliceOf", "SortedKeys", "UniqueItems", "ValidFormat",
		"Unknown", "UnknownEnum", "Violations", "SupportPackageIsVersion1",
		"Struct", "Row", "DecodeAndValidate", "CompilePattern", "Open", "Closed", "OpenKept", "ClosedKept", "Raw", "NotNull", "BigInt", "NullAware",
		"Always", "OmitNil", "OmitUnset", "EmptyArray", "EmptyObject", "Union", "Variant", "Checker", "As"} {
		implNames[n] = true
	}
}

const jsonPath = "encoding/json"

// File is one output file.
type File struct {
	// Source is the input's name, used in the header.
	Source  string
	Package string
	Roots   []*ir.Root
	// Types are the named types to declare, in order.
	Types []*ir.Type
	// Tools are the typed bindings, sorted by wire name; Server names the
	// per-server declarations (see bindings.go).
	Tools  []*Tool
	Server Server
	// Resources and Prompts get accessors (see resources.go), sorted by
	// key and name.
	Resources []*ir.Resource
	Prompts   []*ir.Prompt
	// Readers are the resources made tools (see readers.go).
	Readers []*Reader
}

type emitter struct {
	patterns []jen.Code
}

// hasInteger reports whether a type of types, or a field, element or
// variant in one, is an integer.
func hasInteger(types []*ir.Type) bool {
	isInt := func(t *ir.Type) bool {
		for t != nil && !t.Named && (t.Kind == ir.Array || t.Kind == ir.Map) {
			t = t.Elem
		}
		return t != nil && (t.Kind == ir.Integer || t.Kind == ir.Enum && t.Base == ir.Integer)
	}
	for _, t := range types {
		if isInt(t) || isInt(t.Elem) || isInt(t.Extra) {
			return true
		}
		for _, f := range t.Fields {
			if isInt(f.Type) {
				return true
			}
		}
		for _, v := range t.Variants {
			if isInt(v.Type) {
				return true
			}
		}
	}
	return false
}

// DefaultSplitBytes is the size at which an output file ends and the next
// one begins: a file ends after the declaration that brings it to this
// many bytes. No declaration comes near it, so every file stays well under
// 8 MB, the size past which editors and go/parser get slow.
const DefaultSplitBytes = 4 << 20

// Render returns the gofmt'd source of f as one or more files, in order:
// the first holds the header declarations, later ones continue the same
// package. A new file starts once the current one holds splitBytes
// (DefaultSplitBytes when 0) of declarations, so the split depends only on
// the input.
//
// Each declaration group is built, formatted and dropped on its own, so
// memory holds a few groups' syntax trees, not the file's; the groups are
// joined with the blank line gofmt would put between them, which makes the
// result byte-identical to formatting the whole file at once. Groups are
// built and formatted on every core (formatting is most of the work), and
// joined in their order, so the bytes do not depend on scheduling.
func Render(f File, splitBytes int) ([][]byte, error) {
	if splitBytes <= 0 {
		splitBytes = DefaultSplitBytes
	}
	rootOf := map[*ir.Type]*ir.Root{}
	for _, r := range f.Roots {
		rootOf[r.Type] = r
	}
	source, pkg, integers := f.Source, f.Package, hasInteger(f.Types)
	items := (&emitter{}).bindings(f)
	for _, t := range f.Types {
		r := rootOf[t]
		items = append(items, func(e *emitter) [][]jen.Code {
			group := e.decl(t)
			if r != nil {
				group = append(group, e.rootFuncs(r)...)
			}
			return [][]jen.Code{group}
		})
	}
	res, prompts, readers, server := f.Resources, f.Prompts, f.Readers, f.Server
	items = append(items,
		func(e *emitter) [][]jen.Code { return e.resourceDecls(res, prompts, server) },
		func(e *emitter) [][]jen.Code { return e.readerDecls(server, readers) })
	// From here on the items hold the IR, each only what it renders, and
	// let go of it once rendered: the IR of a large input is freed as its
	// output grows, instead of both being held to the end.
	f, rootOf = File{}, nil

	var files [][]byte
	var jf *jen.File
	var body bytes.Buffer
	var patterns []jen.Code
	imported := map[string]bool{}
	newFile := func() {
		jf = newJenFile(pkg)
		body.Reset()
		clear(imported)
	}
	finish := func() error {
		first := len(files) == 0
		if first {
			jf.HeaderComment("Code generated by mcpgen from " + source + "; DO NOT EDIT.")
			jf.Comment("// This code needs version 1 of the runtime's support package.")
			jf.Const().Id("_").Op("=").Qual(ImplPath, "SupportPackageIsVersion1")
			if integers {
				jf.Line()
				jf.Comment("// Integers are int64 unless a schema's format or range picks another Go")
				jf.Comment("// type (json.Number, the exact text, for a range beyond 64 bits). Decoding")
				jf.Comment("// refuses a value outside the Go type's range, naming the member: it could")
				jf.Comment("// not be carried without loss.")
			}
		} else {
			jf.HeaderComment(fmt.Sprintf("Code generated by mcpgen from %s (part %d); DO NOT EDIT.", source, len(files)+1))
		}
		if len(patterns) > 0 {
			jf.Line()
			jf.Comment("// Patterns of the schemas, compiled once.")
			jf.Var().Defs(patterns...)
			patterns = nil
		}
		// The groups were rendered against files of their own; the header
		// imports what this file's groups used.
		for _, p := range slices.Sorted(maps.Keys(imported)) {
			if err := jen.Qual(p, "X").RenderWithFile(io.Discard, jf); err != nil {
				return fmt.Errorf("formatting generated code: %w", err)
			}
		}
		var buf bytes.Buffer
		buf.Grow(body.Len() + 4096)
		if err := jf.Render(&buf); err != nil {
			return fmt.Errorf("formatting generated code: %w", err)
		}
		buf.Write(body.Bytes())
		files = append(files, buf.Bytes())
		return nil
	}
	newFile()
	err := renderItems(pkg, items, func(it renderedItem) error {
		// An item's patterns join the file open before its first group, as
		// when each tree was built just before the split check: a part
		// may declare a pattern the next part's first group uses.
		patterns = append(patterns, it.patterns...)
		for _, g := range it.groups {
			if body.Len() >= splitBytes {
				if err := finish(); err != nil {
					return err
				}
				newFile()
			}
			body.WriteByte('\n')
			body.Write(g.src)
			body.WriteByte('\n')
			for _, p := range g.imports {
				imported[p] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := finish(); err != nil {
		return nil, err
	}
	return files, nil
}

// newJenFile is an empty output file with the import names every file uses.
func newJenFile(pkg string) *jen.File {
	jf := jen.NewFile(pkg)
	// An explicit name: the runtime's directory is not named after its
	// package, and readers should see where mcpruntime comes from.
	jf.ImportAlias(RuntimePath, "mcpruntime")
	jf.ImportName(ImplPath, "mcpimpl")
	return jf
}

// item builds one or more declaration groups, in order.
type item func(e *emitter) [][]jen.Code

// renderedGroup is one declaration group, formatted, with the import paths
// it uses.
type renderedGroup struct {
	src     []byte
	imports []string
}

type renderedItem struct {
	groups []renderedGroup
	// patterns are the compiled patterns the item's checks refer to; they
	// are declared in the header of the file the item lands in.
	patterns []jen.Code
}

// renderWindow is how many items may be rendered ahead of the one being
// joined: enough to keep every core busy, few enough that memory holds a
// handful of groups rather than the whole output twice. Workers take
// renderChunk consecutive items at a time, so that handing results over
// (a goroutine wake-up each) costs little beside rendering them.
const (
	renderWindow = 64
	renderChunk  = 8
)

// renderItems builds and formats items on every core and hands them to
// consume one at a time, in their order. A group's bytes depend only on the
// group: each is rendered against a fresh file whose import names are fixed
// (the paths generated code imports have distinct names), so no group sees
// another's imports and the output does not depend on scheduling.
func renderItems(pkg string, items []item, consume func(renderedItem) error) error {
	type result struct {
		its []renderedItem
		err error
	}
	chunks := (len(items) + renderChunk - 1) / renderChunk
	done := make([]chan result, chunks)
	for i := range done {
		done[i] = make(chan result, 1)
	}
	// A worker takes a slot before taking a chunk, and the consumer frees
	// one per chunk joined, so workers run at most renderWindow items ahead.
	slots := make(chan struct{}, renderWindow/renderChunk)
	quit := make(chan struct{})
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), chunks) {
		wg.Go(func() {
			for {
				select {
				case slots <- struct{}{}:
				case <-quit:
					return
				}
				c := int(next.Add(1) - 1)
				if c >= chunks {
					return
				}
				var r result
				for i := c * renderChunk; i < min((c+1)*renderChunk, len(items)) && r.err == nil; i++ {
					build := items[i]
					items[i] = nil // what it holds is garbage once rendered
					var it renderedItem
					it, r.err = renderItem(pkg, build)
					r.its = append(r.its, it)
				}
				done[c] <- r
			}
		})
	}
	var err error
	for c := range chunks {
		r := <-done[c]
		<-slots
		if err = r.err; err != nil {
			break
		}
		for _, it := range r.its {
			if err = consume(it); err != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	close(quit)
	wg.Wait()
	return err
}

func renderItem(pkg string, it item) (out renderedItem, err error) {
	defer func() {
		// A panic on a worker goroutine would end the process; the caller
		// turns this error into its internal-error report.
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error (please report it with the input): %v", r)
		}
	}()
	e := &emitter{}
	var seg, hdr bytes.Buffer
	for _, group := range it(e) {
		jf := newJenFile(pkg)
		seg.Reset()
		if err := jen.Custom(jen.Options{Multi: true}, group...).RenderWithFile(&seg, jf); err != nil {
			return out, fmt.Errorf("formatting generated code: %w", err)
		}
		// An empty file, unformatted, is just the package clause and the
		// imports the group registered.
		jf.NoFormat = true
		hdr.Reset()
		if err := jf.Render(&hdr); err != nil {
			return out, fmt.Errorf("formatting generated code: %w", err)
		}
		out.groups = append(out.groups, renderedGroup{src: bytes.Clone(bytes.TrimSpace(seg.Bytes())), imports: importPaths(hdr.Bytes())})
	}
	out.patterns = e.patterns
	return out, nil
}

// importPaths returns the quoted paths of jennifer's unformatted import
// block: one per line, the path last.
func importPaths(src []byte) []string {
	var out []string
	for line := range bytes.Lines(src) {
		line = bytes.TrimSpace(line)
		if !bytes.HasSuffix(line, []byte(`"`)) {
			continue
		}
		q := line[bytes.IndexByte(line, '"'):]
		if p, err := strconv.Unquote(string(q)); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// addAll adds each code as its own statement (Group.Add with several
// arguments would join them into one).
func addAll(g *jen.Group, cs []jen.Code) {
	for _, c := range cs {
		g.Add(c)
	}
}

func rt(name string) *jen.Statement {
	if implNames[name] {
		return jen.Qual(ImplPath, name)
	}
	return jen.Qual(RuntimePath, name)
}

// comment renders text as a doc comment of a top-level declaration (see
// docText): each string is one or more lines, "" a blank one. A leading
// blank line is kept, so that pieces can be appended to a comment. Every
// line is passed with its "//" so jennifer never switches to a /* */ block,
// which "*/" would break.
func comment(lines ...string) []jen.Code { return commentWidth(docWidth, lines...) }

// fieldComment is comment for a struct field or a constant in a block.
// docf is comment for one formatted paragraph, as one statement: its lines
// joined by line breaks, for a declaration to follow (after a Line).
func docf(format string, args ...any) *jen.Statement {
	st := &jen.Statement{}
	for i, c := range comment(fmt.Sprintf(format, args...)) {
		if i > 0 {
			st.Line()
		}
		st.Add(c)
	}
	return st
}

func fieldComment(lines ...string) []jen.Code { return commentWidth(fieldDocWidth, lines...) }

func commentWidth(width int, lines ...string) []jen.Code {
	text := docText(strings.Join(lines, "\n"), width)
	if len(text) == 0 {
		return nil
	}
	var out []jen.Code
	if lines[0] == "" {
		out = append(out, jen.Comment("//"))
	}
	for _, l := range text {
		switch {
		case l == "":
			out = append(out, jen.Comment("//"))
		case l[0] == '\t':
			out = append(out, jen.Comment("//"+l))
		default:
			out = append(out, jen.Comment("// "+l))
		}
	}
	return out
}

func docLines(t *ir.Type) []string {
	var out []string
	if t.Title != "" && t.Title != t.Description {
		out = append(out, t.Title)
	}
	if t.Description != "" {
		out = append(out, t.Description)
	}
	return out
}

func subject(r *ir.Root) string {
	return r.Schema.Tool + " " + strings.ToLower(r.Schema.Role)
}

func where(t *ir.Type) string {
	p := t.Loc.Pointer
	if p == "" {
		p = "/"
	}
	if t.Loc.Schema == nil {
		return p
	}
	if t.Loc.Schema.Resource {
		return fmt.Sprintf("%s of the content schema bound to resource %s", p, t.Loc.Schema.Tool)
	}
	return fmt.Sprintf("%s of the %q tool's %s schema", p, t.Loc.Schema.Tool, strings.ToLower(t.Loc.Schema.Role))
}

func (e *emitter) typeDoc(t *ir.Type) []jen.Code { return comment(e.typeDocLines(t)...) }

// typeDocLines is the text of t's doc comment, which a declaration may
// add to.
func (e *emitter) typeDocLines(t *ir.Type) []string {
	var lines []string
	if t.Root != nil && t.Root.Schema.Resource {
		lines = append(lines, fmt.Sprintf("%s is the content of the resource %s, as the config binds it.", t.GoName, t.Root.Schema.Tool))
	} else if t.Root != nil {
		lines = append(lines, fmt.Sprintf("%s is the %s of the %q tool.", t.GoName, map[string]string{"Input": "input (arguments)", "Output": "output (structured content)"}[t.Root.Schema.Role], t.Root.Schema.Tool))
	} else {
		lines = append(lines, fmt.Sprintf("%s is the schema at %s.", t.GoName, where(t)))
	}
	if t.Root != nil && t.Root.Schema.Role == "Input" && t.Root.Schema.ToolDoc != "" {
		lines = append(lines, "", "The tool's description:", "", t.Root.Schema.ToolDoc)
	}
	if d := docLines(t); len(d) > 0 {
		lines = append(lines, "")
		lines = append(lines, d...)
	}
	if t.Deprecated {
		lines = append(lines, "", "Deprecated: the schema marks it deprecated.")
	}
	if len(t.Notes) > 0 {
		lines = append(lines, "")
		lines = append(lines, t.Notes...)
	}
	if why := unsatisfiable(t); why != "" {
		lines = append(lines, "", "No value satisfies this schema: "+why+", so Validate always fails"+
			map[bool]string{true: " and the tool cannot be called.", false: "."}[t.Root != nil && t.Root.Schema.Role == "Input"])
	}
	return lines
}

// unsatisfiable says why no value of t can be valid, when t is a Never
// type or a struct with a required member that allows no value, or "".
func unsatisfiable(t *ir.Type) string {
	if t.Never {
		return t.NeverReason()
	}
	if t.Kind == ir.Struct {
		for _, f := range t.Fields {
			if f.Required && f.Type.Never {
				return fmt.Sprintf("the member %q is required and %s", f.JSONName, strings.Replace(f.Type.NeverReason(), "the schema", "its schema", 1))
			}
		}
	}
	return ""
}

// typeRef is the Go type of t at a use site.
func typeRef(t *ir.Type) *jen.Statement {
	if t.Named {
		return jen.Id(t.GoName)
	}
	return underlying(t)
}

// underlying is the Go type of t written out (for declarations).
func underlying(t *ir.Type) *jen.Statement {
	switch t.Kind {
	case ir.String:
		return jen.String()
	case ir.Integer:
		if t.IntType == ir.BigInt {
			return jen.Qual(jsonPath, "Number")
		}
		return jen.Id(t.IntType)
	case ir.Number:
		return jen.Float64()
	case ir.Boolean:
		return jen.Bool()
	case ir.Array:
		return jen.Index().Add(elemRef(t.Elem, t.ElemNullable))
	case ir.Map:
		return jen.Map(jen.String()).Add(elemRef(t.Elem, t.ElemNullable))
	case ir.Enum:
		switch t.Base {
		case ir.String:
			return jen.String()
		case ir.Integer:
			return jen.Id(t.IntType)
		}
		return jen.Float64()
	case ir.Null:
		return jen.Struct()
	}
	return jen.Qual(jsonPath, "RawMessage")
}

func elemNullPtr(t *ir.Type, nullable bool) bool { return nullable && t.Kind != ir.Raw }

func elemRef(t *ir.Type, nullable bool) *jen.Statement {
	if elemNullPtr(t, nullable) {
		return jen.Op("*").Add(typeRef(t))
	}
	return typeRef(t)
}

// decodeFn is an expression of type mcpruntime.DecodeFunc[typeRef(t)] for
// a value inside another: the enclosing decoder has validated it already.
func decodeFn(t *ir.Type) *jen.Statement { return decodeFnAt(t, false) }

// rootDecodeFn is decodeFn for a whole document, which may not be JSON.
func rootDecodeFn(t *ir.Type) *jen.Statement { return decodeFnAt(t, true) }

func decodeFnAt(t *ir.Type, root bool) *jen.Statement {
	decode, nullAware := "DecodeInner", "DecodeInnerNullAware"
	if root {
		decode, nullAware = "Decode", "DecodeNullAware"
	}
	if t.Named {
		switch t.Kind {
		case ir.Enum:
			return scalarDecode(t.Base).Types(jen.Id(t.GoName))
		case ir.String, ir.Integer, ir.Number, ir.Boolean:
			return scalarDecodeOf(t, t.Kind).Types(jen.Id(t.GoName))
		case ir.Raw:
			if t.NotNull {
				return rt("DecodeRawValueAs").Types(jen.Id(t.GoName))
			}
			return rt("DecodeRawAs").Types(jen.Id(t.GoName))
		case ir.Union:
			for _, v := range t.Variants {
				if v.Type.Kind == ir.Null {
					return rt(nullAware).Types(jen.Id(t.GoName))
				}
			}
		}
		return rt(decode).Types(jen.Id(t.GoName))
	}
	return decodeUnderlying(t)
}

func decodeUnderlying(t *ir.Type) *jen.Statement {
	switch t.Kind {
	case ir.String, ir.Integer, ir.Number, ir.Boolean:
		return scalarDecodeOf(t, t.Kind).Types(underlying(t))
	case ir.Enum:
		return scalarDecode(t.Base).Types(underlying(t))
	case ir.Array:
		return rt("SliceOf").Call(elemDecode(t.Elem, t.ElemNullable))
	case ir.Map:
		return rt("MapOf").Call(elemDecode(t.Elem, t.ElemNullable))
	}
	if t.NotNull {
		return rt("DecodeRawValue")
	}
	return rt("DecodeRaw")
}

// scalarDecodeOf is scalarDecode for t, whose integers may be big.
func scalarDecodeOf(t *ir.Type, k ir.Kind) *jen.Statement {
	if k == ir.Integer && t.IntType == ir.BigInt {
		return rt("DecodeBigInteger")
	}
	return scalarDecode(k)
}

func scalarDecode(k ir.Kind) *jen.Statement {
	switch k {
	case ir.String:
		return rt("DecodeString")
	case ir.Integer:
		return rt("DecodeInteger")
	case ir.Number:
		return rt("DecodeNumber")
	}
	return rt("DecodeBool")
}

func elemDecode(t *ir.Type, nullable bool) *jen.Statement {
	if elemNullPtr(t, nullable) {
		return rt("NullOr").Call(decodeFn(t))
	}
	return decodeFn(t)
}

// Field representations.
type rep int

const (
	repValue    rep = iota // required: T
	repPointer             // optional scalar or struct, or recursive: *T
	repNilable             // optional slice, map or raw JSON: no pointer
	repNullable            // null allowed: mcpruntime.Nullable[T]
)

func fieldRep(f *ir.Field) rep {
	switch {
	case f.Nullable:
		return repNullable
	case f.Required && !f.Indirect:
		return repValue
	case f.Indirect:
		return repPointer
	}
	switch f.Type.Kind {
	case ir.Array, ir.Map, ir.Raw:
		return repNilable
	}
	return repPointer
}

func fieldType(f *ir.Field) *jen.Statement {
	t := typeRef(f.Type)
	switch fieldRep(f) {
	case repPointer:
		return jen.Op("*").Add(t)
	case repNullable:
		if f.Indirect {
			t = jen.Op("*").Add(t)
		}
		return rt("Nullable").Types(t)
	}
	return t
}

func fieldDecode(f *ir.Field) *jen.Statement {
	d := decodeFn(f.Type)
	switch fieldRep(f) {
	case repPointer:
		return rt("PointerTo").Call(d)
	case repNullable:
		if f.Indirect {
			d = rt("PointerTo").Call(d)
		}
		return rt("NullableOf").Call(d)
	}
	return d
}

func validTag(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", r):
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			return false
		}
	}
	return true
}

func (e *emitter) decl(t *ir.Type) []jen.Code {
	if t.Alias != nil {
		return e.aliasDecl(t)
	}
	switch t.Kind {
	case ir.Struct:
		return e.structDecl(t)
	case ir.Enum:
		return e.enumDecl(t)
	case ir.Union:
		return e.unionDecl(t)
	}
	return e.definedDecl(t)
}

// aliasDecl declares the name of a type whose shape another type has, and
// which is that type (see ir.Share): an alias, with what the shared type
// declares beside it under names of its own, so that every name a tool's
// schemas give exists whichever other tools share the shape. Methods come
// through the alias.
func (e *emitter) aliasDecl(t *ir.Type) []jen.Code {
	c := t.Alias
	out := comment(fmt.Sprintf("%s is the schema at %s: the same type as %s, which declares it.", t.GoName, where(t), c.GoName))
	out = append(out, jen.Type().Id(t.GoName).Op("=").Id(c.GoName))
	switch t.Kind {
	case ir.Enum:
		var defs []jen.Code
		for i, v := range t.Values {
			if v.GoName != c.Values[i].GoName {
				defs = append(defs, jen.Id(v.GoName).Op("=").Id(c.Values[i].GoName))
			}
		}
		if len(defs) > 0 {
			out = append(out, jen.Line(), docf("Values of %s.", t.GoName), jen.Const().Defs(defs...))
		}
	case ir.Union:
		for i, v := range t.Variants {
			ctor, shared := t.GoName+"Of"+v.GoName, c.GoName+"Of"+c.Variants[i].GoName
			if v.Type.Kind == ir.Null {
				out = append(out, jen.Line(), docf("%s returns the null value.", ctor).Line().
					Func().Id(ctor).Params().Id(t.GoName).Block(jen.Return(jen.Id(shared).Call())))
				continue
			}
			out = append(out, jen.Line(), docf("%s returns the value whose %s variant is v.", ctor, v.GoName).Line().
				Func().Id(ctor).Params(jen.Id("v").Add(typeRef(v.Type))).Id(t.GoName).Block(jen.Return(jen.Id(shared).Call(jen.Id("v")))))
		}
	}
	return out
}

func fieldDoc(f *ir.Field) []string {
	var lines []string
	if f.Description != "" {
		lines = append(lines, f.Description)
	}
	if f.Type.Kind == ir.Raw && f.Type.RawReason != "" && f.Fixed == "" && !f.Type.Named {
		lines = append(lines, "Raw JSON: "+f.Type.RawReason+".")
	}
	if r := rawElemReason(f.Type); r != "" {
		lines = append(lines, r)
	}
	if f.Type.Format != "" && !f.Type.Named {
		if f.Type.FormatChecked() {
			lines = append(lines, "Format: "+f.Type.Format+" (checked by Validate).")
		} else {
			lines = append(lines, "Format: "+f.Type.Format+" (not checked).")
		}
	}
	if !f.Type.Named {
		lines = append(lines, f.Type.Notes...)
	}
	if f.Default != "" {
		lines = append(lines, "Default: "+f.Default+" (applied by the server, not by this type).")
	}
	if f.Type.Deprecated && !f.Type.Named {
		lines = append(lines, "", "Deprecated: the schema marks it deprecated.")
	}
	if f.Required && fieldRep(f) == repNullable {
		lines = append(lines, "Required: it must be set, to a value or to null.")
	}
	return lines
}

// rawElemReason says why the items or values of an unnamed array or map
// (of arrays or maps...) are raw JSON, or "" when they are not.
func rawElemReason(t *ir.Type) string {
	what := ""
	for t != nil && !t.Named && (t.Kind == ir.Array || t.Kind == ir.Map) {
		w := "Items"
		if t.Kind == ir.Map {
			w = "Values"
		}
		if what == "" {
			what = w
		} else {
			what += " of the " + strings.ToLower(w)
		}
		t = t.Elem
	}
	if what == "" || t == nil || t.Kind != ir.Raw || t.RawReason == "" || t.Named {
		return ""
	}
	return what + " are raw JSON: " + t.RawReason + "."
}

func (e *emitter) structDecl(t *ir.Type) []jen.Code {
	var fixed []string
	for _, f := range t.Fields {
		if f.Fixed != "" {
			fixed = append(fixed, fmt.Sprintf("%q is always %s.", f.JSONName, f.FixedJSON))
		}
	}
	lines := e.typeDocLines(t)
	if len(fixed) > 0 {
		lines = append(lines, "", "Fixed members, sent by MarshalJSON and checked when decoding:", "")
		for _, l := range fixed {
			lines = append(lines, "  - "+l)
		}
	}
	switch {
	case t.Closed && t.Extra != nil:
		lines = append(lines, "", "The schema closes this object, but a newer release of the server may "+
			"send more: decoding keeps members the schema does not declare in "+
			names.ExtraField+" and reports each name once through "+
			"mcpruntime.SetUnknownHook, never as an error.")
	case t.Closed:
		lines = append(lines, "", "Decoding rejects members the schema does not declare.")
	case t.Extra == nil:
		lines = append(lines, "", "Decoding ignores members the schema does not declare (config inputExtras keeps them).")
	}
	doc := comment(lines...)
	decl := jen.Type().Id(t.GoName).StructFunc(func(g *jen.Group) {
		for i, f := range t.Fields {
			if f.Fixed != "" {
				continue
			}
			if i > 0 {
				g.Line()
			}
			for _, c := range fieldComment(fieldDoc(f)...) {
				g.Add(c)
			}
			st := g.Id(f.GoName).Add(fieldType(f))
			if validTag(f.JSONName) {
				opt := ""
				switch fieldRep(f) {
				case repPointer, repNilable:
					opt = ",omitempty"
				case repNullable:
					opt = ",omitzero"
				}
				st.Tag(map[string]string{"json": f.JSONName + opt})
			}
		}
		if t.Extra != nil {
			if len(t.Fields) > 0 {
				g.Line()
			}
			line := names.ExtraField + " keeps the members the schema does not declare, so that nothing is lost in a round trip."
			if t.Closed {
				line = names.ExtraField + " keeps the members the schema does not declare (sent by a newer release of the server), so that nothing is lost in a round trip."
			}
			for _, c := range fieldComment(line) {
				g.Add(c)
			}
			g.Id(names.ExtraField).Map(jen.String()).Add(elemRef(t.Extra, t.ExtraNullable)).Tag(map[string]string{"json": "-"})
		}
	})
	out := append(doc, decl)
	out = append(out, jen.Line(), e.structMarshal(t), jen.Line(), e.structUnmarshal(t), jen.Line(), e.structCodec(t), jen.Line(), e.structValidate(t))
	return out
}

func known(t *ir.Type) []jen.Code {
	var out []jen.Code
	for _, f := range t.Fields {
		out = append(out, jen.Lit(f.JSONName))
	}
	return out
}

// codecVar names t's table (mcpimpl.Struct), which its MarshalJSON and
// UnmarshalJSON interpret: one row per member instead of the members
// unrolled into both methods, which made most of a package's compiled code.
func codecVar(t *ir.Type) string { return "codec" + t.GoName }

func (e *emitter) structMarshal(t *ir.Type) jen.Code {
	return docf("MarshalJSON encodes the members in schema order, then %s.", map[bool]string{true: "the undeclared ones by name", false: "nothing else"}[t.Extra != nil]).Line().
		Func().Params(jen.Id("v").Id(t.GoName)).Id("MarshalJSON").Params().Params(jen.Index().Byte(), jen.Error()).Block(
		jen.Return(jen.Id(codecVar(t)).Dot("Encode").Call(jen.Op("&").Id("v"))))
}

func (e *emitter) structUnmarshal(t *ir.Type) jen.Code {
	doc := jen.Comment("// UnmarshalJSON decodes data strictly: every wrong JSON type and missing").Line().
		Comment("// required member is reported in a *mcpruntime.ValidationError.").Line()
	switch {
	case t.Closed && t.Extra == nil:
		doc = jen.Comment("// UnmarshalJSON decodes data strictly: every wrong JSON type, missing").Line().
			Comment("// required member and undeclared member is reported in a").Line().
			Comment("// *mcpruntime.ValidationError.").Line()
	case t.Closed:
		doc = jen.Comment("// UnmarshalJSON decodes data strictly: every wrong JSON type and missing").Line().
			Comment("// required member is reported in a *mcpruntime.ValidationError. Undeclared").Line().
			Comment("// members are kept, not rejected.").Line()
	}
	return doc.
		Func().Params(jen.Id("v").Op("*").Id(t.GoName)).Id("UnmarshalJSON").Params(jen.Id("data").Index().Byte()).Error().Block(
		jen.Return(jen.Id(codecVar(t)).Dot("Decode").Call(jen.Id("data"), jen.Id("v"))))
}

// structCodec declares t's table: its members in schema order, when each
// is sent, and what their Go types do not say (see mcpimpl.Hint).
func (e *emitter) structCodec(t *ir.Type) jen.Code {
	var fields []jen.Code
	switch {
	case t.Closed && t.Extra != nil:
		fields = append(fields, jen.Id("Open").Op(":").Add(rt("ClosedKept")))
	case t.Extra != nil:
		fields = append(fields, jen.Id("Open").Op(":").Add(rt("OpenKept")))
		if h := hintOf(t.Extra); h != nil {
			fields = append(fields, jen.Id("Extra").Op(":").Add(h))
		}
	case t.Closed:
		fields = append(fields, jen.Id("Open").Op(":").Add(rt("Closed")))
	}
	var rows []jen.Code
	for _, f := range t.Fields {
		row := []jen.Code{jen.Id("Name").Op(":").Lit(f.JSONName)}
		if f.Fixed != "" {
			row = append(row, jen.Id("Required").Op(":").True(), jen.Id("Fixed").Op(":").Lit(f.Fixed), jen.Id("FixedText").Op(":").Lit(f.FixedJSON))
			rows = append(rows, jen.Line().Values(row...))
			continue
		}
		if h := hintOf(f.Type); h != nil {
			row = append(row, jen.Id("Hint").Op(":").Add(h))
		}
		presence := "OmitNil"
		switch fieldRep(f) {
		case repValue:
			switch f.Type.Kind {
			case ir.Array:
				presence = "EmptyArray"
			case ir.Map:
				presence = "EmptyObject"
			default:
				presence = "Always"
			}
		case repNullable:
			presence = "OmitUnset"
			if f.Required {
				presence = "Always" // unset encodes as null: the member must be there
			}
		}
		if presence != "Always" {
			row = append(row, jen.Id("Presence").Op(":").Add(rt(presence)))
		}
		if f.Required {
			row = append(row, jen.Id("Required").Op(":").True())
		}
		rows = append(rows, jen.Line().Values(row...))
	}
	if len(rows) > 0 {
		rows = append(rows, jen.Line())
	}
	fields = append(fields, jen.Id("Rows").Op(":").Index().Add(rt("Row")).Values(rows...))
	return docf("%s is %s's table for MarshalJSON and UnmarshalJSON.", codecVar(t), t.GoName).Line().
		Var().Id(codecVar(t)).Op("=").Add(rt("Struct")).Values(fields...)
}

// hintOf says what the Go type of t does not: of its innermost value (the
// element of unnamed arrays and maps), whether it is raw JSON, refuses null,
// is an integer of any size or decodes null itself. It mirrors decodeFn.
func hintOf(t *ir.Type) jen.Code {
	for !t.Named && (t.Kind == ir.Array || t.Kind == ir.Map) {
		t = t.Elem
	}
	var hs []string
	switch {
	case t.Kind == ir.Integer && t.IntType == ir.BigInt:
		hs = append(hs, "BigInt")
	case t.Named && t.Kind == ir.Union:
		for _, v := range t.Variants {
			if v.Type.Kind == ir.Null {
				hs = append(hs, "NullAware")
				break
			}
		}
	case t.Named && t.Kind != ir.Raw:
	case t.Kind == ir.String, t.Kind == ir.Integer, t.Kind == ir.Number, t.Kind == ir.Boolean, t.Kind == ir.Enum:
	default: // raw JSON, named or not
		hs = append(hs, "Raw")
		if t.NotNull {
			hs = append(hs, "NotNull")
		}
	}
	if len(hs) == 0 {
		return nil
	}
	c := rt(hs[0])
	for _, h := range hs[1:] {
		c = c.Op("|").Add(rt(h))
	}
	return c
}

func escape(s string) string { return manifest.EscapePointer(s) }

func (e *emitter) enumDecl(t *ir.Type) []jen.Code {
	out := e.typeDoc(t)
	out = append(out, jen.Type().Id(t.GoName).Add(underlying(t)), jen.Line())
	out = append(out, docf("Values of %s.", t.GoName))
	var cases []jen.Code
	var lits []string
	out = append(out, jen.Const().DefsFunc(func(g *jen.Group) {
		for _, v := range t.Values {
			for _, c := range fieldComment(v.Doc) {
				g.Add(c)
			}
			g.Id(v.GoName).Id(t.GoName).Op("=").Add(enumLit(t, v))
			cases = append(cases, jen.Id(v.GoName))
			lits = append(lits, v.JSON)
		}
	}))
	validDoc := jen.Comment("// Valid reports whether e is one of the values the schema allows.").Line()
	if t.Tolerant() {
		validDoc = jen.Comment("// Valid reports whether e is one of the values the schema lists. A newer").Line().
			Comment("// release of the server may send others: decoding keeps them, reports each").Line().
			Comment("// once through mcpruntime.SetUnknownHook, and Valid is false for them.").Line()
	}
	out = append(out, jen.Line(),
		validDoc.
			Func().Params(jen.Id("e").Id(t.GoName)).Id("Valid").Params().Bool().Block(
			jen.Switch(jen.Id("e")).Block(jen.Case(cases...).Block(jen.Return(jen.True()))),
			jen.Return(jen.False())),
		jen.Line(),
		jen.Func().Params(jen.Id("e").Id(t.GoName)).Id("validate").Params(jen.Id("ptr").String(), jen.Id("vs").Op("*").Add(rt("Violations"))).BlockFunc(func(g *jen.Group) {
			if t.FormatChecked() {
				g.If(jen.Op("!").Add(rt("ValidFormat")).Call(jen.Lit(t.Format), jen.String().Call(jen.Id("e")))).Block(
					jen.Id("vs").Dot("Add").Call(jen.Id("ptr"), jen.Lit("must be a valid "+t.Format)))
			}
			if t.Tolerant() {
				g.If(jen.Op("!").Id("e").Dot("Valid").Call()).Block(rt("UnknownEnum").Call(jen.Lit(t.GoName), jen.Id("e")))
				return
			}
			g.If(jen.Op("!").Id("e").Dot("Valid").Call()).Block(jen.Id("vs").Dot("Add").Call(jen.Id("ptr"), jen.Lit("must be one of "+strings.Join(lits, ", "))))
		}),
	)
	return out
}

func enumLit(t *ir.Type, v *ir.EnumValue) jen.Code {
	if t.Base == ir.String {
		return jen.Lit(v.Str)
	}
	return jen.Id(v.JSON)
}

// definedDecl declares a named array, map, scalar or raw type (roots and
// recursive definitions).
func (e *emitter) definedDecl(t *ir.Type) []jen.Code {
	lines := e.typeDocLines(t)
	if t.Kind == ir.Raw && t.RawReason != "" {
		lines = append(lines, "", "Raw JSON: "+t.RawReason+".")
	}
	out := comment(lines...)
	out = append(out, jen.Type().Id(t.GoName).Add(underlying(t)))
	switch t.Kind {
	case ir.Raw:
		out = append(out, jen.Line(),
			jen.Comment("// MarshalJSON returns the raw JSON (null when empty).").Line().
				Func().Params(jen.Id("v").Id(t.GoName)).Id("MarshalJSON").Params().Params(jen.Index().Byte(), jen.Error()).Block(
				jen.Return(jen.Qual(jsonPath, "RawMessage").Call(jen.Id("v")).Dot("MarshalJSON").Call())),
			jen.Line(),
			jen.Comment("// UnmarshalJSON keeps a copy of data.").Line().
				Func().Params(jen.Id("v").Op("*").Id(t.GoName)).Id("UnmarshalJSON").Params(jen.Id("data").Index().Byte()).Error().Block(
				jen.Return(jen.Parens(jen.Op("*").Qual(jsonPath, "RawMessage")).Call(jen.Id("v")).Dot("UnmarshalJSON").Call(jen.Id("data")))))
	case ir.Array, ir.Map:
		out = append(out, jen.Line(),
			jen.Comment("// UnmarshalJSON decodes data strictly, reporting every problem as a").Line().
				Comment("// *mcpruntime.ValidationError.").Line().
				Func().Params(jen.Id("v").Op("*").Id(t.GoName)).Id("UnmarshalJSON").Params(jen.Id("data").Index().Byte()).Error().Block(
				jen.Var().Id("vs").Add(rt("Violations")),
				jen.Var().Id("out").Add(underlying(t)),
				decodeUnderlying(t).Call(jen.Id("data"), jen.Op("&").Id("out"), jen.Lit(""), jen.Op("&").Id("vs")),
				jen.Op("*").Id("v").Op("=").Id("out"),
				jen.Return(jen.Id("vs").Dot("Err").Call(jen.Lit(""))),
			))
	}
	c := &checker{e: e, owner: t.GoName}
	out = append(out, jen.Line(), c.validateFunc(jen.Id("v").Op("*").Id(t.GoName), func(g *jen.Group) {
		body := c.checks(t, jen.Id("x"), jen.Id("ptr"), 0, true)
		if t.Never {
			addAll(g, body) // one violation, whatever the value
		} else if len(body) > 0 {
			g.Id("x").Op(":=").Add(underlying(t)).Call(jen.Op("*").Id("v"))
			addAll(g, body)
		}
	}))
	return out
}

func variantField(v *ir.Variant) string { return "v" + v.GoName }

func (e *emitter) unionDecl(t *ir.Type) []jen.Code {
	lines := e.typeDocLines(t)
	var kinds []string
	for _, v := range t.Variants {
		kinds = append(kinds, v.GoName)
	}
	how := "by the JSON type of the value"
	var tried []string
	for _, v := range t.Variants {
		if v.Try > 0 {
			tried = append(tried, v.GoName)
		}
	}
	if len(tried) > 0 {
		slices.SortFunc(tried, func(a, b string) int {
			return variantTry(t, a) - variantTry(t, b)
		})
		how = "by the JSON type and, where that is not enough, by trying " + strings.Join(tried, ", ") + " in that order (the most specific first)"
		if t.Discriminator != "" {
			how += fmt.Sprintf(", objects by the %q member", t.Discriminator)
		}
		if t.OneOf {
			how += "; exactly one must accept the value"
		}
	} else if t.Discriminator != "" {
		how = fmt.Sprintf("by the JSON type and, for objects, by the %q member", t.Discriminator)
	} else {
		for _, v := range t.Variants {
			if v.Unique != "" {
				how = "by the JSON type and, for objects, by a required member unique to each variant"
				break
			}
		}
	}
	lines = append(lines, "", fmt.Sprintf("It is one of %s, told apart %s. Exactly one is set: build one with %sOf%s and the other constructors, read it with the As methods. The zero value has none set and is invalid.", strings.Join(kinds, ", "), how, t.GoName, kinds[0]))
	out := comment(lines...)
	out = append(out, jen.Type().Id(t.GoName).StructFunc(func(g *jen.Group) {
		for _, v := range t.Variants {
			if v.Type.Kind == ir.Null {
				g.Id(variantField(v)).Bool()
			} else {
				g.Id(variantField(v)).Op("*").Add(typeRef(v.Type))
			}
		}
	}))
	set := func(v *ir.Variant) jen.Code {
		if v.Type.Kind == ir.Null {
			return jen.Id(t.GoName).Values(jen.Dict{jen.Id(variantField(v)): jen.True()})
		}
		return jen.Id(t.GoName).Values(jen.Dict{jen.Id(variantField(v)): jen.Op("&").Id("v")})
	}
	for _, v := range t.Variants {
		ctor := t.GoName + "Of" + v.GoName
		if v.Type.Kind == ir.Null {
			out = append(out, jen.Line(), docf("%s returns the null value.", ctor).Line().
				Func().Id(ctor).Params().Id(t.GoName).Add(oneLine(jen.Return(set(v)))))
			continue
		}
		out = append(out, jen.Line(), docf("%s returns the value whose %s variant is v.", ctor, v.GoName).Line().
			Func().Id(ctor).Params(jen.Id("v").Add(typeRef(v.Type))).Id(t.GoName).Add(oneLine(jen.Return(set(v)))))
	}
	for _, v := range t.Variants {
		f := jen.Id("u").Dot(variantField(v))
		if v.Type.Kind == ir.Null {
			out = append(out, jen.Line(),
				jen.Comment("// IsNull reports whether the value is null.").Line().
					Func().Params(jen.Id("u").Id(t.GoName)).Id("IsNull").Params().Bool().Add(oneLine(jen.Return(f))),
				jen.Line(),
				jen.Comment("// SetNull makes the value null.").Line().
					Func().Params(jen.Id("u").Op("*").Id(t.GoName)).Id("SetNull").Params().Add(oneLine(jen.Op("*").Id("u").Op("=").Add(set(v)))))
			continue
		}
		out = append(out, jen.Line(),
			docf("As%s returns the %s variant and whether it is the one set.", v.GoName, v.GoName).Line().
				Func().Params(jen.Id("u").Id(t.GoName)).Id("As"+v.GoName).Params().Params(typeRef(v.Type), jen.Bool()).Add(oneLine(jen.Return(rt("As").Call(f)))),
			jen.Line(),
			docf("Set%s makes v the value, replacing any other variant.", v.GoName).Line().
				Func().Params(jen.Id("u").Op("*").Id(t.GoName)).Id("Set"+v.GoName).Params(jen.Id("v").Add(typeRef(v.Type))).Add(oneLine(jen.Op("*").Id("u").Op("=").Add(set(v)))),
		)
	}
	out = append(out, jen.Line(),
		jen.Comment("// MarshalJSON encodes the variant that is set.").Line().
			Func().Params(jen.Id("u").Id(t.GoName)).Id("MarshalJSON").Params().Params(jen.Index().Byte(), jen.Error()).
			Add(oneLine(jen.Return(jen.Id(codecVar(t)).Dot("Encode").Call(jen.Op("&").Id("u"))))),
		jen.Line(),
		jen.Comment("// UnmarshalJSON picks the variant and decodes it strictly, reporting every").Line().
			Comment("// problem as a *mcpruntime.ValidationError.").Line().
			Func().Params(jen.Id("u").Op("*").Id(t.GoName)).Id("UnmarshalJSON").Params(jen.Id("data").Index().Byte()).Error().
			Add(oneLine(jen.Return(jen.Id(codecVar(t)).Dot("Decode").Call(jen.Id("data"), jen.Id("u"))))),
		jen.Line(), e.unionCodec(t), jen.Line(), e.unionValidate(t))
	return out
}

// oneLine is a function body of one statement, written on one line.
func oneLine(st jen.Code) jen.Code { return jen.Custom(jen.Options{Open: "{", Close: "}"}, st) }

func variantTry(t *ir.Type, name string) int {
	for _, v := range t.Variants {
		if v.GoName == name {
			return v.Try
		}
	}
	return 0
}

// unionCodec declares t's table (mcpimpl.Union): its variants in field
// order, with what tells them apart, and, for a variant that may be
// decided by trying it, the check of a decoded value.
func (e *emitter) unionCodec(t *ir.Type) jen.Code {
	var objects []*ir.Variant
	kept := false
	for _, v := range t.Variants {
		if v.Unique != "" {
			objects = append(objects, v)
		}
		kept = kept || v.Type.Kind == ir.Struct && v.Type.Closed
	}
	exclusive := len(objects) > 0 && refuseOthers(objects)
	ck := &checker{e: e, owner: t.GoName + "Try"}
	var rows []jen.Code
	for _, v := range t.Variants {
		row := []jen.Code{jen.Id("Name").Op(":").Lit(v.GoName), jen.Id("Kind").Op(":").Lit(v.JSONKind)}
		if v.Type.Kind != ir.Null {
			if h := hintOf(v.Type); h != nil {
				row = append(row, jen.Id("Hint").Op(":").Add(h))
			}
		}
		if v.Disc != "" {
			row = append(row, jen.Id("Disc").Op(":").Lit(v.Disc))
		}
		if v.Unique != "" {
			row = append(row, jen.Id("Member").Op(":").Lit(v.Unique))
		}
		if v.Try > 0 {
			row = append(row, jen.Id("Try").Op(":").Lit(v.Try))
		}
		if v.Try > 0 || v.Unique != "" && !exclusive {
			if c := ck.variantCheck(v.Type); c != nil {
				row = append(row, jen.Id("Check").Op(":").Add(c))
			}
		}
		if t.Tolerant() && t.OneOf && v.Type.Kind == ir.Struct && v.Type.Closed && v.Type.Extra != nil {
			row = append(row, jen.Id("Kept").Op(":").True())
		}
		rows = append(rows, jen.Line().Values(row...))
	}
	rows = append(rows, jen.Line())
	fields := []jen.Code{jen.Id("Name").Op(":").Lit(t.GoName)}
	if t.OneOf {
		fields = append(fields, jen.Id("OneOf").Op(":").True())
		if t.Tolerant() && kept {
			fields = append(fields, jen.Id("Tolerant").Op(":").True())
		}
	}
	if t.Discriminator != "" {
		fields = append(fields, jen.Id("Discriminator").Op(":").Lit(t.Discriminator))
	}
	if exclusive {
		fields = append(fields, jen.Id("Exclusive").Op(":").True())
	}
	fields = append(fields, jen.Id("Variants").Op(":").Index().Add(rt("Variant")).Values(rows...))
	return docf("%s is %s's table for MarshalJSON and UnmarshalJSON.", codecVar(t), t.GoName).Line().
		Var().Id(codecVar(t)).Op("=").Add(rt("Union")).Values(fields...)
}

// variantCheck is a Variant's Check for a variant of type vt: its
// validate method, or for an unnamed type its checks written out; nil
// when there is nothing to check.
func (c *checker) variantCheck(vt *ir.Type) jen.Code {
	if vt.Named {
		return rt("Checker").Call(jen.Parens(jen.Op("*").Id(vt.GoName)).Dot("validate"))
	}
	body := c.checks(vt, jen.Parens(jen.Op("*").Id("x")), jen.Lit(""), 0, false)
	if len(body) == 0 {
		return nil
	}
	return jen.Func().Params(jen.Id("v").Any(), jen.Id("vs").Op("*").Add(rt("Violations"))).BlockFunc(func(g *jen.Group) {
		g.Id("x").Op(":=").Id("v").Assert(jen.Op("*").Add(typeRef(vt)))
		addAll(g, body)
	})
}

// refuseOthers reports whether every variant of vs (told apart by a
// required member unique to each) is a closed object that does not
// declare the others' members, so that a value with two of them matches
// none.
func refuseOthers(vs []*ir.Variant) bool {
	for _, v := range vs {
		if v.Type.Kind != ir.Struct || !v.Type.Closed || v.Type.Extra != nil {
			return false
		}
		for _, w := range vs {
			if w != v && slices.ContainsFunc(v.Type.Fields, func(f *ir.Field) bool { return f.JSONName == w.Unique }) {
				return false
			}
		}
	}
	return true
}

func (e *emitter) unionValidate(t *ir.Type) jen.Code {
	c := &checker{e: e, owner: t.GoName}
	return c.validateFunc(jen.Id("u").Op("*").Id(t.GoName), func(g *jen.Group) {
		g.Switch().BlockFunc(func(s *jen.Group) {
			for _, v := range t.Variants {
				if v.Type.Kind == ir.Null {
					s.Case(jen.Id("u").Dot(variantField(v)))
					continue
				}
				s.Case(jen.Id("u").Dot(variantField(v)).Op("!=").Nil()).Block(
					c.checks(v.Type, jen.Parens(jen.Op("*").Id("u").Dot(variantField(v))), jen.Id("ptr"), 0, false)...)
			}
			s.Default().Block(jen.Id("vs").Dot("Add").Call(jen.Id("ptr"), jen.Lit("no variant is set")))
		})
	})
}

// Presence of a member in a struct value, for dependentRequired.
const (
	never = iota
	maybe
	always
)

// structHas says whether member name is present in v (of struct type t):
// never, always, or maybe with the expression that says it.
func structHas(t *ir.Type, name string) (*jen.Statement, int) {
	for _, f := range t.Fields {
		if f.JSONName != name {
			continue
		}
		fv := jen.Id("v").Dot(f.GoName)
		switch {
		case f.Fixed != "":
			return nil, always
		case fieldRep(f) == repValue && f.Type.Kind != ir.Raw:
			return nil, always
		case fieldRep(f) == repNullable:
			return fv.Dot("IsSet").Call(), maybe
		}
		return fv.Op("!=").Nil(), maybe
	}
	if t.Extra == nil {
		return nil, never
	}
	return rt("Has").Call(jen.Id("v").Dot(names.ExtraField), jen.Lit(name)), maybe
}

func (e *emitter) structValidate(t *ir.Type) jen.Code {
	c := &checker{e: e, owner: t.GoName}
	return c.validateFunc(jen.Id("v").Op("*").Id(t.GoName), func(g *jen.Group) {
		for _, f := range t.Fields {
			if f.Fixed != "" {
				continue
			}
			fv := jen.Id("v").Dot(f.GoName)
			ptr := jen.Id("ptr").Op("+").Lit("/" + escape(f.JSONName))
			missing := jen.Id("vs").Dot("Add").Call(jen.Id("ptr"), jen.Lit(fmt.Sprintf("missing required member %q", f.JSONName)))
			switch fieldRep(f) {
			case repValue:
				if f.Type.Kind == ir.Raw {
					// A raw member left nil would be sent as null.
					if body := c.checks(f.Type, fv, ptr, 0, false); len(body) > 0 {
						g.If(fv.Clone().Op("==").Nil()).Block(missing).Else().Block(body...)
					} else {
						g.If(fv.Clone().Op("==").Nil()).Block(missing)
					}
					continue
				}
				addAll(g, c.checks(f.Type, fv, ptr, 0, false))
			case repNilable:
				if body := c.checks(f.Type, fv, ptr, 0, false); len(body) > 0 {
					g.If(fv.Clone().Op("!=").Nil()).Block(body...)
				}
			case repPointer:
				body := c.checks(f.Type, jen.Parens(jen.Op("*").Add(fv.Clone())), ptr, 0, false)
				if f.Required {
					g.If(fv.Clone().Op("==").Nil()).Block(missing).Else().Block(body...)
				} else if len(body) > 0 {
					g.If(fv.Clone().Op("!=").Nil()).Block(body...)
				}
			case repNullable:
				if f.Required {
					g.If(jen.Op("!").Add(fv.Clone()).Dot("IsSet").Call()).Block(missing)
				}
				x := jen.Id("x")
				if f.Indirect {
					x = jen.Parens(jen.Op("*").Id("x"))
				}
				body := c.checks(f.Type, x, ptr, 1, false)
				if len(body) > 0 {
					cond := jen.Id("ok")
					if f.Indirect {
						cond = jen.Id("ok").Op("&&").Id("x").Op("!=").Nil()
					}
					g.If(jen.List(jen.Id("x"), jen.Id("ok")).Op(":=").Add(fv.Clone()).Dot("Get").Call(), cond).Block(body...)
				}
			}
		}
		if t.Extra != nil {
			if body := c.elemChecks(t.Extra, t.ExtraNullable, jen.Id("e"), jen.Lit(""), 1); len(body) > 0 {
				g.For(jen.List(jen.Id("_"), jen.Id("k")).Op(":=").Range().Add(rt("SortedKeys")).Call(jen.Id("v").Dot(names.ExtraField))).Block(
					append(elemAt(t.Extra, jen.Id("e"), jen.Id("v").Dot(names.ExtraField), jen.Id("k")), under(0, body, "UnderKey", jen.Id("ptr"), jen.Id("k"))...)...)
			}
		}
		addAll(g, c.matcherChecks(t, jen.Id("v"), jen.Id("ptr")))
		for _, dep := range t.DepRequired {
			present, p := structHas(t, dep.Member)
			if p == never {
				continue // a member a closed object cannot have
			}
			var body []jen.Code
			if dep.Forbidden {
				body = append(body, jen.Id("vs").Dot("Add").Call(jen.Id("ptr"), jen.Lit(forbiddenMsg(dep.Member))))
			}
			for _, r := range dep.Requires {
				msg := jen.Id("vs").Dot("Add").Call(jen.Id("ptr"), jen.Lit(fmt.Sprintf("member %q is required when %q is present", r, dep.Member)))
				switch h, q := structHas(t, r); q {
				case never:
					body = append(body, msg)
				case maybe:
					body = append(body, jen.If(jen.Op("!").Parens(h)).Block(msg))
				}
			}
			switch {
			case len(body) == 0:
			case p == always:
				addAll(g, body)
			default:
				g.If(present).Block(body...)
			}
		}
		if t.C.MinProperties != nil || t.C.MaxProperties != nil {
			// A closed object has no field for undeclared members.
			if t.Extra != nil {
				g.Id("n").Op(":=").Len(jen.Id("v").Dot(names.ExtraField))
			} else {
				g.Id("n").Op(":=").Lit(0)
			}
			for _, f := range t.Fields {
				fv := jen.Id("v").Dot(f.GoName)
				switch {
				case f.Fixed != "":
					g.Id("n").Op("++")
				case fieldRep(f) == repValue:
					g.Id("n").Op("++")
				case fieldRep(f) == repNullable:
					g.If(fv.Clone().Dot("IsSet").Call()).Block(jen.Id("n").Op("++"))
				default:
					g.If(fv.Clone().Op("!=").Nil()).Block(jen.Id("n").Op("++"))
				}
			}
			addAll(g, countChecks(jen.Id("n"), t.C.MinProperties, t.C.MaxProperties, "member"))
		}
	})
}

// forbiddenMsg reports a member whose dependent schema is false.
func forbiddenMsg(member string) string {
	return fmt.Sprintf("member %q is not allowed: its dependent schema is false", member)
}

func countChecks(n jen.Code, lo, hi *int64, what string) []jen.Code {
	var out []jen.Code
	if lo != nil {
		out = append(out, jen.If(jen.Add(n).Op("<").Lit(int(*lo))).Block(jen.Id("vs").Dot("Add").Call(jen.Id("ptr"), jen.Lit(fmt.Sprintf("must have at least %d %s%s", *lo, what, plural(*lo))))))
	}
	if hi != nil {
		out = append(out, jen.If(jen.Add(n).Op(">").Lit(int(*hi))).Block(jen.Id("vs").Dot("Add").Call(jen.Id("ptr"), jen.Lit(fmt.Sprintf("must have at most %d %s%s", *hi, what, plural(*hi))))))
	}
	return out
}

func plural(n int64) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func (e *emitter) rootFuncs(r *ir.Root) []jen.Code {
	t := r.Type
	subj := subject(r)
	return []jen.Code{
		jen.Line(),
		docf("Validate reports every violation of the %s schema's constraints as a *mcpruntime.ValidationError, or returns nil.", subj).Line().
			Func().Params(jen.Id("v").Op("*").Id(t.GoName)).Id("Validate").Params().Error().Block(
			jen.Var().Id("vs").Add(rt("Violations")),
			jen.Id("v").Dot("validate").Call(jen.Lit(""), jen.Op("&").Id("vs")),
			jen.Return(jen.Id("vs").Dot("Err").Call(jen.Lit(subj)))),
		jen.Line(),
		decodeRoot(t, subj),
	}
}

// decodeRoot declares Decode<Root>. A root type that decodes itself (a
// struct, union, array or map) leaves the work to mcpimpl.DecodeAndValidate,
// which is compiled once rather than instantiated for every root.
func decodeRoot(t *ir.Type, subj string) jen.Code {
	doc := docf("Decode%s decodes the %s strictly and validates it. Wrong JSON types, missing required members and members a closed object does not declare are violations, as is anything Validate reports; the error is a *mcpruntime.ValidationError listing every one found.", t.GoName, subj).Line()
	if t.Named && (t.Kind == ir.Struct || t.Kind == ir.Union || t.Kind == ir.Array || t.Kind == ir.Map) {
		nullAware := false
		if t.Kind == ir.Union {
			for _, v := range t.Variants {
				nullAware = nullAware || v.Type.Kind == ir.Null
			}
		}
		return doc.Func().Id("Decode"+t.GoName).Params(jen.Id("data").Index().Byte()).Params(jen.Id("v").Id(t.GoName), jen.Err().Error()).Block(
			jen.Err().Op("=").Add(rt("DecodeAndValidate")).Call(jen.Id("data"), jen.Op("&").Id("v"), jen.Lit(nullAware), jen.Lit(subj)),
			jen.Return(jen.Id("v"), jen.Err()))
	}
	return doc.Func().Id("Decode"+t.GoName).Params(jen.Id("data").Index().Byte()).Params(jen.Id(t.GoName), jen.Error()).Block(
		jen.Var().Id("v").Id(t.GoName),
		jen.Var().Id("vs").Add(rt("Violations")),
		rootDecodeFn(t).Call(jen.Id("data"), jen.Op("&").Id("v"), jen.Lit(""), jen.Op("&").Id("vs")),
		jen.If(jen.Id("vs").Dot("Len").Call().Op("==").Lit(0)).Block(jen.Id("v").Dot("validate").Call(jen.Lit(""), jen.Op("&").Id("vs"))),
		jen.Return(jen.Id("v"), jen.Id("vs").Dot("Err").Call(jen.Lit(subj))))
}

// checker generates the statements that check one value.
type checker struct {
	e        *emitter
	owner    string
	patterns int
	notes    []string
}

// validateFunc declares the validate method with body, preceded by the
// notes the checks left (what could not be checked and why).
func (c *checker) validateFunc(recv jen.Code, body func(g *jen.Group)) jen.Code {
	fn := jen.Func().Params(recv).Id("validate").Params(jen.Id("ptr").String(), jen.Id("vs").Op("*").Add(rt("Violations"))).BlockFunc(body)
	if len(c.notes) == 0 {
		return fn
	}
	out := jen.Empty()
	for _, n := range comment(c.notes...) {
		out.Add(n).Line()
	}
	return out.Add(fn)
}

// checks returns statements checking x (an addressable expression of type
// typeRef(t), or underlying(t) when inner) and recording violations at ptr.
// accept is a func([]byte, *mcpimpl.Violations) that decodes and validates
// data as m's type: Matches, CheckAs and CheckRaw take it.
func (c *checker) accept(m *ir.Matcher) jen.Code {
	return jen.Func().Params(jen.Id("data").Index().Byte(), jen.Id("vs").Op("*").Add(rt("Violations"))).BlockFunc(func(f *jen.Group) {
		if m.Nullable {
			f.If(rt("JSONKind").Call(jen.Id("data")).Op("==").Lit("null")).Block(jen.Return())
		}
		f.Id("x").Op(":=").New(typeRef(m.Type))
		f.Add(decodeFn(m.Type).Call(jen.Id("data"), jen.Id("x"), jen.Lit(""), jen.Id("vs")))
		if body := c.checks(m.Type, jen.Parens(jen.Op("*").Id("x")), jen.Lit(""), 0, false); len(body) > 0 {
			f.If(jen.Id("vs").Dot("Len").Call().Op("==").Lit(0)).Block(body...)
		}
	})
}

// matcherChecks checks x against t's not and if/then/else subschemas.
func (c *checker) matcherChecks(t *ir.Type, x, ptr jen.Code) []jen.Code {
	var out []jen.Code
	if t.Not != nil {
		out = append(out, jen.If(rt("Matches").Call(x, c.accept(t.Not))).Block(
			jen.Id("vs").Dot("Add").Call(ptr, jen.Lit("must not match the schema's \"not\""))))
	}
	if t.If != nil {
		st := jen.If(rt("Matches").Call(x, c.accept(t.If)))
		if t.Then != nil {
			st = st.Block(rt("CheckAs").Call(x, ptr, jen.Id("vs"), c.accept(t.Then)))
		} else {
			st = st.Block()
		}
		if t.Else != nil {
			st = st.Else().Block(rt("CheckAs").Call(x, ptr, jen.Id("vs"), c.accept(t.Else)))
		}
		out = append(out, st)
	}
	return out
}

func (c *checker) checks(t *ir.Type, x, ptr jen.Code, depth int, inner bool) []jen.Code {
	add := func(msg string) jen.Code { return jen.Id("vs").Dot("Add").Call(ptr, jen.Lit(msg)) }
	if t.Named && !inner {
		return []jen.Code{jen.Add(x).Dot("validate").Call(ptr, jen.Id("vs"))}
	}
	var out []jen.Code
	k := t.Kind
	if k == ir.Enum {
		k = t.Base
	}
	cs := &t.C
	switch k {
	case ir.String:
		if cs.MinLength != nil || cs.MaxLength != nil {
			n := jen.Qual("unicode/utf8", "RuneCountInString").Call(x)
			if cs.MinLength != nil {
				out = append(out, jen.If(n.Clone().Op("<").Lit(int(*cs.MinLength))).Block(add(fmt.Sprintf("must be at least %d character%s long", *cs.MinLength, plural(*cs.MinLength)))))
			}
			if cs.MaxLength != nil {
				out = append(out, jen.If(n.Clone().Op(">").Lit(int(*cs.MaxLength))).Block(add(fmt.Sprintf("must be at most %d character%s long", *cs.MaxLength, plural(*cs.MaxLength)))))
			}
		}
		for _, p := range cs.Patterns {
			if p.Go == "" {
				c.notes = append(c.notes, fmt.Sprintf("Not checked: Go's regexp cannot compile the pattern %s (%s).", strconv.Quote(p.Source), p.Reason))
				continue
			}
			name := fmt.Sprintf("pattern%s%d", c.owner, c.patterns)
			c.patterns++
			c.e.patterns = append(c.e.patterns, jen.Id(name).Op("=").Add(rt("CompilePattern")).Call(jen.Lit(p.Go)))
			out = append(out, jen.If(jen.Op("!").Id(name).Dot("MatchString").Call(x)).Block(add("must match the pattern "+strconv.Quote(p.Source))))
		}
		if t.FormatChecked() {
			out = append(out, jen.If(jen.Op("!").Add(rt("ValidFormat")).Call(jen.Lit(t.Format), jen.String().Call(x))).Block(add("must be a valid "+t.Format)))
		}
		if cs.HasConst {
			var str string
			if err := json.Unmarshal([]byte(cs.ConstJSON), &str); err == nil {
				out = append(out, jen.If(jen.Add(x).Op("!=").Lit(str)).Block(add("must be "+cs.ConstJSON)))
			}
		}
	case ir.Integer, ir.Number:
		out = append(out, c.numChecks(t, k, x, add)...)
	case ir.Boolean:
		if cs.HasConst {
			out = append(out, jen.If(jen.Add(x).Op("!=").Id(cs.ConstJSON)).Block(add("must be "+cs.ConstJSON)))
		}
		if len(cs.Enum) == 1 && !t.Tolerant() {
			out = append(out, jen.If(jen.Add(x).Op("!=").Id(cs.EnumJSON[0])).Block(add("must be "+cs.EnumJSON[0])))
		}
	case ir.Raw:
		if t.Never {
			// Whatever the value is, the schema allows none here.
			return append(out, add("no value is allowed here: "+t.NeverReason()))
		}
		if t.NotNull {
			out = append(out, jen.If(rt("JSONKind").Call(x).Op("==").Lit("null")).Block(add("unexpected null")))
		}
		if cs.HasConst {
			out = append(out, jen.If(rt("CanonicalJSON").Call(x).Op("!=").Lit(cs.Const)).Block(add("must be "+cs.ConstJSON)))
		}
		if len(cs.Enum) > 0 && !t.Tolerant() {
			var lits []jen.Code
			for _, v := range cs.Enum {
				lits = append(lits, jen.Lit(v))
			}
			out = append(out, jen.Switch(rt("CanonicalJSON").Call(x)).Block(
				jen.Case(lits...),
				jen.Default().Block(add("must be one of "+strings.Join(cs.EnumJSON, ", ")))))
		}
	case ir.Array:
		if cs.MinItems != nil || cs.MaxItems != nil {
			out = append(out, countChecksAt(jen.Len(x), cs.MinItems, cs.MaxItems, "item", ptr)...)
		}
		if cs.UniqueItems {
			out = append(out, jen.If(jen.List(jen.Id("i"), jen.Id("j"), jen.Id("ok")).Op(":=").Add(rt("UniqueItems")).Call(x), jen.Op("!").Id("ok")).Block(
				jen.Id("vs").Dot("Add").Call(ptr, jen.Lit("items must be unique: ").Op("+").Qual("strconv", "Itoa").Call(jen.Id("i")).Op("+").Lit(" and ").Op("+").Qual("strconv", "Itoa").Call(jen.Id("j")).Op("+").Lit(" are equal"))))
		}
		i, e := fmt.Sprintf("i%d", depth), fmt.Sprintf("e%d", depth)
		if body := c.elemChecks(t.Elem, t.ElemNullable, jen.Id(e), jen.Lit(""), depth+1); len(body) > 0 {
			if t.Elem.Never {
				out = append(out, jen.For(jen.Id(i).Op(":=").Range().Add(x)).Block(under(depth, body, "Under", ptr, jen.Id(i))...))
			} else {
				out = append(out, jen.For(jen.List(jen.Id(i), jen.Id(e)).Op(":=").Range().Add(x)).Block(under(depth, body, "Under", ptr, jen.Id(i))...))
			}
		}
		for k, m := range t.Prefix {
			out = append(out, jen.If(jen.Len(x).Op(">").Lit(k)).Block(
				rt("CheckRaw").Call(jen.Add(x).Index(jen.Lit(k)), rt("IndexPointer").Call(ptr, jen.Lit(k)), jen.Id("vs"), c.accept(m))))
		}
		if t.Rest != nil {
			out = append(out, jen.For(jen.Id(i).Op(":=").Lit(len(t.Prefix)), jen.Id(i).Op("<").Len(x), jen.Id(i).Op("++")).Block(
				rt("CheckRaw").Call(jen.Add(x).Index(jen.Id(i)), rt("IndexPointer").Call(ptr, jen.Id(i)), jen.Id("vs"), c.accept(t.Rest))))
		}
		if t.Contains != nil {
			lo := int64(1)
			if t.MinContains != nil {
				lo = *t.MinContains
			}
			n := fmt.Sprintf("n%d", depth)
			count := jen.Id(n).Op(":=").Lit(0).Line().For(jen.List(jen.Id("_"), jen.Id(e)).Op(":=").Range().Add(x)).Block(
				jen.If(rt("Matches").Call(jen.Id(e), c.accept(t.Contains))).Block(jen.Id(n).Op("++")))
			var checks []jen.Code
			if lo > 0 {
				checks = append(checks, jen.If(jen.Id(n).Op("<").Lit(int(lo))).Block(add(fmt.Sprintf("at least %d item%s must match the schema's \"contains\"", lo, plural(lo)))))
			}
			if t.MaxContains != nil {
				checks = append(checks, jen.If(jen.Id(n).Op(">").Lit(int(*t.MaxContains))).Block(add(fmt.Sprintf("at most %d item%s may match the schema's \"contains\"", *t.MaxContains, plural(*t.MaxContains)))))
			}
			if len(checks) > 0 {
				out = append(out, jen.Block(append([]jen.Code{count}, checks...)...))
			}
		}
	case ir.Map:
		if cs.MinProperties != nil || cs.MaxProperties != nil {
			out = append(out, countChecksAt(jen.Len(x), cs.MinProperties, cs.MaxProperties, "member", ptr)...)
		}
		if t.PropertyNames != nil {
			k := fmt.Sprintf("k%d", depth)
			out = append(out, jen.For(jen.List(jen.Id("_"), jen.Id(k)).Op(":=").Range().Add(rt("SortedKeys")).Call(x)).Block(
				jen.If(jen.Op("!").Add(rt("Matches")).Call(jen.Id(k), c.accept(t.PropertyNames))).Block(
					jen.Id("vs").Dot("Add").Call(rt("KeyPointer").Call(ptr, jen.Id(k)), jen.Lit("member name does not match the schema's \"propertyNames\"")))))
		}
		for _, dep := range t.DepRequired {
			var body []jen.Code
			if dep.Forbidden {
				body = append(body, add(forbiddenMsg(dep.Member)))
			}
			for _, r := range dep.Requires {
				body = append(body, jen.If(jen.Op("!").Add(rt("Has")).Call(x, jen.Lit(r))).Block(
					add(fmt.Sprintf("member %q is required when %q is present", r, dep.Member))))
			}
			if len(body) > 0 {
				out = append(out, jen.If(rt("Has").Call(x, jen.Lit(dep.Member))).Block(body...))
			}
		}
		k, e := fmt.Sprintf("k%d", depth), fmt.Sprintf("e%d", depth)
		if body := c.elemChecks(t.Elem, t.ElemNullable, jen.Id(e), jen.Lit(""), depth+1); len(body) > 0 {
			out = append(out, jen.For(jen.List(jen.Id("_"), jen.Id(k)).Op(":=").Range().Add(rt("SortedKeys")).Call(x)).Block(
				append(elemAt(t.Elem, jen.Id(e), x, jen.Id(k)), under(depth, body, "UnderKey", ptr, jen.Id(k))...)...))
		}
	}
	if t.Kind != ir.Struct {
		out = append(out, c.matcherChecks(t, x, ptr)...)
	}
	return out
}

// elemAt declares e as m[k] for the checks of a map's value, unless the
// checks do not read it (a value no schema allows).
func elemAt(t *ir.Type, e, m, k jen.Code) []jen.Code {
	if t.Never {
		return nil
	}
	return []jen.Code{jen.Add(e).Op(":=").Add(m).Index(k)}
}

// under wraps the checks of one element, made at pointer "", so that the
// element's pointer (ptr and index or key) is built only when they record
// a violation: building it for every element cost an allocation each.
func under(depth int, body []jen.Code, method string, ptr, at jen.Code) []jen.Code {
	n := fmt.Sprintf("n%d", depth)
	out := append([]jen.Code{jen.Id(n).Op(":=").Id("vs").Dot("Len").Call()}, body...)
	return append(out, jen.Id("vs").Dot(method).Call(jen.Id(n), ptr, at))
}

func (c *checker) elemChecks(t *ir.Type, nullable bool, e, ptr jen.Code, depth int) []jen.Code {
	if elemNullPtr(t, nullable) {
		body := c.checks(t, jen.Parens(jen.Op("*").Add(e)), ptr, depth, false)
		if len(body) == 0 {
			return nil
		}
		return []jen.Code{jen.If(jen.Add(e).Op("!=").Nil()).Block(body...)}
	}
	return c.checks(t, e, ptr, depth, false)
}

func countChecksAt(n jen.Code, lo, hi *int64, what string, ptr jen.Code) []jen.Code {
	var out []jen.Code
	if lo != nil {
		out = append(out, jen.If(jen.Add(n).Op("<").Lit(int(*lo))).Block(jen.Id("vs").Dot("Add").Call(ptr, jen.Lit(fmt.Sprintf("must have at least %d %s%s", *lo, what, plural(*lo))))))
	}
	if hi != nil {
		out = append(out, jen.If(jen.Add(n).Op(">").Lit(int(*hi))).Block(jen.Id("vs").Dot("Add").Call(ptr, jen.Lit(fmt.Sprintf("must have at most %d %s%s", *hi, what, plural(*hi))))))
	}
	return out
}

var intRanges = map[string][2]*big.Rat{}

func init() {
	set := func(name string, lo, hi *big.Int) {
		intRanges[name] = [2]*big.Rat{new(big.Rat).SetInt(lo), new(big.Rat).SetInt(hi)}
	}
	i := func(v int64) *big.Int { return big.NewInt(v) }
	set("int8", i(math.MinInt8), i(math.MaxInt8))
	set("int16", i(math.MinInt16), i(math.MaxInt16))
	set("int32", i(math.MinInt32), i(math.MaxInt32))
	set("int64", i(math.MinInt64), i(math.MaxInt64))
	set("uint8", i(0), i(math.MaxUint8))
	set("uint16", i(0), i(math.MaxUint16))
	set("uint32", i(0), i(math.MaxUint32))
	set("uint64", i(0), new(big.Int).SetUint64(math.MaxUint64))
}

var maxFloat = new(big.Rat).SetFloat64(math.MaxFloat64)

// operand returns x and the literal for comparing x with bound: in x's own
// integer type when the bound is an integer that fits, else as float64.
func operand(t *ir.Type, k ir.Kind, x jen.Code, n *ir.Num) (jen.Code, jen.Code, bool) {
	abs := new(big.Rat).Abs(n.Rat)
	if abs.Cmp(maxFloat) > 0 {
		return nil, nil, false
	}
	if k == ir.Integer {
		if r, ok := intRanges[t.IntType]; ok && n.Rat.IsInt() && n.Rat.Cmp(r[0]) >= 0 && n.Rat.Cmp(r[1]) <= 0 {
			return x, jen.Id(n.Rat.Num().String()), true
		}
		return jen.Float64().Call(x), jen.Id(floatLit(n)), true
	}
	return x, jen.Id(floatLit(n)), true
}

func floatLit(n *ir.Num) string {
	f, _ := n.Rat.Float64()
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}

func (c *checker) numChecks(t *ir.Type, k ir.Kind, x jen.Code, add func(string) jen.Code) []jen.Code {
	var out []jen.Code
	cs := &t.C
	if k == ir.Integer && t.IntType == ir.BigInt {
		cmp := func(n *ir.Num, op, msg string) {
			if n != nil {
				out = append(out, jen.If(rt("CompareNumber").Call(x, jen.Lit(n.Rat.RatString())).Op(op).Lit(0)).Block(add(msg+" "+n.Text)))
			}
		}
		cmp(cs.Minimum, "<", "must be at least")
		cmp(cs.ExclusiveMin, "<=", "must be greater than")
		cmp(cs.Maximum, ">", "must be at most")
		cmp(cs.ExclusiveMax, ">=", "must be less than")
		if m := cs.MultipleOf; m != nil {
			out = append(out, jen.If(jen.Op("!").Add(rt("BigMultipleOf")).Call(x, jen.Lit(m.Rat.RatString()))).Block(add("must be a multiple of "+m.Text)))
		}
		if cs.HasConst {
			out = append(out, jen.If(rt("CompareNumber").Call(x, jen.Lit(cs.ConstJSON)).Op("!=").Lit(0)).Block(add("must be "+cs.ConstJSON)))
		}
		return out
	}
	cmp := func(n *ir.Num, op, msg string) {
		if n == nil {
			return
		}
		a, b, ok := operand(t, k, x, n)
		if !ok {
			c.notes = append(c.notes, "Not checked: the bound "+n.Text+" is outside the float64 range.")
			return
		}
		out = append(out, jen.If(jen.Add(a).Op(op).Add(b)).Block(add(msg+" "+n.Text)))
	}
	cmp(cs.Minimum, "<", "must be at least")
	cmp(cs.ExclusiveMin, "<=", "must be greater than")
	cmp(cs.Maximum, ">", "must be at most")
	cmp(cs.ExclusiveMax, ">=", "must be less than")
	if m := cs.MultipleOf; m != nil {
		msg := "must be a multiple of " + m.Text
		if r, ok := intRanges[t.IntType]; k == ir.Integer && ok && m.Rat.IsInt() && m.Rat.Cmp(r[1]) <= 0 {
			out = append(out, jen.If(jen.Add(x).Op("%").Id(m.Rat.Num().String()).Op("!=").Lit(0)).Block(add(msg)))
		} else if new(big.Rat).Abs(m.Rat).Cmp(maxFloat) <= 0 {
			out = append(out, jen.If(jen.Op("!").Add(rt("MultipleOf")).Call(jen.Float64().Call(x), jen.Id(floatLit(m)))).Block(add(msg)))
		}
	}
	if cs.HasConst {
		out = append(out, jen.If(jen.Add(x).Op("!=").Id(cs.ConstJSON)).Block(add("must be "+cs.ConstJSON)))
	}
	return out
}
