package uiauto

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/uitree"
)

// Ids of the app tools an operation calls.
const (
	VisualTreeToolID    = wire.VisualTreeToolID // "ui.get_visual_tree"
	PerformActionToolID = "ui.perform_action"
)

// CallFunc calls one of the app's tools with JSON arguments and returns its result. A
// tool's own failure is returned as a *wire.Error (the outcome then reports it); any other
// error is the host's (a closed session, a deadline) and ends the operation.
type CallFunc func(ctx context.Context, toolID string, args jsontext.Value) (jsontext.Value, error)

// captureArgs are the arguments of every capture but a snapshot's: the official host's
// defaults for ui.get_visual_tree.
var captureArgs = jsontext.Value(`{"includeBounds":true,"includeComputedStyles":false,"maxDepth":32}`)

// Run performs one operation. It returns an error for a request that is not valid
// (wire.CodeBadRequest) and for the host's failures; everything else — a selector that
// matches nothing, a target that never became actionable, the app's refusal — is an
// Outcome that did not succeed.
func Run(ctx context.Context, call CallFunc, req Request) (*Outcome, error) {
	if err := req.Validate(); err != nil {
		return nil, &wire.Error{Code: wire.CodeBadRequest, Message: err.Error()}
	}
	r := &runner{ctx: ctx, call: call, req: req, sel: req.Selector.Normalize()}
	if req.Operation == OpFind && !req.Exact {
		r.sel.Contains = true // the official find matches substrings
	}
	switch req.Operation {
	case OpSnapshot:
		return r.snapshot()
	case OpFind:
		return r.find()
	case OpWait:
		return r.wait()
	case OpAssert:
		return r.assert()
	case OpTap:
		if req.X != nil {
			return r.act(r.pointStep)
		}
		return r.act(func(t *uitree.Tree) (*step, *Outcome) { return r.selected(t, "tap", nil) })
	case OpType:
		return r.act(r.typeStep)
	case OpSwipe:
		return r.act(r.swipeStep)
	case OpPinch:
		return r.act(r.pinchStep)
	case OpBack:
		return r.act(r.backStep)
	case OpAct:
		return r.act(r.actStep)
	}
	panic("uiauto: unvalidated operation " + req.Operation)
}

type runner struct {
	ctx  context.Context
	call CallFunc
	req  Request
	sel  uitree.Selector
}

// fail is an outcome that did not succeed.
func (r *runner) fail(code wire.Code, res *Result, format string, args ...any) *Outcome {
	return &Outcome{Operation: r.req.Operation, Code: code, Message: fmt.Sprintf(format, args...), Result: res}
}

// ok is an outcome that succeeded.
func (r *runner) ok(res *Result, format string, args ...any) *Outcome {
	return &Outcome{Operation: r.req.Operation, Succeeded: true, Message: fmt.Sprintf(format, args...), Result: res}
}

// capture takes a fresh tree. A tool failure or a payload that is not a tree is an
// outcome; a host failure is an error.
func (r *runner) capture(args jsontext.Value) (*uitree.Tree, jsontext.Value, *Outcome, error) {
	raw, err := r.call(r.ctx, VisualTreeToolID, args)
	if err != nil {
		var we *wire.Error
		if errors.As(err, &we) {
			return nil, nil, r.fail(we.Code, &Result{Capability: r.capability()}, "%s failed: %s", VisualTreeToolID, we.Message), nil
		}
		return nil, nil, nil, err
	}
	tree, err := uitree.Parse(raw)
	if err != nil {
		return nil, nil, r.fail(CodeTreeInvalid, &Result{Capability: r.capability()}, "%s answered something that is not a visual tree: %v", VisualTreeToolID, err), nil
	}
	return tree, raw, nil, nil
}

// capability names an operation's result.
func (r *runner) capability() string {
	switch r.req.Operation {
	case OpSnapshot:
		return CapabilityObserve
	case OpFind:
		return CapabilityFind
	case OpWait:
		return CapabilityWait
	case OpAssert:
		return CapabilityAssert
	}
	return "ui." + r.req.Operation
}

// header is the part of a result every operation fills from its capture.
func (r *runner) header(t *uitree.Tree) *Result {
	res := &Result{Capability: r.capability(), Source: t.Source, SnapshotID: t.SnapshotID, Revision: t.Revision, Format: t.Format}
	if r.sel.HasCriteria() {
		s := r.sel
		res.Selector = &s
	}
	return res
}

func intPtr(v int) *int { return &v }

// --- snapshot ---

func (r *runner) snapshot() (*Outcome, error) {
	bounds := r.req.IncludeBounds == nil || *r.req.IncludeBounds
	args := fmt.Sprintf(`{"includeBounds":%t,"includeComputedStyles":%t,"maxDepth":%d,"maxNodes":%d}`,
		bounds, r.req.IncludeProperties, cmpOr(r.req.MaxDepth, DefaultMaxDepth), cmpOr(r.req.MaxNodes, DefaultMaxNodes))
	t, raw, fail, err := r.capture(jsontext.Value(args))
	if fail != nil || err != nil {
		return fail, err
	}
	res := r.header(t)
	res.NodeCount = t.NodeCount
	for _, n := range t.Nodes() {
		if meaningful(n) {
			res.MeaningfulNodeCount++
		}
	}
	res.Truncated = t.Truncated
	if vp, ok := t.Viewport(); ok {
		res.Viewport = &vp
	}
	if r.req.Detail == DetailFull {
		res.Tree = raw
		res.ReturnedNodeCount = len(t.All())
	} else {
		res.Root = r.project(t, t.Root, &res.ReturnedNodeCount)
	}
	return r.ok(res, "captured %d nodes (revision %d)", t.NodeCount, t.Revision), nil
}

// project is the snapshot's nested projection of n, without the SDKs' overlay surfaces.
func (r *runner) project(t *uitree.Tree, n *uitree.Node, count *int) *NodeView {
	if n.Injected() {
		return nil
	}
	v := View(t, n)
	v.AncestorAutomationIDs = nil
	*count++
	for _, c := range n.Children {
		if cv := r.project(t, c, count); cv != nil {
			v.Children = append(v.Children, cv)
		}
	}
	return &v
}

func cmpOr(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// --- find ---

func (r *runner) find() (*Outcome, error) {
	t, _, fail, err := r.capture(captureArgs)
	if fail != nil || err != nil {
		return fail, err
	}
	res := r.header(t)
	matches := t.Find(r.sel)
	if r.sel.Index != nil && len(matches) > 0 { // nothing matched: the nearest candidates below
		if i := *r.sel.Index; i < len(matches) {
			matches = matches[i : i+1]
		} else {
			res.MatchCount = intPtr(len(matches))
			return r.fail(CodeNotFound, res, "the selector matched %d node(s), but index %d was requested", len(matches), i), nil
		}
	}
	res.MatchCount = intPtr(len(matches))
	limit := cmpOr(r.req.Limit, DefaultLimit)
	res.Matches = views(t, matches, limit)
	res.Truncated = len(matches) > limit
	if len(matches) == 0 {
		res.Nearest = candidates(t, t.Nearest(r.sel, maxNearest))
		return r.fail(CodeNotFound, res, "no node matches %s%s", r.sel.String(), nearestHint(res.Nearest)), nil
	}
	return r.ok(res, "%d node(s) match %s", len(matches), r.sel.String()), nil
}

// nearestHint is the closest candidate, in a message.
func nearestHint(cs []Candidate) string {
	if len(cs) == 0 {
		return ""
	}
	return "; nearest: " + cs[0].String()
}

// --- wait ---

func (r *runner) wait() (*Outcome, error) {
	condition := cmpOrString(r.req.Condition, ConditionVisible)
	timeout := DefaultWaitTimeoutMs
	if r.req.TimeoutMs != nil {
		timeout = *r.req.TimeoutMs
	}
	poll := time.Duration(cmpOr(r.req.PollMs, DefaultPollMs)) * time.Millisecond
	needed := cmpOr(r.req.StableSamples, DefaultStableSamples)
	start := time.Now()
	deadline := start.Add(time.Duration(timeout) * time.Millisecond)
	var (
		attempts, samples int
		prev, hash        string
		last              *uitree.Tree
		lastMatches       []*uitree.Node
	)
	for {
		attempts++
		t, _, fail, err := r.capture(captureArgs)
		if err != nil {
			return nil, err
		}
		if fail == nil {
			last = t
			lastMatches = nil
			if r.sel.HasCriteria() {
				lastMatches = t.Find(r.sel)
				if r.sel.Index != nil {
					lastMatches = pick(lastMatches, *r.sel.Index)
				}
			}
			visible := shown(lastMatches)
			done := false
			if condition != ConditionStable {
				// The official result names the tree's hash and how many captures in a row
				// it held for every condition, not only stable.
				if hash = treeHash(t, nil); hash == prev {
					samples++
				} else {
					samples, prev = 1, hash
				}
			}
			switch condition {
			case ConditionVisible:
				done = len(visible) > 0
				lastMatches = visible
			case ConditionHidden:
				done = len(visible) == 0
				lastMatches = visible
			case ConditionStable:
				if r.sel.HasCriteria() && len(lastMatches) == 0 {
					samples, prev = 0, "" // nothing to watch yet
				} else {
					hash = treeHash(t, lastMatches)
					if hash == prev {
						samples++
					} else {
						samples, prev = 1, hash
					}
					done = samples >= needed
				}
			}
			if done {
				res := r.waitResult(t, condition, true, attempts, start, timeout, samples, hash, lastMatches)
				return r.ok(res, "condition %s held after %d ms (%d captures)", condition, *res.ElapsedMs, attempts), nil
			}
		} else if fail.Code != CodeTreeInvalid {
			return fail, nil // the app cannot capture: waiting will not change that
		}
		remaining := time.Until(deadline)
		if remaining <= 0 {
			res := &Result{Capability: CapabilityWait}
			if last != nil {
				res = r.waitResult(last, condition, false, attempts, start, timeout, samples, hash, lastMatches)
			} else {
				res.Condition = condition
			}
			msg := fmt.Sprintf("timed out after %d ms waiting for %s", timeout, condition)
			if r.sel.HasCriteria() {
				msg += " of " + r.sel.String()
				if condition == ConditionVisible && last != nil && len(res.Matches) == 0 {
					res.Nearest = candidates(last, last.Nearest(r.sel, maxNearest))
					msg += nearestHint(res.Nearest)
				}
			}
			return r.fail(CodeWaitTimeout, res, "%s", msg), nil
		}
		if err := sleep(r.ctx, min(poll, remaining)); err != nil {
			return nil, err
		}
	}
}

func cmpOrString(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func pick(nodes []*uitree.Node, i int) []*uitree.Node {
	if i < len(nodes) {
		return nodes[i : i+1]
	}
	return nil
}

func shown(nodes []*uitree.Node) []*uitree.Node {
	var out []*uitree.Node
	for _, n := range nodes {
		if n.Shown() {
			out = append(out, n)
		}
	}
	return out
}

func (r *runner) waitResult(t *uitree.Tree, condition string, satisfied bool, attempts int, start time.Time, timeout, samples int, hash string, matches []*uitree.Node) *Result {
	res := r.header(t)
	elapsed := time.Since(start).Milliseconds()
	res.Condition, res.Satisfied, res.ElapsedMs, res.TimeoutMs = condition, &satisfied, &elapsed, timeout
	res.Attempts = attempts
	res.MatchCount = intPtr(len(matches))
	res.Matches = views(t, matches, maxReportedMatches)
	res.StableSamples, res.TreeHash = samples, hash
	return res
}

// treeHash identifies what a stable wait watches: the selected nodes' subtrees, or the
// whole tree, in compact v2 without what changes at every capture (ids, times).
func treeHash(t *uitree.Tree, selected []*uitree.Node) string {
	h := sha256.New()
	roots := selected
	if len(roots) == 0 {
		roots = []*uitree.Node{t.Root}
	}
	var buf []byte
	for _, n := range roots {
		buf = uitree.Append(buf[:0], &uitree.Tree{Format: t.Format, Root: n})
		h.Write(buf)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// --- assert ---

func (r *runner) assert() (*Outcome, error) {
	t, _, fail, err := r.capture(captureArgs)
	if fail != nil || err != nil {
		return fail, err
	}
	res := r.header(t)
	matches := t.Find(r.sel)
	res.MatchCount = intPtr(len(matches))
	res.Matches = views(t, matches, maxReportedMatches)
	var failures []string
	exists := r.req.Count == nil || *r.req.Count != 0
	if r.req.Exists != nil {
		exists = *r.req.Exists
	}
	if exists && len(matches) == 0 {
		failures = append(failures, "expected a node matching "+r.sel.String()+", found none")
	}
	if !exists && len(matches) > 0 {
		failures = append(failures, fmt.Sprintf("expected no node matching %s, found %d", r.sel.String(), len(matches)))
	}
	if r.req.Count != nil && len(matches) != *r.req.Count {
		failures = append(failures, fmt.Sprintf("expected %d matches, found %d", *r.req.Count, len(matches)))
	}
	selectedChecks := r.req.ExpectedText != nil || r.req.ExpectedValue != nil || r.req.ExpectedVisible != nil || r.req.ExpectedEnabled != nil
	if selectedChecks && len(matches) > 0 {
		i := 0
		if r.sel.Index != nil {
			i = *r.sel.Index
		}
		if i >= len(matches) {
			failures = append(failures, fmt.Sprintf("the selector matched %d node(s), but index %d was requested", len(matches), i))
		} else {
			n := matches[i]
			v := View(t, n)
			res.Selected = &v
			check := func(name, want, got string) {
				if want != got {
					failures = append(failures, fmt.Sprintf("expected %s %q, found %q", name, want, got))
				}
			}
			if r.req.ExpectedText != nil {
				check("text", *r.req.ExpectedText, n.Text)
			}
			if r.req.ExpectedValue != nil {
				check("value", *r.req.ExpectedValue, n.Value)
			}
			if r.req.ExpectedVisible != nil && *r.req.ExpectedVisible != n.Shown() {
				failures = append(failures, fmt.Sprintf("expected visible %t, found %t", *r.req.ExpectedVisible, n.Shown()))
			}
			if r.req.ExpectedEnabled != nil && *r.req.ExpectedEnabled != n.Usable() {
				failures = append(failures, fmt.Sprintf("expected enabled %t, found %t", *r.req.ExpectedEnabled, n.Usable()))
			}
		}
	}
	passed := len(failures) == 0
	res.Passed, res.Failures = &passed, failures
	if passed {
		return r.ok(res, "assertion passed: %d match(es) of %s", len(matches), r.sel.String()), nil
	}
	msg := strings.Join(failures, "; ")
	if len(matches) == 0 && exists {
		res.Nearest = candidates(t, t.Nearest(r.sel, maxNearest))
		msg += nearestHint(res.Nearest)
	}
	return r.fail(CodeAssertFailed, res, "assertion failed: %s", msg), nil
}

// --- actions ---

// step is the action an operation would perform on a tree: on node, or a reason it cannot
// yet (blocker).
type step struct {
	node    *uitree.Node
	action  string
	value   jsontext.Value // nil: none
	options jsontext.Value // nil: none
	blocker string
	code    wire.Code // the blocker's code
	final   bool      // the blocker will not go away: fail without waiting
}

// act performs an action, waiting for its target to become actionable (TimeoutMs,
// default 5000; 0 makes one attempt) and resolving it again once when the app says the
// reference went stale.
func (r *runner) act(choose func(*uitree.Tree) (*step, *Outcome)) (*Outcome, error) {
	timeout := DefaultActionTimeout
	if r.req.TimeoutMs != nil {
		timeout = *r.req.TimeoutMs
	}
	poll := time.Duration(cmpOr(r.req.PollMs, DefaultActionPollMs)) * time.Millisecond
	start := time.Now()
	deadline := start.Add(time.Duration(timeout) * time.Millisecond)
	attempts, reresolved := 0, false
	for {
		attempts++
		t, _, fail, err := r.capture(captureArgs)
		if fail != nil || err != nil {
			return fail, err
		}
		st, miss := choose(t)
		if st != nil && st.blocker == "" {
			out, stale, err := r.perform(t, st, attempts, start, reresolved)
			if err != nil || !stale || reresolved {
				return out, err
			}
			reresolved = true // the screen changed between capture and action: once more
			continue
		}
		remaining := time.Until(deadline)
		if remaining <= 0 || st != nil && st.final {
			if st != nil {
				res := r.header(t)
				v := View(t, st.node)
				res.Target, res.Attempts = &v, attempts
				return r.fail(cmpOrCode(st.code, CodeNotActionable), res, "%s: %s (waited %d ms)", describe(st.node), st.blocker, time.Since(start).Milliseconds()), nil
			}
			miss.Result.Attempts = attempts
			return miss, nil
		}
		if err := sleep(r.ctx, min(poll, remaining)); err != nil {
			return nil, err
		}
	}
}

func cmpOrCode(c, def wire.Code) wire.Code {
	if c == "" {
		return def
	}
	return c
}

// describe names a node in a message: role "text" (id).
func describe(n *uitree.Node) string {
	name := n.Text
	if name == "" {
		name = n.AutomationID
	}
	return fmt.Sprintf("%s %q (id %s)", n.Role, name, n.ID)
}

// perform sends the step to ui.perform_action with the capture's reference. stale reports
// a stale_node_reference the caller may resolve again.
func (r *runner) perform(t *uitree.Tree, st *step, attempts int, start time.Time, reresolved bool) (out *Outcome, stale bool, err error) {
	res := r.header(t)
	v := View(t, st.node)
	res.Target, res.Action, res.Attempts, res.Reresolved = &v, st.action, attempts, reresolved
	res.WaitedMs = time.Since(start).Milliseconds()
	if t.SnapshotID == "" {
		return r.fail(wire.CodeUIActionNotSupported, res, "the app's tree has no snapshotId: its nodes cannot be addressed by %s", PerformActionToolID), false, nil
	}
	ref := Reference{Source: t.Source, SnapshotID: t.SnapshotID, Revision: t.Revision, NodeID: st.node.ID}
	if ref.Source == "" {
		ref.Source, _, _ = strings.Cut(t.SnapshotID, ":")
	}
	res.Reference = &ref
	b := make([]byte, 0, 256)
	b = append(b, `{"reference":{"source":`...)
	b, _ = jsontext.AppendQuote(b, ref.Source)
	b = append(b, `,"snapshotId":`...)
	b, _ = jsontext.AppendQuote(b, ref.SnapshotID)
	b = append(b, `,"revision":`...)
	b = strconv.AppendInt(b, ref.Revision, 10)
	b = append(b, `,"nodeId":`...)
	b, _ = jsontext.AppendQuote(b, ref.NodeID)
	b = append(b, `},"action":`...)
	b, _ = jsontext.AppendQuote(b, st.action)
	if st.value != nil {
		b = append(b, `,"value":`...)
		b = append(b, st.value...)
	}
	if st.options != nil {
		b = append(b, `,"options":`...)
		b = append(b, st.options...)
	}
	b = append(b, '}')
	outcome, err := r.call(r.ctx, PerformActionToolID, b)
	if err != nil {
		var we *wire.Error
		if !errors.As(err, &we) {
			return nil, false, err
		}
		if we.Code == wire.CodeStaleNodeReference {
			stale = true
		}
		return r.fail(we.Code, res, "%s %s on %s failed: %s", PerformActionToolID, st.action, describe(st.node), we.Message), stale, nil
	}
	res.Outcome = outcome
	return r.ok(res, "%s %s", pastTense(r.req.Operation, st.action), describe(st.node)), false, nil
}

func pastTense(op, action string) string {
	switch op {
	case OpTap:
		return "tapped"
	case OpType:
		return "typed into"
	case OpSwipe:
		return "swiped " + action + " on"
	case OpPinch:
		return "pinched"
	case OpBack:
		return "went back with"
	case OpAct:
		return action
	}
	return action
}
