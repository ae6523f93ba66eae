package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"regexp"
)

// startScriptedModel serves the Messages API on a local port with a fixed
// script standing in for the model: it reads the tool results it gets,
// so the ids it uses come from the CRM, not from the script.
func startScriptedModel() (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(scripted)}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

type wireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	Content   []wireBlock     `json:"content,omitempty"`
}

var dealID = regexp.MustCompile(`"id":"(D-[0-9]{4})"`)

func scripted(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Role    string      `json:"role"`
			Content []wireBlock `json:"content"`
		} `json:"messages"`
	}
	if r.URL.Path != "/v1/messages" || json.NewDecoder(r.Body).Decode(&req) != nil || len(req.Messages) == 0 {
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"not a Messages API request"}}`, http.StatusBadRequest)
		return
	}
	// The script goes by what the last tool result says.
	var last wireBlock
	for _, b := range req.Messages[len(req.Messages)-1].Content {
		if b.Type == "tool_result" {
			last = b
		}
	}
	text := ""
	for _, c := range last.Content {
		text += c.Text
	}
	turn := len(req.Messages) / 2
	var out []wireBlock
	switch {
	case turn == 0:
		out = []wireBlock{{Type: "text", Text: "I'll search the proposal stage."}, use("search_deals", `{"stage":"proposal","limit":1}`)}
	case turn == 1 && dealID.MatchString(text):
		id := dealID.FindStringSubmatch(text)[1]
		out = []wireBlock{use("get_deal", fmt.Sprintf(`{"deal_id":%q}`, id))}
	case turn == 2 && dealID.MatchString(text):
		id := dealID.FindStringSubmatch(text)[1]
		out = []wireBlock{{Type: "text", Text: "Moving it on."}, use("update_deal", fmt.Sprintf(`{"deal_id":%q,"stage":"negotiation","note":"Pilot agreed."}`, id))}
	case last.IsError:
		out = []wireBlock{{Type: "text", Text: "The change was not made: " + text}}
	default:
		out = []wireBlock{{Type: "text", Text: "Done: the deal is in negotiation, with the note added."}}
	}
	stop := "end_turn"
	if out[len(out)-1].Type == "tool_use" {
		stop = "tool_use"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": fmt.Sprintf("msg_%d", turn), "type": "message", "role": "assistant", "model": "scripted",
		"content": out, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": 0, "output_tokens": 0},
	})
}

func use(name, input string) wireBlock {
	return wireBlock{Type: "tool_use", ID: "toolu_" + name, Name: name, Input: json.RawMessage(input)}
}
