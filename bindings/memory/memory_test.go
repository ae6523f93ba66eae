package memory_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgen/mcpgen/bindings"
	"github.com/mcpgen/mcpgen/bindings/internal/livetest"
	"github.com/mcpgen/mcpgen/bindings/memory"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// server is the pinned release, started once for the package's tests with
// its graph in a temporary file.
var (
	server     = &livetest.Server{ID: "memory"}
	memoryFile string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "memory-binding-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	memoryFile = filepath.Join(dir, "memory.jsonl")
	server.Env = []string{"MEMORY_FILE_PATH=" + memoryFile}
	return server.Run(m)
}

func TestLiveListingMatchesManifest(t *testing.T) { server.Check(t) }

func TestDoc(t *testing.T) {
	livetest.CheckDoc(t, bindings.MemoryPackage.String(), memory.Descriptors())
}

// TestGraph builds a small graph, reads it back every way the server
// offers, and takes it apart again, all through typed calls.
func TestGraph(t *testing.T) {
	mem := memory.NewClient(server.Need(t))
	ctx := context.Background()

	created, err := mem.CreateEntities(ctx, livetest.Input(t, memory.DecodeCreateEntitiesInput, `{"entities": [
		{"name": "Grace Hopper", "entityType": "person", "observations": ["wrote the first compiler"]},
		{"name": "COBOL", "entityType": "language", "observations": []}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(created.Output.Entities) != 2 || created.Output.Entities[0].Name != "Grace Hopper" || created.Source != mcpruntime.FromStructuredContent {
		t.Fatalf("create_entities: %+v from %v", created.Output, created.Source)
	}
	rel, err := mem.CreateRelations(ctx, livetest.Input(t, memory.DecodeCreateRelationsInput,
		`{"relations": [{"from": "Grace Hopper", "to": "COBOL", "relationType": "designed"}]}`))
	if err != nil || len(rel.Output.Relations) != 1 || rel.Output.Relations[0].RelationType != "designed" {
		t.Fatalf("create_relations: %+v, %v", rel, err)
	}
	obs, err := mem.AddObservations(ctx, livetest.Input(t, memory.DecodeAddObservationsInput,
		`{"observations": [{"entityName": "COBOL", "contents": ["business oriented"]}]}`))
	if err != nil || len(obs.Output.Results) != 1 || !slices.Equal(obs.Output.Results[0].AddedObservations, []string{"business oriented"}) {
		t.Fatalf("add_observations: %+v, %v", obs, err)
	}

	found, err := mem.SearchNodes(ctx, memory.SearchNodesInput{Query: "compiler"})
	if err != nil || len(found.Output.Entities) != 1 || found.Output.Entities[0].Name != "Grace Hopper" {
		t.Errorf("search_nodes: %+v, %v", found, err)
	}
	opened, err := mem.OpenNodes(ctx, memory.OpenNodesInput{Names: []string{"Grace Hopper", "COBOL"}})
	if err != nil || len(opened.Output.Entities) != 2 || len(opened.Output.Relations) != 1 {
		t.Errorf("open_nodes: %+v, %v", opened, err)
	}
	graph, err := mem.ReadGraph(ctx, memory.ReadGraphInput{})
	if err != nil || len(graph.Output.Entities) < 2 {
		t.Errorf("read_graph: %+v, %v", graph, err)
	}
	// The graph went to the file the server was given, nowhere else.
	if data, err := os.ReadFile(memoryFile); err != nil || !strings.Contains(string(data), "Grace Hopper") {
		t.Errorf("the memory file: %v\n%s", err, data)
	}

	del, err := mem.DeleteObservations(ctx, livetest.Input(t, memory.DecodeDeleteObservationsInput,
		`{"deletions": [{"entityName": "COBOL", "observations": ["business oriented"]}]}`))
	if err != nil || !del.Output.Success {
		t.Errorf("delete_observations: %+v, %v", del, err)
	}
	delRel, err := mem.DeleteRelations(ctx, livetest.Input(t, memory.DecodeDeleteRelationsInput,
		`{"relations": [{"from": "Grace Hopper", "to": "COBOL", "relationType": "designed"}]}`))
	if err != nil || !delRel.Output.Success {
		t.Errorf("delete_relations: %+v, %v", delRel, err)
	}
	delEnt, err := mem.DeleteEntities(ctx, memory.DeleteEntitiesInput{EntityNames: []string{"Grace Hopper", "COBOL"}})
	if err != nil || !delEnt.Output.Success {
		t.Errorf("delete_entities: %+v, %v", delEnt, err)
	}
	if found, err := mem.SearchNodes(ctx, memory.SearchNodesInput{Query: "Hopper"}); err != nil || len(found.Output.Entities) != 0 {
		t.Errorf("after deleting: %+v, %v", found, err)
	}
}

// TestGateHoldsMutations: with a gate, a call to a tool the server does not
// annotate read-only is held and sends nothing; a read-only one runs.
func TestGateHoldsMutations(t *testing.T) {
	gate := mcpruntime.NewGate(mcpruntime.NewMemoryStore(), memory.GateOptions()...)
	mem := memory.NewClient(server.Need(t), mcpruntime.WithGate(gate))
	ctx := context.Background()

	_, err := mem.CreateEntities(ctx, livetest.Input(t, memory.DecodeCreateEntitiesInput,
		`{"entities": [{"name": "Held", "entityType": "test", "observations": []}]}`))
	var pending *mcpruntime.ApprovalRequiredError
	if !errors.As(err, &pending) || pending.Approval.Tool != "create_entities" {
		t.Fatalf("create_entities with a gate: want a pending approval, got %v", err)
	}
	found, err := mem.SearchNodes(ctx, memory.SearchNodesInput{Query: "Held"})
	if err != nil {
		t.Fatalf("search_nodes is read-only and must not be gated: %v", err)
	}
	if len(found.Output.Entities) != 0 {
		t.Errorf("the held call reached the server: %+v", found.Output)
	}
	if err := gate.Deny(ctx, pending.Approval.ID, "not in a test"); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.ResumeCreateEntities(ctx, pending.Approval.ID); err == nil {
		t.Error("a denied call resumed")
	}
}
