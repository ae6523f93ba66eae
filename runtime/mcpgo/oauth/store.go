package oauth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/oauth2"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// Entry is what is cached for one server: its client registration and
// its token. It prints without its secrets.
type Entry struct {
	Server            string
	Issuer            string
	Resource          string
	TokenURL          string
	ClientID          string
	ClientSecret      mcpruntime.Secret
	AuthMethod        string
	Registered        bool // the client came from dynamic registration
	RedirectURI       string
	ClientCredentials bool
	CrossApp          bool // the token came by cross-app access
	Scopes            []string
	Token             *oauth2.Token
	// Wanted are scopes a server demanded (403 insufficient_scope) that
	// the client could not step up to without a user: the next Login
	// asks for them with the scopes held.
	Wanted []string
}

// Format prints what may be shown: never the token or the secret.
func (e Entry) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "{server %s issuer %s client %s scopes %v}", e.Server, e.Issuer, e.ClientID, e.Scopes)
}

// Store caches entries by key.
type Store interface {
	// Load returns nil and no error when there is no entry.
	Load(key string) (*Entry, error)
	Save(key string, e *Entry) error
	Delete(key string) error
}

// MemoryStore keeps entries for the life of the process.
type MemoryStore struct {
	mu sync.Mutex
	m  map[string]Entry
}

func NewMemoryStore() *MemoryStore { return &MemoryStore{m: map[string]Entry{}} }

func (s *MemoryStore) Load(key string) (*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[key]
	if !ok {
		return nil, nil
	}
	return &e, nil
}

func (s *MemoryStore) Save(key string, e *Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = *e
	return nil
}

func (s *MemoryStore) Delete(key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
	return nil
}

// FileStore keeps each entry in a file of its own under Dir (mode 0600,
// the directory 0700), named by a hash of the key.
type FileStore struct{ Dir string }

// DefaultDir is where mcpgen caches tokens: mcpgen/tokens under the
// user's config directory.
func DefaultDir() (string, error) {
	d, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "mcpgen", "tokens"), nil
}

type fileEntry struct {
	Key               string    `json:"key"`
	Server            string    `json:"server"`
	Issuer            string    `json:"issuer,omitempty"`
	Resource          string    `json:"resource,omitempty"`
	TokenURL          string    `json:"token_url,omitempty"`
	ClientID          string    `json:"client_id,omitempty"`
	ClientSecret      string    `json:"client_secret,omitempty"`
	AuthMethod        string    `json:"auth_method,omitempty"`
	Registered        bool      `json:"registered,omitempty"`
	RedirectURI       string    `json:"redirect_uri,omitempty"`
	ClientCredentials bool      `json:"client_credentials,omitempty"`
	CrossApp          bool      `json:"cross_app,omitempty"`
	Scopes            []string  `json:"scopes,omitempty"`
	AccessToken       string    `json:"access_token,omitempty"`
	TokenType         string    `json:"token_type,omitempty"`
	RefreshToken      string    `json:"refresh_token,omitempty"`
	Expiry            time.Time `json:"expiry,omitzero"`
	Wanted            []string  `json:"wanted,omitempty"`
}

func (s FileStore) path(key string) string {
	h := sha256.Sum256([]byte(key))
	return filepath.Join(s.Dir, hex.EncodeToString(h[:12])+".json")
}

func (s FileStore) Load(key string) (*Entry, error) {
	b, err := os.ReadFile(s.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f fileEntry
	if err := json.Unmarshal(b, &f); err != nil || f.Key != key {
		return nil, fmt.Errorf("token cache %s is damaged; remove it (mcpgen auth logout)", s.path(key))
	}
	e := &Entry{Server: f.Server, Issuer: f.Issuer, Resource: f.Resource, TokenURL: f.TokenURL, ClientID: f.ClientID,
		ClientSecret: mcpruntime.Secret(f.ClientSecret), AuthMethod: f.AuthMethod, Registered: f.Registered,
		RedirectURI: f.RedirectURI, ClientCredentials: f.ClientCredentials, CrossApp: f.CrossApp, Scopes: f.Scopes, Wanted: f.Wanted}
	if f.AccessToken != "" || f.RefreshToken != "" {
		e.Token = &oauth2.Token{AccessToken: f.AccessToken, TokenType: f.TokenType, RefreshToken: f.RefreshToken, Expiry: f.Expiry}
	}
	return e, nil
}

// Save writes the entry to a temporary file created 0600 and renames it
// into place, so a reader never sees half an entry.
func (s FileStore) Save(key string, e *Entry) error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return err
	}
	f := fileEntry{Key: key, Server: e.Server, Issuer: e.Issuer, Resource: e.Resource, TokenURL: e.TokenURL, ClientID: e.ClientID,
		ClientSecret: string(e.ClientSecret), AuthMethod: e.AuthMethod, Registered: e.Registered, RedirectURI: e.RedirectURI,
		ClientCredentials: e.ClientCredentials, CrossApp: e.CrossApp, Scopes: e.Scopes, Wanted: e.Wanted}
	if t := e.Token; t != nil {
		f.AccessToken, f.TokenType, f.RefreshToken, f.Expiry = t.AccessToken, t.TokenType, t.RefreshToken, t.Expiry
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.Dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.path(key))
}

func (s FileStore) Delete(key string) error {
	err := os.Remove(s.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
