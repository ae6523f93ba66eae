// Package github is the typed Go binding of the GitHub MCP server
// (github.com/github/github-mcp-server), at commit 64a49f34 (git describe
// v1.10.1-3-g64a49f34, 2026-08-20): 117 tools over repositories, issues,
// pull requests, Actions, code security, discussions, gists, notifications
// and projects.
//
// # Where the manifest comes from
//
// The server is a Go program, and the module proxy does not serve
// github.com/github/github-mcp-server, so no release could be built and
// snapshotted where these bindings were made. ../mcp/github.json is instead
// the tool listing the project publishes in its repository, one file per
// tool (pkg/github/__toolsnaps__/*.snap at that commit, MIT licensed),
// gathered into one tools/list result and converted to an mcpgen manifest
// by TestManifestFromPublishedListing, which checks the committed manifest
// against it. The listing holds every toolset's tools, and find_duplicate,
// issue_dependency_read and issue_dependency_write, which the server offers
// only with their feature flags (--features). It carries no server info,
// protocol version or output schemas (no tool in it declares one), so every
// call's result is its content blocks.
//
// # Starting the server
//
// Build the server at that commit and run it over stdio with a token:
//
//	git clone https://github.com/github/github-mcp-server && cd github-mcp-server
//	git checkout 64a49f34d076b6f5917dae1424521d43c7bcae84 && go build ./cmd/github-mcp-server
//
//	conn := mcpgo.Stdio("github-mcp-server", []string{"stdio", "--toolsets", "all"},
//		mcpgo.WithEnv("GITHUB_PERSONAL_ACCESS_TOKEN="+token), mcpgo.WithSecrets(token))
//	defer conn.Close()
//	gh := github.NewClient(conn, mcpruntime.WithGate(gate))
//
// A running server lists only the toolsets it enables (--toolsets, by
// default a few), and with --read-only only the read-only tools; a call to
// a tool it does not list fails with *mcpruntime.MissingToolError, and
// Client.CheckTools says before any call which tools a server lacks. A
// program with a server registry registers it with bindings.Register
// (Options.GitHubToken), which starts it with --read-only unless
// Options.GitHubWrite is set; the operator must allow the github-mcp-server
// program (MCPGEN_STDIO_COMMANDS).
//
// # Gated tools
//
// The listing does not annotate these 59 tools read-only, so a gate built
// with GateOptions (mcpruntime.NewGate's default policy too) holds each
// call for a person's approval:
//
//   - create_branch, create_or_update_file, delete_file, push_files,
//     create_repository, delete_repository, fork_repository,
//     star_repository, unstar_repository (repositories)
//   - create_issue, issue_write, add_issue_comment, add_issue_comment_reaction,
//     add_issue_reaction, add_sub_issue, remove_sub_issue,
//     reprioritize_sub_issue, sub_issue_write, issue_dependency_write,
//     set_issue_fields, label_write, update_issue_assignees,
//     update_issue_body, update_issue_labels, update_issue_milestone,
//     update_issue_state, update_issue_title, update_issue_type,
//     assign_copilot_to_issue, assign_copilot_to_issue_with_intent (issues)
//   - create_pull_request, update_pull_request, update_pull_request_body,
//     update_pull_request_branch, update_pull_request_draft_state,
//     update_pull_request_state, update_pull_request_title,
//     merge_pull_request, request_copilot_review,
//     request_pull_request_reviewers, create_pull_request_review,
//     pull_request_review_write, submit_pending_pull_request_review,
//     delete_pending_pull_request_review, add_comment_to_pending_review,
//     add_pull_request_review_comment,
//     add_pull_request_review_comment_reaction,
//     add_reply_to_pull_request_comment, resolve_review_thread,
//     unresolve_review_thread (pull requests)
//   - actions_run_trigger, create_gist, update_gist,
//     discussion_comment_write, projects_write, dismiss_notification,
//     mark_all_notifications_read, manage_notification_subscription,
//     manage_repository_notification_subscription (the rest)
//
// The other 58 tools are annotated read-only.
//
// # Tests
//
// No GitHub server runs in the tests (it needs a build this machine cannot
// fetch, a token and the network). They check the committed manifest
// against the published listing, and call every tool through the bindings
// against an in-process stand-in that serves the published tool objects
// and checks each call's arguments against the published input schema:
// what a model sends reaches the server unchanged and valid, and a gate
// holds every tool listed above without sending anything.
package github

//go:generate go run github.com/mcpgen/mcpgen/cmd/mcpgen generate --config ../mcpgen.yaml --server github
