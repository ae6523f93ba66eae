package mcpruntime

import (
	"strings"
	"testing"
)

// The examples of RFC 6570 section 3.2 (associative-array values aside).
func TestURITemplateRFC6570Examples(t *testing.T) {
	vars := TemplateVars{
		"count":     []string{"one", "two", "three"},
		"dom":       []string{"example", "com"},
		"dub":       "me/too",
		"hello":     "Hello World!",
		"half":      "50%",
		"var":       "value",
		"who":       "fred",
		"base":      "http://example.com/home/",
		"path":      "/foo/bar",
		"list":      []string{"red", "green", "blue"},
		"v":         "6",
		"x":         "1024",
		"y":         "768",
		"empty":     "",
		"undef":     nil,
		"emptyList": []string{},
	}
	cases := [][2]string{
		// 3.2.1
		{"{count}", "one,two,three"},
		{"{count*}", "one,two,three"},
		{"{/count}", "/one,two,three"},
		{"{/count*}", "/one/two/three"},
		{"{;count}", ";count=one,two,three"},
		{"{;count*}", ";count=one;count=two;count=three"},
		{"{?count}", "?count=one,two,three"},
		{"{?count*}", "?count=one&count=two&count=three"},
		{"{&count*}", "&count=one&count=two&count=three"},
		// 3.2.2
		{"{var}", "value"},
		{"{hello}", "Hello%20World%21"},
		{"{half}", "50%25"},
		{"O{empty}X", "OX"},
		{"O{undef}X", "OX"},
		{"{x,y}", "1024,768"},
		{"{x,hello,y}", "1024,Hello%20World%21,768"},
		{"?{x,empty}", "?1024,"},
		{"?{x,undef}", "?1024"},
		{"?{undef,y}", "?768"},
		{"{var:3}", "val"},
		{"{var:30}", "value"},
		{"{list}", "red,green,blue"},
		{"{list*}", "red,green,blue"},
		// 3.2.3
		{"{+var}", "value"},
		{"{+hello}", "Hello%20World!"},
		{"{+half}", "50%25"},
		{"{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"},
		{"{+base}index", "http://example.com/home/index"},
		{"O{+empty}X", "OX"},
		{"O{+undef}X", "OX"},
		{"{+path}/here", "/foo/bar/here"},
		{"here?ref={+path}", "here?ref=/foo/bar"},
		{"up{+path}{var}/here", "up/foo/barvalue/here"},
		{"{+x,hello,y}", "1024,Hello%20World!,768"},
		{"{+path,x}/here", "/foo/bar,1024/here"},
		{"{+path:6}/here", "/foo/b/here"},
		{"{+list}", "red,green,blue"},
		{"{+list*}", "red,green,blue"},
		// 3.2.4
		{"{#var}", "#value"},
		{"{#hello}", "#Hello%20World!"},
		{"{#half}", "#50%25"},
		{"foo{#empty}", "foo#"},
		{"foo{#undef}", "foo"},
		{"{#x,hello,y}", "#1024,Hello%20World!,768"},
		{"{#path,x}/here", "#/foo/bar,1024/here"},
		{"{#path:6}/here", "#/foo/b/here"},
		{"{#list}", "#red,green,blue"},
		{"{#list*}", "#red,green,blue"},
		// 3.2.5
		{"{.who}", ".fred"},
		{"{.who,who}", ".fred.fred"},
		{"{.half,who}", ".50%25.fred"},
		{"www{.dom*}", "www.example.com"},
		{"X{.var}", "X.value"},
		{"X{.empty}", "X."},
		{"X{.undef}", "X"},
		{"X{.var:3}", "X.val"},
		{"X{.list}", "X.red,green,blue"},
		{"X{.list*}", "X.red.green.blue"},
		{"X{.emptyList}", "X"},
		{"X{.emptyList*}", "X"},
		// 3.2.6
		{"{/who}", "/fred"},
		{"{/who,who}", "/fred/fred"},
		{"{/half,who}", "/50%25/fred"},
		{"{/who,dub}", "/fred/me%2Ftoo"},
		{"{/var}", "/value"},
		{"{/var,empty}", "/value/"},
		{"{/var,undef}", "/value"},
		{"{/var,x}/here", "/value/1024/here"},
		{"{/var:1,var}", "/v/value"},
		{"{/list}", "/red,green,blue"},
		{"{/list*}", "/red/green/blue"},
		{"{/list*,path:4}", "/red/green/blue/%2Ffoo"},
		// 3.2.7
		{"{;who}", ";who=fred"},
		{"{;half}", ";half=50%25"},
		{"{;empty}", ";empty"},
		{"{;v,empty,who}", ";v=6;empty;who=fred"},
		{"{;v,bar,who}", ";v=6;who=fred"},
		{"{;x,y}", ";x=1024;y=768"},
		{"{;x,y,empty}", ";x=1024;y=768;empty"},
		{"{;x,y,undef}", ";x=1024;y=768"},
		{"{;hello:5}", ";hello=Hello"},
		{"{;list}", ";list=red,green,blue"},
		{"{;list*}", ";list=red;list=green;list=blue"},
		// 3.2.8
		{"{?who}", "?who=fred"},
		{"{?half}", "?half=50%25"},
		{"{?x,y}", "?x=1024&y=768"},
		{"{?x,y,empty}", "?x=1024&y=768&empty="},
		{"{?x,y,undef}", "?x=1024&y=768"},
		{"{?var:3}", "?var=val"},
		{"{?list}", "?list=red,green,blue"},
		{"{?list*}", "?list=red&list=green&list=blue"},
		// 3.2.9
		{"{&who}", "&who=fred"},
		{"{&half}", "&half=50%25"},
		{"?fixed=yes{&x}", "?fixed=yes&x=1024"},
		{"{&x,y,empty}", "&x=1024&y=768&empty="},
		{"{&var:3}", "&var=val"},
		{"{&list}", "&list=red,green,blue"},
		{"{&list*}", "&list=red&list=green&list=blue"},
	}
	for _, c := range cases {
		tmpl, err := ParseURITemplate(c[0])
		if err != nil {
			t.Errorf("%s: %v", c[0], err)
			continue
		}
		// Only the template's own variables: Expand refuses names the
		// template does not have.
		own := TemplateVars{}
		for _, v := range tmpl.Variables() {
			if val, ok := vars[v.Name]; ok {
				own[v.Name] = val
			}
		}
		got, err := tmpl.Expand(own)
		if err != nil {
			t.Errorf("%s: %v", c[0], err)
			continue
		}
		if got != c[1] {
			t.Errorf("%s = %q, want %q", c[0], got, c[1])
		}
	}
}

// Values full of reserved characters must not change the URI's structure:
// a simple expansion encodes every one of them, so a deal id cannot add a
// path segment, a query or a fragment.
func TestURITemplateReservedCharacters(t *testing.T) {
	const tmpl = "crm://deals/{deal_id}/contract{?version}"
	hostile := "../x/y?admin=1#frag %zz é&=;,"
	got, err := ExpandURITemplate(tmpl, TemplateVars{"deal_id": hostile, "version": "a&b=c"})
	if err != nil {
		t.Fatal(err)
	}
	want := "crm://deals/..%2Fx%2Fy%3Fadmin%3D1%23frag%20%25zz%20%C3%A9%26%3D%3B%2C/contract?version=a%26b%3Dc"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Reserved expansion keeps reserved characters and valid pct-encoded
	// triplets, and encodes the rest.
	got, err = ExpandURITemplate("file://{+path}", TemplateVars{"path": "/a b/%41%zz/ü"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "file:///a%20b/%41%25zz/%C3%BC"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	// Literals outside expressions are encoded where the URI grammar
	// requires it.
	got, err = ExpandURITemplate("x://a b/ü/{v}", TemplateVars{"v": "1"})
	if err != nil || got != "x://a%20b/%C3%BC/1" {
		t.Errorf("literal: %q, %v", got, err)
	}
}

func TestURITemplateErrors(t *testing.T) {
	for tmpl, want := range map[string]string{
		"a{b":       "unclosed expression",
		"a}b":       "'}' outside an expression",
		"{}":        "empty expression",
		"{=x}":      "reserved for future extensions",
		"{a b}":     "invalid variable name",
		"{a:0}":     "prefix length",
		"{a:10000}": "prefix length",
		"{.a..b}":   "invalid variable name",
		"{x,}":      "invalid variable name",
		"\xff{x}":   "invalid UTF-8",
	} {
		_, err := ParseURITemplate(tmpl)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", tmpl, err, want)
		}
	}
	if _, err := ExpandURITemplate("{a}", TemplateVars{"b": "x"}); err == nil || !strings.Contains(err.Error(), `no variable "b"`) {
		t.Errorf("unknown variable: %v", err)
	}
	if _, err := ExpandURITemplate("{a:2}", TemplateVars{"a": []string{"x"}}); err == nil {
		t.Error("prefix on a list: no error")
	}
	if _, err := ExpandURITemplate("{a}", TemplateVars{"a": 3}); err == nil || !strings.Contains(err.Error(), "unsupported value type int") {
		t.Errorf("int value: %v", err)
	}
	var nilStr *string
	if got, err := ExpandURITemplate("x{?a}", TemplateVars{"a": nilStr}); err != nil || got != "x" {
		t.Errorf("nil *string: %q, %v", got, err)
	}
}
