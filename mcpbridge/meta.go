package mcpbridge

import (
	"context"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/schema"
	"github.com/ansight-go/ansight/wire"
)

// Names of the meta-tools. They mirror the official host's ansight_* operations.
const (
	ToolListSessions   = "ansight_list_sessions"
	ToolSearchAppTools = "ansight_search_app_tools"
	ToolDescribeApp    = "ansight_describe_app_tool"
	ToolCallAppTool    = "ansight_call_app_tool"
	ToolCallAppTools   = "ansight_call_app_tools"
	ToolTakeScreenshot = "ansight_take_screenshot"
	ToolSnapshot       = "ansight_snapshot"
	ToolReadResult     = "ansight_read_result"
	// ToolRecordFlow is ours: the client's own calls as a flow (docs/flows.md).
	ToolRecordFlow = "ansight_record_flow"
)

// metaTool is the static part of one meta-tool.
type metaTool struct {
	name, title, description string
	in, out                  jsontext.Value // out may be nil: plain text answers
	// readOnly: the meta-tool changes nothing (search, describe, screenshot), which also
	// makes it idempotent. The call tools may run write and critical app tools, so they
	// keep MCP's defaults: possibly destructive, not idempotent.
	readOnly bool
}

func (br *Bridge) addMetaTools() {
	addMeta(br, metaTool{ToolListSessions, "List app sessions",
		"Apps connected to the Ansight host: session id, app id, device, state, the session's grant (maxToolPolicy: the highest tool policy the host calls) and catalog revision.",
		listSessionsIn, listSessionsOut, true}, br.listSessions)
	addMeta(br, metaTool{ToolSearchAppTools, "Search app tools",
		"Search the tools of a connected app. Compact on purpose: ids, one-line descriptions, policy (read < write < critical), denials and prerequisites, never schemas; get one tool's schemas with ansight_describe_app_tool. Every word of query must match. By default only tools callable now are listed. When truncated, refine (query, category) rather than raising maxResults.",
		searchIn, searchOut, true}, br.search)
	addMeta(br, metaTool{ToolDescribeApp, "Describe an app tool",
		"One app tool's full definition: argumentsSchema and resultSchema (JSON Schema 2020-12; an object schema without additionalProperties accepts no other properties), prerequisites, and whether it can be called now. Call it before the first call of a tool.",
		describeIn, describeOut, true}, br.describe)
	addMeta(br, metaTool{ToolCallAppTool, "Call an app tool",
		"Call one app tool with arguments matching its argumentsSchema. after captures evidence (visual tree, screenshot: image content) once the call succeeded; snapshot:true adds a fresh ansight_snapshot. ui.perform_action takes a snapshot ref as reference (\"e5\"). A failure is an error result with code, message, retryable, details and a hint: fix the arguments or the app's state, never bypass a denial, retry at most once when retryable.",
		callIn, callOut, false}, br.callTool)
	addMeta(br, metaTool{ToolCallAppTools, "Call app tools in a batch",
		"Call 1 to 32 already-known app tools in order, in one round trip (not for exploring). Stops at the first failure unless continueOnError. Every call is checked against the policy before any runs.",
		batchIn, batchOut, false}, br.callTools)
	addMeta(br, metaTool{ToolSnapshot, "Snapshot the screen",
		"The app's screen as compact text, one line per node (role, name, value, state), with a ref (e5) on each node that takes actions; optionally with the screenshot. Act on a ref with ui.perform_action (reference \"e5\"). Refs name the same node for the whole session.",
		snapshotIn, nil, true}, br.snapshot)
	addMeta(br, metaTool{ToolReadResult, "Read a saved result",
		"Read part of a result that was too large to return (resultId from resultTruncated): pointer (RFC 6901, e.g. /items) picks a member; arrays come a page at a time (offset, nextOffset), long strings a slice at a time.",
		readResultIn, readResultOut, true}, br.readResult)
	addMeta(br, metaTool{ToolTakeScreenshot, "Take a screenshot",
		"The app's current screen as an image (scaled down to maxWidth), with the path of the full-size file the host saved.",
		screenshotIn, screenshotOut, true}, br.takeScreenshot)
	addMeta(br, metaTool{ToolRecordFlow, "Record your calls as a flow",
		"The calls you (this MCP client, by its name) made to a session, as an ansight.flow/v1 flow (YAML): each call with what it returned that is stable, ids you sent back as saved ${name.path} references, UI actions as selectors. Save it as a file and run it with 'ansight test run' to repeat what you did as a test.",
		recordFlowIn, recordFlowOut, true}, br.recordFlow)
}

// addMeta registers a meta-tool whose arguments decode into In. Arguments are checked
// against the tool's input schema first (the SDK leaves that to raw tools), so a handler
// sees only valid input, and a mistake comes back as a tool error listing the violations.
func addMeta[In any](br *Bridge, m metaTool, h func(context.Context, *mcp.CallToolRequest, *In) (*mcp.CallToolResult, error)) {
	compiled, err := schema.Compile(m.in)
	if err != nil {
		panic(fmt.Sprintf("mcpbridge: input schema of %s: %v", m.name, err))
	}
	// Clients see the portable form (every provider accepts it); the exact, closed schema
	// validates what they send, once the JSON text it asks for is decoded.
	advertised, text, err := portableSchema(m.in)
	if err != nil {
		panic(fmt.Sprintf("mcpbridge: input schema of %s: %v", m.name, err))
	}
	annotations := &mcp.ToolAnnotations{Title: m.title, ReadOnlyHint: m.readOnly, IdempotentHint: m.readOnly, OpenWorldHint: new(false)}
	tool := &mcp.Tool{Name: m.name, Title: m.title, Description: m.description, InputSchema: advertised, Annotations: annotations}
	if m.out != nil {
		tool.OutputSchema = m.out
	}
	br.server.AddTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := jsontext.Value(req.Params.Arguments)
		if len(args) == 0 || string(args) == "null" {
			args = jsontext.Value("{}")
		}
		var in In
		if err := decodeInput(compiled, text, args, &in); err != nil {
			err.Hint = "Fix the arguments of " + m.name + " from its inputSchema; details list the violations."
			if m.out == nil {
				return br.failText(err)
			}
			return br.fail(err, "", "")
		}
		return h(ctx, req, &in)
	})
}

// decodeInput decodes the JSON text args hold at the paths text (decodeText), validates
// them against s and decodes them strictly into v.
func decodeInput(s *schema.Schema, text []textPath, args jsontext.Value, v any) *callError {
	args, err := decodeText(args, text)
	if err != nil {
		return &callError{Code: wire.CodeArgumentsInvalid, RefusedBy: refusedByBridge, Message: "invalid arguments: " + err.Error()}
	}
	if violations := s.Validate(args); len(violations) > 0 {
		e := &callError{Code: wire.CodeArgumentsSchemaInvalid, RefusedBy: refusedByBridge,
			Message: fmt.Sprintf("invalid arguments: %s %s", violations[0].Path, violations[0].Message)}
		e.Details, _ = wire.Marshal(struct {
			Errors []schema.Violation `json:"errors"`
		}{violations})
		return e
	}
	if err := wire.Unmarshal(args, v); err != nil {
		return &callError{Code: wire.CodeArgumentsInvalid, RefusedBy: refusedByBridge,
			Message: "invalid arguments: " + err.Error()}
	}
	return nil
}
