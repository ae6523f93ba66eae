package oauth

import (
	"net/http"
	"net/url"
	"slices"
	"testing"
)

func TestParseChallenge(t *testing.T) {
	h := http.Header{}
	h.Add("WWW-Authenticate", `Basic realm="x"`)
	h.Add("WWW-Authenticate", `Bearer error="insufficient_scope", scope="a b:c", resource_metadata="https://r.example/.well-known/oauth-protected-resource/mcp", error_description="say \"more, please\""`)
	c := ParseChallenge(h)
	if c.Error != "insufficient_scope" || !slices.Equal(c.Scope, []string{"a", "b:c"}) || c.ResourceMetadata != "https://r.example/.well-known/oauth-protected-resource/mcp" {
		t.Errorf("%+v", c)
	}
	h = http.Header{"Www-Authenticate": {`bearer scope=read, error=invalid_token`}}
	if c := ParseChallenge(h); !slices.Equal(c.Scope, []string{"read"}) || c.Error != "invalid_token" {
		t.Errorf("unquoted: %+v", c)
	}
}

func TestMetadataURLOrder(t *testing.T) {
	u, _ := url.Parse("https://api.example.com/v1/mcp")
	got := resourceMetadataURLs(u, Challenge{ResourceMetadata: "https://api.example.com/custom.json"})
	want := []string{"https://api.example.com/custom.json", "https://api.example.com/.well-known/oauth-protected-resource/v1/mcp",
		"https://api.example.com/.well-known/oauth-protected-resource"}
	if !slices.Equal(got, want) {
		t.Errorf("resource metadata URLs %v", got)
	}
	iss, _ := url.Parse("https://auth.example.com/tenant1")
	want = []string{"https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
		"https://auth.example.com/.well-known/openid-configuration/tenant1", "https://auth.example.com/tenant1/.well-known/openid-configuration"}
	if got := serverMetadataURLs(iss); !slices.Equal(got, want) {
		t.Errorf("server metadata URLs %v", got)
	}
	root, _ := url.Parse("https://auth.example.com")
	want = []string{"https://auth.example.com/.well-known/oauth-authorization-server", "https://auth.example.com/.well-known/openid-configuration"}
	if got := serverMetadataURLs(root); !slices.Equal(got, want) {
		t.Errorf("root server metadata URLs %v", got)
	}
}

func TestCheckResource(t *testing.T) {
	u, _ := url.Parse("https://api.example.com/v1/mcp")
	for res, ok := range map[string]bool{
		"": true, "https://api.example.com/v1/mcp": true, "https://api.example.com/": true, "https://api.example.com": true,
		"https://api.example.com/v1/mcp/": true, "https://evil.example.com/v1/mcp": false, "https://api.example.com/v2": false,
		"http://api.example.com/v1/mcp": false, "https://api.example.com/v1/mc": false,
	} {
		if err := checkResource(u, res); (err == nil) != ok {
			t.Errorf("%q: %v", res, err)
		}
	}
}

func TestSelectScopes(t *testing.T) {
	asm := &ServerMetadata{ScopesSupported: []string{"offline_access"}}
	prm := &ResourceMetadata{ScopesSupported: []string{"r", "w"}}
	c := &Client{}
	if s := c.selectScopes(Challenge{Scope: []string{"r"}}, prm, asm, false); !slices.Equal(s, []string{"r", "offline_access"}) {
		t.Errorf("challenge: %v", s)
	}
	if s := c.selectScopes(Challenge{}, prm, &ServerMetadata{}, false); !slices.Equal(s, []string{"r", "w"}) {
		t.Errorf("scopes_supported: %v", s)
	}
	if s := c.selectScopes(Challenge{}, &ResourceMetadata{}, asm, false); len(s) != 0 {
		t.Errorf("none: %v", s)
	}
	c.entry = &Entry{Scopes: []string{"r"}}
	if s := c.selectScopes(Challenge{Scope: []string{"w"}}, prm, &ServerMetadata{}, true); !slices.Equal(s, []string{"w", "r"}) {
		t.Errorf("step-up: %v", s)
	}
	c.cfg.Scopes = []string{"x"}
	if s := c.selectScopes(Challenge{Scope: []string{"w"}}, prm, asm, false); !slices.Equal(s, []string{"x"}) {
		t.Errorf("configured: %v", s)
	}
}
