package mcpruntime

import (
	"context"
	"errors"
	"fmt"
)

// ResourceLink is a resource_link block of a tool result together with the
// call that produced it, so that ReadLink can refresh a link that expired
// by replaying that call once.
type ResourceLink struct {
	// Content is the resource_link block (URI, Name, MIMEType...).
	Content
	// Tool is the wire name of the tool whose result held the link;
	// Idempotent is its annotation.
	Tool       string
	Idempotent bool

	index  int // position among the result's resource links
	replay func(ctx context.Context) (*Result, error)
}

// LinksOf returns the resource links in res, the result t returned for in.
// Each remembers t and in: replaying goes through t.Call again, with all of
// its guards (validation, gate, identity, timeout, taint record).
func LinksOf[I, O any](t *Tool[I, O], in I, res *TypedResult[O]) []ResourceLink {
	if res == nil {
		return nil
	}
	return t.core.links(&in, res.Content)
}

// links is kept out of line: inlined, every tool's LinksOf would compile
// its own copy of the loop.
//
//go:noinline
func (t *toolCore) links(in any, content []Content) []ResourceLink {
	replay := func(ctx context.Context) (*Result, error) {
		var res Result
		if err := t.call(ctx, in, typedParts{out: t.newOut(), res: &res}); err != nil {
			return nil, err
		}
		return &res, nil
	}
	var out []ResourceLink
	for _, c := range content {
		if c.Type != ContentResourceLink {
			continue
		}
		out = append(out, ResourceLink{Content: c, Tool: t.desc.Name, Idempotent: t.desc.Annotations.Idempotent, index: len(out), replay: replay})
	}
	return out
}

// ReadLink reads the resource l links to. When the server says it has
// expired (*ResourceExpiredError):
//
//   - with the Refresh option and a tool annotated idempotent, the call
//     that produced the link is replayed once, and the new result's link
//     that matches l (the one with l's name, when exactly one has it; else
//     the one at l's position among the links) is read instead. If that
//     fails too, the error says the refresh happened.
//   - otherwise the *ResourceExpiredError says why nothing was replayed.
//
// A call is never replayed more than once, and never for a tool that is
// not annotated idempotent: replaying a call with effects could repeat
// them.
func ReadLink(ctx context.Context, c Caller, l ResourceLink, opts ...ReadOption) (*ResourceResult, error) {
	o := newReadOptions(c, opts)
	res, err := o.read(ctx, c, l.URI)
	var ee *ResourceExpiredError
	if !errors.As(err, &ee) {
		return res, err
	}
	switch {
	case !o.refresh:
		ee.Detail = fmt.Sprintf("not refreshed (pass mcpruntime.Refresh() to replay the %q call that produced it, if it is idempotent)", l.Tool)
		return nil, ee
	case l.replay == nil:
		ee.Detail = "not refreshed: the link does not carry the call that produced it (use LinksOf)"
		return nil, ee
	case !l.Idempotent:
		ee.Detail = fmt.Sprintf("not refreshed: tool %q is not annotated idempotent, so replaying it could repeat its effects", l.Tool)
		return nil, ee
	}
	again, err := l.replay(ctx)
	if err != nil {
		return nil, fmt.Errorf("refresh %s: replay tool %q: %w", ee.Error(), l.Tool, err)
	}
	if again.IsError {
		return nil, fmt.Errorf("refresh %s: replayed tool %q failed: %s", ee.Error(), l.Tool, again.ModelText())
	}
	next, ok := matchLink(again, l)
	if !ok {
		ee.Detail = fmt.Sprintf("the replayed %q call returned no matching resource link", l.Tool)
		return nil, ee
	}
	res, err = o.read(ctx, c, next.URI)
	if errors.As(err, &ee) {
		ee.Detail = fmt.Sprintf("expired again after replaying the %q call once", l.Tool)
		return nil, ee
	}
	return res, err
}

func matchLink(res *Result, l ResourceLink) (Content, bool) {
	var links []Content
	for _, c := range res.Content {
		if c.Type == ContentResourceLink {
			links = append(links, c)
		}
	}
	if l.Name != "" {
		var named []Content
		for _, c := range links {
			if c.Name == l.Name {
				named = append(named, c)
			}
		}
		if len(named) == 1 {
			return named[0], true
		}
	}
	if l.index < len(links) {
		return links[l.index], true
	}
	return Content{}, false
}
