package oauth

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
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

// The resource must be the server's URL (a trailing slash, letter case
// of scheme and host and a default port aside), or its origin for the
// metadata at the origin's root well-known URL; nothing else, and not
// nothing.
func TestCheckResource(t *testing.T) {
	u, _ := url.Parse("https://api.example.com/v1/mcp")
	const pathBased, root, custom = "https://api.example.com/.well-known/oauth-protected-resource/v1/mcp",
		"https://api.example.com/.well-known/oauth-protected-resource", "https://api.example.com/custom.json"
	for _, tc := range []struct {
		at, res string
		ok      bool
	}{
		{pathBased, "https://api.example.com/v1/mcp", true}, {custom, "https://api.example.com/v1/mcp", true},
		{pathBased, "https://API.example.com:443/v1/mcp/", true}, {root, "https://api.example.com/v1/mcp", true},
		{root, "https://api.example.com", true}, {root, "https://api.example.com/", true},
		{pathBased, "https://api.example.com/", false}, {custom, "https://api.example.com", false},
		{pathBased, "", false}, {root, "", false},
		{pathBased, "https://evil.example.com/v1/mcp", false}, {pathBased, "https://api.example.com/v2", false},
		{pathBased, "http://api.example.com/v1/mcp", false}, {pathBased, "https://api.example.com/v1/mc", false},
		{pathBased, "https://api.example.com:8443/v1/mcp", false}, {pathBased, "https://api.example.com/v1/mcp?x=1", false},
		{pathBased, "https://api.example.com/v1", false}, {root, "https://evil.example.com", false},
	} {
		if err := checkResource(u, tc.at, tc.res); (err == nil) != tc.ok {
			t.Errorf("%q at %s: %v", tc.res, tc.at, err)
		}
	}
}

func TestCheckIssuer(t *testing.T) {
	iss, _ := url.Parse("https://auth.example.com/tenant1")
	for _, tc := range []struct {
		got    string
		legacy bool
		ok     bool
	}{
		{"https://auth.example.com/tenant1", false, true}, {"https://auth.example.com/tenant1/", false, true},
		{"https://AUTH.example.com:443/tenant1", false, true},
		{"", false, false}, {"https://auth.example.com", false, false}, {"https://auth.example.com/tenant2", false, false},
		{"https://evil.example.com/tenant1", false, false}, {"http://auth.example.com/tenant1", false, false},
		{"https://auth.example.com/tenant1?x", false, false}, {"not a url", false, false},
		// Legacy (no resource metadata): the server's own origin.
		{"https://auth.example.com/oauth", true, true}, {"https://evil.example.com/tenant1", true, false},
		{"https://auth.example.com:8443/tenant1", true, false}, {"https://auth.example.com/x?y", true, false},
	} {
		if err := checkIssuer(&ServerMetadata{Issuer: tc.got}, iss, tc.legacy); (err == nil) != tc.ok {
			t.Errorf("issuer %q (legacy %v): %v", tc.got, tc.legacy, err)
		}
	}
}

func TestSecureURLs(t *testing.T) {
	strict, dev := &Client{}, &Client{cfg: Config{AllowLoopbackHTTP: true}}
	for _, tc := range []struct {
		url         string
		strict, dev bool
	}{
		{"https://as.example/token", true, true}, {"https://127.0.0.1:9/token", true, true},
		{"http://127.0.0.1:9/token", false, true}, {"http://127.5.6.7/token", false, true}, {"http://[::1]:9/token", false, true},
		{"http://localhost:9/token", false, true}, {"http://LOCALHOST./token", false, true},
		{"http://as.example/token", false, false}, {"http://10.0.0.1/token", false, false}, {"http://[::ffff:10.0.0.1]/t", false, false},
		{"http://localhost.evil.example/t", false, false}, {"http://127.0.0.1.evil.example/t", false, false},
		{"javascript:alert(1)", false, false}, {"file:///etc/passwd", false, false}, {"data:text/html,x", false, false},
		{"https:///nohost", false, false}, {"//as.example/token", false, false}, {"", false, false},
	} {
		_, err := strict.secure("token endpoint", tc.url)
		_, devErr := dev.secure("token endpoint", tc.url)
		if (err == nil) != tc.strict || (devErr == nil) != tc.dev {
			t.Errorf("%q: strict %v, with AllowLoopbackHTTP %v", tc.url, err, devErr)
		}
		if err != nil && tc.url != "" && strings.Contains(err.Error(), tc.url) {
			t.Errorf("%q: the error quotes the URL: %v", tc.url, err)
		}
	}
}

func TestSelectScopes(t *testing.T) {
	asm := &ServerMetadata{ScopesSupported: []string{"offline_access"}}
	prm := &ResourceMetadata{ScopesSupported: []string{"r", "w"}}
	c := &Client{}
	if s := c.selectScopes(Challenge{Scope: []string{"r"}}, prm, asm, modeFirst); !slices.Equal(s, []string{"r", "offline_access"}) {
		t.Errorf("challenge: %v", s)
	}
	if s := c.selectScopes(Challenge{}, prm, &ServerMetadata{}, modeFirst); !slices.Equal(s, []string{"r", "w"}) {
		t.Errorf("scopes_supported: %v", s)
	}
	if s := c.selectScopes(Challenge{}, &ResourceMetadata{}, asm, modeFirst); len(s) != 0 {
		t.Errorf("none: %v", s)
	}
	c.entry = &Entry{Scopes: []string{"r"}}
	if s := c.selectScopes(Challenge{Scope: []string{"w"}}, prm, &ServerMetadata{}, modeStepUp); !slices.Equal(s, []string{"w", "r"}) {
		t.Errorf("step-up: %v", s)
	}
	// A renewal asks for what is held, not for what the challenge names.
	if s := c.selectScopes(Challenge{Scope: []string{"w", "admin"}}, prm, &ServerMetadata{}, modeRenew); !slices.Equal(s, []string{"r"}) {
		t.Errorf("renewal: %v", s)
	}
	c.cfg.Scopes = []string{"x"}
	if s := c.selectScopes(Challenge{Scope: []string{"w"}}, prm, asm, modeFirst); !slices.Equal(s, []string{"x"}) {
		t.Errorf("configured: %v", s)
	}
}
