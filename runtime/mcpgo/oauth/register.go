package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// identify settles the client_id (and secret and authentication method)
// e is sent with: a pre-registered client, a client ID metadata document,
// the cached dynamic registration with this issuer, or a new one.
func (c *Client) identify(ctx context.Context, hc *http.Client, asm *ServerMetadata, e *Entry) error {
	supported := asm.TokenEndpointAuthMethodsSupported
	switch {
	case c.cfg.ClientID != "":
		e.ClientID, e.ClientSecret = c.cfg.ClientID, c.cfg.ClientSecret
		e.AuthMethod = c.cfg.AuthMethod
		if e.AuthMethod == "" {
			e.AuthMethod = chooseMethod(supported, c.cfg.ClientSecret != "", c.cfg.PrivateKey != "")
		}
		return nil
	case c.cfg.ClientMetadataURL != "" && asm.ClientIDMetadataDocumentSupported:
		// The URL is the client_id; the document it serves says the client
		// is public (token_endpoint_auth_method none).
		e.ClientID, e.AuthMethod = c.cfg.ClientMetadataURL, AuthMethodNone
		return nil
	}
	redirect := ""
	if c.cfg.Agent != nil {
		redirect = c.cfg.Agent.RedirectURI()
	}
	if old := c.entry; old != nil && old.Registered && old.Issuer == asm.Issuer && old.RedirectURI == redirect {
		e.ClientID, e.ClientSecret, e.AuthMethod, e.Registered = old.ClientID, old.ClientSecret, old.AuthMethod, true
		return nil
	}
	if asm.RegistrationEndpoint == "" {
		return errors.New("the authorization server offers no dynamic registration and no client ID metadata documents: configure a pre-registered client (auth.clientId)")
	}
	return c.register(ctx, hc, asm, e, redirect)
}

// chooseMethod picks the token endpoint authentication method: a signed
// assertion when there is a key, a secret in the header (RFC 8414's
// default) or the body as the server supports, none without a secret.
func chooseMethod(supported []string, secret, key bool) string {
	switch {
	case key:
		return AuthMethodPrivateKeyJWT
	case !secret:
		return AuthMethodNone
	case len(supported) == 0 || slices.Contains(supported, AuthMethodBasic):
		return AuthMethodBasic
	case slices.Contains(supported, AuthMethodPost):
		return AuthMethodPost
	}
	return AuthMethodBasic
}

// register is dynamic client registration (RFC 7591). The client asks to
// be public (PKCE protects its code) where the server allows it, else for
// a secret sent as the server prefers.
func (c *Client) register(ctx context.Context, hc *http.Client, asm *ServerMetadata, e *Entry, redirect string) error {
	method := AuthMethodNone
	if s := asm.TokenEndpointAuthMethodsSupported; len(s) > 0 && !slices.Contains(s, AuthMethodNone) {
		method = chooseMethod(s, true, false)
	}
	grants := []string{"authorization_code", "refresh_token"}
	if c.cfg.ClientCredentials {
		grants = []string{"client_credentials"}
	}
	meta := map[string]any{
		"client_name":                c.cfg.ClientName,
		"grant_types":                grants,
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": method,
	}
	if redirect != "" {
		meta["redirect_uris"] = []string{redirect}
	}
	body, _ := json.Marshal(meta)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, asm.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("dynamic registration: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("dynamic registration at %s: %s", asm.RegistrationEndpoint, status(resp))
	}
	var got struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		AuthMethod   string `json:"token_endpoint_auth_method"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&got); err != nil || got.ClientID == "" {
		return fmt.Errorf("dynamic registration at %s: the answer has no client_id", asm.RegistrationEndpoint)
	}
	c.hold(got.ClientSecret)
	e.ClientID, e.ClientSecret, e.Registered = got.ClientID, mcpruntime.Secret(got.ClientSecret), true
	e.AuthMethod = got.AuthMethod
	if e.AuthMethod == "" {
		e.AuthMethod = method
		if method == AuthMethodNone && got.ClientSecret != "" {
			e.AuthMethod = AuthMethodBasic
		}
	}
	return nil
}
