package mcpbridge

import (
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/schema"
	"github.com/ansight-go/ansight/wire"
)

// maxToolNameLength is the longest MCP tool name clients accept (SEP-986: 1..64 of
// [A-Za-z0-9_.-], stricter than the Go SDK's 128, because clients enforce it).
const maxToolNameLength = 64

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
	fingerprint [sha256.Size]byte // of its MCP definition: replaced only when it changes
	structured  bool              // it declares an output schema
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
	desired := map[string]*mcp.Tool{}
	for i := range full.Tools {
		e := &full.Tools[i]
		if v := x.br.judge(e, sess.MaxToolPolicy); v.aboveGrant || v.denial != nil {
			continue
		}
		t, err := mcpTool(e)
		if err != nil {
			x.br.opts.Logger.Warn("mcp: not exposing an app tool", "tool", e.ID, "err", err)
			continue
		}
		desired[t.Name] = t
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

// apply replaces the exposed tools by desired, touching only those that changed, so that
// clients are notified only of real changes.
func (x *exposer) apply(sessionID, revision, availability string, desired map[string]*mcp.Tool) bool {
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
		fp := fingerprint(t)
		if old, ok := x.tools[name]; ok && old.fingerprint == fp {
			continue
		}
		x.tools[name] = exposedTool{fingerprint: fp, structured: t.OutputSchema != nil}
		x.br.server.AddTool(t, x.handler(name))
		changed = true
	}
	return changed
}

func fingerprint(t *mcp.Tool) [sha256.Size]byte {
	b, _ := wire.Marshal(struct {
		D string         `json:"d"`
		T string         `json:"t"`
		I jsontext.Value `json:"i"`
		O jsontext.Value `json:"o,omitzero"`
		R bool           `json:"r"`
		X *bool          `json:"x"`
	}{t.Description, t.Title, t.InputSchema.(jsontext.Value), outputOf(t), t.Annotations.ReadOnlyHint, t.Annotations.DestructiveHint})
	return sha256.Sum256(b)
}

func outputOf(t *mcp.Tool) jsontext.Value {
	if v, ok := t.OutputSchema.(jsontext.Value); ok {
		return v
	}
	return nil
}

// current is the session the exposed tools belong to ("" when none), and whether the tool
// named name declares an output schema.
func (x *exposer) current(name string) (sessionID string, structured bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.sessionID, x.tools[name].structured
}

// handler calls the app tool toolID of the exposed session. Its result is the tool's result
// (structured when the tool declares an object result schema), image artifacts as image
// content; a failure is an MCP tool error whose text carries code, message, retryable,
// details and hint.
func (x *exposer) handler(toolID string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		sid, structured := x.current(toolID)
		if sid == "" {
			return failText(failf(wire.CodeNoSession, "the app of %q is not connected", x.target))
		}
		sess, err := x.br.session(ctx, selector{SessionID: sid})
		if err != nil {
			return failText(err)
		}
		var args jsontext.Value
		if a := req.Params.Arguments; len(a) > 0 && string(a) != "null" {
			args = jsontext.Value(a)
		}
		res, err := x.br.call(ctx, sess, hostapi.CallRequest{ToolID: toolID, Arguments: args})
		if err != nil {
			return failText(err)
		}
		if !res.Success {
			return failText(fromToolError(res.Error))
		}
		return x.br.appResult(res, structured)
	}
}

// appResult is an app tool's successful result as MCP content.
func (br *Bridge) appResult(res *hostapi.Call, asStructured bool) (*mcp.CallToolResult, error) {
	var result jsontext.Value
	message := ""
	if res.Result != nil {
		result, message = res.Result.Result, res.Result.Message
	}
	text := string(result)
	if len(result) == 0 {
		text = cmp.Or(message, "ok")
	}
	out := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
	if asStructured && len(result) > 0 && result.Kind() == '{' {
		out.StructuredContent = result
	}
	for _, a := range res.Artifacts {
		if a.Path == "" {
			continue
		}
		out.Content = append(out.Content, &mcp.TextContent{Text: fmt.Sprintf("artifact %s (%s, %d bytes)", a.Path, a.MimeType, a.SizeBytes)})
		if strings.HasPrefix(a.MimeType, "image/") {
			if img, err := loadImage(a.Path, a.MimeType, br.opts.ScreenshotMaxWidth); err == nil {
				out.Content = append(out.Content, &mcp.ImageContent{Data: img.data, MIMEType: img.mime})
			}
		}
	}
	return out, nil
}

// failText is fail without structured content: an exposed tool's output schema describes
// its result, and clients validate structured content against it even in errors.
func failText(err error) (*mcp.CallToolResult, error) {
	ce, ok := asCallError(err)
	if !ok {
		return nil, err
	}
	b, err := wire.Marshal(struct {
		Error *callError `json:"error"`
	}{ce})
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, IsError: true}, nil
}

// mcpTool is the MCP form of an app tool, or an error saying why it cannot be exposed.
func mcpTool(e *wire.ToolEntry) (*mcp.Tool, error) {
	if err := checkToolName(e.ID); err != nil {
		return nil, err
	}
	in, err := clientSchema(e.ArgumentsSchema, true)
	if err != nil {
		return nil, fmt.Errorf("argumentsSchema: %w", err)
	}
	t := &mcp.Tool{Name: e.ID, Title: e.Name, InputSchema: in}
	// An output schema binds the result to structured content, which MCP clients want to be
	// an object: only object results get one.
	if out, err := clientSchema(e.ResultSchema, false); err == nil && len(e.ResultSchema) > 0 {
		t.OutputSchema = out
	}
	desc := cmp.Or(e.Description, e.Name)
	desc += " [policy: " + string(e.Policy) + "]"
	if len(e.PrerequisiteToolIDs) > 0 {
		desc += " Call first: " + strings.Join(e.PrerequisiteToolIDs, ", ") + "."
	}
	t.Description = desc
	t.Annotations = &mcp.ToolAnnotations{Title: e.Name, ReadOnlyHint: e.Policy == wire.PolicyRead, OpenWorldHint: new(false)}
	if e.Policy != wire.PolicyRead {
		t.Annotations.DestructiveHint = new(e.Policy == wire.PolicyCritical)
	}
	return t, nil
}

// checkToolName accepts the names MCP clients accept, and refuses the meta-tools' prefix.
func checkToolName(name string) error {
	if name == "" || len(name) > maxToolNameLength {
		return fmt.Errorf("the id is not 1 to %d characters long", maxToolNameLength)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return fmt.Errorf("the id has a character MCP tool names cannot have: %q", r)
		}
	}
	if strings.HasPrefix(name, "ansight_") {
		return fmt.Errorf("ids starting with ansight_ are the bridge's own")
	}
	return nil
}

// clientSchema adapts an app's object schema for MCP clients: the keywords that make
// validators look elsewhere ($schema, $id) are dropped, a missing type becomes "object", and,
// for arguments (closed), the protocol's closed-object default is restored everywhere
// (schema.Standard): standard validators read a missing additionalProperties as
// "anything goes", and the client should see the schema exactly as the app enforces it.
// Schemas of anything but an object are refused.
func clientSchema(raw jsontext.Value, closed bool) (jsontext.Value, error) {
	if len(raw) == 0 {
		if !closed {
			return nil, fmt.Errorf("no schema")
		}
		return jsontext.Value(`{"type":"object","additionalProperties":false}`), nil
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
	return wire.Marshal(m)
}
