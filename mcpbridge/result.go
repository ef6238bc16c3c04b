package mcpbridge

import (
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// failure is the structured content of a failed meta-tool call.
type failure struct {
	SessionID string     `json:"sessionId,omitzero"`
	ToolID    string     `json:"toolId,omitzero"`
	Success   bool       `json:"success"`
	Error     *callError `json:"error"`
}

// structured returns a tool result whose structured content is v, repeated as JSON text
// for clients that read only content (as the MCP spec recommends). The text is the
// bridge's own: v holds nothing an app wrote.
func structured(v any, isError bool, extra ...mcp.Content) (*mcp.CallToolResult, error) {
	return encodeResult(v, isError, false, extra)
}

// appStructured is structured for a v that holds app text (results, names, descriptions,
// an app's error): its JSON text is framed as the app's (appJSON). The structured content
// stays the plain value, for programs.
func appStructured(v any, isError bool, extra ...mcp.Content) (*mcp.CallToolResult, error) {
	return encodeResult(v, isError, true, extra)
}

// appStructuredEncoded is appStructured for a v already encoded as b (by fitCall or
// fitBatch: wire.Marshal, which is encodeResult's encoding); nil b encodes v.
func appStructuredEncoded(b []byte, v any, isError bool, extra ...mcp.Content) (*mcp.CallToolResult, error) {
	if b == nil {
		return encodeResult(v, isError, true, extra)
	}
	return resultOf(b, isError, true, extra), nil
}

func encodeResult(v any, isError, fromApp bool, extra []mcp.Content) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		return nil, fmt.Errorf("mcpbridge: encode result: %w", err)
	}
	return resultOf(b, isError, fromApp, extra), nil
}

// resultOf is the tool result of the encoded structured content b.
func resultOf(b []byte, isError, fromApp bool, extra []mcp.Content) *mcp.CallToolResult {
	var text mcp.Content = &mcp.TextContent{Text: string(b)}
	if fromApp {
		text = appJSON(b)
	}
	content := append([]mcp.Content{text}, extra...)
	return &mcp.CallToolResult{Content: content, StructuredContent: jsontext.Value(b), IsError: isError}
}

// fail answers a handler's error: a callError (or a backend failure) becomes an MCP tool
// error carrying it, framed when the app wrote some of it; cancellation is returned as is.
func (br *Bridge) fail(err error, sessionID, toolID string) (*mcp.CallToolResult, error) {
	ce, ok := br.asCallError(err)
	if !ok {
		return nil, err
	}
	return encodeResult(failure{SessionID: sessionID, ToolID: toolID, Error: ce}, true, ce.fromApp, nil)
}
