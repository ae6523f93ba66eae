package mcpimpl_test

import (
	"strings"
	"testing"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpimpl"
)

// The rules of CheckTemplateValues, one case each: what passes where, and
// the message of what does not. The attack corpus against a decoding
// server is in runtime/mcpgo (readers_attack_test.go).
func TestCheckTemplateValues(t *testing.T) {
	cases := []struct {
		tmpl string
		vars mcpruntime.TemplateVars
		want string // "" passes; else a part of the one violation
	}{
		{"x:///{v}", mcpruntime.TemplateVars{"v": "report 2024.txt"}, ""},
		{"x:///{v}", mcpruntime.TemplateVars{"v": "50%"}, ""},
		{"x:///{v}", mcpruntime.TemplateVars{"v": "r%C3%A9sum%C3%A9"}, ""},
		{"x:///{v}", mcpruntime.TemplateVars{"v": "a?b#c&d"}, ""},
		{"x:///{v}", mcpruntime.TemplateVars{"v": "a.b..c"}, ""},
		{"x:///{v}", mcpruntime.TemplateVars{"v": "\u2024x"}, ""},
		{"x:///{v}", mcpruntime.TemplateVars{"v": ""}, "/v: must not be empty"},
		{"x:///{v}", mcpruntime.TemplateVars{"v": "%E2%80%8B"}, "/v: must not be empty"},
		{"x:///{v}", mcpruntime.TemplateVars{"v": "a/b"}, `/v: "a/b" holds a '/'`},
		{"x:///{v}", mcpruntime.TemplateVars{"v": "a%252Fb"}, "holds a '/'"},
		{"x:///{v}", mcpruntime.TemplateVars{"v": "a\uFF0Fb"}, "holds a '/'"},
		{"x:///{v}", mcpruntime.TemplateVars{"v": "a%EF%BC%8Fb"}, "holds a '/'"},
		{"x:///{v}", mcpruntime.TemplateVars{"v": `a\b`}, "holds a backslash"},
		{"x:///{v}", mcpruntime.TemplateVars{"v": "..."}, `(a "..." segment once decoded)`},
		{"x:///{v}", mcpruntime.TemplateVars{"v": "\u2025"}, `(a ".." segment once decoded)`},
		{"x:///{v}", mcpruntime.TemplateVars{"v": "%2E%2E "}, `(a ".. " segment once decoded)`},
		{"x:///{v}", mcpruntime.TemplateVars{"v": "..;jsessionid=1"}, `segment once decoded`},
		{"x:///{v}", mcpruntime.TemplateVars{"v": ".\u200D."}, `(a ".." segment once decoded)`},
		{"x:///{v}", mcpruntime.TemplateVars{"v": "%C0%AE%C0%AE"}, "not UTF-8 once percent-decoded"},
		{"x:///{v}", mcpruntime.TemplateVars{"v": "a%00"}, "control or line-breaking character (U+0000)"},
		{"x:///{v}", mcpruntime.TemplateVars{"v": "a\u2028"}, "(U+2028)"},
		{"x:///{v}", mcpruntime.TemplateVars{"v": "a\u0085"}, "(U+0085)"},
		{"x:///{v}", mcpruntime.TemplateVars{"v": strings.Repeat("a", 1025)}, "/v: 1025 bytes, over the limit of 1024 bytes"},
		{"x:///{v}", mcpruntime.TemplateVars{"v": strings.Repeat("a", 1024)}, ""},
		// Named operators take empty values; the rest applies.
		{"x:///s{?v}", mcpruntime.TemplateVars{"v": ""}, ""},
		{"x:///s{;v}", mcpruntime.TemplateVars{"v": ".."}, "segment once decoded"},
		{"x:///s{&v}", mcpruntime.TemplateVars{"v": "../x"}, "holds a '/'"},
		{"x:///s{.v}", mcpruntime.TemplateVars{"v": "."}, "segment once decoded"},
		// Reserved expansion: plain '/' separates, nothing else does.
		{"x:///{+v}", mcpruntime.TemplateVars{"v": "a/b/c.txt"}, ""},
		{"x:///{+v}", mcpruntime.TemplateVars{"v": "a/b/"}, ""},
		{"x:///{+v}", mcpruntime.TemplateVars{"v": "a/../b"}, `(a ".." segment once decoded)`},
		{"x:///{+v}", mcpruntime.TemplateVars{"v": "a/%2e%2e/b"}, `(a ".." segment once decoded)`},
		{"x:///{+v}", mcpruntime.TemplateVars{"v": "a%2F..%2Fb"}, "percent-encoded or a look-alike (in segment"},
		{"x:///{+v}", mcpruntime.TemplateVars{"v": "a//b"}, "an empty segment"},
		{"x:///{+v}", mcpruntime.TemplateVars{"v": "/etc"}, "starts with '/' right after a '/' of the template"},
		{"file://{+v}", mcpruntime.TemplateVars{"v": "/srv/a"}, ""},
		{"x:///d{#v}", mcpruntime.TemplateVars{"v": "/sec/1"}, ""},
		{"x:///d{#v}", mcpruntime.TemplateVars{"v": "sec/.."}, "segment once decoded"},
		// What is sent is checked: after the prefix, at every appearance.
		{"x:///{v:2}", mcpruntime.TemplateVars{"v": "..x"}, `".." segment`},
		{"x:///{v:3}", mcpruntime.TemplateVars{"v": "..x"}, ""},
		{"x:///{+v}/{v:1}", mcpruntime.TemplateVars{"v": "a/b"}, ""},
		{"x:///{+v}/{v:2}", mcpruntime.TemplateVars{"v": "a/b"}, `"a/" holds a '/'`},
		// Lists: each item at its pointer; the URI is bounded.
		{"x://{/v*}", mcpruntime.TemplateVars{"v": []string{"a", "b"}}, ""},
		{"x://{/v*}", mcpruntime.TemplateVars{"v": []string{"a", "%2E."}}, "/v/1: "},
		{"x://{/v*}", mcpruntime.TemplateVars{"v": []string{"a", ""}}, "/v/1: must not be empty"},
		{"x://{/v*}", mcpruntime.TemplateVars{"v": []string{strings.Repeat("a", 1000), strings.Repeat("b", 1000), strings.Repeat("c", 1000), strings.Repeat("d", 1000),
			strings.Repeat("e", 1000), strings.Repeat("f", 1000), strings.Repeat("g", 1000), strings.Repeat("h", 1000), strings.Repeat("i", 1000)}},
			"/: the values expand to a URI of 9013 bytes, over the limit of 8192 bytes"},
	}
	for _, c := range cases {
		tmpl, err := mcpruntime.ParseURITemplate(c.tmpl)
		if err != nil {
			t.Fatal(err)
		}
		vs := mcpimpl.CheckTemplateValues(tmpl, c.vars)
		switch {
		case c.want == "" && len(vs) > 0:
			t.Errorf("%s %q: refused: %v", c.tmpl, c.vars, vs)
		case c.want != "" && (len(vs) != 1 || !strings.Contains(vs[0].String(), c.want)):
			t.Errorf("%s %.80q: %v, want %q", c.tmpl, c.vars, vs, c.want)
		}
	}
}
