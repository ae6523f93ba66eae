package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// Challenge is what a 401 or 403 response's WWW-Authenticate header asked
// for (RFC 6750 section 3, RFC 9728 section 5.1).
type Challenge struct {
	ResourceMetadata string // URL of the protected-resource metadata
	Scope            []string
	Error            string // invalid_token, insufficient_scope, ...
}

// ParseChallenge reads the Bearer challenge of h's WWW-Authenticate
// headers. Parameters are name="value" pairs; quoted strings may hold
// commas and escaped quotes.
func ParseChallenge(h http.Header) Challenge {
	var c Challenge
	for _, v := range h.Values("WWW-Authenticate") {
		scheme, rest, _ := strings.Cut(strings.TrimSpace(v), " ")
		if !strings.EqualFold(scheme, "Bearer") {
			continue
		}
		for name, val := range authParams(rest) {
			switch strings.ToLower(name) {
			case "resource_metadata":
				c.ResourceMetadata = val
			case "scope":
				c.Scope = strings.Fields(val)
			case "error":
				c.Error = val
			}
		}
	}
	return c
}

func authParams(s string) map[string]string {
	out := map[string]string{}
	for {
		s = strings.TrimLeft(s, " ,\t")
		if s == "" {
			return out
		}
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			return out
		}
		name := strings.TrimSpace(s[:eq])
		s = strings.TrimLeft(s[eq+1:], " \t")
		var val strings.Builder
		if strings.HasPrefix(s, `"`) {
			i := 1
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				val.WriteByte(s[i])
			}
			s = s[min(i+1, len(s)):]
		} else {
			end := strings.IndexByte(s, ',')
			if end < 0 {
				end = len(s)
			}
			val.WriteString(strings.TrimSpace(s[:end]))
			s = s[end:]
		}
		out[name] = val.String()
	}
}

// ResourceMetadata is OAuth 2.0 protected-resource metadata (RFC 9728).
type ResourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// ServerMetadata is authorization-server metadata (RFC 8414; OpenID
// Connect discovery has the same members).
type ServerMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	ScopesSupported                   []string `json:"scopes_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported"`
}

// resourceMetadataURLs lists where the protected-resource metadata of
// server may be, in the order the MCP authorization specification gives:
// the challenge's resource_metadata, then the path-based well-known URL,
// then the root one. mcp-go tries only the first two; servers that
// publish at the root alone need the third.
func resourceMetadataURLs(server *url.URL, c Challenge) []string {
	var out []string
	if c.ResourceMetadata != "" {
		out = append(out, c.ResourceMetadata)
	}
	origin := server.Scheme + "://" + server.Host
	if p := strings.TrimSuffix(server.EscapedPath(), "/"); p != "" {
		out = append(out, origin+"/.well-known/oauth-protected-resource"+p)
	}
	return append(out, origin+"/.well-known/oauth-protected-resource")
}

// serverMetadataURLs lists the metadata URLs of an issuer: RFC 8414's
// path-inserted form, OpenID Connect's path-inserted form, then OpenID
// Connect's path-appended form (for an issuer without a path the first
// two are the root well-known URLs). The root RFC 8414 URL is not asked
// of an issuer with a path: it describes another issuer.
func serverMetadataURLs(issuer *url.URL) []string {
	origin := issuer.Scheme + "://" + issuer.Host
	p := strings.TrimSuffix(issuer.EscapedPath(), "/")
	if p == "" {
		return []string{origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"}
	}
	return []string{
		origin + "/.well-known/oauth-authorization-server" + p,
		origin + "/.well-known/openid-configuration" + p,
		origin + p + "/.well-known/openid-configuration",
	}
}

// getJSON fetches u into v. found is false for a 4xx answer (try the next
// location); err is set for anything else that went wrong.
func getJSON(ctx context.Context, hc *http.Client, u string, v any) (found bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := hc.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 && resp.StatusCode < 500 {
		return false, nil
	}
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("GET %s: %s", u, status(resp))
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v); err != nil {
		return false, fmt.Errorf("GET %s: %w", u, err)
	}
	return true, nil
}

// status is resp's status for an error. The client follows no redirect
// (httpClient): what it sends is for the endpoint it was sent to.
func status(resp *http.Response) string {
	if resp == nil {
		return "no answer"
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return resp.Status + " (a redirect, not followed: the client sends its requests only where discovery found)"
	}
	return resp.Status
}

// discover finds the resource metadata and the authorization server's
// metadata for the client's server. A server without resource metadata is
// taken to be its own authorization server (the 2025-03-26
// specification), and one without server metadata gets that
// specification's default endpoints. Every URL asked or named must pass
// c.secure, and what the documents say of themselves must match where
// they were found: the resource (RFC 9728 section 3.3) and the issuer
// (RFC 8414 section 3.3).
func (c *Client) discover(ctx context.Context, hc *http.Client, ch Challenge) (*ResourceMetadata, *ServerMetadata, error) {
	server := c.server
	origin := server.Scheme + "://" + server.Host
	var prm *ResourceMetadata
	for _, u := range resourceMetadataURLs(server, ch) {
		if _, err := c.secure("protected-resource metadata URL", u); err != nil {
			return nil, nil, err
		}
		var m ResourceMetadata
		found, err := getJSON(ctx, hc, u, &m)
		if err != nil {
			return nil, nil, fmt.Errorf("protected-resource metadata: %w", err)
		}
		if found {
			if err := checkResource(server, u, m.Resource); err != nil {
				return nil, nil, err
			}
			prm = &m
			break
		}
	}
	issuer := origin
	if prm != nil {
		if len(prm.AuthorizationServers) == 0 {
			return nil, nil, fmt.Errorf("protected-resource metadata of %s names no authorization server", origin)
		}
		issuer = prm.AuthorizationServers[0]
	}
	iu, err := c.secure("issuer", issuer)
	if err != nil {
		return nil, nil, err
	}
	if iu.RawQuery != "" || iu.Fragment != "" {
		return nil, nil, fmt.Errorf("the authorization server's issuer %s has a query or fragment (RFC 8414 section 2)", iu.Host)
	}
	for _, u := range serverMetadataURLs(iu) {
		var m ServerMetadata
		found, err := getJSON(ctx, hc, u, &m)
		if err != nil {
			return nil, nil, fmt.Errorf("authorization-server metadata: %w", err)
		}
		if !found || m.AuthorizationEndpoint == "" && m.TokenEndpoint == "" {
			continue
		}
		if err := checkIssuer(&m, iu, prm == nil); err != nil {
			return nil, nil, err
		}
		for what, ep := range map[string]string{"authorization endpoint": m.AuthorizationEndpoint, "token endpoint": m.TokenEndpoint,
			"registration endpoint": m.RegistrationEndpoint} {
			if ep == "" {
				continue
			}
			if _, err := c.secure(what, ep); err != nil {
				return nil, nil, err
			}
		}
		return prm, &m, nil
	}
	base := strings.TrimSuffix(issuer, "/")
	return prm, &ServerMetadata{
		Issuer:                base,
		AuthorizationEndpoint: base + "/authorize",
		TokenEndpoint:         base + "/token",
		RegistrationEndpoint:  base + "/register",
	}, nil
}

// checkResource refuses protected-resource metadata fetched from
// metadataURL that does not name the server as its resource (RFC 9728
// section 3.3): the resource must be the server's URL, or, for the
// metadata at the root well-known URL of the server's origin, that origin.
// Metadata without a resource is refused too (the member is required).
func checkResource(server *url.URL, metadataURL, resource string) error {
	if resource == "" {
		return errors.New("the protected-resource metadata names no resource (RFC 9728 requires it)")
	}
	r, err := url.Parse(resource)
	if err != nil || r.Host == "" {
		return errors.New("the protected-resource metadata's resource is not a URL")
	}
	origin := &url.URL{Scheme: server.Scheme, Host: server.Host}
	if normURL(r) == normURL(server) {
		return nil
	}
	if normURL(r) == normURL(origin) && metadataURL == origin.String()+"/.well-known/oauth-protected-resource" {
		return nil
	}
	return fmt.Errorf("the protected-resource metadata names resource %s://%s%s, not this server (%s://%s%s)", r.Scheme, r.Host, r.EscapedPath(),
		server.Scheme, server.Host, server.EscapedPath())
}

// checkIssuer refuses authorization-server metadata whose issuer is not
// the one its URL was made from (RFC 8414 section 3.3). For a server
// without resource metadata (legacy), which nobody named an issuer for,
// the issuer must be on the server's origin.
func checkIssuer(m *ServerMetadata, issuer *url.URL, legacy bool) error {
	if m.Issuer == "" {
		return fmt.Errorf("the authorization-server metadata of %s names no issuer (RFC 8414 requires it)", issuer.Host)
	}
	got, err := url.Parse(m.Issuer)
	if err != nil || got.Host == "" {
		return fmt.Errorf("the authorization-server metadata of %s has an issuer that is not a URL", issuer.Host)
	}
	if normURL(got) == normURL(issuer) || legacy && got.RawQuery == "" && got.Fragment == "" && sameOrigin(got, issuer) {
		return nil
	}
	return fmt.Errorf("the authorization-server metadata fetched for issuer %s names issuer %s://%s%s (RFC 8414 section 3.3: it must not be used)",
		issuer.Redacted(), got.Scheme, got.Host, got.EscapedPath())
}

// normURL is u as compared: scheme and host in lower case, without the
// scheme's default port, without a trailing slash.
func normURL(u *url.URL) string {
	s := strings.ToLower(u.Scheme) + "://" + hostPort(u) + strings.TrimSuffix(u.EscapedPath(), "/")
	if u.RawQuery != "" {
		s += "?" + u.RawQuery
	}
	if u.Fragment != "" {
		s += "#" + u.Fragment
	}
	return s
}

// hostPort is u's host in lower case with the port, unless it is the
// scheme's default.
func hostPort(u *url.URL) string {
	h, p := strings.ToLower(u.Hostname()), u.Port()
	if p == "" || p == "443" && strings.EqualFold(u.Scheme, "https") || p == "80" && strings.EqualFold(u.Scheme, "http") {
		if strings.Contains(h, ":") {
			return "[" + h + "]"
		}
		return h
	}
	return net.JoinHostPort(h, p)
}

// sameOrigin reports whether a and b have the same scheme, host and port.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && hostPort(a) == hostPort(b)
}

// isLoopback reports whether host (a URL's Hostname) is localhost or a
// loopback address.
func isLoopback(host string) bool {
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// openable reports whether u may be requested or opened for the
// authorization flow at all: https, or plain http to a loopback host.
func openable(u *url.URL) bool {
	switch strings.ToLower(u.Scheme) {
	case "https":
		return u.Host != ""
	case "http":
		return u.Host != "" && isLoopback(u.Hostname())
	}
	return false
}

// secure parses raw, a URL the client is about to send something to (the
// MCP server, an authorization-server endpoint, a metadata document), and
// refuses it unless it is https: MCP requires https for every
// authorization-server endpoint. Plain http is accepted for a loopback
// host when the configuration allows it (AllowLoopbackHTTP), for
// development servers. what names the URL in the error, which shows its
// scheme and host, never the whole URL.
func (c *Client) secure(what, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("the %s is not a URL", what)
	}
	switch scheme := strings.ToLower(u.Scheme); {
	case scheme == "https" && u.Host != "":
		return u, nil
	case scheme == "http" && u.Host != "" && isLoopback(u.Hostname()):
		if c.cfg.AllowLoopbackHTTP {
			return u, nil
		}
		return nil, fmt.Errorf("the %s is http://%s, not https: plain http is accepted only for a loopback host, and only where allowed (AllowLoopbackHTTP; auth.allowLoopbackHttp in mcpgen.yaml)", what, u.Host)
	case scheme == "http" && u.Host != "":
		return nil, fmt.Errorf("the %s is http://%s, not https: OAuth requires https (plain http only for a loopback host)", what, u.Host)
	default:
		return nil, fmt.Errorf("the %s is not an https URL (scheme %q)", what, u.Scheme)
	}
}
