package mcpruntime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// PromptGetter is implemented by connections that can get prompts
// (prompts/get). The mcpgo adapter's Conn does. It returns a
// *ProtocolError when the server answers with a JSON-RPC error.
type PromptGetter interface {
	GetPrompt(ctx context.Context, name string, args map[string]string) (*PromptResult, error)
}

// PromptDescriptor describes one prompt as snapshotted.
type PromptDescriptor struct {
	Name        string
	GoName      string
	Title       string
	Description string
	Arguments   []PromptArgument
}

// PromptArgument is one declared argument of a prompt.
type PromptArgument struct {
	Name        string
	Title       string
	Description string
	Required    bool
}

// PromptResult is everything a server sent for one prompts/get: the
// description, every message with its role and content block (any kind,
// kept with its raw JSON, see Content), and _meta.
type PromptResult struct {
	Description string
	Messages    []PromptMessage
	Meta        json.RawMessage
	// Provenance says where the messages came from; also in the run's
	// ledger. Prompt messages are external content.
	Provenance Provenance
}

// PromptMessage is one message of a prompt.
type PromptMessage struct {
	// Role is "user" or "assistant" (other values are kept as sent).
	Role    string
	Content Content
}

// ParsePromptResult decodes the JSON of a prompts/get result (the JSON-RPC
// "result" member).
func ParsePromptResult(data []byte) (*PromptResult, error) {
	var w struct {
		Description *string            `json:"description"`
		Messages    *[]json.RawMessage `json:"messages"`
		Meta        json.RawMessage    `json:"_meta"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("prompts/get result: %w", err)
	}
	if w.Messages == nil {
		return nil, errors.New("prompts/get result: missing messages member")
	}
	r := &PromptResult{Meta: cloneRaw(w.Meta)}
	if w.Description != nil {
		r.Description = *w.Description
	}
	for i, raw := range *w.Messages {
		var m struct {
			Role    *string         `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("prompts/get result: /messages/%d: %w", i, err)
		}
		if m.Role == nil {
			return nil, fmt.Errorf("prompts/get result: /messages/%d: missing role", i)
		}
		if len(m.Content) == 0 {
			return nil, fmt.Errorf("prompts/get result: /messages/%d: missing content", i)
		}
		pm := PromptMessage{Role: *m.Role}
		if err := pm.Content.UnmarshalJSON(m.Content); err != nil {
			return nil, fmt.Errorf("prompts/get result: /messages/%d/content: %w", i, err)
		}
		r.Messages = append(r.Messages, pm)
	}
	return r, nil
}

// Size is the total size of the messages' content in bytes (text, and the
// raw JSON of other blocks).
func (r *PromptResult) Size() int64 {
	var n int64
	for _, m := range r.Messages {
		if m.Content.Type == ContentText {
			n += int64(len(m.Content.Text))
		} else {
			n += int64(len(m.Content.Raw))
		}
	}
	return n
}

// GetPrompt gets the prompt d describes with args (argument name → value;
// optional arguments left out are not sent). A missing required argument or
// an argument the prompt does not declare is an error before anything is
// sent. The guards are those of a resource read: identity, timeout, size
// limit and taint record.
func GetPrompt(ctx context.Context, c Caller, d *PromptDescriptor, args map[string]string, opts ...ReadOption) (*PromptResult, error) {
	what := fmt.Sprintf("prompt %q", d.Name)
	var missing, unknown []string
	for _, a := range d.Arguments {
		if _, ok := args[a.Name]; a.Required && !ok {
			missing = append(missing, a.Name)
		}
	}
	for name := range args {
		if !slices.ContainsFunc(d.Arguments, func(a PromptArgument) bool { return a.Name == name }) {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(unknown)
	switch {
	case len(missing) > 0:
		return nil, fmt.Errorf("%s: missing required argument %s", what, quoteList(missing))
	case len(unknown) > 0:
		return nil, fmt.Errorf("%s: undeclared argument %s", what, quoteList(unknown))
	}
	g, ok := c.(PromptGetter)
	if !ok {
		return nil, fmt.Errorf("get %s: the connection (%T) cannot get prompts: it does not implement mcpruntime.PromptGetter", what, c)
	}
	o := newReadOptions(c, opts)
	if o.observer != nil {
		return observedPrompt(ctx, o, c, d, args, opts)
	}
	var res *PromptResult
	err := o.guard(ctx, what, func(ctx context.Context) (err error) {
		res, err = g.GetPrompt(ctx, d.Name, args)
		if err != nil {
			return err
		}
		if res == nil {
			return errors.New("the connection returned no result")
		}
		if n := res.Size(); n > o.maxSize {
			res = nil
			return &ResourceTooLargeError{What: what, Limit: o.maxSize, Size: n}
		}
		return nil
	}, func(tok Secret) { scrubPrompt(res, tok) })
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", what, err)
	}
	b, _ := json.Marshal(struct {
		Description string          `json:"description,omitempty"`
		Messages    []PromptMessage `json:"messages"`
	}{res.Description, res.Messages})
	res.Provenance = o.record(ctx, Provenance{Prompt: d.Name}, digestOf(b))
	return res, nil
}

// MarshalJSON encodes the message as MCP does.
func (m PromptMessage) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Role    string  `json:"role"`
		Content Content `json:"content"`
	}{m.Role, m.Content})
}

func scrubPrompt(r *PromptResult, tok Secret) {
	if r == nil {
		return
	}
	res := &Result{Content: make([]Content, len(r.Messages)), Meta: r.Meta}
	for i, m := range r.Messages {
		res.Content[i] = m.Content
	}
	scrubResult(res, tok)
	for i := range r.Messages {
		r.Messages[i].Content = res.Content[i]
	}
	r.Meta = res.Meta
	r.Description = strings.ReplaceAll(r.Description, string(tok), redacted)
}
