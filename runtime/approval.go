package mcpruntime

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// ApprovalState is where an approval is in its life:
//
//	pending ──Approve──▶ approved ──Resume (one winner)──▶ executing ──▶ done
//	   │                    │
//	   ├──Deny──▶ denied ◀──┘ (Deny before any resume)
//	   └──TTL──▶ expired
//
// Only one resume can move approved to executing: the store makes that
// transition atomic. executing is never left except to done, so a call that
// may have reached the server is never made again: if the process dies
// mid-call, the approval stays executing and resumes report
// ErrOutcomeUnknown.
type ApprovalState string

const (
	StatePending   ApprovalState = "pending"
	StateApproved  ApprovalState = "approved"
	StateDenied    ApprovalState = "denied"
	StateExpired   ApprovalState = "expired"
	StateExecuting ApprovalState = "executing"
	StateDone      ApprovalState = "done"
)

// Valid reports whether s is one of the states above (stores check what
// they read).
func (s ApprovalState) Valid() bool {
	switch s {
	case StatePending, StateApproved, StateDenied, StateExpired, StateExecuting, StateDone:
		return true
	}
	return false
}

// Approval is a gated call waiting for (or past) a person's decision. It
// holds the arguments the call will run with, but never the caller's token:
// identity is added only when the call is made.
type Approval struct {
	ID   string `json:"id"`
	Tool string `json:"tool"`
	// Server is the label of the server (WithServerName: the registry id
	// under the manager; or the Caller's Name), ServerIdentity the tool's
	// Descriptor.Server (the server whose manifest its bindings come from)
	// and SchemaHash its Descriptor.SchemaHash: only a tool with all four
	// can resume it.
	Server         string `json:"server,omitempty"`
	ServerIdentity string `json:"serverIdentity,omitempty"`
	SchemaHash     string `json:"schemaHash,omitempty"`
	// Args are the call's arguments, identity argument excluded.
	Args json.RawMessage `json:"args"`
	// Digest is ArgsDigest(Args). Approve must name it, and a resume checks
	// it, so an approval covers exactly these arguments.
	Digest string `json:"digest"`
	// Principal is the ID of the principal the call runs as; "" when the
	// tool has no identity. Only that principal can resume it.
	Principal string `json:"principal,omitempty"`
	// Why says what gated the call, for the person deciding.
	Why     string        `json:"why"`
	State   ApprovalState `json:"state"`
	Created time.Time     `json:"created"`
	Expires time.Time     `json:"expires"`
	// Decided is when it was approved or denied.
	Decided time.Time `json:"decided,omitzero"`
	// Reason is the denial reason given to the model.
	Reason string `json:"reason,omitempty"`
	// Started is when the one execution began.
	Started time.Time `json:"started,omitzero"`
	// Outcome is the execution's result, set in state done.
	Outcome *Outcome `json:"outcome,omitempty"`
	// Continued is when a paused agent loop went on with this approval's
	// result (Toolset.MarkContinued): a pause is resumed once.
	Continued time.Time `json:"continued,omitzero"`
	// Trace is the trace context of the call that was held (W3C
	// traceparent and tracestate), when its tool has an Observer that
	// writes one (TraceCarrier): a resume anywhere can link to it.
	Trace map[string]string `json:"trace,omitempty"`
}

// Outcome is what the one execution of an approved call produced: the
// tools/call result, or the error that ended it.
type Outcome struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	// Delivery says, for an Error, whether the request reached the server:
	// DeliveryNotSent, DeliveryUnknown, or "" when the server answered with
	// the error (records written before it existed read as answered).
	Delivery   Delivery    `json:"delivery,omitempty"`
	Provenance *Provenance `json:"provenance,omitempty"`
	Finished   time.Time   `json:"finished"`
}

// Delivery is what is known about a failed execution's request.
type Delivery string

const (
	// DeliveryNotSent: the request provably never reached the server (the
	// connection could not be made, the process was already gone).
	DeliveryNotSent Delivery = "not-sent"
	// DeliveryUnknown: the request was sent, or may have been, and no
	// answer came (the context ended, the connection was lost, the call
	// timed out): the server may have applied it.
	DeliveryUnknown Delivery = "unknown"
)

// delivery classifies the error of an execution: an answer from the
// server (a JSON-RPC error) is a failure, a request that provably never
// left is not sent, and anything else may have reached the server.
func delivery(err error) Delivery {
	var pe *ProtocolError
	switch {
	case errors.Is(err, ErrNotSent):
		return DeliveryNotSent
	case errors.As(err, &pe):
		return ""
	}
	return DeliveryUnknown
}

// effectiveState is the state with expiry applied.
func (a *Approval) effectiveState(now time.Time) ApprovalState {
	if a.State == StatePending && !now.Before(a.Expires) {
		return StateExpired
	}
	return a.State
}

func (a *Approval) clone() *Approval {
	c := *a
	c.Args = cloneRaw(a.Args)
	c.Trace = maps.Clone(a.Trace)
	if a.Outcome != nil {
		o := *a.Outcome
		o.Result = cloneRaw(o.Result)
		if o.Provenance != nil {
			p := *o.Provenance
			o.Provenance = &p
		}
		c.Outcome = &o
	}
	return &c
}

// ApprovalStore keeps approvals. Implementations must make Update atomic
// with respect to every other Update and Create on the same store, across
// goroutines and, for shared stores, across processes: exactly-once
// execution rests on it.
type ApprovalStore interface {
	// Create stores a new approval; an existing id is an error.
	Create(ctx context.Context, a *Approval) error
	// Get returns the approval with the id, or an error wrapping
	// ErrApprovalNotFound.
	Get(ctx context.Context, id string) (*Approval, error)
	// Update reads the approval, calls fn with a copy and, when fn returns
	// nil, stores the copy, all under one lock: a compare-and-swap. When fn
	// returns an error nothing is stored and Update returns that error.
	Update(ctx context.Context, id string, fn func(*Approval) error) (*Approval, error)
	// List returns every approval, ordered by creation time then id.
	List(ctx context.Context) ([]*Approval, error)
}

// ApprovalWaiter is an ApprovalStore that can tell whether the resumer that
// moved an approval to executing is still running it. Several Gates share
// such a store (over one directory, one database, in one process or many): a
// resumer that finds the approval executing waits for the winner's outcome
// instead of reporting ErrOutcomeUnknown at once. Without it, only resumers
// in the winner's own Gate wait.
type ApprovalWaiter interface {
	ApprovalStore
	// Claim is Update for a resume. When fn moves the approval from approved
	// to executing, the store marks the caller as its runner atomically with
	// storing the move, and returns a release func the Gate calls once the
	// outcome is recorded (or recording failed). The mark also ends when the
	// process dies or loses its connection to the store. release is nil when
	// nothing was claimed.
	Claim(ctx context.Context, id string, fn func(*Approval) error) (a *Approval, release func(), err error)
	// Wait returns the approval once it is not executing, or is executing
	// with no runner (the runner died: the outcome is unknown), or ctx's
	// error when ctx ends first.
	Wait(ctx context.Context, id string) (*Approval, error)
}

// DecisionWaiter is an ApprovalStore that can wait for a person's decision,
// so that a program holding a pause (in any process sharing the store) need
// not poll. MemoryStore, filestore.FileStore and postgres.ApprovalStore
// implement it.
type DecisionWaiter interface {
	ApprovalStore
	// WaitDecision returns the approval once it is no longer pending, or
	// once its expiry has passed, then with State StateExpired as a Gate
	// sees it (the store is not changed); or ctx's error when ctx ends
	// first. An approval already decided is returned at once.
	WaitDecision(ctx context.Context, id string) (*Approval, error)
}

// decided applies expiry to a, read at now, and reports whether
// WaitDecision returns it.
func decided(a *Approval, now time.Time) bool {
	a.State = a.effectiveState(now)
	return a.State != StatePending
}

// Errors about approvals, wrapped in an *ApprovalError.
var (
	ErrApprovalNotFound = errors.New("no such approval")
	ErrApprovalPending  = errors.New("not decided yet")
	ErrApprovalDenied   = errors.New("denied")
	ErrApprovalExpired  = errors.New("expired before it was decided")
	// ErrApprovalMismatch: the tool, server (label or identity), schema
	// hash, arguments or principal differ from what was approved. The call was not made; it
	// needs a new approval.
	ErrApprovalMismatch = errors.New("does not match the call")
	// ErrApprovalContinued: a paused loop already went on with its result.
	ErrApprovalContinued = errors.New("a paused loop was already continued with its result")
	// ErrOutcomeUnknown: the approved call was started and its outcome was
	// never recorded (the process running it died, or it is still running
	// elsewhere). It may have reached the server, so it is not made again.
	ErrOutcomeUnknown = errors.New("the call was started but its outcome is unknown; it is not made again")
	// ErrOutcomeNotRecorded: the resume made the approved call, and the
	// store could not record its outcome, so later resumes report
	// ErrOutcomeUnknown. When the server answered, Resume returns the
	// result together with this error.
	ErrOutcomeNotRecorded = errors.New("the call was made but its outcome could not be recorded, so later resumes report it unknown")
	// ErrApprovedCallFailed: the one execution reached the server, which
	// answered with an error; it is not made again.
	ErrApprovedCallFailed = errors.New("the approved call was made once and the server answered with an error; it is not made again")
	// ErrApprovedCallNotSent: the approved call was not sent, so the server
	// never saw it. Either the resume's context had already ended (nothing
	// was started and the approval stays approved: resume again), or the
	// one execution could not send the request (the approval is used up).
	ErrApprovedCallNotSent = errors.New("the approved call was not sent to the server")
)

// ApprovalError is an operation on an approval that could not proceed.
type ApprovalError struct {
	ID     string
	Tool   string
	Err    error  // one of the ErrApproval* values, ErrOutcomeUnknown or a store error
	Detail string // more about it, e.g. the denial reason or the recorded error
}

func (e *ApprovalError) Error() string {
	var b strings.Builder
	b.WriteString("approval ")
	b.WriteString(e.ID)
	if e.Tool != "" {
		fmt.Fprintf(&b, " (tool %q)", e.Tool)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

func (e *ApprovalError) Unwrap() error { return e.Err }

// ApprovalRequiredError is returned for a gated call: it was not made. The
// approval is stored; show it to a person, then Approve or Deny it and
// resume the tool with its ID.
type ApprovalRequiredError struct {
	Approval *Approval
}

func (e *ApprovalRequiredError) Error() string {
	a := e.Approval
	who := ""
	if a.Principal != "" {
		who = " for " + a.Principal
	}
	return fmt.Sprintf("tool %q needs approval%s (%s): approval %s, arguments %s, expires %s",
		a.Tool, who, a.Why, a.ID, a.Digest, a.Expires.UTC().Format(time.RFC3339))
}

// ArgsDigest returns "sha256:" and the hex SHA-256 of the canonical JSON of
// args: object members sorted by name, no insignificant space, numbers as
// written. Two encodings of the same arguments have one digest. Empty or
// null arguments count as {}.
func ArgsDigest(args json.RawMessage) (string, error) {
	c, err := canonicalArgs(args)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

func canonicalArgs(args json.RawMessage) ([]byte, error) {
	b := bytes.TrimSpace(args)
	if len(b) == 0 || bytes.Equal(b, []byte("null")) {
		b = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("arguments: %w", err)
	}
	if dec.More() {
		return nil, errors.New("arguments: more than one JSON value")
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // maps encode with sorted keys
		return nil, fmt.Errorf("arguments: %w", err)
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}

var approvalIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// CheckApprovalID rejects ids that are not ones a Gate made (32 lowercase
// hex digits), for stores that use the id as a file or key name.
func CheckApprovalID(id string) error {
	if !approvalIDPattern.MatchString(id) {
		return &ApprovalError{ID: fmt.Sprintf("%q", id), Err: ErrApprovalNotFound, Detail: "not an approval id (32 lowercase hex digits)"}
	}
	return nil
}

// SortApprovals orders approvals as ApprovalStore.List returns them: by
// creation time, then id.
func SortApprovals(as []*Approval) {
	slices.SortFunc(as, func(a, b *Approval) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// MemoryStore is an ApprovalStore in memory, for tests and for programs
// whose runs do not outlive the process.
type MemoryStore struct {
	mu      sync.Mutex
	m       map[string]*Approval
	changed chan struct{} // closed and replaced on every write
}

var _ DecisionWaiter = (*MemoryStore)(nil)

// NewMemoryStore returns an empty store.
func NewMemoryStore() *MemoryStore { return &MemoryStore{m: map[string]*Approval{}} }

// Create implements ApprovalStore.
func (s *MemoryStore) Create(_ context.Context, a *Approval) error {
	if err := CheckApprovalID(a.ID); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[a.ID]; ok {
		return fmt.Errorf("approval %s already exists", a.ID)
	}
	s.m[a.ID] = a.clone()
	s.wake()
	return nil
}

// wake tells WaitDecision that something changed; s.mu is held.
func (s *MemoryStore) wake() {
	if s.changed != nil {
		close(s.changed)
	}
	s.changed = make(chan struct{})
}

// WaitDecision implements DecisionWaiter.
func (s *MemoryStore) WaitDecision(ctx context.Context, id string) (*Approval, error) {
	if err := CheckApprovalID(id); err != nil {
		return nil, err
	}
	for {
		s.mu.Lock()
		a, ok := s.m[id]
		if s.changed == nil {
			s.changed = make(chan struct{})
		}
		changed := s.changed
		if ok {
			a = a.clone()
		}
		s.mu.Unlock()
		if !ok {
			return nil, &ApprovalError{ID: id, Err: ErrApprovalNotFound}
		}
		if decided(a, time.Now()) {
			return a, nil
		}
		t := time.NewTimer(time.Until(a.Expires))
		select {
		case <-changed:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
		t.Stop()
	}
}

// Get implements ApprovalStore.
func (s *MemoryStore) Get(_ context.Context, id string) (*Approval, error) {
	if err := CheckApprovalID(id); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.m[id]
	if !ok {
		return nil, &ApprovalError{ID: id, Err: ErrApprovalNotFound}
	}
	return a.clone(), nil
}

// Update implements ApprovalStore.
func (s *MemoryStore) Update(_ context.Context, id string, fn func(*Approval) error) (*Approval, error) {
	if err := CheckApprovalID(id); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.m[id]
	if !ok {
		return nil, &ApprovalError{ID: id, Err: ErrApprovalNotFound}
	}
	c := a.clone()
	if err := fn(c); err != nil {
		return nil, err
	}
	c.ID = id
	s.m[id] = c
	s.wake()
	return c.clone(), nil
}

// List implements ApprovalStore.
func (s *MemoryStore) List(context.Context) ([]*Approval, error) {
	s.mu.Lock()
	out := make([]*Approval, 0, len(s.m))
	for _, a := range s.m {
		out = append(out, a.clone())
	}
	s.mu.Unlock()
	SortApprovals(out)
	return out, nil
}
