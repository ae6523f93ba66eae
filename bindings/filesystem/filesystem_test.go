package filesystem_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgen/mcpgen/bindings"
	"github.com/mcpgen/mcpgen/bindings/filesystem"
	"github.com/mcpgen/mcpgen/bindings/internal/livetest"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// server is the pinned release, started once for the package's tests on a
// temporary directory (root); outside is a directory it may not use.
var (
	server        = &livetest.Server{ID: "filesystem"}
	root, outside string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "filesystem-binding-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(tmp)
	// The server resolves links in its directories; so do the tests.
	if tmp, err = filepath.EvalSymlinks(tmp); err != nil {
		panic(err)
	}
	root, outside = filepath.Join(tmp, "root"), filepath.Join(tmp, "outside")
	for _, d := range []string{root, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			panic(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("not for the agent\n"), 0o644); err != nil {
		panic(err)
	}
	server.Args = []string{root}
	return server.Run(m)
}

func TestLiveListingMatchesManifest(t *testing.T) { server.Check(t) }

func TestDoc(t *testing.T) {
	livetest.CheckDoc(t, bindings.FilesystemPackage.String(), filesystem.Descriptors())
}

// TestFiles writes, reads, edits, lists, searches and moves files through
// typed calls.
func TestFiles(t *testing.T) {
	fs := filesystem.NewClient(server.Need(t))
	ctx := context.Background()
	notes := filepath.Join(root, "docs", "notes.txt")

	if _, err := fs.CreateDirectory(ctx, filesystem.CreateDirectoryInput{Path: filepath.Dir(notes)}); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.WriteFile(ctx, filesystem.WriteFileInput{Path: notes, Content: "one\ntwo\nthree\n"}); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(notes); err != nil || string(data) != "one\ntwo\nthree\n" {
		t.Fatalf("write_file wrote %q, %v", data, err)
	}
	two := 2.0
	head, err := fs.ReadTextFile(ctx, filesystem.ReadTextFileInput{Path: notes, Head: &two})
	if err != nil || head.Output.Content != "one\ntwo" || head.Source != mcpruntime.FromStructuredContent {
		t.Errorf("read_text_file head 2: %q from %v, %v", head.Output.Content, head.Source, err)
	}

	// A dry run shows the diff and changes nothing.
	dry := true
	edit := livetest.Input(t, filesystem.DecodeEditFileInput, `{"path": "`+notes+`", "edits": [{"oldText": "two", "newText": "2"}]}`)
	edit.DryRun = &dry
	diff, err := fs.EditFile(ctx, edit)
	if err != nil || !strings.Contains(diff.Output.Content, "-two") || !strings.Contains(diff.Output.Content, "+2") {
		t.Errorf("edit_file dry run: %q, %v", diff.Output.Content, err)
	}
	if data, _ := os.ReadFile(notes); string(data) != "one\ntwo\nthree\n" {
		t.Errorf("a dry run changed the file: %q", data)
	}
	edit.DryRun = nil
	if _, err := fs.EditFile(ctx, edit); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(notes); string(data) != "one\n2\nthree\n" {
		t.Errorf("edit_file left %q", data)
	}

	list, err := fs.ListDirectory(ctx, filesystem.ListDirectoryInput{Path: root})
	if err != nil || !strings.Contains(list.Output.Content, "[DIR] docs") {
		t.Errorf("list_directory: %q, %v", list.Output.Content, err)
	}
	found, err := fs.SearchFiles(ctx, filesystem.SearchFilesInput{Path: root, Pattern: "**/*.txt"})
	if err != nil || !strings.Contains(found.Output.Content, notes) {
		t.Errorf("search_files: %q, %v", found.Output.Content, err)
	}
	info, err := fs.GetFileInfo(ctx, filesystem.GetFileInfoInput{Path: notes})
	if err != nil || !strings.Contains(info.Output.Content, "isFile: true") {
		t.Errorf("get_file_info: %q, %v", info.Output.Content, err)
	}
	moved := filepath.Join(root, "notes.md")
	if _, err := fs.MoveFile(ctx, filesystem.MoveFileInput{Source: notes, Destination: moved}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(moved); err != nil {
		t.Errorf("move_file: %v", err)
	}
	dirs, err := fs.ListAllowedDirectories(ctx, filesystem.ListAllowedDirectoriesInput{})
	if err != nil || !strings.Contains(dirs.Output.Content, root) || strings.Contains(dirs.Output.Content, outside) {
		t.Errorf("list_allowed_directories: %q, %v", dirs.Output.Content, err)
	}
}

// TestConfined: paths outside the server's directory are refused, however
// they are spelt, and a refused write creates nothing.
func TestConfined(t *testing.T) {
	fs := filesystem.NewClient(server.Need(t))
	ctx := context.Background()
	link := filepath.Join(root, "link")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(link)

	for _, p := range []string{
		filepath.Join(outside, "secret.txt"),
		root + "/../outside/secret.txt",
		filepath.Join(link, "secret.txt"),
	} {
		r, err := fs.ReadTextFile(ctx, filesystem.ReadTextFileInput{Path: p})
		var te *mcpruntime.ToolError
		if !errors.As(err, &te) || !strings.Contains(te.Message, "Access denied") {
			got := ""
			if r != nil {
				got = r.Output.Content
			}
			t.Errorf("read_text_file %s: want the server's refusal, got %q, %v", p, got, err)
		}
	}
	escaped := filepath.Join(outside, "planted.txt")
	_, err := fs.WriteFile(ctx, filesystem.WriteFileInput{Path: escaped, Content: "x"})
	var te *mcpruntime.ToolError
	if !errors.As(err, &te) {
		t.Errorf("write_file outside: want the server's refusal, got %v", err)
	}
	if _, err := os.Stat(escaped); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused write created %s: %v", escaped, err)
	}
}
