package mcpbridge

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/flow"
)

// ansight_record_flow gives an agent what it did as a flow (docs/flows.md): the calls of a
// session that the host recorded with this client's origin (mcp:<its name>), through
// flow.Record — the deterministic script an agent's exploration leaves behind.

type recordFlowInput struct {
	selector
	Name string `json:"name,omitzero"`
}

type recordFlowOutput struct {
	SessionID string `json:"sessionId"`
	Origin    string `json:"origin"`
	Steps     int    `json:"steps"`
	Flow      string `json:"flow"`
}

func (br *Bridge) recordFlow(ctx context.Context, _ *mcp.CallToolRequest, in *recordFlowInput) (*mcp.CallToolResult, error) {
	sess, err := br.session(ctx, in.selector)
	if err != nil {
		return br.fail(err, in.SessionID, "")
	}
	origin := originOf(ctx)
	text, steps, err := flow.RecordSession(ctx, br.backend, sess.ID, flow.RecordOptions{Name: in.Name, AppID: sess.AppID, Origins: []string{origin}})
	if err != nil {
		return br.fail(err, sess.ID, "")
	}
	// The flow holds what the app returned: framed as the app's text, like any result.
	return appStructured(recordFlowOutput{SessionID: sess.ID, Origin: origin, Steps: steps, Flow: string(text)}, false)
}
