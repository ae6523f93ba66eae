package filestore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// FileStore is the durable ApprovalStore: one JSON file per approval in a
// directory, so approvals survive a restart and can be inspected by hand.
//
//   - Every write goes to a temporary file in the directory, is synced,
//     renamed over the approval's file and the directory is synced: a crash
//     leaves the old file or the new one, never a torn one.
//   - Every operation holds an exclusive lock on the directory's .lock file
//     (flock), so Update is a compare-and-swap across goroutines and across
//     processes sharing the directory: two resumers in two processes cannot
//     both win. The kernel drops the lock when a process dies, so a crash
//     never leaves the store locked.
//
// It needs flock, so it is available on Linux, macOS and the BSDs (on others
// Open returns an error), and the directory must be on a local
// file system (flock is not reliable over NFS). Files are created 0600 in a
// 0700 directory: arguments may be sensitive. Tokens are never stored.
type FileStore struct {
	dir string

	mu   sync.Mutex // flock is per open file; this orders goroutines
	lock *os.File
}

var (
	_ mcpruntime.ApprovalWaiter = (*FileStore)(nil)
	_ mcpruntime.DecisionWaiter = (*FileStore)(nil)
)

// Open opens (creating if needed) the store in dir.
func Open(dir string) (*FileStore, error) {
	if dir == "" {
		return nil, errors.New("approval store: empty directory name")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("approval store: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("approval store: %w", err)
	}
	s := &FileStore{dir: dir, lock: f}
	// Fail now, not on the first approval, where flock is missing.
	if err := s.locked(func() error { return nil }); err != nil {
		_ = f.Close()
		return nil, err
	}
	return s, nil
}

// Dir returns the store's directory.
func (s *FileStore) Dir() string { return s.dir }

// Close releases the lock file. The store must not be used afterwards.
func (s *FileStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lock == nil {
		return nil
	}
	err := s.lock.Close()
	s.lock = nil
	return err
}

func (s *FileStore) locked(fn func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lock == nil {
		return errors.New("approval store: closed")
	}
	if err := flock(s.lock); err != nil {
		return fmt.Errorf("approval store %s: lock: %w", s.dir, err)
	}
	defer funlock(s.lock)
	return fn()
}

func (s *FileStore) path(id string) string { return filepath.Join(s.dir, id+".json") }

// Create implements ApprovalStore.
func (s *FileStore) Create(_ context.Context, a *mcpruntime.Approval) error {
	if err := mcpruntime.CheckApprovalID(a.ID); err != nil {
		return err
	}
	return s.locked(func() error {
		if _, err := os.Lstat(s.path(a.ID)); err == nil {
			return fmt.Errorf("approval %s already exists", a.ID)
		}
		return s.write(a)
	})
}

// Get implements ApprovalStore.
func (s *FileStore) Get(_ context.Context, id string) (*mcpruntime.Approval, error) {
	if err := mcpruntime.CheckApprovalID(id); err != nil {
		return nil, err
	}
	var a *mcpruntime.Approval
	err := s.locked(func() error {
		var err error
		a, err = s.read(id)
		return err
	})
	return a, err
}

// Update implements ApprovalStore.
func (s *FileStore) Update(ctx context.Context, id string, fn func(*mcpruntime.Approval) error) (*mcpruntime.Approval, error) {
	return s.update(id, nil, fn)
}

// Claim implements ApprovalWaiter. The winner holds an flock on the
// approval's .run file from before its move to executing is written until
// release, so a resumer in any process (or another FileStore over the same
// directory) can tell a running call from one whose runner died.
func (s *FileStore) Claim(_ context.Context, id string, fn func(*mcpruntime.Approval) error) (*mcpruntime.Approval, func(), error) {
	var run *os.File
	a, err := s.update(id, &run, fn)
	if err != nil || run == nil {
		return a, nil, err
	}
	return a, func() {
		// Removed under the directory lock: a waiter then finds no file, or
		// finds it locked.
		_ = s.locked(func() error { return os.Remove(run.Name()) })
		funlock(run)
		_ = run.Close()
	}, nil
}

// Wait implements ApprovalWaiter by polling, with backoff, the approval
// and its runner's lock.
func (s *FileStore) Wait(ctx context.Context, id string) (*mcpruntime.Approval, error) {
	if err := mcpruntime.CheckApprovalID(id); err != nil {
		return nil, err
	}
	for pause := time.Millisecond; ; pause = min(2*pause, 100*time.Millisecond) {
		var a *mcpruntime.Approval
		running := false
		err := s.locked(func() error {
			var err error
			if a, err = s.read(id); err != nil || a.State != mcpruntime.StateExecuting {
				return err
			}
			f, err := os.Open(s.runPath(id))
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			} else if err != nil {
				return fmt.Errorf("approval store: %w", err)
			}
			defer f.Close()
			got, err := tryFlock(f)
			if got {
				funlock(f)
			}
			running = !got
			return err
		})
		if err != nil || !running {
			return a, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pause):
		}
	}
}

// WaitDecision implements mcpruntime.DecisionWaiter by polling the
// approval, with backoff up to 250 ms, until it is decided or expires.
func (s *FileStore) WaitDecision(ctx context.Context, id string) (*mcpruntime.Approval, error) {
	for pause := time.Millisecond; ; pause = min(2*pause, 250*time.Millisecond) {
		a, err := s.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		if a.State != mcpruntime.StatePending {
			return a, nil
		}
		left := time.Until(a.Expires)
		if left <= 0 {
			a.State = mcpruntime.StateExpired // as a Gate sees it
			return a, nil
		}
		t := time.NewTimer(min(pause, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

func (s *FileStore) runPath(id string) string { return filepath.Join(s.dir, id+".run") }

// update is Update; with run non-nil, a move from approved to executing
// also takes the runner's lock, returned in *run.
func (s *FileStore) update(id string, run **os.File, fn func(*mcpruntime.Approval) error) (*mcpruntime.Approval, error) {
	if err := mcpruntime.CheckApprovalID(id); err != nil {
		return nil, err
	}
	var out *mcpruntime.Approval
	err := s.locked(func() error {
		a, err := s.read(id)
		if err != nil {
			return err
		}
		before, err := json.Marshal(a)
		if err != nil {
			return err
		}
		was := a.State
		if err := fn(a); err != nil {
			return err
		}
		a.ID = id
		if run != nil && was == mcpruntime.StateApproved && a.State == mcpruntime.StateExecuting {
			f, err := os.OpenFile(s.runPath(id), os.O_RDWR|os.O_CREATE, 0o600)
			if err != nil {
				return fmt.Errorf("approval store: %w", err)
			}
			if got, err := tryFlock(f); !got {
				_ = f.Close()
				return fmt.Errorf("approval store: lock %s: held by another runner (%v)", f.Name(), err)
			}
			if err := s.write(a); err != nil {
				funlock(f)
				_ = f.Close()
				return err
			}
			*run, out = f, a
			return nil
		}
		after, err := json.Marshal(a)
		if err != nil {
			return err
		}
		if !bytes.Equal(before, after) {
			if err := s.write(a); err != nil {
				return err
			}
		}
		out = a
		return nil
	})
	return out, err
}

// List implements ApprovalStore. An unreadable file fails the whole list,
// naming the file: a store silently missing approvals would hide them from
// the people who must decide.
func (s *FileStore) List(context.Context) ([]*mcpruntime.Approval, error) {
	var out []*mcpruntime.Approval
	err := s.locked(func() error {
		ents, err := os.ReadDir(s.dir)
		if err != nil {
			return fmt.Errorf("approval store: %w", err)
		}
		for _, e := range ents {
			id, ok := strings.CutSuffix(e.Name(), ".json")
			if !ok || !e.Type().IsRegular() || mcpruntime.CheckApprovalID(id) != nil {
				continue // the lock file, temporary files, anything else
			}
			a, err := s.read(id)
			if err != nil {
				return err
			}
			out = append(out, a)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	mcpruntime.SortApprovals(out)
	return out, nil
}

func (s *FileStore) read(id string) (*mcpruntime.Approval, error) {
	p := s.path(id)
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &mcpruntime.ApprovalError{ID: id, Err: mcpruntime.ErrApprovalNotFound}
	}
	if err != nil {
		return nil, fmt.Errorf("approval store: %w", err)
	}
	var a mcpruntime.Approval
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return nil, fmt.Errorf("%s: %s", positionOf(p, b, err), strings.TrimPrefix(err.Error(), "json: "))
	}
	switch {
	case a.ID != id:
		return nil, fmt.Errorf("%s: /id: %q does not match the file name", p, a.ID)
	case !a.State.Valid():
		return nil, fmt.Errorf("%s: /state: unknown state %q", p, a.State)
	}
	return &a, nil
}

// positionOf names the place a JSON error points at as file:line:col.
func positionOf(path string, data []byte, err error) string {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	// encoding/json reports the offset just past the offending byte.
	off--
	if off < 0 || off >= int64(len(data)) {
		return path
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := int(off) - bytes.LastIndexByte(data[:off], '\n')
	return fmt.Sprintf("%s:%d:%d", path, line, col)
}

// write replaces the approval's file atomically and durably.
func (s *FileStore) write(a *mcpruntime.Approval) error {
	// Compact, so raw arguments and results keep their bytes.
	b, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("approval %s: encode: %w", a.ID, err)
	}
	b = append(b, '\n')
	tmp, err := os.CreateTemp(s.dir, ".tmp-"+a.ID+"-*")
	if err != nil {
		return fmt.Errorf("approval store: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(b); err != nil {
		return fmt.Errorf("approval store: write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("approval store: sync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("approval store: close %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), s.path(a.ID)); err != nil {
		return fmt.Errorf("approval store: %w", err)
	}
	ok = true
	// The rename is durable only once the directory is synced.
	d, err := os.Open(s.dir)
	if err != nil {
		return fmt.Errorf("approval store: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("approval store: sync %s: %w", s.dir, err)
	}
	return nil
}
