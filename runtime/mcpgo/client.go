package mcpgo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// This file holds the client side of the protocol: what a client declares
// (elicitation, sampling, roots) and answers, and the notifications it
// receives (progress, logs, resource updates). Each capability is declared
// only when its handler is given.

// WithProtocolVersion pins the protocol version instead of negotiating the
// newest both sides speak ("2025-11-25", "2026-07-28", ...). A server that
// answers with another version fails the connection with a
// *VersionMismatchError naming both (inside the *mcpruntime.ConnectError,
// marked permanent for the connection manager). A version that is not one
// of ProtocolVersions fails every connection the same way, before a
// process is started or a request sent.
func WithProtocolVersion(v string) Option {
	return func(c *config) { c.protocol = v }
}

// ProtocolVersions are the MCP protocol versions the session layer speaks,
// newest first: the values WithProtocolVersion accepts.
var ProtocolVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// ElicitationRequest is a server asking the user for input. Every string
// of it, the schema's included, is scrubbed of the tokens the Conn's calls
// carried and of the secrets it knows of (see WithSecrets).
type ElicitationRequest struct {
	// Mode is "form" (answer Schema's fields) or "url" (send the user to
	// URL; the answer is only whether they agreed).
	Mode    string
	Message string
	// Schema is the requested schema of a form (a flat object of
	// primitive members), as the server sent it.
	Schema json.RawMessage
	// URL and ElicitationID, in url mode.
	URL, ElicitationID string
}

// ElicitationAction is the user's answer.
type ElicitationAction string

const (
	ElicitAccept  ElicitationAction = "accept"
	ElicitDecline ElicitationAction = "decline"
	ElicitCancel  ElicitationAction = "cancel"
)

// ElicitationResponse answers an ElicitationRequest. On accept in form
// mode, Content holds the fields; members the schema gives a usable
// default for (see FormField.Default) and Content leaves out are filled
// with that default before the answer is sent (SEP-1034).
type ElicitationResponse struct {
	Action  ElicitationAction
	Content map[string]any
}

// ElicitationHandler answers elicitation requests. Its error becomes a
// JSON-RPC error for the server.
type ElicitationHandler func(ctx context.Context, req ElicitationRequest) (ElicitationResponse, error)

// WithElicitation declares the elicitation capability and answers requests
// with h: form mode always, url mode too when url is true. A request in a
// mode not declared (url mode without url, or a mode the specification
// does not know) never reaches h: it gets JSON-RPC error -32602 (invalid
// params), as the specification requires of a client; on 2026-07-28,
// where such a request comes inside a tool's result, the call fails with
// that error instead.
func WithElicitation(h ElicitationHandler, url bool) Option {
	return func(c *config) { c.elicit, c.elicitURL = h, url }
}

// elicitMode returns why a request in mode may not be answered, or nil.
func (c *config) elicitMode(mode string) error {
	switch {
	case c.elicit == nil:
		return errors.New("elicitation/create: the client did not declare the elicitation capability")
	case mode == "" || mode == "form":
		return nil
	case mode == "url" && c.elicitURL:
		return nil
	case mode == "url":
		return errors.New(`elicitation/create: mode "url" is not declared in the client's capabilities (only "form" is)`)
	}
	return fmt.Errorf("elicitation/create: mode %q is not declared in the client's capabilities", mode)
}

// answerFirst answers a server's elicitation/create in a mode the client
// did not declare with -32602, before mcp-go's handler (whose errors all
// become -32603) sees it.
func (c *Conn) answerFirst(req transport.JSONRPCRequest) *transport.JSONRPCResponse {
	if req.Method != string(mcp.MethodElicitationCreate) {
		return nil
	}
	var p struct {
		Mode string `json:"mode"`
	}
	if b, err := json.Marshal(req.Params); err == nil {
		_ = json.Unmarshal(b, &p)
	}
	if err := c.cfg.elicitMode(p.Mode); err != nil {
		return transport.NewJSONRPCErrorResponse(req.ID, mcp.INVALID_PARAMS, err.Error(), nil)
	}
	return nil
}

// ElicitDefaults accepts every form with the defaults its schema gives,
// for unattended runs that must not block on a person. A default outside
// its own field's type, enum or bounds is not sent (see FormField.Default);
// a form with a required field that has no usable default, or a schema
// it cannot read, is declined, since accepting it would send an incomplete
// answer. url-mode requests are declined.
func ElicitDefaults(_ context.Context, req ElicitationRequest) (ElicitationResponse, error) {
	if req.Mode == "url" {
		return ElicitationResponse{Action: ElicitDecline}, nil
	}
	if _, err := FormDefaults(req.Schema); err != nil {
		return ElicitationResponse{Action: ElicitDecline}, nil
	}
	return ElicitationResponse{Action: ElicitAccept, Content: map[string]any{}}, nil
}

// FormDefaults returns the usable defaults of a requested schema by member
// name (see FormField.Default), and an error naming each required member
// without one.
func FormDefaults(schema json.RawMessage) (map[string]any, error) {
	fields, err := FormFields(schema)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	var missing []string
	for _, f := range fields {
		switch {
		case f.Default != nil:
			out[f.Name] = f.Default
		case f.Required:
			missing = append(missing, strconv.Quote(f.Name))
		}
	}
	if len(missing) > 0 {
		return out, fmt.Errorf("requested schema: required %s %s no usable default", plural(len(missing), "member", "members"),
			strings.Join(missing, ", ")+map[bool]string{true: " has", false: " have"}[len(missing) == 1])
	}
	return out, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// ElicitDeclineAll declines every request: a client that declares the
// capability (so that servers offer their tools) but answers no one.
func ElicitDeclineAll(context.Context, ElicitationRequest) (ElicitationResponse, error) {
	return ElicitationResponse{Action: ElicitDecline}, nil
}

// FormField is one member of a form's requested schema, in schema order
// (the order the server wrote them).
type FormField struct {
	Name        string
	Title       string
	Description string
	Type        string // string, number, integer, boolean (or array, for a multi-select)
	Enum        []string
	// Default is the schema's default when it fits the field: of its type
	// (an integer for integer, a number for number, true or false for
	// boolean, a string for string, a list of strings for array), one of
	// its enum (or oneOf/anyOf consts, each item's for array) when it has
	// one, and within its minimum, maximum, minLength and maxLength (or
	// minItems and maxItems). It is nil when the schema gives none or one
	// that does not fit: such a default is never sent.
	Default  any
	Required bool
}

// FormFields lists the members of a requested schema in the order the
// server wrote them, for a handler that asks a person field by field.
func FormFields(schema json.RawMessage) ([]FormField, error) {
	var s struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("requested schema: %w", err)
	}
	names, err := objectKeys(s.Properties)
	if err != nil {
		return nil, fmt.Errorf("requested schema: properties: %w", err)
	}
	var props map[string]formProperty
	if len(s.Properties) > 0 {
		if err := json.Unmarshal(s.Properties, &props); err != nil {
			return nil, fmt.Errorf("requested schema: properties: %w", err)
		}
	}
	out := make([]FormField, 0, len(names))
	for _, n := range names {
		p := props[n]
		f := FormField{Name: n, Title: p.Title, Description: p.Description, Type: p.Type, Enum: p.enum(),
			Required: slices.Contains(s.Required, n)}
		if p.fits(p.Default) {
			f.Default = p.Default
		}
		out = append(out, f)
	}
	return out, nil
}

// formProperty is one member of a requested schema: a primitive, or an
// array of enum strings (a multi-select).
type formProperty struct {
	Type        string      `json:"type"`
	Title       string      `json:"title"`
	Description string      `json:"description"`
	Enum        []any       `json:"enum"`
	OneOf       []formConst `json:"oneOf"`
	AnyOf       []formConst `json:"anyOf"`
	Default     any         `json:"default"`
	Minimum     *float64    `json:"minimum"`
	Maximum     *float64    `json:"maximum"`
	MinLength   *int        `json:"minLength"`
	MaxLength   *int        `json:"maxLength"`
	MinItems    *int        `json:"minItems"`
	MaxItems    *int        `json:"maxItems"`
	Items       *struct {
		Enum  []any       `json:"enum"`
		AnyOf []formConst `json:"anyOf"`
	} `json:"items"`
}

type formConst struct {
	Const any `json:"const"`
}

// allowed lists the values the member (for an array, each item) may take:
// enum, oneOf and anyOf consts; nil for any.
func (p formProperty) allowed() []any {
	a := slices.Clone(p.Enum)
	consts := append(slices.Clone(p.OneOf), p.AnyOf...)
	if p.Items != nil {
		a = append(a, p.Items.Enum...)
		consts = append(consts, p.Items.AnyOf...)
	}
	for _, o := range consts {
		a = append(a, o.Const)
	}
	return a
}

// enum is allowed as text, for a person: strings as they are, other
// values as JSON.
func (p formProperty) enum() []string {
	var out []string
	for _, v := range p.allowed() {
		if s, ok := v.(string); ok {
			out = append(out, s)
			continue
		}
		b, _ := json.Marshal(v)
		out = append(out, string(b))
	}
	return out
}

// fits reports whether v is a value of the member: its type, its enum and
// its bounds. A member without a type takes a string, number or boolean.
func (p formProperty) fits(v any) bool {
	allowed := p.allowed()
	one := func(x any) bool {
		if len(allowed) == 0 {
			return true
		}
		return slices.ContainsFunc(allowed, func(a any) bool { return reflect.DeepEqual(a, x) })
	}
	count := func(n int, lo, hi *int) bool { return (lo == nil || n >= *lo) && (hi == nil || n <= *hi) }
	bounded := func(f float64) bool {
		return (p.Minimum == nil || f >= *p.Minimum) && (p.Maximum == nil || f <= *p.Maximum)
	}
	switch x := v.(type) {
	case string:
		return (p.Type == "string" || p.Type == "") && one(x) && count(utf8.RuneCountInString(x), p.MinLength, p.MaxLength)
	case float64:
		return (p.Type == "number" || p.Type == "" || p.Type == "integer" && x == math.Trunc(x)) && one(x) && bounded(x)
	case bool:
		return (p.Type == "boolean" || p.Type == "") && one(x)
	case []any:
		if p.Type != "array" || !count(len(x), p.MinItems, p.MaxItems) {
			return false
		}
		for _, it := range x {
			if _, ok := it.(string); !ok || !one(it) {
				return false
			}
		}
		return true
	}
	return false
}

// objectKeys returns the member names of a JSON object in document order.
func objectKeys(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// withDefaults fills the members of content a form leaves out with the
// usable defaults of its schema.
func withDefaults(schema json.RawMessage, content map[string]any) map[string]any {
	fields, err := FormFields(schema)
	if err != nil {
		return content
	}
	out := make(map[string]any, len(fields))
	for k, v := range content {
		out[k] = v
	}
	for _, f := range fields {
		if _, ok := out[f.Name]; !ok && f.Default != nil {
			out[f.Name] = f.Default
		}
	}
	return out
}

type elicitAdapter struct {
	c *Conn
}

func (a elicitAdapter) Elicit(ctx context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	// A request that comes this way (2026-07-28's, inside a result) was not
	// checked by answerFirst.
	if err := a.c.cfg.elicitMode(r.Params.Mode); err != nil {
		return nil, &mcpruntime.ProtocolError{Code: mcp.INVALID_PARAMS, Message: err.Error()}
	}
	s := a.c.scrubber()
	req := ElicitationRequest{Mode: r.Params.Mode, Message: s.text(r.Params.Message), URL: s.text(r.Params.URL),
		ElicitationID: s.text(r.Params.ElicitationID)}
	if req.Mode == "" {
		req.Mode = "form"
	}
	if r.Params.RequestedSchema != nil {
		b, err := json.Marshal(r.Params.RequestedSchema)
		if err != nil {
			return nil, err
		}
		req.Schema = s.json(b)
	}
	resp, err := a.c.cfg.elicit(ctx, req)
	if err != nil {
		return nil, err
	}
	res := &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseAction(resp.Action)}}
	if resp.Action == ElicitAccept && req.Mode == "form" {
		res.Content = withDefaults(req.Schema, resp.Content)
	}
	return res, nil
}

// SamplingRequest is a server asking the client's model for a completion.
// Every string of it (the messages' content, the system prompt, Raw) is
// scrubbed of the tokens the Conn's calls carried and of the secrets it
// knows of (see WithSecrets).
type SamplingRequest struct {
	Messages []SamplingMessage
	// ModelPreferences as the server sent them (hints, priorities), or nil.
	ModelPreferences json.RawMessage
	SystemPrompt     string
	MaxTokens        int
	Temperature      float64
	StopSequences    []string
	// Raw is the whole request's params, for what the fields above leave
	// out (tools, metadata).
	Raw json.RawMessage
}

// SamplingMessage is one message of a sampling conversation.
type SamplingMessage struct {
	Role    string // "user" or "assistant"
	Content []mcpruntime.Content
}

// SamplingResponse is the completion: the model's message, the model's
// name and why it stopped ("endTurn", "maxTokens", ...).
type SamplingResponse struct {
	Content    mcpruntime.Content
	Model      string
	StopReason string
}

// SamplingHandler produces completions for servers. Its error becomes a
// JSON-RPC error for the server.
type SamplingHandler func(ctx context.Context, req SamplingRequest) (SamplingResponse, error)

// WithSampling declares the sampling capability and answers requests with
// h, at most DefaultSamplingLimit at once (WithSamplingLimit).
func WithSampling(h SamplingHandler) Option { return func(c *config) { c.sample = h } }

// DefaultSamplingLimit is how many sampling requests a Conn's handler
// answers at once unless WithSamplingLimit says otherwise.
const DefaultSamplingLimit = 4

// WithSamplingLimit sets how many sampling requests the handler answers at
// once (default DefaultSamplingLimit; n below 1 counts as 1). Each model
// call costs, and a server can send any number of requests: one past the
// limit is refused at once, not queued, with a JSON-RPC error (-32603)
// saying so; on 2026-07-28, where the requests come inside a tool's
// result, the call fails with that error.
func WithSamplingLimit(n int) Option { return func(c *config) { c.sampleLimit = max(n, 1) } }

type sampleAdapter struct{ c *Conn }

func (a sampleAdapter) CreateMessage(ctx context.Context, r mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	select {
	case a.c.sampling <- struct{}{}:
		defer func() { <-a.c.sampling }()
	default:
		n := cap(a.c.sampling)
		return nil, fmt.Errorf("sampling/createMessage refused: the client answers at most %d sampling %s at once, and %d %s under way",
			n, plural(n, "request", "requests"), n, map[bool]string{true: "is", false: "are"}[n == 1])
	}
	raw, err := json.Marshal(r.CreateMessageParams)
	if err != nil {
		return nil, err
	}
	// Everything the handler sees comes from the scrubbed params.
	raw = a.c.scrubber().json(raw)
	var p struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		ModelPreferences json.RawMessage `json:"modelPreferences"`
		SystemPrompt     string          `json:"systemPrompt"`
		MaxTokens        int             `json:"maxTokens"`
		Temperature      float64         `json:"temperature"`
		StopSequences    []string        `json:"stopSequences"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("sampling request: %w", err)
	}
	req := SamplingRequest{SystemPrompt: p.SystemPrompt, MaxTokens: p.MaxTokens, Temperature: p.Temperature,
		StopSequences: p.StopSequences, Raw: raw}
	if len(p.ModelPreferences) > 0 && !bytes.Equal(p.ModelPreferences, []byte("null")) {
		req.ModelPreferences = p.ModelPreferences
	}
	for _, m := range p.Messages {
		var blocks []mcpruntime.Content
		b := bytes.TrimSpace(m.Content)
		if len(b) > 0 && b[0] == '[' {
			err = json.Unmarshal(b, &blocks)
		} else {
			var one mcpruntime.Content
			err = json.Unmarshal(b, &one)
			blocks = []mcpruntime.Content{one}
		}
		if err != nil {
			return nil, fmt.Errorf("sampling message: %w", err)
		}
		req.Messages = append(req.Messages, SamplingMessage{Role: m.Role, Content: blocks})
	}
	resp, err := a.c.cfg.sample(ctx, req)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(resp.Content)
	if err != nil {
		return nil, err
	}
	var content any
	if err := json.Unmarshal(b, &content); err != nil {
		return nil, err
	}
	return &mcp.CreateMessageResult{
		SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: content},
		Model:           resp.Model, StopReason: resp.StopReason,
	}, nil
}

// Root is a directory or file the client lets servers work in.
type Root struct {
	URI  string // file:// URI
	Name string
}

// WithRoots declares the roots capability and answers roots/list with a
// fixed list.
func WithRoots(roots ...Root) Option {
	roots = slices.Clone(roots)
	return WithRootsFunc(func(context.Context) ([]Root, error) { return roots, nil })
}

// WithRootsFunc declares the roots capability and answers roots/list with
// what f returns at the time; call Conn.RootsChanged when its answer
// changes.
func WithRootsFunc(f func(context.Context) ([]Root, error)) Option {
	return func(c *config) { c.roots = f }
}

type rootsAdapter struct {
	f func(context.Context) ([]Root, error)
}

func (a rootsAdapter) ListRoots(ctx context.Context, _ mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	roots, err := a.f(ctx)
	if err != nil {
		return nil, err
	}
	res := &mcp.ListRootsResult{Roots: []mcp.Root{}}
	for _, r := range roots {
		res.Roots = append(res.Roots, mcp.Root{URI: r.URI, Name: r.Name})
	}
	return res, nil
}

// RootsChanged tells the server the roots changed
// (notifications/roots/list_changed); it asks for them again.
func (c *Conn) RootsChanged(ctx context.Context) error {
	return c.Do(ctx, "notifications/roots/list_changed", func(ctx context.Context, cli *client.Client) error {
		return cli.RootListChanges(ctx)
	})
}

// WithLogger sends the server's log messages (notifications/message) to l,
// with the server's level mapped to slog's (debug → Debug; info and notice
// → Info; warning → Warn; error and above → Error), and asks the server to
// log from the lowest level l is enabled for. The message (the data, as
// JSON when it is not a string) and every attribute taken from the server
// (logger, mcpLevel) are scrubbed of the tokens the Conn's calls carried
// and of the secrets it knows of (see WithSecrets).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// logMessage logs n, which is scrubbed already.
func (c *Conn) logMessage(n mcp.JSONRPCNotification) {
	l := c.cfg.logger
	f := n.Params.AdditionalFields
	level := slog.LevelInfo
	lv, _ := f["level"].(string)
	switch lv {
	case "debug":
		level = slog.LevelDebug
	case "info", "notice":
		level = slog.LevelInfo
	case "warning":
		level = slog.LevelWarn
	case "error", "critical", "alert", "emergency":
		level = slog.LevelError
	}
	msg := ""
	switch d := f["data"].(type) {
	case string:
		msg = d
	default:
		b, _ := json.Marshal(d)
		msg = string(b)
	}
	attrs := []any{"server", c.cfg.name}
	if name, ok := f["logger"].(string); ok && name != "" {
		attrs = append(attrs, "logger", name)
	}
	if lv != "" && lv != "info" && lv != "debug" && lv != "warning" && lv != "error" {
		attrs = append(attrs, "mcpLevel", lv)
	}
	l.Log(context.Background(), level, msg, attrs...)
}

// setLogLevel asks a server that can log to start at the lowest level the
// logger takes.
func (c *Conn) setLogLevel(ctx context.Context, cli *client.Client) {
	caps := cli.GetServerCapabilities()
	if c.cfg.logger == nil || caps.Logging == nil {
		return
	}
	level := mcp.LoggingLevelError
	for _, l := range []struct {
		s slog.Level
		m mcp.LoggingLevel
	}{{slog.LevelDebug, mcp.LoggingLevelDebug}, {slog.LevelInfo, mcp.LoggingLevelInfo}, {slog.LevelWarn, mcp.LoggingLevelWarning}} {
		if c.cfg.logger.Enabled(ctx, l.s) {
			level = l.m
			break
		}
	}
	_ = cli.SetLevel(ctx, mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: level}})
}

// progressRoutes hands notifications/progress to the callback of the call
// whose token they carry.
type progressRoutes struct {
	next atomic.Int64
	mu   sync.Mutex
	fns  map[string]func(mcpruntime.Progress)
}

func (p *progressRoutes) add(fn func(mcpruntime.Progress)) (token string, done func()) {
	token = "mcpgen-" + strconv.FormatInt(p.next.Add(1), 10)
	p.mu.Lock()
	if p.fns == nil {
		p.fns = map[string]func(mcpruntime.Progress){}
	}
	p.fns[token] = fn
	p.mu.Unlock()
	return token, func() {
		// A notification the server sent before its answer may arrive
		// after it: mcp-go's stdio server writes notifications from a
		// queue of their own, so the last one can follow the answer. The
		// route stays open a moment for those.
		time.AfterFunc(progressLinger, func() {
			p.mu.Lock()
			delete(p.fns, token)
			p.mu.Unlock()
		})
	}
}

// progressLinger is how long after a call's answer its progress
// notifications are still delivered.
const progressLinger = 500 * time.Millisecond

// deliver routes n by its token and hands on what scrubbed, its scrubbed
// copy, says.
func (p *progressRoutes) deliver(n, scrubbed mcp.JSONRPCNotification) {
	f := n.Params.AdditionalFields
	var token string
	switch t := f["progressToken"].(type) {
	case string:
		token = t
	case float64:
		token = strconv.FormatFloat(t, 'f', -1, 64)
	default:
		return
	}
	p.mu.Lock()
	fn := p.fns[token]
	p.mu.Unlock()
	if fn == nil {
		return
	}
	pr := mcpruntime.Progress{}
	f = scrubbed.Params.AdditionalFields
	pr.Progress, _ = f["progress"].(float64)
	pr.Total, _ = f["total"].(float64)
	pr.Message, _ = f["message"].(string)
	fn(pr)
}

// resourceWatch is the Conn's subscriptions to resource updates.
type resourceWatch struct {
	mu   sync.Mutex
	next int
	fns  map[string]map[int]func(uri string)
}

// deliver routes n by the URI the server sent and hands on the scrubbed
// one.
func (w *resourceWatch) deliver(n, scrubbed mcp.JSONRPCNotification) {
	uri, _ := n.Params.AdditionalFields["uri"].(string)
	shown, _ := scrubbed.Params.AdditionalFields["uri"].(string)
	w.mu.Lock()
	var fns []func(string)
	for _, f := range w.fns[uri] {
		fns = append(fns, f)
	}
	w.mu.Unlock()
	for _, f := range fns {
		f(shown)
	}
}

func (w *resourceWatch) uris() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.fns))
	for u := range w.fns {
		out = append(out, u)
	}
	slices.Sort(out)
	return out
}

// Subscribe calls fn with uri whenever the server reports the resource
// changed (notifications/resources/updated), until the returned function
// is called; fn gets the URI scrubbed of the Conn's tokens and secrets. On 2026-07-28 connections the subscription travels on the
// subscriptions/listen stream, which is reopened with it; on older ones it
// is a resources/subscribe request.
func (c *Conn) Subscribe(ctx context.Context, uri string, fn func(uri string)) (unsubscribe func(context.Context) error, err error) {
	l, err := c.link(ctx)
	if err != nil {
		return nil, err
	}
	w := &c.watch
	w.mu.Lock()
	if w.fns == nil {
		w.fns = map[string]map[int]func(string){}
	}
	first := w.fns[uri] == nil
	if first {
		w.fns[uri] = map[int]func(string){}
	}
	w.next++
	id := w.next
	w.fns[uri][id] = fn
	w.mu.Unlock()
	remove := func() (last bool) {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.fns[uri], id)
		if len(w.fns[uri]) == 0 {
			delete(w.fns, uri)
			return true
		}
		return false
	}
	if first {
		if err := c.subscribeOn(ctx, l, uri); err != nil {
			remove()
			return nil, err
		}
	}
	return func(ctx context.Context) error {
		if !remove() {
			return nil
		}
		l, err := c.link(ctx)
		if err != nil {
			return err
		}
		if l.modern {
			return c.listen(l)
		}
		return c.Do(ctx, "resources/unsubscribe", func(ctx context.Context, cli *client.Client) error {
			return cli.Unsubscribe(ctx, mcp.UnsubscribeRequest{Params: mcp.UnsubscribeParams{URI: uri}})
		})
	}, nil
}

func (c *Conn) subscribeOn(ctx context.Context, l *link, uri string) error {
	if l.modern {
		return c.listen(l)
	}
	return c.Do(ctx, "resources/subscribe", func(ctx context.Context, cli *client.Client) error {
		return cli.Subscribe(ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: uri}})
	})
}

// listen (re)opens the subscriptions/listen stream of a 2026-07-28
// connection with every notification the Conn wants.
func (c *Conn) listen(l *link) error {
	filter := mcp.SubscriptionFilter{ToolsListChanged: true, PromptsListChanged: true, ResourcesListChanged: true,
		ResourceSubscriptions: c.watch.uris()}
	l.mu.Lock()
	stop := l.stopListen
	l.stopListen = nil
	l.mu.Unlock()
	if stop != nil {
		stop()
	}
	stopListen, err := l.cli.ListenAsync(l.life, filter, func(err error) {
		l.lose(fmt.Errorf("the notification stream failed: %w", err))
	})
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.stopListen = stopListen
	l.mu.Unlock()
	return nil
}

// clientOptions are the mcp-go options the Conn's own configuration
// implies: handlers, their capabilities, the protocol pin.
func (conn *Conn) clientOptions() []client.ClientOption {
	c := &conn.cfg
	var o []client.ClientOption
	var caps mcp.ClientCapabilities
	if c.elicit != nil {
		caps.Elicitation = &mcp.ElicitationCapability{Form: &struct{}{}}
		if c.elicitURL {
			caps.Elicitation.URL = &struct{}{}
		}
		o = append(o, client.WithElicitationHandler(elicitAdapter{conn}))
	}
	if c.sample != nil {
		o = append(o, client.WithSamplingHandler(sampleAdapter{conn}))
	}
	if c.roots != nil {
		o = append(o, client.WithRootsHandler(rootsAdapter{c.roots}))
	}
	o = append(o, client.WithClientCapabilities(caps))
	if c.protocol != "" {
		o = append(o, client.WithProtocolVersion(c.protocol))
	}
	return o
}
