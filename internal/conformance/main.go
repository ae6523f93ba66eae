// Command conformance is mcpgen's client for the official MCP conformance
// suite (@modelcontextprotocol/conformance, client mode). The harness runs
// it with the scenario's server URL as the last argument and the scenario's
// name in MCP_CONFORMANCE_SCENARIO; it does what the scenario asks, with
// mcpgen's own session layer and OAuth client only, and exits non-zero on
// failure. The auth/* scenarios put the client's credentials, where a
// scenario has any, in MCP_CONFORMANCE_CONTEXT; their authorization
// endpoints redirect at once, so the client follows the redirect itself
// (oauth.Headless) instead of sending a user to a browser. The suite serves
// its MCP and authorization servers over plain http on localhost, inside
// the test's own network namespace: the client opts into the OAuth
// client's loopback exception (AllowLoopbackHTTP), and, as nobody consents
// to a headless step-up, allows the scopes the suite's servers use.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
	"github.com/mcpgen/mcpgen/runtime/mcpgo/oauth"
)

// clientMetadataURL is the client ID metadata document the auth/basic-cimd
// scenario expects as the client_id.
const clientMetadataURL = "https://conformance-test.local/client-metadata.json"

// suiteScopes are the scopes the suite's scenarios name: what the client
// may request (auth/scope-retry-limit demands mcp:admin forever, which the
// step-up bound answers).
var suiteScopes = []string{"mcp:basic", "mcp:read", "mcp:write", "mcp:admin", "offline_access"}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: conformance [flags...] SERVER_URL (scenario in $MCP_CONFORMANCE_SCENARIO)")
		os.Exit(2)
	}
	url := os.Args[len(os.Args)-1]
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := run(ctx, scenario, url); err != nil {
		fmt.Fprintf(os.Stderr, "conformance client: scenario %q: %v\n", scenario, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, scenario, url string) error {
	opts := []mcpgo.Option{mcpgo.WithName("conformance"), mcpgo.WithClientInfo("mcpgen-conformance", "1.0.0")}
	switch scenario {
	case "elicitation-sep1034-client-defaults":
		// Accept with the defaults the form's schema gives (SEP-1034).
		opts = append(opts, mcpgo.WithElicitation(mcpgo.ElicitDefaults, false))
	}
	if strings.HasPrefix(scenario, "auth/") {
		o, err := authOption(scenario, url)
		if err != nil {
			return err
		}
		opts = append(opts, o)
	}
	c := mcpgo.StreamableHTTP(url, opts...)
	defer c.Close()
	switch scenario {
	case "initialize":
		_, err := c.ToolNames(ctx)
		return err
	case "tools_call":
		return call(ctx, c, "add_numbers", `{"a":5,"b":3}`)
	case "elicitation-sep1034-client-defaults":
		return call(ctx, c, "test_client_elicitation_defaults", `{}`)
	case "sse-retry":
		return call(ctx, c, "test_reconnection", `{}`)
	}
	// Any other scenario: list the tools and call each with no arguments.
	names, err := c.ToolNames(ctx)
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := call(ctx, c, n, `{}`); err != nil {
			return err
		}
	}
	return nil
}

func call(ctx context.Context, c *mcpgo.Conn, tool, args string) error {
	res, err := c.CallTool(ctx, tool, json.RawMessage(args))
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("tool %q failed: %s", tool, res.Text())
	}
	fmt.Println(res.Text())
	return nil
}

// authOption is the OAuth client of an auth/* scenario, configured from
// the scenario's context.
func authOption(scenario, url string) (mcpgo.Option, error) {
	var ctx struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		PrivateKey   string `json:"private_key_pem"`
		SigningAlg   string `json:"signing_algorithm"`
		// Cross-app access: the user's ID token and the identity
		// provider's token endpoint and client id.
		IDPToken    string `json:"idp_id_token"`
		IDPTokenURL string `json:"idp_token_endpoint"`
		IDPClientID string `json:"idp_client_id"`
	}
	if s := os.Getenv("MCP_CONFORMANCE_CONTEXT"); s != "" {
		if err := json.Unmarshal([]byte(s), &ctx); err != nil {
			return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	cfg := oauth.Config{
		ClientID:          ctx.ClientID,
		ClientSecret:      mcpruntime.Secret(ctx.ClientSecret),
		PrivateKey:        mcpruntime.Secret(ctx.PrivateKey),
		SigningAlg:        ctx.SigningAlg,
		ClientMetadataURL: clientMetadataURL,
		ClientName:        "mcpgen-conformance",
		ClientCredentials: strings.HasPrefix(scenario, "auth/client-credentials-"),
		Agent:             oauth.Headless{Redirect: "http://127.0.0.1:8976/callback"},
		AllowLoopbackHTTP: true,
		AllowedScopes:     suiteScopes,
	}
	if ctx.IDPToken != "" {
		cfg.CrossApp = &oauth.CrossApp{IDToken: mcpruntime.Secret(ctx.IDPToken), TokenURL: ctx.IDPTokenURL, ClientID: ctx.IDPClientID}
	}
	c, err := oauth.New(url, cfg)
	if err != nil {
		return nil, err
	}
	return c.Option(), nil
}
