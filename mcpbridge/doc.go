// Package mcpbridge offers the tools of the apps connected to an Ansight host to MCP
// clients (AI agents), through the official MCP Go SDK.
//
// The bridge talks to the host only through [hostapi.Backend], so it behaves the same
// over the resident host's control socket and in process. It keeps an agent's context
// small: instead of one MCP tool per app tool (whose schemas would fill the context
// window), it offers six meta-tools —
//
//   - ansight_list_sessions: the connected apps;
//   - ansight_search_app_tools: a compact, bounded index search (ids, one-line
//     descriptions, policy, denials; never schemas);
//   - ansight_describe_app_tool: one tool's full definition with its schemas;
//   - ansight_call_app_tool and ansight_call_app_tools: one call, or a batch of 1..32;
//   - ansight_take_screenshot: the app's screen as MCP image content.
//
// Optionally (Options.ExposeAppTools) the tools of one session are also offered one by
// one with their real schemas, and the bridge sends notifications/tools/list_changed when
// that session's catalog or tool availability changes.
//
// Policy: the bridge never offers or calls a tool above the session's grant, and calls
// critical tools only when started with Options.AllowCritical. Every refusal says what
// would allow the call. Tool failures are MCP tool errors (isError) carrying the code,
// message, retryable flag and details, so that an agent can correct itself.
package mcpbridge
