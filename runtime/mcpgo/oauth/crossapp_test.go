package oauth_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgen/mcpgen/internal/oauthtest"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo/oauth"
)

const (
	idToken     = "canary-id-token-0b4d"
	idpSecret   = "canary-idp-secret-7e1a"
	jagTemplate = "canary-jag-%d"
)

// idp is an identity provider's token endpoint doing RFC 8693 token
// exchange of an ID token for an identity assertion grant.
type idp struct {
	mu    sync.Mutex
	forms []url.Values
	as    *oauthtest.Server
	echo  bool // a careless one: its errors echo the request
	n     int
}

func (p *idp) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.forms = append(p.forms, r.PostForm)
	f := r.PostForm
	if p.echo || f.Get("subject_token") != idToken || f.Get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(400)
		fmt.Fprintf(w, `{"error":"invalid_grant","error_description":"refused %s"}`, f.Encode())
		return
	}
	p.n++
	jag := fmt.Sprintf(jagTemplate, p.n)
	p.as.AddJAG(jag)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"access_token":%q,"issued_token_type":"urn:ietf:params:oauth:token-type:id-jag","token_type":"N_A"}`, jag)
}

// Cross-app access: the ID token is exchanged at the identity provider
// for a grant naming the authorization server and the MCP server, which
// the jwt-bearer grant turns into the access token; an expired token is
// got again the same way; an identity provider whose error echoes the
// request leaks neither the ID token nor a secret.
func TestCrossAppAccess(t *testing.T) {
	as := oauthtest.New(ca, canarySecret, canaryToken)
	defer as.Close()
	p := &idp{as: as}
	idpSrv := ca.Server("", p)
	defer idpSrv.Close()
	cfg := oauth.Config{ClientID: as.ClientID, ClientSecret: canarySecret, AuthMethod: oauth.AuthMethodBasic,
		CrossApp: &oauth.CrossApp{IDToken: mcpruntime.Secret(idToken), TokenURL: idpSrv.URL + "/token", ClientID: "idp-client", ClientSecret: idpSecret}}
	c, err := oauth.New(as.MCPURL, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := connect(t, ctx, as.MCPURL, c); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	f := p.forms[0]
	p.mu.Unlock()
	for k, want := range map[string]string{"subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
		"requested_token_type": "urn:ietf:params:oauth:token-type:id-jag", "audience": as.AS.URL, "resource": as.MCPURL, "client_id": "idp-client"} {
		if f.Get(k) != want {
			t.Errorf("token exchange %s = %q, want %q", k, f.Get(k), want)
		}
	}
	if !slices.Contains(as.Grants, "urn:ietf:params:oauth:grant-type:jwt-bearer") || slices.Contains(as.Grants, "authorization_code") {
		t.Errorf("grants at the authorization server: %v", as.Grants)
	}

	// Refused, it is got again with the same ID token.
	as.Expire()
	if _, err := connect(t, ctx, as.MCPURL, c); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	n := len(p.forms)
	p.mu.Unlock()
	if n != 2 {
		t.Errorf("%d token exchanges, want 2", n)
	}

	p.echo = true
	c2, _ := oauth.New(as.MCPURL, cfg)
	_, err = connect(t, ctx, as.MCPURL, c2)
	if err == nil || !strings.Contains(err.Error(), "token exchange") {
		t.Fatalf("a refused exchange: %v", err)
	}
	for _, secret := range []string{idToken, idpSecret, canarySecret} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error holds %s: %v", secret, err)
		}
	}
}
