// Package testcorpus finds the shared test corpus: real servers' tool
// listings that live beside the repository (../shared/corpus from its root,
// where CI lays them), not in it. Tests that use it skip with the reason
// when it is missing, and fail under CI=true, so the corpus cannot drop out
// of the suite unnoticed.
package testcorpus

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// GitHubTools is the GitHub MCP server's tools/list result (117 tools).
const GitHubTools = "github-mcp-server/tools-list.json"

// Path returns the path of a corpus file (slash-separated, relative to the
// corpus folder), found from the working directory: the repository's root
// is the nearest folder above it whose go.mod declares the root module.
func Path(name string) (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "..", "shared", "corpus", filepath.FromSlash(name)), nil
}

// Read returns a corpus file's contents.
func Read(name string) ([]byte, error) {
	p, err := Path(name)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("corpus file %s is not available (it lives in shared/corpus beside the repository): %w", name, err)
	}
	return data, nil
}

// Require returns a corpus file's contents, or skips t with the reason it
// is missing, or, under CI=true, fails t.
func Require(t testing.TB, name string) []byte {
	t.Helper()
	data, err := Read(name)
	if err != nil {
		Missing(t, err)
	}
	return data
}

// Missing ends t for a missing part the suite depends on: a skip with the
// reason, a failure under CI=true.
func Missing(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("required in CI: %v", err)
	}
	t.Skip(err)
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.HasPrefix(string(b), "module github.com/mcpgen/mcpgen\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("the mcpgen repository's root is not above the working directory")
		}
		dir = parent
	}
}
