package config

import (
	"fmt"
	"go/token"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpgen/mcpgen/snapshot"
)

// expand replaces ${VAR} references in s using lookup and returns the
// result and the variables referenced, in order. "$$" is a literal "$".
// With a nil lookup it only checks the syntax. Errors never contain a
// variable's value.
func expand(s string, lookup func(string) (string, bool)) (string, []string, error) {
	var b strings.Builder
	var vars []string
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' {
			b.WriteByte(c)
			continue
		}
		switch {
		case i+1 < len(s) && s[i+1] == '$':
			b.WriteByte('$')
			i++
		case i+1 < len(s) && s[i+1] == '{':
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return "", nil, fmt.Errorf("unterminated ${ at byte %d", i+1)
			}
			name := s[i+2 : i+2+end]
			if !envNameRE.MatchString(name) {
				return "", nil, fmt.Errorf("invalid variable name %q in ${...} (letters, digits and _)", name)
			}
			vars = append(vars, name)
			if lookup != nil {
				v, ok := lookup(name)
				if !ok {
					return "", vars, &UnsetError{Var: name}
				}
				b.WriteString(v)
			}
			i += 2 + end
		default:
			return "", nil, fmt.Errorf("a lone $ at byte %d: write ${VAR} for a reference or $$ for a literal $", i+1)
		}
	}
	return b.String(), vars, nil
}

// UnsetError reports a referenced environment variable that is not set.
type UnsetError struct{ Var string }

func (e *UnsetError) Error() string {
	return fmt.Sprintf("environment variable %s is not set", e.Var)
}

// Source resolves the server's ${VAR} references with lookup (usually
// os.LookupEnv) and returns how to reach it. The resolved values are listed
// in Source.Secrets so that the capture can keep them out of every output.
// Errors name the server, the variable and the position of the reference,
// never a value.
func (s *Server) Source(lookup func(string) (string, bool)) (snapshot.Source, error) {
	src := snapshot.Source{ID: s.ID, Transport: s.Transport}
	seen := map[string]bool{}
	resolve := func(v string, pos Pos, what string) (string, error) {
		out, vars, err := expand(v, lookup)
		if err != nil {
			return "", fmt.Errorf("%s: %s: %w (server %q)", pos, what, err, s.ID)
		}
		for _, name := range vars {
			if seen[name] {
				continue
			}
			seen[name] = true
			if val, _ := lookup(name); val != "" {
				src.Secrets = append(src.Secrets, val)
				src.SecretNames = append(src.SecretNames, name)
			}
		}
		return out, nil
	}
	switch s.Transport {
	case snapshot.Stdio:
		st := s.Stdio
		src.Command = st.Command
		src.Args = append([]string(nil), st.Args...)
		src.Dir = filepath.Join(s.dir, filepath.FromSlash(st.Dir))
		// A relative command with a separator runs from the server's
		// directory; a bare name is looked up in PATH.
		for _, e := range st.Env {
			v, err := resolve(e.Value, e.Pos, "stdio.env."+e.Name)
			if err != nil {
				return snapshot.Source{}, err
			}
			src.Env = append(src.Env, e.Name+"="+v)
		}
	case snapshot.HTTP, snapshot.SSE:
		r := s.Remote
		u, err := resolve(r.URL, r.URLPos, string(s.Transport)+".url")
		if err != nil {
			return snapshot.Source{}, err
		}
		if msg := checkURL(u); msg != "" {
			return snapshot.Source{}, fmt.Errorf("%s: %s.url: after expanding references, %s (server %q)", r.URLPos, s.Transport, msg, s.ID)
		}
		src.URL = u
		if len(r.Headers) > 0 {
			src.Headers = map[string]string{}
		}
		for _, h := range r.Headers {
			v, err := resolve(h.Value, h.Pos, string(s.Transport)+".headers."+h.Name)
			if err != nil {
				return snapshot.Source{}, err
			}
			src.Headers[h.Name] = v
		}
	default:
		return snapshot.Source{}, fmt.Errorf("%s: server %q has no transport", s.Pos, s.ID)
	}
	return src, nil
}

// AdHoc describes a server given on the command line instead of in a
// config file. Env and header values and the URL may hold ${VAR}
// references, expanded like the config file's.
type AdHoc struct {
	ID        string
	Transport snapshot.Transport
	Command   string
	Args      []string
	Env       map[string]string
	URL       string
	Headers   map[string]string
}

// Server validates a and returns it as a server entry whose relative paths
// resolve against the current directory.
func (a AdHoc) Server() (*Server, error) {
	pos := Pos{File: "command line"}
	s := &Server{ID: a.ID, Transport: a.Transport, Pos: pos, Package: a.ID, Out: a.ID, Manifest: "mcp/" + a.ID + ".json"}
	if !idRE.MatchString(a.ID) || token.IsKeyword(a.ID) {
		return nil, fmt.Errorf("id %q must match [a-z][a-z0-9_]* and not be a Go keyword", a.ID)
	}
	check := func(what, v string) error {
		if _, _, err := expand(v, nil); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}
	switch a.Transport {
	case snapshot.Stdio:
		if strings.TrimSpace(a.Command) == "" {
			return nil, fmt.Errorf("empty stdio command")
		}
		s.Stdio = &Stdio{Command: a.Command, Args: a.Args}
		for _, k := range sortedKeys(a.Env) {
			if !envNameRE.MatchString(k) {
				return nil, fmt.Errorf("%q is not a valid environment variable name", k)
			}
			if err := check("--env "+k, a.Env[k]); err != nil {
				return nil, err
			}
			s.Stdio.Env = append(s.Stdio.Env, EnvVar{Name: k, Value: a.Env[k], Pos: pos})
		}
	case snapshot.HTTP, snapshot.SSE:
		if err := check("url", a.URL); err != nil {
			return nil, err
		}
		if !strings.Contains(a.URL, "${") {
			if msg := checkURL(a.URL); msg != "" {
				return nil, fmt.Errorf("url: %s", msg)
			}
		}
		s.Remote = &Remote{URL: a.URL, URLPos: pos}
		for _, k := range sortedKeys(a.Headers) {
			if !headerRE.MatchString(k) {
				return nil, fmt.Errorf("%q is not a valid HTTP header name", k)
			}
			if err := check("--header "+k, a.Headers[k]); err != nil {
				return nil, err
			}
			s.Remote.Headers = append(s.Remote.Headers, Header{Name: k, Value: a.Headers[k], Pos: pos})
		}
	default:
		return nil, fmt.Errorf("unknown transport %q", a.Transport)
	}
	return s, nil
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
