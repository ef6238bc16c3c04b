// Package mcpbridge offers the tools of the apps connected to an Ansight host to MCP
// clients (AI agents), through the official MCP Go SDK. docs/mcp.md is the user's view.
//
// The bridge talks to the host only through [hostapi.Backend], so it behaves the same
// over the resident host's control socket and in process. It keeps an agent's context
// small: instead of one MCP tool per app tool (whose schemas would fill the context
// window), it offers meta-tools —
//
//   - ansight_list_sessions: the connected apps;
//   - ansight_search_app_tools: a compact, bounded index search (ids, one-line
//     descriptions, policy, denials; never schemas);
//   - ansight_describe_app_tool: one tool's full definition with its schemas;
//   - ansight_call_app_tool and ansight_call_app_tools: one call, or a batch of 1..32;
//   - ansight_snapshot: the screen as compact text with short refs (e5) that
//     ui.perform_action takes (snapshot.go);
//   - ansight_take_screenshot: the app's screen as MCP image content;
//   - ansight_read_result: pages of a result over Options.MaxResultBytes (spill.go).
//
// Optionally (Options.ExposeAppTools) the tools of one session are also offered one by
// one with their real schemas, under names every client accepts (names.go), and the bridge
// sends notifications/tools/list_changed when that session's catalog or tool availability
// changes.
//
// On stdio, `ansight mcp` serves through LineTransport (line.go): the SDK's newline-delimited
// JSON-RPC framing with a reader that decodes each message once, instead of three times
// with a fresh 32 KiB decoder each, as the SDK's own transport does.
//
// Results carry images as image content (image.go), report transfers as
// notifications/progress (progress.go), and a cancelled request gets no response
// (cancel.go). Over HTTP (http.go) every request needs the run's bearer token and web
// pages are answered only from an allow-list of origins.
//
// Policy: the bridge never calls a tool above the session's grant, and calls critical
// tools only with Options.AllowCritical. Every refusal says what would allow the call, in
// terms of the host mode (errors.go, the one place where failures become codes, kinds,
// retryable flags and hints). Tool failures are MCP tool errors (isError), so that an
// agent can correct itself.
package mcpbridge
