package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// CrossApp is cross-app access (Enterprise-Managed Authorization, the
// MCP extension of SEP-990): no browser and no consent screen. The user's
// ID token from the enterprise's identity provider is exchanged there for
// an identity assertion authorization grant (ID-JAG, by RFC 8693 token
// exchange, for the authorization server as audience and the MCP server
// as resource), and the authorization server exchanges that for an access
// token (RFC 7523 jwt-bearer grant, the client authenticating as its
// AuthMethod says). An expired token is got again the same way, with the
// same ID token.
type CrossApp struct {
	// IDToken is the user's ID token from the identity provider.
	IDToken mcpruntime.Secret
	// TokenURL is the identity provider's token endpoint.
	TokenURL string
	// ClientID and ClientSecret are the client's at the identity
	// provider (the secret may be empty: a public client).
	ClientID     string
	ClientSecret mcpruntime.Secret
}

const (
	grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	grantJWTBearer     = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	tokenTypeIDToken   = "urn:ietf:params:oauth:token-type:id_token"
	tokenTypeIDJAG     = "urn:ietf:params:oauth:token-type:id-jag"
)

// crossApp gets e a token by cross-app access.
func (c *Client) crossApp(ctx context.Context, hc *http.Client, e *Entry) (*oauth2.Token, error) {
	x := c.cfg.CrossApp
	if _, err := c.secure("identity provider's token endpoint", x.TokenURL); err != nil {
		return nil, err
	}
	if _, err := c.secure("token endpoint", e.TokenURL); err != nil {
		return nil, err
	}
	audience := e.Issuer
	if audience == "" {
		audience = e.TokenURL
	}
	form := url.Values{
		"grant_type":           {grantTokenExchange},
		"subject_token":        {string(x.IDToken)},
		"subject_token_type":   {tokenTypeIDToken},
		"requested_token_type": {tokenTypeIDJAG},
		"audience":             {audience},
		"resource":             {e.Resource},
		"client_id":            {x.ClientID},
	}
	if x.ClientSecret != "" {
		form.Set("client_secret", string(x.ClientSecret))
	}
	if len(e.Scopes) > 0 {
		form.Set("scope", strings.Join(e.Scopes, " "))
	}
	jag, err := tokenRequest(ctx, hc, x.TokenURL, form, "", "")
	if err != nil {
		return nil, fmt.Errorf("the identity provider's token exchange: %w", c.scrubCrossApp(err, ""))
	}
	if jag.issued != "" && jag.issued != tokenTypeIDJAG {
		return nil, fmt.Errorf("the identity provider's token exchange issued a %s, not an identity assertion grant", jag.issued)
	}
	c.hold(jag.tok.AccessToken)
	form = url.Values{"grant_type": {grantJWTBearer}, "assertion": {jag.tok.AccessToken}}
	if len(e.Scopes) > 0 {
		form.Set("scope", strings.Join(e.Scopes, " "))
	}
	user, pass := "", ""
	if e.AuthMethod == AuthMethodBasic {
		user, pass = e.ClientID, string(e.ClientSecret)
	} else {
		form.Set("client_id", e.ClientID)
		if e.ClientSecret != "" {
			form.Set("client_secret", string(e.ClientSecret))
		}
	}
	tok, err := tokenRequest(ctx, hc, e.TokenURL, form, user, pass)
	if err != nil {
		return nil, fmt.Errorf("the jwt-bearer grant: %w", c.scrubCrossApp(err, jag.tok.AccessToken))
	}
	c.holdToken(tok.tok)
	return tok.tok, nil
}

func (c *Client) scrubCrossApp(err error, jag string) error {
	x := c.cfg.CrossApp
	return scrubString(c.scrub(err, c.entry), string(x.IDToken), string(x.ClientSecret), jag)
}

type tokenAnswer struct {
	tok    *oauth2.Token
	issued string // issued_token_type
}

// tokenRequest posts form to a token endpoint (with HTTP basic client
// authentication when user is set) and reads the token it answers.
func tokenRequest(ctx context.Context, hc *http.Client, endpoint string, form url.Values, user, pass string) (*tokenAnswer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if user != "" {
		req.SetBasicAuth(url.QueryEscape(user), url.QueryEscape(pass))
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	var w struct {
		AccessToken  string      `json:"access_token"`
		TokenType    string      `json:"token_type"`
		RefreshToken string      `json:"refresh_token"`
		ExpiresIn    json.Number `json:"expires_in"`
		Scope        string      `json:"scope"`
		Issued       string      `json:"issued_token_type"`
		Error        string      `json:"error"`
	}
	jerr := json.Unmarshal(body, &w)
	if resp.StatusCode != http.StatusOK || jerr != nil || w.AccessToken == "" {
		// The body is not quoted: it may echo what was sent.
		msg := "token endpoint answered " + resp.Status
		if w.Error != "" {
			msg += ": " + w.Error
		}
		return nil, errors.New(msg)
	}
	tok := &oauth2.Token{AccessToken: w.AccessToken, TokenType: w.TokenType, RefreshToken: w.RefreshToken}
	if n, err := w.ExpiresIn.Int64(); err == nil && n > 0 {
		tok.Expiry = time.Now().Add(time.Duration(n) * time.Second)
	}
	if w.Scope != "" {
		tok = tok.WithExtra(map[string]any{"scope": w.Scope})
	}
	return &tokenAnswer{tok: tok, issued: w.Issued}, nil
}
