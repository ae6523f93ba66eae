package oauth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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
		return false, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v); err != nil {
		return false, fmt.Errorf("GET %s: %w", u, err)
	}
	return true, nil
}

// discover finds the resource metadata and the authorization server's
// metadata for server. A server without resource metadata is taken to be
// its own authorization server (the 2025-03-26 specification), and one
// without server metadata gets that specification's default endpoints.
func discover(ctx context.Context, hc *http.Client, server *url.URL, c Challenge) (*ResourceMetadata, *ServerMetadata, error) {
	var prm *ResourceMetadata
	for _, u := range resourceMetadataURLs(server, c) {
		var m ResourceMetadata
		found, err := getJSON(ctx, hc, u, &m)
		if err != nil {
			return nil, nil, fmt.Errorf("protected-resource metadata: %w", err)
		}
		if found {
			prm = &m
			break
		}
	}
	origin := server.Scheme + "://" + server.Host
	issuer := origin
	if prm != nil {
		if err := checkResource(server, prm.Resource); err != nil {
			return nil, nil, err
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, nil, fmt.Errorf("protected-resource metadata of %s names no authorization server", origin)
		}
		issuer = prm.AuthorizationServers[0]
	}
	iu, err := url.Parse(issuer)
	if err != nil || (iu.Scheme != "https" && iu.Scheme != "http") || iu.Host == "" {
		return nil, nil, fmt.Errorf("authorization server %q is not an http(s) URL", issuer)
	}
	for _, u := range serverMetadataURLs(iu) {
		var m ServerMetadata
		found, err := getJSON(ctx, hc, u, &m)
		if err != nil {
			return nil, nil, fmt.Errorf("authorization-server metadata: %w", err)
		}
		if found && m.AuthorizationEndpoint != "" || found && m.TokenEndpoint != "" {
			return prm, &m, nil
		}
	}
	base := strings.TrimSuffix(issuer, "/")
	return prm, &ServerMetadata{
		Issuer:                base,
		AuthorizationEndpoint: base + "/authorize",
		TokenEndpoint:         base + "/token",
		RegistrationEndpoint:  base + "/register",
	}, nil
}

// checkResource refuses metadata for another resource than the server's
// (RFC 9728 section 3.3): the resource must be the server's URL or a
// prefix of it on the same origin.
func checkResource(server *url.URL, resource string) error {
	if resource == "" {
		return nil
	}
	r, err := url.Parse(resource)
	if err != nil {
		return fmt.Errorf("protected-resource metadata: resource %q is not a URL", resource)
	}
	same := strings.EqualFold(r.Scheme, server.Scheme) && strings.EqualFold(r.Host, server.Host)
	rp, sp := strings.TrimSuffix(r.Path, "/"), strings.TrimSuffix(server.Path, "/")
	if !same || !(sp == rp || strings.HasPrefix(sp, rp+"/")) {
		return fmt.Errorf("protected-resource metadata names resource %q, not this server (%s://%s%s)", resource, server.Scheme, server.Host, server.Path)
	}
	return nil
}
