package mcpbridge

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/schema"
	"github.com/ansight-go/ansight/wire"
)

// exposer offers the tools of one session as MCP tools of their own and keeps them in line
// with the session's catalog: the SDK sends notifications/tools/list_changed whenever a
// tool is added, replaced or removed.
type exposer struct {
	br     *Bridge
	target string // a session id, or an app id whose connected session is followed

	syncMu sync.Mutex // serializes sync

	mu           sync.Mutex // guards the fields below, read by tool handlers
	sessionID    string
	revision     string
	availability string
	tools        map[string]exposedTool // by name
}

// exposedTool is what the exposer remembers of an exposed tool.
type exposedTool struct {
	toolID      string            // the app's tool id
	fingerprint [sha256.Size]byte // of its MCP definition: replaced only when it changes
	structured  bool              // it declares an output schema
	text        []textPath        // where its portable schema asks for JSON text
}

func newExposer(br *Bridge, target string) *exposer {
	return &exposer{br: br, target: target, tools: map[string]exposedTool{}}
}

// watch syncs every interval until ctx ends.
func (x *exposer) watch(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// A sync that hangs (an app that stopped answering) must not stop later ones.
		sctx, cancel := context.WithTimeout(ctx, max(10*interval, 10*time.Second))
		if _, err := x.sync(sctx); err != nil && ctx.Err() == nil {
			x.br.opts.Logger.Debug("mcp: sync exposed tools", "target", x.target, "err", err)
		}
		cancel()
	}
}

// sync brings the exposed tools in line with the target session's catalog, and reports
// whether the set of exposed tools changed. While the catalog revision and availability
// are unchanged it costs one conditional query.
func (x *exposer) sync(ctx context.Context) (changed bool, err error) {
	x.syncMu.Lock()
	defer x.syncMu.Unlock()
	sess, err := x.resolve(ctx)
	if err != nil {
		return false, err
	}
	if sess == nil { // the app is gone: nothing can be called
		return x.apply("", "", "", nil), nil
	}
	x.mu.Lock()
	same := sess.ID == x.sessionID && x.revision != ""
	rev, avail := x.revision, x.availability
	x.mu.Unlock()
	if same {
		t, err := x.br.backend.Tools(ctx, sess.ID, hostapi.ToolsRequest{IfRevision: rev, MaxResults: 1})
		if err != nil {
			return false, err
		}
		if t.Unchanged && t.AvailabilityRevision == avail {
			return false, nil
		}
	}
	full, err := x.br.backend.Tools(ctx, sess.ID, hostapi.ToolsRequest{Detail: hostapi.DetailFull})
	if err != nil {
		return false, err
	}
	var callable []*wire.ToolEntry
	ids := make([]string, 0, len(full.Tools))
	for i := range full.Tools {
		e := &full.Tools[i]
		if v := x.br.judge(e, sess.MaxToolPolicy); v.aboveGrant || v.denial != nil {
			continue
		}
		callable = append(callable, e)
		ids = append(ids, e.ID)
	}
	names := exposedNames(ids)
	desired := map[string]desiredTool{}
	for _, e := range callable {
		t, text, err := mcpTool(e, names, x.br.opts.SchemaProfile)
		if err != nil {
			x.br.opts.Logger.Warn("mcp: not exposing an app tool", "tool", e.ID, "err", err)
			continue
		}
		if other, taken := desired[t.Name]; taken {
			x.br.opts.Logger.Warn("mcp: two app tools map to one name", "name", t.Name, "tools", []string{other.toolID, e.ID})
			continue
		}
		desired[t.Name] = desiredTool{t, e.ID, text}
	}
	return x.apply(sess.ID, full.Revision, full.AvailabilityRevision, desired), nil
}

// resolve finds the target's connected session (nil when there is none).
func (x *exposer) resolve(ctx context.Context) (*hostapi.Session, error) {
	list, err := x.br.backend.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range list.Sessions {
		if s.ID == x.target {
			if s.State != hostapi.StateConnected {
				return nil, nil
			}
			return &s, nil
		}
	}
	if m := connected(list.Sessions, x.target); len(m) > 0 {
		return &m[0], nil
	}
	return nil, nil
}

// desiredTool is an MCP tool the exposer should offer, for the app tool toolID.
type desiredTool struct {
	*mcp.Tool
	toolID string
	text   []textPath
}

// apply replaces the exposed tools by desired, touching only those that changed, so that
// clients are notified only of real changes.
func (x *exposer) apply(sessionID, revision, availability string, desired map[string]desiredTool) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.sessionID, x.revision, x.availability = sessionID, revision, availability
	var removed []string
	for name := range x.tools {
		if _, ok := desired[name]; !ok {
			removed = append(removed, name)
			delete(x.tools, name)
		}
	}
	if len(removed) > 0 {
		x.br.server.RemoveTools(removed...)
	}
	changed := len(removed) > 0
	for _, name := range slices.Sorted(maps.Keys(desired)) {
		t := desired[name]
		fp := fingerprint(t.Tool)
		if old, ok := x.tools[name]; ok && old.fingerprint == fp && old.toolID == t.toolID {
			continue
		}
		x.tools[name] = exposedTool{toolID: t.toolID, fingerprint: fp, structured: t.OutputSchema != nil, text: t.text}
		x.br.server.AddTool(t.Tool, x.handler(name))
		changed = true
	}
	return changed
}

// fingerprint identifies a tool's whole MCP definition.
func fingerprint(t *mcp.Tool) [sha256.Size]byte {
	b, _ := json.Marshal(t) // struct fields in order, map keys sorted: deterministic
	return sha256.Sum256(b)
}

// current is the session the exposed tools belong to ("" when none) and what is known of
// the tool the name stands for.
func (x *exposer) current(name string) (sessionID string, t exposedTool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.sessionID, x.tools[name]
}

// handler calls the app tool behind the exposed name. Its result is the tool's result
// (structured when the tool declares an object result schema), image artifacts as image
// content; a failure is an MCP tool error whose text carries code, message, retryable,
// details and hint.
func (x *exposer) handler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		br := x.br
		sid, tool := x.current(name)
		if sid == "" || tool.toolID == "" {
			return br.failText(failf(wire.CodeNoSession, "the app of %q is not connected", x.target))
		}
		sess, err := br.session(ctx, selector{SessionID: sid})
		if err != nil {
			return br.failText(err)
		}
		call := hostapi.CallRequest{ToolID: tool.toolID}
		if a := req.Params.Arguments; len(a) > 0 && string(a) != "null" {
			// The app's own schema validates what the JSON text holds.
			if call.Arguments, err = decodeText(jsontext.Value(a), tool.text); err != nil {
				return br.failText(&callError{Code: wire.CodeArgumentsInvalid, RefusedBy: refusedByBridge, Message: "invalid arguments: " + err.Error(),
					Hint: "Give the members the schema asks for as JSON text as a string holding JSON."})
			}
		}
		prog := startProgress(ctx, req)
		res, err := br.call(ctx, sess, call, prog.report())
		prog.stop(artifactsOf(res))
		if err != nil {
			return br.failText(err)
		}
		if !res.Success {
			return br.failText(br.fromToolError(res.Error))
		}
		if e := br.artifactFailure(res.Artifacts); e != nil {
			return br.failText(e)
		}
		return br.appResult(res, tool.structured)
	}
}

// appResult is an app tool's successful result as MCP content: its JSON (structured when
// the tool declares an output schema), its files, the images among them. A result over the
// cap is saved; a tool with an output schema then answers a tool error (clients want
// structured content that matches the schema otherwise), saying the call succeeded.
func (br *Bridge) appResult(res *hostapi.Call, asStructured bool) (*mcp.CallToolResult, error) {
	var result jsontext.Value
	message := ""
	if res.Result != nil {
		result, message = res.Result.Result, res.Result.Message
	}
	out := &mcp.CallToolResult{}
	switch {
	case len(result) > br.opts.MaxResultBytes:
		t := br.spill(result, "The result")
		if asStructured {
			e := br.explain(&callError{Code: wire.CodeResultTooLarge, Kind: wire.KindFailed,
				Message: "The call succeeded; do not repeat it. " + t.Note})
			e.Details, _ = wire.Marshal(t)
			return br.failText(e)
		}
		b, _ := wire.Marshal(struct {
			ResultTruncated *truncation `json:"resultTruncated"`
		}{t})
		out.Content = append(out.Content, &mcp.TextContent{Text: string(b)})
	case len(result) == 0:
		out.Content = append(out.Content, appText(cmp.Or(message, "ok")))
	default:
		out.Content = append(out.Content, appJSON(result))
		if asStructured && result.Kind() == '{' {
			out.StructuredContent = result
		}
	}
	arts, images := br.artifacts(res.Artifacts, newImageBudget())
	for _, a := range arts {
		line := fmt.Sprintf("artifact %s (%s, %d bytes)", a.Path, a.MimeType, a.SizeBytes)
		if a.Image != "" {
			line += ": image " + a.Image
		}
		out.Content = append(out.Content, appText(line)) // the file's name and type are the app's
	}
	out.Content = append(out.Content, images...)
	return out, nil
}

// failText is fail without structured content: an exposed tool's output schema describes
// its result, and clients validate structured content against it even in errors.
func (br *Bridge) failText(err error) (*mcp.CallToolResult, error) {
	ce, ok := br.asCallError(err)
	if !ok {
		return nil, err
	}
	b, err := wire.Marshal(struct {
		Error *callError `json:"error"`
	}{ce})
	if err != nil {
		return nil, err
	}
	var text mcp.Content = &mcp.TextContent{Text: string(b)}
	if ce.fromApp {
		text = appJSON(b)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{text}, IsError: true}, nil
}

// mcpTool is the MCP form of an app tool, named as names says (exposedNames), with its
// input schema in profile and where that schema asks for JSON text, or an error saying why
// it cannot be exposed. The app's id stays in the description and in _meta.
func mcpTool(e *wire.ToolEntry, names map[string]string, profile SchemaProfile) (*mcp.Tool, []textPath, error) {
	name := names[e.ID]
	if !clientToolName.MatchString(name) {
		return nil, nil, fmt.Errorf("no client-safe name for %q", e.ID)
	}
	in, err := clientSchema(e.ArgumentsSchema, true)
	if err != nil {
		return nil, nil, fmt.Errorf("argumentsSchema: %w", err)
	}
	var text []textPath
	if profile == SchemaPortable {
		if in, text, err = portableSchema(in); err != nil {
			return nil, nil, fmt.Errorf("argumentsSchema: %w", err)
		}
	}
	// What the app wrote in names and descriptions reaches the model outside any frame:
	// hidden characters are shown escaped (cleanDescription).
	in = cleanSchemaText(in)
	t := &mcp.Tool{Name: name, Title: cleanDescription(e.Name), InputSchema: in,
		Meta: mcp.Meta{MetaToolID: e.ID, MetaPolicy: string(e.Policy)}}
	// An output schema binds the result to structured content, which MCP clients want to be
	// an object: only object results get one.
	if out, err := clientSchema(e.ResultSchema, false); err == nil && len(e.ResultSchema) > 0 {
		t.OutputSchema = cleanSchemaText(out)
	}
	desc := cleanDescription(cmp.Or(e.Description, e.Name))
	desc += " [app tool " + e.ID + ", policy " + string(e.Policy) + "]"
	if len(e.PrerequisiteToolIDs) > 0 {
		first := make([]string, len(e.PrerequisiteToolIDs))
		for i, id := range e.PrerequisiteToolIDs {
			first[i] = cmp.Or(names[id], id)
		}
		desc += " Call first: " + strings.Join(first, ", ") + "."
	}
	t.Description = desc
	t.Annotations = annotations(e)
	return t, text, nil
}

// Keys of an exposed tool's _meta.
const (
	MetaToolID = "ansight/toolId"
	MetaPolicy = "ansight/policy"
)

// annotations are an app tool's MCP hints: read tools are read-only and idempotent; write
// tools destructive unless marked additive; critical tools always destructive.
func annotations(e *wire.ToolEntry) *mcp.ToolAnnotations {
	a := &mcp.ToolAnnotations{Title: cleanDescription(e.Name), OpenWorldHint: new(false)}
	if e.Policy == wire.PolicyRead {
		a.ReadOnlyHint, a.IdempotentHint = true, true
		return a
	}
	h := catalog.ParseHints(e.Keywords)
	a.IdempotentHint = h.Idempotent
	a.DestructiveHint = new(e.Policy == wire.PolicyCritical || !h.Additive)
	return a
}

// clientSchema adapts an app's object schema for MCP clients: the keywords that make
// validators look elsewhere ($schema, $id) are dropped, a missing type becomes "object" (and
// missing properties of arguments {}: OpenAI wants them), and,
// for arguments (closed), the protocol's closed-object default is restored everywhere
// (schema.Standard): standard validators read a missing additionalProperties as
// "anything goes", and the client should see the schema exactly as the app enforces it.
// Schemas of anything but an object are refused.
func clientSchema(raw jsontext.Value, closed bool) (jsontext.Value, error) {
	if len(raw) == 0 {
		if !closed {
			return nil, fmt.Errorf("no schema")
		}
		return jsontext.Value(`{"type":"object","properties":{},"additionalProperties":false}`), nil
	}
	if closed {
		raw = schema.Standard(raw)
	}
	var m map[string]jsontext.Value
	if err := wire.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	delete(m, "$schema")
	delete(m, "$id")
	switch t, ok := m["type"]; {
	case !ok:
		m["type"] = jsontext.Value(`"object"`)
	case string(t) != `"object"`:
		return nil, fmt.Errorf("the schema is not an object schema (type %s)", t)
	}
	if _, ok := m["properties"]; !ok && closed {
		// OpenAI refuses a parameters object without properties, even an empty one.
		m["properties"] = jsontext.Value(`{}`)
	}
	return wire.Marshal(m)
}
