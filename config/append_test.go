package config

import (
	"strings"
	"testing"
)

func TestAppendServer(t *testing.T) {
	entry := "  - id: b\n    stdio: {command: y}\n"
	for _, tc := range []struct{ name, in, want, err string }{
		{"indented", "version: 1\nservers:\n  - id: a\n    stdio: {command: x}\n",
			"version: 1\nservers:\n  - id: a\n    stdio: {command: x}\n  - id: b\n    stdio: {command: y}\n", ""},
		{"dash at column 1, no final newline", "version: 1\nservers:\n- id: a\n  stdio: {command: x}",
			"version: 1\nservers:\n- id: a\n  stdio: {command: x}\n- id: b\n  stdio: {command: y}\n", ""},
		{"servers first", "servers:\n    - id: a\n      stdio: {command: x}\n\n# the format\nversion: 1\n",
			"servers:\n    - id: a\n      stdio: {command: x}\n    - id: b\n      stdio: {command: y}\n\n# the format\nversion: 1\n", ""},
		{"flow list", "version: 1\nservers: [{id: a, stdio: {command: x}}]\n", "", "c.yaml:2:10: servers: can add a server only to a non-empty block list"},
		{"no servers", "version: 1\n", "", "c.yaml: no servers list to add to"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := AppendServer("c.yaml", []byte(tc.in), []byte(entry))
			if tc.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || string(out) != tc.want {
				t.Fatalf("err %v, got:\n%s\nwant:\n%s", err, out, tc.want)
			}
			if cfg, err := Parse("c.yaml", out); err != nil || len(cfg.Servers) != 2 {
				t.Errorf("result does not load with two servers: %v", err)
			}
		})
	}
}
