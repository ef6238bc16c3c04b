package mcpbridge

import (
	"context"
	"slices"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// callSpec is one call as an agent writes it.
type callSpec struct {
	ToolID    string         `json:"toolId"`
	Arguments jsontext.Value `json:"arguments,omitzero"`
	CallID    string         `json:"callId,omitzero"`
	After     *wire.After    `json:"after,omitzero"`
}

func (c callSpec) request() hostapi.CallRequest {
	return hostapi.CallRequest{ToolID: c.ToolID, Arguments: c.Arguments, CallID: c.CallID, After: c.After}
}

type callInput struct {
	selector
	callSpec
}

type callOutput struct {
	SessionID  string                  `json:"sessionId"`
	ToolID     string                  `json:"toolId"`
	CallID     string                  `json:"callId,omitzero"`
	Success    bool                    `json:"success"`
	Message    string                  `json:"message,omitzero"`
	Result     jsontext.Value          `json:"result,omitzero"`
	Evidence   map[string]wire.Outcome `json:"evidence,omitzero"`
	Error      *callError              `json:"error,omitzero"`
	Artifacts  []hostapi.Artifact      `json:"artifacts,omitempty"`
	DurationMS int64                   `json:"durationMs"`
}

func (br *Bridge) callTool(ctx context.Context, in *callInput) (*mcp.CallToolResult, error) {
	sess, err := br.session(ctx, in.selector)
	if err != nil {
		return fail(err, in.SessionID, in.ToolID)
	}
	res, err := br.call(ctx, sess, in.request())
	if err != nil {
		return fail(err, sess.ID, in.ToolID)
	}
	return structured(callOutputOf(res, in.CallID), !res.Success)
}

// call checks the bridge's policy, then calls the tool. A tool that failed is a Call with
// Success false; a refusal by the bridge or a host failure is an error.
func (br *Bridge) call(ctx context.Context, sess *hostapi.Session, req hostapi.CallRequest) (*hostapi.Call, error) {
	if err := br.authorize(ctx, sess, []string{req.ToolID}); err != nil {
		return nil, err
	}
	return br.backend.Call(ctx, sess.ID, req, nil)
}

// authorize refuses, before anything runs, calls of tools above the session's grant and of
// critical tools without AllowCritical. Everything else (unknown tools, unavailable tools,
// arguments) is left to the host, which is authoritative and says which call failed.
func (br *Bridge) authorize(ctx context.Context, sess *hostapi.Session, ids []string) error {
	wanted := slices.Compact(slices.Sorted(slices.Values(ids)))
	tools, err := br.backend.Tools(ctx, sess.ID, hostapi.ToolsRequest{ToolIDs: wanted, Detail: hostapi.DetailSummary})
	if err != nil {
		return err
	}
	for i, id := range ids {
		j := slices.IndexFunc(tools.Tools, func(e wire.ToolEntry) bool { return e.ID == id })
		if j < 0 {
			continue
		}
		if e := br.refusal(&tools.Tools[j], sess); e != nil {
			if len(ids) > 1 {
				e.Details, _ = wire.Marshal(struct {
					Index  int    `json:"index"`
					ToolID string `json:"toolId"`
				}{i, id})
			}
			return e
		}
	}
	return nil
}

func callOutputOf(res *hostapi.Call, callID string) callOutput {
	out := callOutput{SessionID: res.SessionID, ToolID: res.ToolID, CallID: callID, Success: res.Success,
		Artifacts: res.Artifacts, DurationMS: res.DurationMS}
	if r := res.Result; r != nil {
		out.Message, out.Result, out.Evidence = r.Message, r.Result, r.Evidence
	}
	if res.Error != nil {
		out.Error = fromToolError(res.Error)
	}
	return out
}

type batchInput struct {
	selector
	Calls           []callSpec `json:"calls"`
	ContinueOnError bool       `json:"continueOnError,omitzero"`
}

type batchOutput struct {
	SessionID    string             `json:"sessionId"`
	Success      bool               `json:"success"`
	Completed    int                `json:"completed"`
	Requested    int                `json:"requested"`
	StoppedEarly bool               `json:"stoppedEarly"`
	Results      []batchItem        `json:"results"`
	Error        *callError         `json:"error,omitzero"`
	Artifacts    []hostapi.Artifact `json:"artifacts,omitempty"`
	DurationMS   int64              `json:"durationMs"`
}

type batchItem struct {
	Index    int                     `json:"index"`
	CallID   string                  `json:"callId,omitzero"`
	ToolID   string                  `json:"toolId,omitzero"`
	Success  bool                    `json:"success"`
	Message  string                  `json:"message,omitzero"`
	Result   jsontext.Value          `json:"result,omitzero"`
	Evidence map[string]wire.Outcome `json:"evidence,omitzero"`
	Error    *callError              `json:"error,omitzero"`
}

func (br *Bridge) callTools(ctx context.Context, in *batchInput) (*mcp.CallToolResult, error) {
	sess, err := br.session(ctx, in.selector)
	if err != nil {
		return fail(err, in.SessionID, "")
	}
	ids := make([]string, len(in.Calls))
	req := hostapi.BatchRequest{ContinueOnError: in.ContinueOnError, Calls: make([]hostapi.CallRequest, len(in.Calls))}
	for i, c := range in.Calls {
		ids[i], req.Calls[i] = c.ToolID, c.request()
	}
	if err := br.authorize(ctx, sess, ids); err != nil {
		return fail(err, sess.ID, "")
	}
	res, err := br.backend.Batch(ctx, sess.ID, req, nil)
	if err != nil {
		return fail(err, sess.ID, "")
	}
	out := batchOutput{SessionID: sess.ID, Success: res.Success, Requested: len(in.Calls), Results: []batchItem{},
		Artifacts: res.Artifacts, DurationMS: res.DurationMS}
	if res.Error != nil {
		out.Error = fromToolError(res.Error)
	}
	if r := res.Result; r != nil {
		out.Completed, out.Requested, out.StoppedEarly = r.Completed, r.Requested, r.StoppedEarly
		for _, it := range r.Results {
			item := batchItem{Index: it.Index, CallID: it.CallID, ToolID: it.ToolID, Success: it.Success,
				Message: it.Message, Result: it.Result, Evidence: it.Evidence}
			if it.Error != nil {
				item.Error = fromWireError(it.Error)
			}
			out.Results = append(out.Results, item)
		}
	}
	return structured(out, !out.Success)
}
