// Command agent is a tool-using agent over the example CRM server with
// adapters/anthropic: the model searches the pipeline, looks a deal up
// with a typed call, asks to move it on, and the loop pauses until a
// person approves; the paused state goes through JSON into a fresh loop,
// as it would into another process, and the approved call runs once.
//
// By default the model is a scripted local server that ships with this
// example (no network, no key). With ANTHROPIC_API_KEY set it talks to the
// real Messages API.
//
//	go run ./cmd/agent                  # offline, scripted model
//	go run ./cmd/agent -deny            # a person denies the change
//	ANTHROPIC_API_KEY=... go run ./cmd/agent -model claude-sonnet-5-5
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/mcpgen/mcpgen/runtime/filestore"
	"io"
	"log"
	"os"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	mcpanthropic "github.com/mcpgen/mcpgen/adapters/anthropic"
	"github.com/mcpgen/mcpgen/example/crmapi"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/agent"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

const task = "Find our largest deal in the proposal stage, check it, and move it to negotiation with a note that the pilot was agreed."

func main() {
	log.SetPrefix("agent: ")
	log.SetFlags(0)
	serverCmd := flag.String("server", "", "the CRM server's executable (default: go run ./crm-server)")
	model := flag.String("model", string(anthropic.ModelClaudeSonnet5_5), "the model, with ANTHROPIC_API_KEY set")
	deny := flag.Bool("deny", false, "the person reviewing the change denies it")
	flag.Parse()
	command, args := "go", []string{"run", "./crm-server"}
	if *serverCmd != "" {
		command, args = *serverCmd, nil
	}
	opts := []option.RequestOption{option.WithMaxRetries(2)}
	if key := os.Getenv("ANTHROPIC_API_KEY"); key != "" {
		opts = append(opts, option.WithAPIKey(key))
		fmt.Println("(talking to the Messages API as", *model+")")
	} else {
		url, stop, err := startScriptedModel()
		if err != nil {
			log.Fatal(err)
		}
		defer stop()
		opts = append(opts, option.WithBaseURL(url), option.WithAPIKey("offline"))
		fmt.Println("(offline: a scripted model plays the assistant; set ANTHROPIC_API_KEY for the real one)")
	}
	client := anthropic.NewClient(opts...)
	if err := run(context.Background(), os.Stdout, client.Messages, anthropic.Model(*model), command, args, !*deny); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, w io.Writer, msgs anthropic.MessageService, model anthropic.Model, command string, args []string, approve bool) error {
	conn := mcpgo.Stdio(command, args, mcpgo.WithName("crm"))
	defer conn.Close()
	dir, err := os.MkdirTemp("", "agent-approvals")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	store, err := filestore.Open(dir)
	if err != nil {
		return err
	}
	defer store.Close()
	gate := mcpruntime.NewGate(store)
	ctx = mcpruntime.WithPrincipal(ctx, "alice", "tok-alice")

	// A least-privilege toolset: the model can search, read and update
	// deals, nothing else; update_deal is not read-only, so it is gated.
	newLoop := func() (*mcpanthropic.Loop, error) {
		crm := crmapi.NewClient(conn, mcpruntime.WithIdentity(mcpruntime.ContextPrincipal), mcpruntime.WithGate(gate))
		ts, err := crm.Toolset(crmapi.ToolSearchDeals, crmapi.ToolGetDeal, crmapi.ToolUpdateDeal)
		if err != nil {
			return nil, err
		}
		set, err := agent.New(agent.DialectJSONSchema, agent.Source{Tools: ts})
		if err != nil {
			return nil, err
		}
		return &mcpanthropic.Loop{
			Client: msgs, Tools: set,
			Params:    anthropic.MessageNewParams{Model: model, MaxTokens: 1024, System: []anthropic.TextBlockParam{{Text: "You manage a CRM with the tools given. Be brief."}}},
			OnMessage: func(m *anthropic.Message) { printMessage(w, m) },
		}, nil
	}
	loop, err := newLoop()
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "user:", task)
	o, err := loop.Run(ctx, []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(task))})
	if err != nil {
		return err
	}
	for o.Pause != nil {
		// The pause is plain JSON: a real program stores it and asks a
		// person, and a later process picks it up.
		stored, err := json.Marshal(o.Pause)
		if err != nil {
			return err
		}
		// What a person is shown comes from the approval store, checked
		// against the pause.
		as, err := o.Pause.Approvals(ctx, loop.Tools)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "\n-- paused: %d call(s) wait for approval (pause state: %d bytes of JSON)\n", len(as), len(stored))
		for _, a := range as {
			fmt.Fprintf(w, "   %s %s for %s: %s\n", a.Tool, a.Args, a.Principal, a.Why)
			if approve {
				fmt.Fprintln(w, "   a person approves it")
				err = gate.Approve(ctx, a.ID, a.Digest)
			} else {
				fmt.Fprintln(w, "   a person denies it")
				err = gate.Deny(ctx, a.ID, "the pilot is not signed yet")
			}
			if err != nil {
				return err
			}
		}
		p, err := agent.ParsePause(stored)
		if err != nil {
			return err
		}
		fresh, err := newLoop()
		if err != nil {
			return err
		}
		fmt.Fprintln(w, "-- resumed in a fresh loop")
		if o, err = fresh.Resume(ctx, p); err != nil {
			return err
		}
		loop = fresh
	}
	d, err := crmapi.NewGetDeal(conn).Call(ctx, crmapi.GetDealInput{DealID: "D-2001"})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nthe CRM now has D-2001 in stage %s with notes %q\n", d.Output.Stage, d.Output.Notes)
	return nil
}

func printMessage(w io.Writer, m *anthropic.Message) {
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			fmt.Fprintln(w, "assistant:", strings.TrimSpace(b.Text))
		case "tool_use":
			fmt.Fprintf(w, "assistant calls %s %s\n", b.Name, b.Input)
		}
	}
}
