package mcpgo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/agent"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
	"github.com/mcpgen/mcpgen/runtime/mcpimpl"
)

// secretText is what the fixture's file templates answer for a path
// outside /srv.
const secretText = "TOP SECRET"

// fileTemplates are file-like templates of every operator, each served
// by a handler as lenient as servers get (lenientPath).
var fileTemplates = []string{
	"file:///srv/{path}",
	"file:///srv/{+path}",
	"file:///srv/doc{#path}",
	"file:///srv/report{.path}",
	"file:///srv{/path}",
	"file:///srv{/path*}",
	"file:///srv/q{;path}",
	"file:///srv/find{?path}",
	"file:///srv/find?v=1{&path}",
	"file:///srv/{path:12}",
}

var fileReads atomic.Int64

func addFileTemplates(s *server.MCPServer) {
	for _, tmpl := range fileTemplates {
		s.AddResourceTemplate(mcp.NewResourceTemplate(tmpl, "file", mcp.WithTemplateMIMEType("text/plain")), serveFile)
	}
	// Counts the reads it serves, so a test can tell a read from a replay.
	s.AddResourceTemplate(mcp.NewResourceTemplate("count:///{name}", "count"),
		func(_ context.Context, r mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			n := fileReads.Add(1)
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: r.Params.URI, Text: fmt.Sprintf("read #%d", n)}}, nil
		})
}

// serveFile is a file server that trusts its variables: mcp-go has
// decoded them already, and it joins them under /srv after reading them
// as leniently as any server does (lenientPath). A path that ends up
// outside /srv gets the secret.
func serveFile(_ context.Context, r mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	var parts []string
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range r.Params.Arguments {
			if !yield(k) {
				return
			}
		}
	}) {
		switch v := r.Params.Arguments[name].(type) {
		case []string:
			parts = append(parts, v...)
		case string:
			parts = append(parts, v)
		}
	}
	p := path.Clean("/srv/" + lenientPath(strings.Join(parts, "/")))
	text := "public: " + p
	if p != "/srv" && !strings.HasPrefix(p, "/srv/") {
		text = secretText + " " + p
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: r.Params.URI, MIMEType: "text/plain", Text: text}}, nil
}

// lenientPath does what some server or file system does to a name, until
// nothing changes: percent-decoding (%XX and %uXXXX), overlong UTF-8 read
// as ASCII, a NUL ending the name, invisible characters dropped, NFKC's
// folding of fullwidth forms and dot leaders, look-alike slashes taken for
// slashes, backslashes for separators, path parameters (";x") and trailing
// dots and spaces dropped from segments.
func lenientPath(p string) string {
	fold := strings.NewReplacer(
		"\u2024", ".", "\u2025", "..", "\u2026", "...", "\uFE52", ".", "\u3002", ".", "\uFF61", ".",
		"\u2215", "/", "\u2044", "/", "\u29F8", "/", "\u2571", "/",
		"\u2216", "/", "\uFE68", "/", "\u29F5", "/", "\u29F9", "/", "\u2572", "/",
		"\u200B", "", "\u200C", "", "\u200D", "", "\u2060", "", "\uFEFF", "", "\u00AD", "", "\u202E", "", "\u200E", "", "\u061C", "",
		"\xC0\xAE", ".", "\xC0\xAF", "/", "\xE0\x80\xAE", ".", "\xE0\x80\xAF", "/", "\xC1\x9C", "/",
		`\`, "/",
	)
	for range 64 {
		q := p
		var b strings.Builder
		for i := 0; i < len(q); i++ {
			switch {
			case q[i] == '%' && i+5 < len(q) && q[i+1] == 'u' && isHexDigits(q[i+2:i+6]):
				var r rune
				fmt.Sscanf(q[i+2:i+6], "%04x", &r)
				b.WriteRune(r)
				i += 5
			case q[i] == '%' && i+2 < len(q) && isHexDigits(q[i+1:i+3]):
				var c byte
				fmt.Sscanf(q[i+1:i+3], "%02x", &c)
				b.WriteByte(c)
				i += 2
			default:
				b.WriteByte(q[i])
			}
		}
		q = b.String()
		if i := strings.IndexByte(q, 0); i >= 0 {
			q = q[:i]
		}
		var w strings.Builder
		for _, r := range q {
			if r >= 0xFF01 && r <= 0xFF5E {
				r -= 0xFEE0
			}
			w.WriteRune(r)
		}
		if utf8.ValidString(q) {
			q = w.String()
		}
		q = fold.Replace(q)
		segs := strings.Split(q, "/")
		for i, s := range segs {
			s, _, _ = strings.Cut(s, ";")
			segs[i] = strings.TrimRight(s, ". ")
			if strings.Trim(s, ".") == "" && s != "" {
				segs[i] = ".." // all dots: as far up as it goes
			}
		}
		q = strings.Join(segs, "/")
		if q == p {
			break
		}
		p = q
	}
	return p
}

func isHexDigits(s string) bool {
	for i := range len(s) {
		if !strings.ContainsRune("0123456789abcdefABCDEF", rune(s[i])) {
			return false
		}
	}
	return true
}

// hostileValues try to leave /srv through a server that decodes and
// normalises what it is sent.
var hostileValues = []string{
	".", "..", "...", ". ", ".. ", "..;x", "../secret.txt", "a/../../secret.txt", "/etc/passwd", "....//secret.txt",
	"..%2Fsecret.txt", "..%2fsecret.txt", "%2E%2E", "%2e%2e%2fsecret.txt", "%2E%2E%2F%2E%2E%2Fsecret.txt",
	"%252E%252E", "..%252Fsecret.txt", "%25252E%25252E", "%u002e%u002e", "..%u2215secret.txt",
	`..\secret.txt`, "..%5Csecret.txt", "..%255Csecret.txt", "..%5csecret.txt",
	"..\u2215secret.txt", "..\uFF0Fsecret.txt", "..\u2044secret.txt", "..\u29F8secret.txt", "..\uFF3Csecret.txt", "..\uFE68secret.txt", "..\u2216secret.txt",
	"\u2024\u2024", "\u2025", "\u2026", "\uFF0E\uFF0E", "\uFE52\uFE52", "\u3002\u3002", ".\uFF0E", "%EF%BC%8E%EF%BC%8E", "%E2%80%A5",
	".\u200B.", "..\u200B", "\u202E..", ".\u00AD.", "\uFEFF..", "%E2%80%8B..", ".%E2%80%8D.",
	"%C0%AE%C0%AE", "%C0%AE%C0%AE%C0%AFsecret.txt", "%E0%80%AE%E0%80%AE", "..%C0%AFsecret.txt", "..%C1%9Csecret.txt",
	"..%00", "x%00/../../secret.txt", "\x00..", "..\u0085", "..\u2028", "..\r\n",
	"%2E%2E%3Bx", "..%3B", "%2e%2e%20",
}

// benign values of each template, read to show the server matches it.
var benignValues = map[string]string{
	"file:///srv/{path}":          "report.txt",
	"file:///srv/{+path}":         "docs/report.txt",
	"file:///srv/doc{#path}":      "part/1",
	"file:///srv/report{.path}":   "txt",
	"file:///srv{/path}":          "report.txt",
	"file:///srv{/path*}":         "docs",
	"file:///srv/q{;path}":        "report.txt",
	"file:///srv/find{?path}":     "report 2024.txt",
	"file:///srv/find?v=1{&path}": "50% off.txt",
	"file:///srv/{path:12}":       "report.txt",
}

// harmless are the hostile values that the check lets through where they
// stand, because there they cannot leave /srv: a leading '/' in a
// fragment that follows no '/', and a prefix ({path:12}) that cuts the
// encoding of a dot in two.
var harmless = map[[2]string]bool{
	{"file:///srv/doc{#path}", "/etc/passwd"}:   true,
	{"file:///srv/{path:12}", "%25252E%25252E"}: true,
}

func fileReader(c mcpruntime.Caller, tmpl string, opts ...mcpruntime.ReadOption) mcpruntime.Invoker {
	rd := &mcpruntime.ResourceDescriptor{URITemplate: tmpl, Name: "file", MIMEType: "text/plain"}
	d := &mcpruntime.Descriptor{Name: "read_file", Annotations: mcpruntime.Annotations{ReadOnly: true, Idempotent: true, OpenWorld: true}}
	return mcpimpl.NewResourceReader(d, rd, c, opts...)
}

func argsFor(tmpl string, v string) json.RawMessage {
	var a any = v
	if strings.Contains(tmpl, "*}") {
		a = []string{"docs", v}
	}
	b, _ := json.Marshal(map[string]any{"path": a})
	return b
}

// A model's template values cannot leave the template's place through a
// server that decodes them (mcp-go does, before the handler) and reads
// them leniently: every hostile value is refused for every operator
// before anything is sent, with a violation the model can read, and the
// benign ones read as before.
func TestReaderValuesCannotTraverse(t *testing.T) {
	ctx := context.Background()
	c := mcpgo.Stdio(os.Args[0], nil, mcpgo.WithEnv("MCPGO_FIXTURE=stdio"), mcpgo.WithName("fixture"))
	closeConn(t, c)
	for _, tmpl := range fileTemplates {
		r := fileReader(c, tmpl)
		m, err := r.Invoke(ctx, argsFor(tmpl, benignValues[tmpl]))
		if err != nil || m.IsError || !strings.HasPrefix(m.Text, "public: /srv") {
			t.Fatalf("%s: benign read: %q, %v", tmpl, m.Text, err)
		}
		for _, v := range hostileValues {
			m, err := r.Invoke(ctx, argsFor(tmpl, v))
			if err != nil {
				t.Fatalf("%s %q: %v", tmpl, v, err)
			}
			if strings.Contains(m.Text, secretText) {
				t.Errorf("%s %q: escaped: %q", tmpl, v, m.Text)
				continue
			}
			if harmless[[2]string{tmpl, v}] && !m.IsError && strings.HasPrefix(m.Text, "public: /srv/") {
				continue
			}
			if !m.IsError || !strings.HasPrefix(m.Text, `Invalid arguments for tool "read_file":`) || !strings.Contains(m.Text, "- /path") {
				t.Errorf("%s %q: not refused: %q", tmpl, v, m.Text)
			}
		}
	}
}

// The hostile values are hostile: sent through the expansion without the
// check, a good share of them reach the secret. This keeps the corpus
// honest if the server or the values change.
func TestHostileValuesEscapeUnchecked(t *testing.T) {
	ctx := context.Background()
	c := mcpgo.Stdio(os.Args[0], nil, mcpgo.WithEnv("MCPGO_FIXTURE=stdio"), mcpgo.WithName("fixture"))
	closeConn(t, c)
	escaped := 0
	for _, v := range hostileValues {
		uri, err := mcpruntime.ExpandURITemplate("file:///srv/{path}", mcpruntime.TemplateVars{"path": v})
		if err != nil {
			t.Fatal(err)
		}
		res, err := mcpruntime.ReadURI(ctx, c, uri)
		if err == nil && strings.Contains(res.Contents[0].Text, secretText) {
			escaped++
		}
	}
	if escaped < len(hostileValues)/3 {
		t.Errorf("only %d of %d hostile values escape an unchecked {path}", escaped, len(hostileValues))
	}
}

// A model's value is bounded: a 1 MiB value, or values expanding to a
// URI over the limit, are violations the model reads, and nothing is
// sent.
func TestReaderValueLimits(t *testing.T) {
	ctx := context.Background()
	c := mcpgo.Stdio(os.Args[0], nil, mcpgo.WithEnv("MCPGO_FIXTURE=stdio"), mcpgo.WithName("fixture"))
	closeConn(t, c)
	cc := &countingConn{Conn: c}
	m, err := fileReader(cc, "file:///srv/{path}").Invoke(ctx, argsFor("file:///srv/{path}", strings.Repeat("a", 1<<20)))
	if err != nil || !m.IsError || !strings.Contains(m.Text, "- /path: 1048576 bytes, over the limit of 1024 bytes for a template value") {
		t.Errorf("1 MiB value: %.300q, %v", m.Text, err)
	}
	items := make([]string, 20)
	for i := range items {
		items[i] = strings.Repeat("b", 1000)
	}
	args, _ := json.Marshal(map[string]any{"path": items})
	m, err = fileReader(cc, "file:///srv{/path*}").Invoke(ctx, args)
	if err != nil || !m.IsError || !strings.Contains(m.Text, "- /: the values expand to a URI of 20031 bytes, over the limit of 8192 bytes") {
		t.Errorf("long list: %.300q, %v", m.Text, err)
	}
	if n := cc.reads.Load(); n != 0 {
		t.Errorf("%d refused reads were sent", n)
	}
}

// countingConn counts the reads that reach the connection.
type countingConn struct {
	*mcpgo.Conn
	reads atomic.Int64
}

func (c *countingConn) ReadResource(ctx context.Context, uri string) (*mcpruntime.ResourceResult, error) {
	c.reads.Add(1)
	return c.Conn.ReadResource(ctx, uri)
}

// A read over the connection's message cap over stdio (the fixture's
// 20 MiB mem://big) is a failed result the model can act on, through an
// agent's dispatch, and the next read gets a new connection.
func TestReaderOverMessageCap(t *testing.T) {
	ctx := context.Background()
	c := mcpgo.Stdio(os.Args[0], nil, mcpgo.WithEnv("MCPGO_FIXTURE=stdio"), mcpgo.WithName("fixture"))
	closeConn(t, c)
	big := mcpimpl.NewResourceReader(&mcpruntime.Descriptor{Name: "read_big", Annotations: mcpruntime.Annotations{ReadOnly: true}},
		&mcpruntime.ResourceDescriptor{URI: "mem://big", Name: "big"}, c)
	ts, err := mcpruntime.NewToolset(big, fileReader(c, "file:///srv/{path}"))
	if err != nil {
		t.Fatal(err)
	}
	set, err := agent.New(agent.DialectJSONSchema, agent.Source{Tools: ts})
	if err != nil {
		t.Fatal(err)
	}
	for _, limit := range []mcpruntime.ReadOption{nil, mcpruntime.MaxReadSize(64 << 20)} {
		if limit != nil {
			big = mcpimpl.NewResourceReader(big.Descriptor(), &mcpruntime.ResourceDescriptor{URI: "mem://big", Name: "big"}, c, limit)
			ts, _ = mcpruntime.NewToolset(big)
			set, _ = agent.New(agent.DialectJSONSchema, agent.Source{Tools: ts})
		}
		res, err := set.Dispatch(ctx, agent.Call{ID: "1", Name: "read_big", Arguments: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatalf("the agent loop got a Go error: %v", err)
		}
		want := fmt.Sprintf("The resource was not read: the server's answer is over the connection's limit of %d bytes for one message.", mcpgo.DefaultMaxMessageBytes)
		if !res.IsError || !strings.HasPrefix(res.Text, want) {
			t.Errorf("read over the cap: %+v", res)
		}
	}
	m, err := fileReader(c, "file:///srv/{path}").Invoke(ctx, argsFor("file:///srv/{path}", "report.txt"))
	if err != nil || m.IsError {
		t.Errorf("after the cap: %q, %v", m.Text, err)
	}
}
