package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// PauseVersion is the version of the Pause encoding.
const PauseVersion = 1

// Pause is an agent loop stopped because some of a turn's tool calls wait
// for a person. It is plain JSON: store it, show its Approvals to a
// person, decide with the Gate (Approve or Deny), and give it to
// Set.Resume later, in this process or another one with the same tools
// and approval store. It holds no token: approvals never do.
type Pause struct {
	Version int `json:"version"`
	// Results answers every call of the turn, in the model's order; the
	// gated ones have Pending set.
	Results []Result `json:"results"`
	// Conversation is the adapter's transcript up to and including the
	// model's turn with the calls, so a fresh loop can continue it.
	Conversation json.RawMessage `json:"conversation,omitempty"`
}

// Approvals returns the approvals the pause waits for.
func (p *Pause) Approvals() []*mcpruntime.Approval {
	var out []*mcpruntime.Approval
	for _, r := range p.Results {
		if r.Pending != nil {
			out = append(out, r.Pending)
		}
	}
	return out
}

// ParsePause decodes a stored Pause.
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

// Resume continues a Pause once people have decided. Each approved call is
// made exactly once, however often the same Pause is resumed and from how
// many processes (the gate's guarantee: later resumes get the recorded
// outcome); a denied call gives the model the denial and its reason; an
// expired approval, or an approved call whose outcome is unknown, gives
// the model a failed result saying so. When some approvals are still
// undecided, results is nil and still is the pause to keep, with what was
// decided meanwhile filled in. The context must carry the principal that
// made the calls.
func (s *Set) Resume(ctx context.Context, p *Pause) (results []Result, still *Pause, err error) {
	if p == nil || p.Version != PauseVersion {
		return nil, nil, errors.New("agent: resume: not a pause of this version")
	}
	next := &Pause{Version: p.Version, Results: make([]Result, len(p.Results)), Conversation: p.Conversation}
	waiting := false
	for i, r := range p.Results {
		next.Results[i] = r
		if r.Pending == nil {
			continue
		}
		e, ok := s.byName[r.Name]
		if !ok || e.tool.Descriptor().Name != r.Pending.Tool {
			return nil, nil, fmt.Errorf("agent: resume approval %s: no tool %q for %q in this set", r.Pending.ID, r.Name, r.Pending.Tool)
		}
		m, err := e.ts.Resume(ctx, r.Pending.Tool, r.Pending.ID)
		var ae *mcpruntime.ApprovalError
		switch {
		case err == nil:
			next.Results[i] = toResult(r.CallID, r.Name, m)
			continue
		case !errors.As(err, &ae):
			return nil, nil, err
		case errors.Is(err, mcpruntime.ErrApprovalPending):
			waiting = true
			continue
		}
		text, ok := approvalText(ae)
		if !ok {
			return nil, nil, err
		}
		next.Results[i] = Result{CallID: r.CallID, Name: r.Name, IsError: true, Text: text, Parts: []Part{{Kind: PartText, Text: text}}}
	}
	if waiting {
		return nil, next, nil
	}
	return next.Results, nil, nil
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
