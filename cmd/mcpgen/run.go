package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and something failed
	exitUsage   = 2 // the command line was wrong
)

// command is one subcommand. Others register themselves in init functions
// of their own files, so adding one touches nothing else.
type command struct {
	name    string
	summary string // one line for `mcpgen help`
	usage   string // synopsis, like "mcpgen snapshot [flags]"
	// flags declares the command's flags on fs and returns the function
	// that runs it once they are parsed.
	flags func(fs *pflag.FlagSet) func(ctx context.Context, env *env) error
}

// env is what a running command may touch.
type env struct {
	args           []string // positional arguments
	stdout, stderr io.Writer
	data           io.Writer // stdout as it is, for a manifest (stdout shows controls escaped)
}

var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

// usageError marks a wrong command line: exit 2 instead of 1.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// silentError is a failure already reported on stderr.
var silentError = errors.New("failed")

// exitError carries an exit code other than 1 for a failure (mcpgen check
// exits 2 when it could not decide, 1 only for drift).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// relSlash shows path relative to the working directory when it lies
// below it, with forward slashes, so messages and reports are the same on
// every machine.
func relSlash(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		if wd, err := os.Getwd(); err == nil {
			if r, err := filepath.Rel(wd, abs); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
				path = r
			}
		}
	}
	return filepath.ToSlash(path)
}

func run(args []string, stdout, stderr io.Writer) int {
	// What mcpgen writes may hold what a server sent: control characters
	// are shown, not acted on (termtext.go). A manifest written to stdout
	// is data, and goes as encoded.
	data := stdout
	tout, terr := &termWriter{w: stdout}, &termWriter{w: stderr}
	defer tout.Flush()
	defer terr.Flush()
	stdout, stderr = tout, terr
	if len(args) == 0 {
		printHelp(stderr)
		return exitUsage
	}
	name, rest := args[0], args[1:]
	switch name {
	case "-h", "--help":
		name = "help"
	case "-v", "--version":
		name = "version"
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "mcpgen: unknown command %q (run `mcpgen help` for the list)\n", name)
		return exitUsage
	}
	fs := pflag.NewFlagSet("mcpgen "+c.name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	do := c.flags(fs)
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			commandHelp(stdout, c, fs)
			return exitOK
		}
		fmt.Fprintf(stderr, "mcpgen: %s: %v\n", c.name, err)
		fmt.Fprintf(stderr, "usage: %s (see `mcpgen help %s`)\n", c.usage, c.name)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err := do(ctx, &env{args: fs.Args(), stdout: stdout, stderr: stderr, data: data})
	var ue *usageError
	var ee *exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		if !errors.Is(ee.err, silentError) {
			printError(stderr, ee.err)
		}
		return ee.code
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "mcpgen: %s: %s\n", c.name, ownPrefixOnce(err.Error()))
		fmt.Fprintf(stderr, "usage: %s (see `mcpgen help %s`)\n", c.usage, c.name)
		return exitUsage
	case errors.Is(err, silentError):
		return exitFailure
	default:
		printError(stderr, err)
		return exitFailure
	}
}

// printError writes err with the mcpgen: prefix on every line that starts
// a message, so multi-error output stays greppable.
func printError(w io.Writer, err error) {
	for _, line := range strings.Split(err.Error(), "\n") {
		if strings.HasPrefix(line, " ") {
			fmt.Fprintln(w, line)
			continue
		}
		fmt.Fprintln(w, "mcpgen: "+ownPrefixOnce(line))
	}
}

// ownPrefixOnce drops the program name from a message that already has it
// (the generator's errors name mcpgen), so it is printed once.
func ownPrefixOnce(line string) string {
	for {
		rest, ok := strings.CutPrefix(line, "mcpgen: ")
		if !ok {
			break
		}
		line = rest
	}
	return strings.ReplaceAll(line, ": mcpgen: ", ": ")
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "mcpgen turns MCP servers into typed Go bindings.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "usage: mcpgen <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run `mcpgen help <command>` for a command's flags.")
}

func commandHelp(w io.Writer, c *command, fs *pflag.FlagSet) {
	fmt.Fprintf(w, "usage: %s\n\n%s\n", c.usage, c.summary)
	if fs.HasFlags() {
		fmt.Fprintf(w, "\nflags:\n%s", fs.FlagUsages())
	}
}

func init() {
	register(&command{
		name:    "help",
		summary: "show help for mcpgen or one command",
		usage:   "mcpgen help [command]",
		flags: func(*pflag.FlagSet) func(context.Context, *env) error {
			return func(_ context.Context, e *env) error {
				switch len(e.args) {
				case 0:
					printHelp(e.stdout)
					return nil
				case 1:
					c, ok := commands[e.args[0]]
					if !ok {
						return usagef("unknown command %q", e.args[0])
					}
					fs := pflag.NewFlagSet("mcpgen "+c.name, pflag.ContinueOnError)
					fs.SortFlags = false
					c.flags(fs)
					commandHelp(e.stdout, c, fs)
					return nil
				}
				return usagef("too many arguments")
			}
		},
	})
	register(&command{
		name:    "version",
		summary: "print mcpgen's version",
		usage:   "mcpgen version",
		flags: func(*pflag.FlagSet) func(context.Context, *env) error {
			return func(_ context.Context, e *env) error {
				if len(e.args) > 0 {
					return usagef("unexpected arguments: %s", strings.Join(e.args, " "))
				}
				fmt.Fprintln(e.stdout, "mcpgen", version())
				return nil
			}
		},
	})
}

// version is the module version mcpgen was built from: a tag when
// installed with `go install ...@version`, "(devel)" in a checkout.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
