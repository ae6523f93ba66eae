package config

import (
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Auth is a remote server's OAuth client configuration (the auth block,
// docs/config.md). With none of its keys set, mcpgen registers itself
// dynamically (or by its client ID metadata document) and signs in with
// the authorization code flow.
type Auth struct {
	// ClientID is a pre-registered client's ID.
	ClientID string
	// ClientSecret and PrivateKey are unexpanded ${VAR} references: a
	// secret never sits in the config file.
	ClientSecret    string
	ClientSecretPos Pos
	PrivateKey      string
	PrivateKeyPos   Pos
	// PrivateKeyFile is a PEM file, slash-separated and relative to the
	// config's directory (for private_key_jwt).
	PrivateKeyFile string
	// ClientMetadataURL is this client's metadata document (an https URL
	// used as client_id where the server supports it).
	ClientMetadataURL string
	// Method is the token endpoint authentication method ("": chosen).
	Method     string
	SigningAlg string
	// Grant is GrantAuthorizationCode (default) or GrantClientCredentials.
	Grant  string
	Scopes []string
	// AllowedScopes, when set, caps the scopes ever requested (key
	// allowedScopes): the server's choice is cut down to them, and a
	// step-up for another scope is not made.
	AllowedScopes []string
	// AllowLoopbackHTTP accepts plain http for a loopback host, for the
	// server's URL and the authorization server's (key allowLoopbackHttp).
	AllowLoopbackHTTP bool
	// RedirectPort is the 127.0.0.1 port mcpgen auth login listens on (0:
	// any free port).
	RedirectPort int
	Pos          Pos
}

// Grants of the auth block.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
)

var (
	authKeys = []string{"clientId", "clientSecret", "clientMetadataUrl", "method", "privateKey", "privateKeyFile", "signingAlg", "grant", "scopes",
		"allowedScopes", "allowLoopbackHttp", "redirectPort"}
	authMethods = []string{"client_secret_basic", "client_secret_post", "none", "private_key_jwt"}
	secretRefRE = regexp.MustCompile(`^\$\{[A-Za-z_][A-Za-z0-9_]*\}$`)
	// scopeRE is an OAuth scope token (RFC 6749 section 3.3).
	scopeRE = regexp.MustCompile(`^[\x21\x23-\x5B\x5D-\x7E]+$`)
)

func (d *decoder) auth(f field, p string, s *Server) *Auth {
	p = join(p, "auth")
	a := &Auth{Pos: d.pos(f.val), Grant: GrantAuthorizationCode}
	fs := d.mapping(f.val, p, authKeys)
	if f.val.Kind != yaml.MappingNode {
		return a
	}
	if s.Transport != "" && s.Remote == nil {
		d.errorf(f.key, p, "auth applies to http and sse servers only")
	}
	str := func(key string) (string, *yaml.Node, bool) {
		g, ok := fs[key]
		if !ok {
			return "", nil, false
		}
		v, ok := d.str(g.val, g.path)
		return v, g.val, ok
	}
	secret := func(key string) (string, Pos) {
		v, n, ok := str(key)
		if !ok {
			return "", Pos{}
		}
		if !secretRefRE.MatchString(v) {
			d.errorf(n, join(p, key), "%s must be a ${VAR} reference: secrets are not written in the config file", key)
			return "", Pos{}
		}
		return v, d.pos(n)
	}
	if v, n, ok := str("clientId"); ok {
		d.noRefs(n, join(p, "clientId"), v)
		a.ClientID = v
	}
	a.ClientSecret, a.ClientSecretPos = secret("clientSecret")
	a.PrivateKey, a.PrivateKeyPos = secret("privateKey")
	if g, ok := fs["privateKeyFile"]; ok {
		if v, ok := d.relPath(g, p); ok {
			a.PrivateKeyFile = v
		}
	}
	if v, n, ok := str("clientMetadataUrl"); ok {
		if !strings.HasPrefix(v, "https://") || checkURL(v) != "" {
			d.errorf(n, join(p, "clientMetadataUrl"), "a client ID metadata document URL must be an https URL")
		}
		a.ClientMetadataURL = v
	}
	if v, n, ok := str("method"); ok {
		if !slices.Contains(authMethods, v) {
			d.errorf(n, join(p, "method"), "unknown token endpoint authentication method %q (one of %s)", v, strings.Join(authMethods, ", "))
		}
		a.Method = v
	}
	if v, n, ok := str("signingAlg"); ok {
		if v != "ES256" && v != "RS256" {
			d.errorf(n, join(p, "signingAlg"), "unknown signing algorithm %q (ES256 or RS256)", v)
		}
		a.SigningAlg = v
	}
	if v, n, ok := str("grant"); ok {
		if v != GrantAuthorizationCode && v != GrantClientCredentials {
			d.errorf(n, join(p, "grant"), "unknown grant %q (%s or %s)", v, GrantAuthorizationCode, GrantClientCredentials)
		}
		a.Grant = v
	}
	scopes := func(key string) ([]string, *yaml.Node) {
		g, ok := fs[key]
		if !ok {
			return nil, nil
		}
		list := d.strList(g.val, g.path)
		if list == nil {
			return []string{}, g.val
		}
		for i, sc := range list {
			at := fmt.Sprintf("%s[%d]", g.path, i)
			switch {
			case !scopeRE.MatchString(sc):
				d.errorf(g.val.Content[i], at, "%q is not a scope (one word of printable ASCII, no quote or backslash)", sc)
			case slices.Index(list, sc) < i:
				d.errorf(g.val.Content[i], at, "scope %q listed twice", sc)
			}
		}
		return list, g.val
	}
	var scopesNode *yaml.Node
	a.Scopes, scopesNode = scopes("scopes")
	a.AllowedScopes, _ = scopes("allowedScopes")
	if a.AllowedScopes != nil {
		for i, sc := range a.Scopes {
			if !slices.Contains(a.AllowedScopes, sc) {
				d.errorf(scopesNode.Content[i], fmt.Sprintf("%s[%d]", join(p, "scopes"), i), "scope %q is not in allowedScopes", sc)
			}
		}
	}
	if g, ok := fs["allowLoopbackHttp"]; ok {
		if g.val.Kind == yaml.ScalarNode && g.val.ShortTag() == "!!bool" {
			a.AllowLoopbackHTTP = strings.EqualFold(g.val.Value, "true")
		} else {
			d.errorf(g.val, g.path, "expected true or false, found %s", describe(g.val))
		}
	}
	d.authURL(s, a)
	if g, ok := fs["redirectPort"]; ok {
		if v, ok := d.integer(g.val, g.path); ok {
			if v < 0 || v > 65535 {
				d.errorf(g.val, g.path, "redirectPort %d is not a port", v)
			}
			a.RedirectPort = v
		}
	}
	if a.PrivateKey != "" && a.PrivateKeyFile != "" {
		d.errorf(f.val, p, "privateKey and privateKeyFile both set: give the key once")
	}
	if a.Grant == GrantClientCredentials && a.ClientID == "" {
		d.errorf(f.val, p, "the client_credentials grant needs a pre-registered clientId")
	}
	if a.Method == "private_key_jwt" && a.PrivateKey == "" && a.PrivateKeyFile == "" {
		d.errorf(f.val, p, "method private_key_jwt needs privateKey or privateKeyFile")
	}
	return a
}

// authURL refuses an auth block on a plain-http server URL that the OAuth
// client would refuse: the token would go in clear. A URL with references
// is checked when it is expanded (by the OAuth client).
func (d *decoder) authURL(s *Server, a *Auth) {
	if s.Remote == nil || strings.Contains(s.Remote.URL, "${") {
		return
	}
	u, err := url.Parse(s.Remote.URL)
	if err != nil || !strings.EqualFold(u.Scheme, "http") || u.Host == "" {
		return
	}
	n := &yaml.Node{Line: s.Remote.URLPos.Line, Column: s.Remote.URLPos.Col}
	at := join(join(s.path, string(s.Transport)), "url")
	switch {
	case !isLoopback(u.Hostname()):
		d.errorf(n, at, "a server with an auth block needs an https url: OAuth sends its token over plain http only to a loopback host")
	case !a.AllowLoopbackHTTP:
		d.errorf(n, at, "a plain-http url with an auth block needs auth.allowLoopbackHttp: true (for a development server on this machine)")
	}
}

// isLoopback reports whether host is localhost or a loopback address.
func isLoopback(host string) bool {
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// AuthSecrets are the auth block's secrets, resolved.
type AuthSecrets struct {
	ClientSecret string
	PrivateKey   string
}

// ResolveAuth expands the auth block's ${VAR} references with lookup and
// reads its key file. Errors name the position and the variable or file,
// never a value.
func (s *Server) ResolveAuth(lookup func(string) (string, bool)) (AuthSecrets, error) {
	var out AuthSecrets
	a := s.Auth
	if a == nil {
		return out, nil
	}
	resolve := func(v string, pos Pos, what string) (string, error) {
		if v == "" {
			return "", nil
		}
		x, _, err := expand(v, lookup)
		if err != nil {
			return "", fmt.Errorf("%s: auth.%s: %w (server %q)", pos, what, err, s.ID)
		}
		return x, nil
	}
	var err error
	if out.ClientSecret, err = resolve(a.ClientSecret, a.ClientSecretPos, "clientSecret"); err != nil {
		return out, err
	}
	if out.PrivateKey, err = resolve(a.PrivateKey, a.PrivateKeyPos, "privateKey"); err != nil {
		return out, err
	}
	if a.PrivateKeyFile != "" {
		b, err := os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(a.PrivateKeyFile)))
		if err != nil {
			return out, fmt.Errorf("%s: auth.privateKeyFile: cannot read %s (server %q)", a.Pos, a.PrivateKeyFile, s.ID)
		}
		out.PrivateKey = string(b)
	}
	return out, nil
}
