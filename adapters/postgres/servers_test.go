package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpgen/mcpgen/runtime/manager"
)

func TestRegistry(t *testing.T) {
	db := openDB(t, newDatabase(t))
	ctx := context.Background()
	reg := manager.NewRegistry(db.Servers(), manager.Policy{})
	entries := []manager.ServerConfig{
		{ID: "files", Transport: manager.Transport{Kind: manager.TransportStdio, Command: "npx", Args: []string{"-y", "server-filesystem"}, Env: map[string]string{"TOKEN": "s3cret"}}, AllowedAgents: []string{"ops"}},
		{ID: "crm", Transport: manager.Transport{Kind: manager.TransportHTTP, URL: "https://mcp.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer s3cret"}}, ToolTimeout: 5 * time.Second},
	}
	for _, e := range entries {
		if _, err := reg.Save(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	got, err := reg.Load(ctx, "crm")
	if err != nil {
		t.Fatal(err)
	}
	if got.Transport.URL != entries[1].Transport.URL || got.ToolTimeout != 5*time.Second || got.Transport.Headers["Authorization"] != "Bearer s3cret" {
		t.Errorf("loaded %+v", got)
	}
	list, err := reg.List(ctx)
	if err != nil || len(list) != 2 || list[0].ID != "crm" || list[1].ID != "files" {
		t.Fatalf("list: %v, %v", list, err)
	}
	// An invalid entry is refused on save, and nothing is stored.
	if _, err := reg.Save(ctx, manager.ServerConfig{ID: "bad", Transport: manager.Transport{Kind: manager.TransportStdio, Command: "sh"}}); err == nil {
		t.Error("saved a command off the allowlist")
	}
	if _, err := db.Servers().Get(ctx, "bad"); !errors.Is(err, manager.ErrServerNotFound) {
		t.Errorf("refused entry stored: %v", err)
	}

	// Rows changed by plain SQL, around the Registry, are refused on load
	// and left out of the list, reported.
	tamper := []struct{ name, id, sql string }{
		{"command off the allowlist", "files", `UPDATE mcpgen_servers SET config = jsonb_set(config, '{transport,command}', '"sh"') WHERE id = 'files'`},
		{"PATH in the environment", "files", `UPDATE mcpgen_servers SET config = jsonb_set(config, '{transport,env,PATH}', '"/tmp"') WHERE id = 'files'`},
		{"cloud metadata address", "crm", `UPDATE mcpgen_servers SET config = jsonb_set(config, '{transport,url}', '"http://169.254.169.254/latest/meta-data"') WHERE id = 'crm'`},
		{"private address", "crm", `UPDATE mcpgen_servers SET config = jsonb_set(config, '{transport,url}', '"http://10.0.0.7/mcp"') WHERE id = 'crm'`},
		{"another entry's id", "crm", `UPDATE mcpgen_servers SET config = jsonb_set(config, '{id}', '"files"') WHERE id = 'crm'`},
		{"unknown member", "crm", `UPDATE mcpgen_servers SET config = config || '{"trusted": true}' WHERE id = 'crm'`},
		{"wrong type", "crm", `UPDATE mcpgen_servers SET config = jsonb_set(config, '{toolTimeout}', '"forever"') WHERE id = 'crm'`},
	}
	for _, tc := range tamper {
		t.Run(tc.name, func(t *testing.T) {
			saved, _ := db.Servers().Get(ctx, tc.id)
			if _, err := db.Pool().Exec(ctx, tc.sql); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := db.Servers().Put(ctx, saved); err != nil {
					t.Fatal(err)
				}
			})
			if c, err := reg.Load(ctx, tc.id); err == nil {
				t.Fatalf("tampered entry loaded: %#v", c)
			} else if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the error shows a secret: %v", err)
			}
			list, err := reg.List(ctx)
			if err == nil {
				t.Errorf("list did not report the tampered entry")
			}
			for _, c := range list {
				if c.ID == tc.id {
					t.Errorf("list returned the tampered entry")
				}
			}
		})
	}
	if _, err := reg.Load(ctx, "files"); err != nil {
		t.Fatalf("restored entry: %v", err)
	}

	if err := reg.Delete(ctx, "files"); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Load(ctx, "files"); !errors.Is(err, manager.ErrServerNotFound) {
		t.Errorf("load after delete: %v", err)
	}
	if err := reg.Delete(ctx, "files"); !errors.Is(err, manager.ErrServerNotFound) {
		t.Errorf("second delete: %v", err)
	}
}

// Rows that do not decode (an unknown member, a duration written "5s")
// are reported by id and the other entries listed, rows that break the
// policy are skipped and reported as well, and the list survives the
// store's connections being cut just before.
func TestRegistryListsTheRest(t *testing.T) {
	dsn := newDatabase(t)
	db := openDB(t, dsn)
	ctx := context.Background()
	reg := manager.NewRegistry(db.Servers(), manager.Policy{})
	for _, id := range []string{"a", "b", "c", "d"} {
		if _, err := reg.Save(ctx, manager.ServerConfig{ID: id, Transport: manager.Transport{Kind: manager.TransportStdio, Command: "npx"}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, sql := range []string{
		`UPDATE mcpgen_servers SET config = config || '{"trusted": true}' WHERE id = 'b'`,
		`UPDATE mcpgen_servers SET config = jsonb_set(config, '{toolTimeout}', '"5s"') WHERE id = 'c'`,
		`UPDATE mcpgen_servers SET config = jsonb_set(config, '{transport,command}', '"sh"') WHERE id = 'd'`,
	} {
		if _, err := db.Pool().Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	if n := pg.terminate(t, dbName(dsn), "true"); n == 0 {
		t.Fatal("nothing cut")
	}
	list, err := reg.List(ctx)
	if len(list) != 1 || list[0].ID != "a" {
		t.Errorf("listed %v", list)
	}
	var ce *manager.ConfigError
	if err == nil || !errors.As(err, &ce) || ce.Server != "d" {
		t.Fatalf("list error: %v", err)
	}
	for _, want := range []string{`row "b": json: unknown field "trusted"`, `row "c": json: cannot unmarshal string`, `server "d"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the list error does not say %s: %v", want, err)
		}
	}
	pg.terminate(t, dbName(dsn), "true")
	if _, err := reg.Load(ctx, "a"); err != nil {
		t.Errorf("load after a cut: %v", err)
	}
	if _, err := reg.Load(ctx, "c"); err == nil || !strings.Contains(err.Error(), `row "c"`) {
		t.Errorf("load of an undecodable row: %v", err)
	}
}
