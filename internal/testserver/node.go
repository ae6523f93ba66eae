package testserver

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// Everything locates Node and the pinned @modelcontextprotocol/server-everything
// installed by `npm ci --prefix tools/npm`. It returns the node binary, the
// server's entry script and the loopback preload, or an error saying what is
// missing.
func Everything() (node, script, preload string, err error) {
	root, err := repoRoot()
	if err != nil {
		return "", "", "", err
	}
	node, err = exec.LookPath("node")
	if err != nil {
		return "", "", "", errors.New("node is not installed (needed for the server-everything integration tests)")
	}
	script = filepath.Join(root, "tools", "npm", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		return "", "", "", errors.New("server-everything is not installed: run `npm ci --prefix tools/npm`")
	}
	preload = filepath.Join(root, "internal", "testserver", "node", "loopback.cjs")
	return node, script, preload, nil
}

// repoRoot finds the module root from this source file's location.
func repoRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("cannot locate the repository")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..")), nil
}
