package mcpbridge

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

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
	// Snapshot asks for a snapshot of the screen once the call ended.
	Snapshot bool `json:"snapshot,omitzero"`
	// TimeoutMS is the agent's limit for the call (0: the host derives one).
	TimeoutMS int64 `json:"timeoutMs,omitzero"`
}

// outcome is how one call ended, in a call's answer and in each item of a batch's. A
// result or evidence over the cap is replaced by its truncation note (spill.go).
type outcome struct {
	Success           bool           `json:"success"`
	Message           string         `json:"message,omitzero"`
	Result            jsontext.Value `json:"result,omitzero"`
	ResultTruncated   *truncation    `json:"resultTruncated,omitzero"`
	Evidence          jsontext.Value `json:"evidence,omitzero"`
	EvidenceTruncated *truncation    `json:"evidenceTruncated,omitzero"`
	Error             *callError     `json:"error,omitzero"`
}

type callOutput struct {
	SessionID string `json:"sessionId"`
	ToolID    string `json:"toolId"`
	CallID    string `json:"callId,omitzero"`
	outcome
	Artifacts  []artifactOutput `json:"artifacts,omitempty"`
	Snapshot   string           `json:"snapshot,omitzero"`
	DurationMS int64            `json:"durationMs"`
}

func (br *Bridge) callTool(ctx context.Context, req *mcp.CallToolRequest, in *callInput) (*mcp.CallToolResult, error) {
	// A session the bridge judged a call by before is not looked up again: the call names
	// the catalog revision and grant it is judged by, and the host refuses it, before the
	// app sees it, if either changed (or the session ended); then it is looked up and
	// judged again.
	sess, known := br.policies.known(in.selector)
	if !known {
		var err error
		if sess, err = br.session(ctx, in.selector); err != nil {
			return br.fail(err, in.SessionID, in.ToolID)
		}
	}
	call := in.request()
	call.TimeoutMS = in.TimeoutMS
	prog := startProgress(ctx, req)
	res, err := br.call(ctx, sess, call, prog.report())
	if code := wire.CodeOf(err); code == wire.CodeSessionChanged ||
		known && (code == wire.CodeSessionClosed || code == wire.CodeSessionNotFound) {
		br.policies.forget(sess.ID)
		if sess, err = br.session(ctx, in.selector); err != nil {
			prog.stop(nil)
			return br.fail(err, in.SessionID, in.ToolID)
		}
		res, err = br.call(ctx, sess, call, prog.report())
	}
	prog.stop(artifactsOf(res))
	if err != nil {
		return br.fail(err, sess.ID, in.ToolID)
	}
	out, images := br.callOutputOf(res, in.CallID, newImageBudget())
	if in.Snapshot {
		out.Snapshot = br.snapshotAfter(ctx, sess)
	}
	return appStructuredEncoded(br.fitCall(&out), out, !out.Success, images...)
}

// call checks the bridge's policy, then calls the tool. A tool that failed is a Call with
// Success false; a refusal by the bridge or a host failure is an error.
// A ui.perform_action on a short ref goes through the host's UI operation (refAction).
func (br *Bridge) call(ctx context.Context, sess *hostapi.Session, req hostapi.CallRequest, progress func(hostapi.Progress)) (*hostapi.Call, error) {
	act, err := br.refAction(sess.ID, req)
	if err != nil {
		return nil, err
	}
	ids := []string{req.ToolID}
	if act != nil {
		ids = append(ids, wire.VisualTreeToolID) // the operation captures too
	}
	if err := br.authorize(ctx, sess, ids); err != nil {
		return nil, err
	}
	if act != nil {
		return br.act(ctx, sess.ID, req, act)
	}
	if sess.Revision != "" { // what authorize judged the call by must still hold
		req.IfRevision, req.IfGrant = sess.Revision, sess.MaxToolPolicy
	}
	return br.backend.Call(ctx, sess.ID, req, progress)
}

// authorize refuses, before anything runs, calls of tools above the session's grant and of
// critical tools without AllowCritical. Everything else (unknown tools, unavailable tools,
// arguments) is left to the host, which is authoritative and says which call failed.
func (br *Bridge) authorize(ctx context.Context, sess *hostapi.Session, ids []string) error {
	entries, ok := br.policies.lookup(sess, ids)
	if !ok {
		wanted := slices.Compact(slices.Sorted(slices.Values(ids)))
		tools, err := br.backend.Tools(ctx, sess.ID, hostapi.ToolsRequest{ToolIDs: wanted, Detail: hostapi.DetailSummary})
		if err != nil {
			return err
		}
		entries = make([]*wire.ToolEntry, len(ids))
		for i, id := range ids {
			if j := slices.IndexFunc(tools.Tools, func(e wire.ToolEntry) bool { return e.ID == id }); j >= 0 {
				entries[i] = &tools.Tools[j]
			}
		}
		br.policies.store(sess, ids, entries)
	}
	br.policies.remember(sess)
	for i, id := range ids {
		if entries[i] == nil {
			continue
		}
		if e := br.refusal(entries[i], sess); e != nil {
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

// policyCache keeps what authorize judged a session's tools by — their summary entries:
// policy and the host's denial for the grant — per session, catalog revision and grant,
// so that a call costs one request to the host beside the session's lookup instead of
// two. A tool's policy only changes with the catalog's revision and the host's denial
// only with the grant, both read afresh from the session for every call: a change of
// either misses the cache. A catalog the host has not fetched (no revision) is never
// cached. Tools absent from the catalog are kept as absent (nil), as authorize leaves
// them to the host.
type policyCache struct {
	mu       sync.Mutex
	sessions map[string]*sessionPolicies
}

// sessionPolicies is one session's cached entries, for one revision and grant.
type sessionPolicies struct {
	revision string
	grant    wire.Policy
	tools    map[string]*wire.ToolEntry
	// session is the session as looked up when a call was last judged by these entries
	// (nil until then): ansight_call_app_tool's calls are judged by it without looking the
	// session up (Bridge.callTool), made conditional on its revision and grant. Shared:
	// never modified.
	session *hostapi.Session
}

// Bounds of the policy cache: sessions kept, and tools per session.
const (
	maxPolicySessions = 64
	maxPolicyTools    = 4096
)

// lookup returns the cached entries of ids, in order, when every one of them is cached
// for sess's revision and grant.
func (c *policyCache) lookup(sess *hostapi.Session, ids []string) ([]*wire.ToolEntry, bool) {
	if sess.Revision == "" {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	sp := c.sessions[sess.ID]
	if sp == nil || sp.revision != sess.Revision || sp.grant != sess.MaxToolPolicy {
		return nil, false
	}
	out := make([]*wire.ToolEntry, len(ids))
	for i, id := range ids {
		e, ok := sp.tools[id]
		if !ok {
			return nil, false
		}
		out[i] = e
	}
	return out, true
}

// remember keeps sess, connected and judged by the entries cached for its revision and
// grant, for known.
func (c *policyCache) remember(sess *hostapi.Session) {
	if sess.Revision == "" || sess.State != hostapi.StateConnected {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if sp := c.sessions[sess.ID]; sp != nil && sp.revision == sess.Revision && sp.grant == sess.MaxToolPolicy {
		sp.session = sess
	}
}

// known is the session sel names by id as remembered, if it is.
func (c *policyCache) known(sel selector) (*hostapi.Session, bool) {
	if sel.SessionID == "" {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	sp := c.sessions[sel.SessionID]
	if sp == nil || sp.session == nil || sel.AppID != "" && sel.AppID != sp.session.AppID {
		return nil, false
	}
	return sp.session, true
}

// forget drops what is cached of a session that changed or ended.
func (c *policyCache) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.sessions, id)
}

// store keeps the entries (nil: absent) of ids for sess's revision and grant.
func (c *policyCache) store(sess *hostapi.Session, ids []string, entries []*wire.ToolEntry) {
	if sess.Revision == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	sp := c.sessions[sess.ID]
	if sp == nil || sp.revision != sess.Revision || sp.grant != sess.MaxToolPolicy || len(sp.tools)+len(ids) > maxPolicyTools {
		if c.sessions == nil || len(c.sessions) >= maxPolicySessions && sp == nil {
			c.sessions = map[string]*sessionPolicies{} // a new start beats tracking ages
		}
		sp = &sessionPolicies{revision: sess.Revision, grant: sess.MaxToolPolicy, tools: map[string]*wire.ToolEntry{}}
		c.sessions[sess.ID] = sp
	}
	for i, id := range ids {
		sp.tools[id] = entries[i]
	}
}

// callOutputOf is a call's outcome as the agent sees it, with the images among its
// artifacts as content. A call whose files did not all arrive is a failure.
func (br *Bridge) callOutputOf(res *hostapi.Call, callID string, budget *imageBudget) (callOutput, []mcp.Content) {
	out := callOutput{SessionID: res.SessionID, ToolID: res.ToolID, CallID: callID, outcome: outcome{Success: res.Success}, DurationMS: res.DurationMS}
	if r := res.Result; r != nil {
		out.Message, out.Result, out.Evidence = r.Message, r.Result, evidenceOf(r.Evidence)
	}
	if res.Error != nil {
		out.Error = br.fromToolError(res.Error)
	}
	var images []mcp.Content
	out.Artifacts, images = br.artifacts(res.Artifacts, budget)
	if e := br.artifactFailure(res.Artifacts); e != nil && out.Success {
		out.Success, out.Error = false, e
	}
	return out, images
}

// artifactsOf is the artifacts of a call's outcome (none when there is none).
func artifactsOf(res *hostapi.Call) []hostapi.Artifact {
	if res == nil {
		return nil
	}
	return res.Artifacts
}

// evidenceOf is the evidence as raw JSON, so that it can be set aside when too large.
func evidenceOf(ev map[string]wire.Outcome) jsontext.Value {
	if len(ev) == 0 {
		return nil
	}
	b, err := wire.Marshal(ev)
	if err != nil {
		return nil
	}
	return b
}

// artifactFailure is the error of a call whose files did not all reach the host, or nil.
func (br *Bridge) artifactFailure(list []hostapi.Artifact) *callError {
	var failed []string
	for _, a := range list {
		if a.Status != "complete" {
			failed = append(failed, fmt.Sprintf("%s: %s", a.FileName, strings.TrimSpace(a.Status+" "+a.Error)))
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return br.explain(failf(wire.CodeArtifactFailed, "the tool ran, but %d of %d files did not reach the host (%s)",
		len(failed), len(list), strings.Join(failed, "; ")))
}

// snapshotAfter is the snapshot an agent asked for after a call: the text, or why there
// is none (the call's own outcome stands either way).
func (br *Bridge) snapshotAfter(ctx context.Context, sess *hostapi.Session) string {
	text, _, err := br.capture(ctx, sess, snapshotOptions{})
	if err != nil {
		if ce, ok := br.asCallError(err); ok {
			return "not taken: " + string(ce.Code) + ": " + ce.Message
		}
		return "not taken: " + err.Error()
	}
	return text
}

type batchInput struct {
	selector
	Calls           []callSpec `json:"calls"`
	ContinueOnError bool       `json:"continueOnError,omitzero"`
	Snapshot        bool       `json:"snapshot,omitzero"`
	TimeoutMS       int64      `json:"timeoutMs,omitzero"`
}

type batchOutput struct {
	SessionID    string           `json:"sessionId"`
	Success      bool             `json:"success"`
	Completed    int              `json:"completed"`
	Requested    int              `json:"requested"`
	StoppedEarly bool             `json:"stoppedEarly"`
	Results      []batchItem      `json:"results"`
	Error        *callError       `json:"error,omitzero"`
	Artifacts    []artifactOutput `json:"artifacts,omitempty"`
	Snapshot     string           `json:"snapshot,omitzero"`
	DurationMS   int64            `json:"durationMs"`
}

type batchItem struct {
	Index  int    `json:"index"`
	CallID string `json:"callId,omitzero"`
	ToolID string `json:"toolId,omitzero"`
	outcome
}

func (br *Bridge) callTools(ctx context.Context, req *mcp.CallToolRequest, in *batchInput) (*mcp.CallToolResult, error) {
	sess, err := br.session(ctx, in.selector)
	if err != nil {
		return br.fail(err, in.SessionID, "")
	}
	ids := make([]string, len(in.Calls))
	batch := hostapi.BatchRequest{ContinueOnError: in.ContinueOnError, Calls: make([]hostapi.CallRequest, len(in.Calls)), TimeoutMS: in.TimeoutMS}
	for i, c := range in.Calls {
		ids[i], batch.Calls[i] = c.ToolID, c.request()
		if err := br.expandRef(sess.ID, &batch.Calls[i]); err != nil {
			if ce, ok := err.(*callError); ok {
				ce.Message = fmt.Sprintf("call %d: %s", i, ce.Message)
			}
			return br.fail(err, sess.ID, c.ToolID)
		}
	}
	if err := br.authorize(ctx, sess, ids); err != nil {
		return br.fail(err, sess.ID, "")
	}
	prog := startProgress(ctx, req)
	res, err := br.backend.Batch(ctx, sess.ID, batch, prog.report())
	var arts []hostapi.Artifact
	if res != nil {
		arts = res.Artifacts
	}
	prog.stop(arts)
	if err != nil {
		return br.fail(err, sess.ID, "")
	}
	out := batchOutput{SessionID: sess.ID, Success: res.Success, Requested: len(in.Calls), Results: []batchItem{}, DurationMS: res.DurationMS}
	if res.Error != nil {
		out.Error = br.fromToolError(res.Error)
	}
	if r := res.Result; r != nil {
		out.Completed, out.Requested, out.StoppedEarly = r.Completed, r.Requested, r.StoppedEarly
		for _, it := range r.Results {
			item := batchItem{Index: it.Index, CallID: it.CallID, ToolID: it.ToolID,
				outcome: outcome{Success: it.Success, Message: it.Message, Result: it.Result, Evidence: evidenceOf(it.Evidence)}}
			if it.Error != nil {
				item.Error = br.fromWireError(it.Error)
			}
			out.Results = append(out.Results, item)
		}
	}
	var images []mcp.Content
	out.Artifacts, images = br.artifacts(res.Artifacts, newImageBudget())
	if e := br.artifactFailure(res.Artifacts); e != nil && out.Success {
		out.Success, out.Error = false, e
	}
	if in.Snapshot {
		out.Snapshot = br.snapshotAfter(ctx, sess)
	}
	return appStructuredEncoded(br.fitBatch(&out), out, !out.Success, images...)
}
