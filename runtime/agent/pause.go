package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// PauseVersion is the version of the Pause encoding.
const PauseVersion = 1

// Pause is an agent loop stopped because some of a turn's tool calls wait
// for a person. It is plain JSON: store it, show a person its approvals as
// the store holds them (Pause.Approvals), decide with the Gate (Approve or
// Deny), and give it to Set.Resume later, in this process or another one
// with the same tools and approval store. It holds no token: approvals
// never do.
//
// A pause is held by the application, possibly somewhere it does not
// control (a browser, a queue), so nothing in it is trusted: every pending
// result must name an approval in the store that was made for the tool the
// result names (same wire name, server label and identity, and schema
// hash) and for the principal that tool acts as in the context of
// Pause.Approvals or Set.Resume, and must agree with it on every field a
// person is shown or the call depends on (see ErrPauseAltered). The rest
// (the results of calls that were not gated and the conversation) is what
// the model is told, and is the application's to protect, as any
// transcript is. A pause is resumed to its end once.
type Pause struct {
	Version int `json:"version"`
	// Results answers every call of the turn, in the model's order; the
	// gated ones have Pending set.
	Results []Result `json:"results"`
	// Conversation is the adapter's transcript up to and including the
	// model's turn with the calls, so a fresh loop can continue it.
	Conversation json.RawMessage `json:"conversation,omitempty"`
}

// Errors of a pause that cannot be used, wrapped in a *PauseError.
var (
	// ErrPauseAltered: a pending result does not match the store: it names
	// a tool without a gate, no approval there, an approval made for
	// another tool or server or requested by another principal than the
	// context's, or one whose tool, server, server identity, schema hash,
	// arguments, digest, principal, reason or times differ from the
	// pause's copy; or an approval appears twice, or the pause waits for
	// none. The pause was altered (or is resumed with other tools or
	// another store); nothing was run.
	ErrPauseAltered = errors.New("does not match the approval store (altered, or used with other tools or another store)")
	// ErrPauseUsed: the pause was already resumed to its end, here or in
	// another process sharing the approval store, and its results went to
	// the model then. A pause continues a conversation once; nothing was
	// run and the model was not asked again.
	ErrPauseUsed = errors.New("already resumed (a pause is resumed once)")
)

// PauseError is a pause that could not be read against the store or
// resumed.
type PauseError struct {
	// Result is the index of the result in Pause.Results, or -1 for the
	// pause as a whole.
	Result int
	// Approval is the id of the approval the result names, if any.
	Approval string
	// Err is ErrPauseAltered or ErrPauseUsed.
	Err error
	// Detail says what does not match.
	Detail string
	// Cause is what the store answered, when it decided (an
	// *mcpruntime.ApprovalError wrapping ErrApprovalMismatch,
	// ErrApprovalNotFound or ErrApprovalContinued).
	Cause error
}

func (e *PauseError) Error() string {
	var b strings.Builder
	b.WriteString("agent: pause")
	if e.Result >= 0 {
		fmt.Fprintf(&b, " result %d", e.Result)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	if e.Cause != nil {
		b.WriteString(": ")
		b.WriteString(e.Cause.Error())
	}
	return b.String()
}

func (e *PauseError) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Err, e.Cause}
	}
	return []error{e.Err}
}

// ParsePause decodes a stored Pause. It checks the encoding only: what the
// pause says of its approvals is checked against the store by
// Pause.Approvals and Set.Resume.
func ParsePause(data []byte) (*Pause, error) {
	var p Pause
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("agent: pause: %w", err)
	}
	if p.Version != PauseVersion {
		return nil, fmt.Errorf("agent: pause: version %d, want %d", p.Version, PauseVersion)
	}
	return &p, nil
}

// Approvals returns the approvals the pause waits for, in the order of its
// results, as the approval store holds them now (state and decision
// included), never as the pause says: show these to a person. Each is
// checked as Set.Resume checks it, so an altered pause is an error
// wrapping ErrPauseAltered. The context must carry the run's principal,
// as for Set.Resume: a pause holding another principal's approval is
// altered, so a person deciding for this run is shown only its own.
func (p *Pause) Approvals(ctx context.Context, s *Set) ([]*mcpruntime.Approval, error) {
	ws, err := s.check(ctx, p)
	if err != nil {
		return nil, err
	}
	out := make([]*mcpruntime.Approval, len(ws))
	for i, w := range ws {
		out[i] = w.stored
	}
	return out, nil
}

// waiting is a pending result of a pause, checked against the store.
type waiting struct {
	i      int // index in Results
	e      *entry
	stored *mcpruntime.Approval
}

// check reads every approval a pause names from the store, through the tool
// its result names, and compares the pause's copy with it.
func (s *Set) check(ctx context.Context, p *Pause) ([]waiting, error) {
	if p == nil || p.Version != PauseVersion {
		return nil, &PauseError{Result: -1, Err: ErrPauseAltered, Detail: fmt.Sprintf("not a pause of version %d", PauseVersion)}
	}
	var out []waiting
	seen := map[string]bool{}
	for i, r := range p.Results {
		pa := r.Pending
		if pa == nil {
			continue
		}
		fail := func(detail string, cause error) error {
			return &PauseError{Result: i, Approval: pa.ID, Err: ErrPauseAltered, Detail: detail, Cause: cause}
		}
		if seen[pa.ID] {
			return nil, fail(fmt.Sprintf("approval %s appears twice", pa.ID), nil)
		}
		seen[pa.ID] = true
		e, ok := s.byName[r.Name]
		if !ok {
			return nil, fail(fmt.Sprintf("approval %s: no tool %q in this set", pa.ID, r.Name), nil)
		}
		if _, ok := e.ts.Gated(e.wire); !ok {
			// No approval can have been made through it.
			return nil, fail(fmt.Sprintf("approval %s: tool %q has no gate", pa.ID, r.Name), nil)
		}
		stored, err := e.ts.Approval(ctx, e.wire, pa.ID)
		switch {
		case errors.Is(err, mcpruntime.ErrApprovalMismatch), errors.Is(err, mcpruntime.ErrApprovalNotFound):
			return nil, fail(fmt.Sprintf("the call %q", r.Name), err) // err names the tool
		case err != nil:
			return nil, fmt.Errorf("agent: pause result %d: %w", i, err)
		}
		if diff := differences(pa, stored); len(diff) > 0 {
			return nil, fail(fmt.Sprintf("approval %s: the pause's copy differs from the store's in %s", pa.ID, strings.Join(diff, ", ")), nil)
		}
		out = append(out, waiting{i: i, e: e, stored: stored})
	}
	if len(out) == 0 {
		return nil, &PauseError{Result: -1, Err: ErrPauseAltered, Detail: "it waits for no approval"}
	}
	return out, nil
}

// differences names the members of the pause's copy of an approval that
// differ from the stored one: every member fixed when the call was gated.
// The state and the members after it change as the approval is decided and
// run; the store's are used.
func differences(pa, st *mcpruntime.Approval) []string {
	var d []string
	str := func(name, a, b string) {
		if a != b {
			d = append(d, name)
		}
	}
	str("tool", pa.Tool, st.Tool)
	str("server", pa.Server, st.Server)
	str("serverIdentity", pa.ServerIdentity, st.ServerIdentity)
	str("schemaHash", pa.SchemaHash, st.SchemaHash)
	// Compared as canonical JSON: storing and re-encoding may change the
	// bytes (escapes, spacing) but not the value.
	pd, perr := mcpruntime.ArgsDigest(pa.Args)
	sd, serr := mcpruntime.ArgsDigest(st.Args)
	if perr != nil || serr != nil || pd != sd {
		d = append(d, "args")
	}
	str("digest", pa.Digest, st.Digest)
	str("principal", pa.Principal, st.Principal)
	str("why", pa.Why, st.Why)
	if !pa.Created.Equal(st.Created) {
		d = append(d, "created")
	}
	if !pa.Expires.Equal(st.Expires) {
		d = append(d, "expires")
	}
	return d
}

// Resume continues a Pause once people have decided. Every pending result
// is first checked against the store (see Pause.Approvals): an altered
// pause is an error wrapping ErrPauseAltered and nothing is run. Each
// approved call is made exactly once, however often the same Pause is
// resumed and from how many processes (the gate's guarantee); a denied
// call gives the model the denial and its reason; an expired approval, or
// an approved call whose outcome is unknown, gives the model a failed
// result saying so. When some approvals are still undecided, results is
// nil and still is the pause to keep, with what was decided meanwhile
// filled in and its approvals as the store holds them. Otherwise the
// results are returned for the model once: the store records that the
// pause was continued, and any later resume of it (or of a pause holding
// one of its approvals), in any process sharing the store, is an error
// wrapping ErrPauseUsed. The context must carry the principal that made
// the calls: an approval requested by another principal (each tool's
// principal as its WithIdentity or ReadIdentity reads it from the context,
// none for a tool without identity) makes the pause altered.
//
// An approved call that was made and answered but whose outcome the store
// could not record (an *mcpruntime.ApprovalError wrapping
// mcpruntime.ErrOutcomeNotRecorded) still gives the model its result,
// which is the only copy: Resume returns the results (or the still pause
// holding it) together with an error wrapping ErrOutcomeNotRecorded, and,
// if the store could not record that the pause was continued either,
// that error joined to it. Later resumes of that approval report its
// outcome unknown.
func (s *Set) Resume(ctx context.Context, p *Pause) (results []Result, still *Pause, err error) {
	ws, err := s.check(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	for _, w := range ws {
		if !w.stored.Continued.IsZero() {
			return nil, nil, &PauseError{Result: w.i, Approval: w.stored.ID, Err: ErrPauseUsed,
				Detail: fmt.Sprintf("approval %s went to the model with its result at %s", w.stored.ID, w.stored.Continued.UTC().Format(time.RFC3339))}
		}
	}
	next := &Pause{Version: p.Version, Results: slices.Clone(p.Results), Conversation: p.Conversation}
	undecided := false
	// unrecorded holds the errors of calls that were made and answered
	// but whose outcome the store could not record: their results are the
	// only copies, so they go to the model and the errors to the caller.
	var unrecorded error
	for _, w := range ws {
		r, id := p.Results[w.i], w.stored.ID
		m, err := w.e.ts.Resume(mcpruntime.WithToolCallID(ctx, r.CallID), w.e.wire, id)
		var ae *mcpruntime.ApprovalError
		switch {
		case err == nil:
			next.Results[w.i] = toResult(r.CallID, r.Name, m)
			continue
		case missing(err, w.e) != nil:
			text := fmt.Sprintf("The approved call to %q was not made: its server does not offer the tool now.", r.Name)
			next.Results[w.i] = Result{CallID: r.CallID, Name: r.Name, IsError: true, Text: text, Parts: []Part{{Kind: PartText, Text: text}}}
			continue
		case errors.Is(err, mcpruntime.ErrOutcomeNotRecorded) && (m.Result != nil || m.Text != ""):
			next.Results[w.i] = toResult(r.CallID, r.Name, m)
			unrecorded = errors.Join(unrecorded, fmt.Errorf("agent: pause result %d: %w", w.i, err))
			continue
		case !errors.As(err, &ae):
			return nil, nil, err
		case errors.Is(err, mcpruntime.ErrApprovalPending):
			undecided = true
			next.Results[w.i].Pending = w.stored
			continue
		}
		text, ok := approvalText(ae)
		if !ok {
			return nil, nil, err
		}
		next.Results[w.i] = Result{CallID: r.CallID, Name: r.Name, IsError: true, Text: text, Parts: []Part{{Kind: PartText, Text: text}}}
	}
	if undecided {
		return nil, next, unrecorded
	}
	// Marked in the order of the ids, so that of two resumes of one pause
	// the one that marks the first approval wins, and the other stops at
	// it before the model is asked.
	slices.SortFunc(ws, func(a, b waiting) int { return cmp.Compare(a.stored.ID, b.stored.ID) })
	for _, w := range ws {
		if err := w.e.ts.MarkContinued(ctx, w.e.wire, w.stored.ID); err != nil {
			if errors.Is(err, mcpruntime.ErrApprovalContinued) {
				return nil, nil, &PauseError{Result: w.i, Approval: w.stored.ID, Err: ErrPauseUsed, Cause: err}
			}
			err = fmt.Errorf("agent: pause result %d: record that the pause was resumed (it may be used up): %w", w.i, err)
			if unrecorded != nil {
				// Results the store does not hold are not dropped.
				return next.Results, nil, errors.Join(unrecorded, err)
			}
			return nil, nil, err
		}
	}
	return next.Results, nil, unrecorded
}

// approvalText is what the model is told of an approval that ended without
// a result; false for problems only the program can handle (a mismatch).
func approvalText(ae *mcpruntime.ApprovalError) (string, bool) {
	switch {
	case errors.Is(ae, mcpruntime.ErrApprovalExpired):
		return fmt.Sprintf("No person decided on this call to %q in time, so it was not made.", ae.Tool), true
	case errors.Is(ae, mcpruntime.ErrOutcomeUnknown):
		return fmt.Sprintf("The approved call to %q was started, but its outcome is unknown: it may or may not have taken effect. Check before trying again.", ae.Tool), true
	case errors.Is(ae, mcpruntime.ErrApprovedCallFailed):
		return fmt.Sprintf("The approved call to %q was made once and failed: %s", ae.Tool, ae.Detail), true
	}
	return "", false
}
