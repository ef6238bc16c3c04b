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
// for clients that read only content (as the MCP spec recommends).
func structured(v any, isError bool, extra ...mcp.Content) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		return nil, fmt.Errorf("mcpbridge: encode result: %w", err)
	}
	content := append([]mcp.Content{&mcp.TextContent{Text: string(b)}}, extra...)
	return &mcp.CallToolResult{Content: content, StructuredContent: jsontext.Value(b), IsError: isError}, nil
}

// fail answers a handler's error: a callError (or a backend failure) becomes an MCP tool
// error carrying it; cancellation is returned as is.
func (br *Bridge) fail(err error, sessionID, toolID string) (*mcp.CallToolResult, error) {
	ce, ok := br.asCallError(err)
	if !ok {
		return nil, err
	}
	return structured(failure{SessionID: sessionID, ToolID: toolID, Error: ce}, true)
}
