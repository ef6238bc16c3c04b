package mcpbridge

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/uiauto"
	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/uitree"
)

// Agents that drive a UI work best from a compact text snapshot whose actionable nodes
// carry short references ("e5"), and from actions that take those references — the way
// browser-automation MCP servers work. The app's standard UI tools already have the two
// halves: ui.get_visual_tree captures a snapshot, ui.perform_action takes a reference
// {source, snapshotId, revision, nodeId}. The bridge renders the tree as indented lines
// and keeps, per session, which short ref names which node, so that an agent writes
// {"reference":"e5"} and the bridge sends the full reference of the latest snapshot.
//
// A ref names a node id for the life of the session: "e5" never comes to mean another
// node, so an agent acting on an old snapshot cannot tap the wrong thing; if the node is
// gone, the call fails and says to look again.

// Ids of the standard UI tools the snapshot uses.
const (
	performActionToolID = "ui.perform_action"
)

// Bounds of snapshots and their refs.
const (
	defaultSnapshotNodes = 1000
	maxSnapshotNodes     = 10000
	// maxRefsPerSession bounds the node ids a session's refs remember; past it, the refs
	// of nodes not in the latest snapshot are forgotten (numbers are never reused).
	maxRefsPerSession = 20000
	// maxRefSessions bounds the sessions whose refs are kept; the least recently used go.
	maxRefSessions = 16
)

// nodeReference is ui.perform_action's reference.
type nodeReference struct {
	Source     string `json:"source"`
	SnapshotID string `json:"snapshotId"`
	Revision   int64  `json:"revision"`
	NodeID     string `json:"nodeId"`
}

// refTables keeps the refs of each session.
type refTables struct {
	mu       sync.Mutex
	sessions map[string]*sessionRefs
	clock    int64 // orders uses, for eviction
}

type sessionRefs struct {
	ref  map[string]string // node id → ref
	node map[string]string // ref → node id
	next int               // the next ref number
	used int64
	// latest is the last snapshot rendered; present, the node ids in it; kind, what each
	// actionable node in it is (its automation id, role and type), so that an action on a
	// ref acts only on that element, not on whatever holds its id by then (ids can be
	// tree paths).
	latest  nodeReference
	present map[string]bool
	kind    map[string]uitree.Selector
}

// refsOf returns the refs of sessionID, creating them (and evicting the least recently
// used session's) as needed. Callers hold t.mu.
func (t *refTables) refsOf(sessionID string) *sessionRefs {
	if t.sessions == nil {
		t.sessions = map[string]*sessionRefs{}
	}
	t.clock++
	s := t.sessions[sessionID]
	if s == nil {
		if len(t.sessions) >= maxRefSessions {
			oldest := slices.MinFunc(slices.Collect(maps.Keys(t.sessions)), func(a, b string) int {
				return int(t.sessions[a].used - t.sessions[b].used)
			})
			delete(t.sessions, oldest)
		}
		s = &sessionRefs{ref: map[string]string{}, node: map[string]string{}, next: 1}
		t.sessions[sessionID] = s
	}
	s.used = t.clock
	return s
}

// record makes tree the session's latest snapshot and returns the refs of its actionable
// nodes.
func (t *refTables) record(sessionID string, tree *uitree.Tree) map[string]string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.refsOf(sessionID)
	s.latest = nodeReference{Source: tree.Source, SnapshotID: tree.SnapshotID, Revision: tree.Revision}
	s.present = map[string]bool{}
	s.kind = map[string]uitree.Selector{}
	var actionable []string
	for _, n := range tree.Nodes() { // an SDK's overlay surface is no target
		s.present[n.ID] = true
		if len(n.Actions) > 0 {
			actionable = append(actionable, n.ID)
			s.kind[n.ID] = uitree.Selector{NodeID: n.ID, AutomationID: n.AutomationID, Role: n.Role, Type: n.Type}
		}
	}
	if len(s.ref)+len(actionable) > maxRefsPerSession {
		for id, ref := range s.ref {
			if !s.present[id] {
				delete(s.ref, id)
				delete(s.node, ref)
			}
		}
	}
	out := make(map[string]string, len(actionable))
	for _, id := range actionable {
		ref, ok := s.ref[id]
		if !ok {
			ref = "e" + strconv.Itoa(s.next)
			s.next++
			s.ref[id], s.node[ref] = ref, id
		}
		out[id] = ref
	}
	return out
}

// target is the selector of the element a short ref names in the session's latest
// snapshot: its node id, and what the node is.
func (t *refTables) target(sessionID, ref string) (uitree.Selector, *callError) {
	full, ce := t.resolve(sessionID, ref)
	if ce != nil {
		return uitree.Selector{}, ce
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if sel, ok := t.sessions[sessionID].kind[full.NodeID]; ok {
		return sel, nil
	}
	return uitree.Selector{NodeID: full.NodeID}, nil
}

// resolve turns a short ref into the full reference in the session's latest snapshot.
func (t *refTables) resolve(sessionID, ref string) (nodeReference, *callError) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.sessions[sessionID]
	if s == nil {
		return nodeReference{}, failf(wire.CodeUnknownRef, "no snapshot of this session issued ref %q", ref)
	}
	id, ok := s.node[ref]
	if !ok {
		return nodeReference{}, failf(wire.CodeUnknownRef, "no snapshot of this session issued ref %q", ref)
	}
	if !s.present[id] {
		e := failf(wire.CodeUnknownRef, "ref %s (node %q) is not on the screen of the latest snapshot", ref, id)
		e.Kind = wire.KindUnavailable // the ref was issued: the screen changed
		return nodeReference{}, e
	}
	r := s.latest
	r.NodeID = id
	return r, nil
}

// renderSnapshot writes tree as indented lines, one per node:
//
//   - button "Add note" [ref=e7]
//   - textbox "Title": "Groceries" [focused] [ref=e3] [actions=tap,focus,setValue,typeText]
//   - switch "Dark mode" [unchecked] [ref=e9] [actions=tap,toggle,setValue]
//
// role, then the name (label, else text) and the value (text, when it differs from the
// label), states, the ref of a node that takes actions, and its actions unless it only
// takes a tap. Unnamed containers without actions are left out, their children moved up.
// Everything the app wrote is quoted or reduced to a word, so that no string can start a
// line or forge a ref; the text stops at maxBytes with a note.
func renderSnapshot(tree *uitree.Tree, refs map[string]string, bounds bool, maxBytes int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# UI snapshot (source %s, revision %d, %d nodes", word(tree.Source), tree.Revision, tree.NodeCount)
	if tree.Truncated {
		fmt.Fprintf(&b, " of %d: truncated", tree.TotalNodes)
	}
	b.WriteString("). Act with ui.perform_action {\"reference\":\"eN\",\"action\":…}.\n")
	left := 0 // nodes not written once the text is full
	var rec func(n *uitree.Node, depth int)
	rec = func(n *uitree.Node, depth int) {
		if n == nil || n.Injected() {
			return
		}
		name, value := oneLine(n.Label, 120), ""
		if name == "" {
			name = oneLine(n.Text, 120)
		}
		// The value: a field's text, else what the node displays besides its name (a
		// checkable node's state shows as [checked] instead; a field's visual text is its
		// placeholder).
		values := []string{n.Value, n.VisualText, n.Text}
		if n.Role == "textbox" {
			values = []string{n.Value, n.Text}
		}
		for _, v := range values {
			if v = oneLine(v, 120); v != "" && v != name && !(n.Checked != nil && v == n.Value) {
				value = v
				break
			}
		}
		ref := refs[n.ID]
		if name == "" && ref == "" && n.Checked == nil && !n.Focused && depth > 0 && isContainer(n.Role) {
			for _, c := range n.Children {
				rec(c, depth)
			}
			return
		}
		if b.Len() >= maxBytes {
			left++
			for _, c := range n.Children {
				rec(c, depth+1)
			}
			return
		}
		b.WriteString(strings.Repeat("  ", depth))
		b.WriteString("- ")
		b.WriteString(cmp.Or(word(n.Role), strings.ToLower(word(n.Type)), "node"))
		if name != "" {
			b.WriteString(" ")
			b.WriteString(strconv.Quote(name))
		}
		if value != "" {
			b.WriteString(": ")
			b.WriteString(strconv.Quote(value))
		}
		if n.Checked != nil {
			if *n.Checked {
				b.WriteString(" [checked]")
			} else {
				b.WriteString(" [unchecked]")
			}
		}
		if n.Focused {
			b.WriteString(" [focused]")
		}
		if !n.Enabled {
			b.WriteString(" [disabled]")
		}
		if !n.Visible {
			b.WriteString(" [offscreen]")
		}
		if bounds && n.Bounds != nil {
			fmt.Fprintf(&b, " [at=%g,%g size=%gx%g]", n.Bounds.X, n.Bounds.Y, n.Bounds.Width, n.Bounds.Height)
		}
		if ref != "" {
			b.WriteString(" [ref=")
			b.WriteString(ref)
			b.WriteString("]")
			if !slices.Equal(n.Actions, []string{"tap"}) {
				actions := make([]string, 0, len(n.Actions))
				for _, a := range n.Actions {
					actions = append(actions, word(a))
				}
				b.WriteString(" [actions=")
				b.WriteString(strings.Join(actions, ","))
				b.WriteString("]")
			}
		}
		b.WriteString("\n")
		for _, c := range n.Children {
			rec(c, depth+1)
		}
	}
	rec(tree.Root, 0)
	if left > 0 {
		fmt.Fprintf(&b, "# … %d more nodes not shown: ask for fewer (maxNodes) or query them (ui.query_nodes).\n", left)
	}
	return b.String()
}

// maxWordLength bounds a role, type, source or action name in a snapshot.
const maxWordLength = 40

// word is s reduced to what a role, type or action name is made of: letters, digits, '_',
// '-' and '.', at most maxWordLength.
func word(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() == maxWordLength {
			break
		}
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isContainer reports whether a role only groups other nodes.
func isContainer(role string) bool {
	switch strings.ToLower(role) {
	case "", "group", "generic", "none", "presentation", "container", "pane", "view":
		return true
	}
	return false
}

// snapshotOptions are what an agent may ask of a snapshot.
type snapshotOptions struct {
	Screenshot    bool `json:"screenshot,omitzero"`
	IncludeBounds bool `json:"includeBounds,omitzero"`
	MaxNodes      int  `json:"maxNodes,omitzero"`
}

// capture takes a snapshot of the session's screen: the rendered text, and the image when
// asked (one round trip: the screenshot is the tree call's evidence).
func (br *Bridge) capture(ctx context.Context, sess *hostapi.Session, opts snapshotOptions) (string, *hostapi.Call, error) {
	maxNodes := cmp.Or(opts.MaxNodes, defaultSnapshotNodes)
	args, _ := wire.Marshal(struct {
		IncludeBounds bool `json:"includeBounds"`
		MaxNodes      int  `json:"maxNodes"`
	}{opts.IncludeBounds, maxNodes})
	req := hostapi.CallRequest{ToolID: wire.VisualTreeToolID, Arguments: args}
	if opts.Screenshot {
		req.After = &wire.After{Include: []string{"screenshot"}}
	}
	res, err := br.call(ctx, sess, req, nil)
	if err != nil {
		return "", nil, err
	}
	if !res.Success {
		return "", res, br.fromToolError(res.Error)
	}
	if res.Result == nil {
		return "", res, failf(wire.CodeProtocol, "%s answered with something that is not a visual tree", wire.VisualTreeToolID)
	}
	tree, err := uitree.Parse(res.Result.Result) // compact v2 or the legacy form
	if err != nil {
		return "", res, failf(wire.CodeProtocol, "%s answered with something that is not a visual tree: %v", wire.VisualTreeToolID, err)
	}
	return renderSnapshot(tree, br.refs.record(sess.ID, tree), opts.IncludeBounds, br.opts.MaxResultBytes), res, nil
}

// expandRef replaces a short ref in the reference argument of ui.perform_action by the
// full reference it names. Other calls, and references written in full, pass untouched.
func (br *Bridge) expandRef(sessionID string, req *hostapi.CallRequest) error {
	if req.ToolID != performActionToolID || len(req.Arguments) == 0 || req.Arguments.Kind() != '{' {
		return nil
	}
	var args map[string]jsontext.Value
	if err := wire.Unmarshal(req.Arguments, &args); err != nil {
		return nil // the app refuses it with the right code
	}
	raw, ok := args["reference"]
	if !ok || raw.Kind() != '"' {
		return nil
	}
	var ref string
	if err := wire.Unmarshal(raw, &ref); err != nil {
		return nil
	}
	full, ce := br.refs.resolve(sessionID, strings.TrimSpace(ref))
	if ce != nil {
		return ce
	}
	args["reference"], _ = wire.Marshal(full)
	b, err := wire.Marshal(args)
	if err != nil {
		return err
	}
	req.Arguments = b
	return nil
}

// refAction is the UI operation of a ui.perform_action call whose reference is a short
// ref: the node the ref names, acted on as ansight ui acts — captured afresh and resolved
// on the host (the same resolution), waiting for it to become actionable, a stale
// reference resolved again once. The selector is the ref's node id and what that node
// was (automation id, role, type): an id that names another element by then fails
// rather than acting on it. Calls with a full reference, and anything that is not
// such a call, give false.
func (br *Bridge) refAction(sessionID string, req hostapi.CallRequest) (*uiauto.Request, error) {
	if req.ToolID != performActionToolID || len(req.Arguments) == 0 || req.Arguments.Kind() != '{' {
		return nil, nil
	}
	var args map[string]jsontext.Value
	if err := wire.Unmarshal(req.Arguments, &args); err != nil {
		return nil, nil // the app refuses it with the right code
	}
	var ref, action string
	if raw := args["reference"]; raw.Kind() != '"' || wire.Unmarshal(raw, &ref) != nil {
		return nil, nil
	}
	if raw := args["action"]; raw.Kind() != '"' || wire.Unmarshal(raw, &action) != nil || strings.TrimSpace(action) == "" {
		return nil, nil // the app says what is missing
	}
	sel, ce := br.refs.target(sessionID, strings.TrimSpace(ref))
	if ce != nil {
		return nil, ce
	}
	r := &uiauto.Request{Operation: uiauto.OpAct, Selector: sel, Action: action}
	for _, k := range []string{"value", "index", "checked"} { // the official SDKs' order
		if v := args[k]; len(v) > 0 && v.Kind() != 'n' {
			r.ActionValue = v
			break
		}
	}
	if v := args["options"]; v.Kind() == '{' {
		r.ActionOptions = v
	}
	return r, nil
}

// act runs a ref's action through the host's UI operation, answered as the call it
// stands for.
func (br *Bridge) act(ctx context.Context, sessionID string, call hostapi.CallRequest, req *uiauto.Request) (*hostapi.Call, error) {
	start := time.Now()
	op, err := br.backend.UI(ctx, sessionID, hostapi.UIRequest{Request: *req, CallTimeoutMS: call.TimeoutMS})
	if err != nil {
		return nil, err
	}
	res := &hostapi.Call{Schema: hostapi.SchemaCall, SessionID: sessionID, ToolID: call.ToolID, Success: op.Succeeded,
		DurationMS: time.Since(start).Milliseconds()}
	if op.Succeeded {
		res.Result = &wire.Result{ToolID: call.ToolID, Success: true}
		if op.Result != nil {
			res.Result.Result = op.Result.Outcome
		}
		return res, nil
	}
	msg := op.Message
	if op.Code == uiauto.CodeNotFound {
		msg += "; take a new " + ToolSnapshot + " for the screen's refs"
	}
	res.Error = &hostapi.ToolError{Error: wire.Error{Code: op.Code, Message: msg}, Kind: op.Code.Kind()}
	return res, nil
}

type snapshotInput struct {
	selector
	snapshotOptions
}

// snapshot is the ansight_snapshot meta-tool: plain text (no JSON around it, the most
// compact form for the agent), and the screen's image when asked.
func (br *Bridge) snapshot(ctx context.Context, _ *mcp.CallToolRequest, in *snapshotInput) (*mcp.CallToolResult, error) {
	sess, err := br.session(ctx, in.selector)
	if err != nil {
		return br.failText(err)
	}
	text, res, err := br.capture(ctx, sess, in.snapshotOptions)
	if err != nil {
		return br.failText(err)
	}
	out := &mcp.CallToolResult{Content: snapshotContent(text)}
	if in.Screenshot {
		budget := newImageBudget()
		arts, images := br.artifacts(res.Artifacts, budget)
		out.Content = append(out.Content, images...)
		if len(images) == 0 {
			note := "screenshot: none received"
			for _, a := range arts {
				note = "screenshot: " + cmp.Or(a.Image, a.Error, a.Status)
			}
			out.Content = append(out.Content, &mcp.TextContent{Text: revealText(note)})
		}
	}
	return out, nil
}

// snapshotContent is a snapshot's text as content: its first line (the bridge's header,
// saying how to act on refs) as is, then the lines of nodes, with what the app wrote,
// framed as the app's (appText).
func snapshotContent(text string) []mcp.Content {
	header, nodes, ok := strings.Cut(text, "\n")
	if !ok || !strings.HasPrefix(header, "#") {
		return []mcp.Content{appText(text)}
	}
	framed := appText(strings.TrimSuffix(nodes, "\n"))
	framed.Text = header + "\n" + framed.Text
	return []mcp.Content{framed}
}
