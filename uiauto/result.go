package uiauto

import (
	"fmt"
	"math"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/uitree"
)

// Codes of an operation that did not succeed (besides the app's own tool codes, which
// pass through, and wire.CodeUIActionNotSupported when the app's tree cannot express an
// operation).
const (
	CodeNotFound      wire.Code = "ui_target_not_found"      // no node matches the selector
	CodeNotActionable wire.Code = "ui_target_not_actionable" // it matched, but is hidden, disabled, offscreen or lacks the action
	CodeWaitTimeout             = wire.CodeUIWaitTimeout     // the wait's condition did not hold in time
	CodeAssertFailed  wire.Code = "ui_assert_failed"         // an expectation failed
	CodeTreeInvalid   wire.Code = "ui_tree_invalid"          // the app answered something that is not a visual tree
)

// Capabilities name what a result describes, as the official host's results do.
const (
	CapabilityObserve = "ui.observe"
	CapabilityFind    = "ui.find"
	CapabilityWait    = "ui.wait_for"
	CapabilityAssert  = "ui.assert"
)

// Outcome is the answer of an operation: ansight.ui-operation/v1 without its schema.
type Outcome struct {
	Operation string    `json:"operation"`
	Succeeded bool      `json:"succeeded"`
	Message   string    `json:"message"`
	Code      wire.Code `json:"code,omitzero"`
	Result    *Result   `json:"result"`
}

// Result is an operation's result. Members an operation does not produce are left out.
type Result struct {
	Capability string `json:"capability"`
	// The capture the operation read last.
	Source     string           `json:"source,omitzero"`
	SnapshotID string           `json:"snapshotId,omitzero"`
	Revision   int64            `json:"revision,omitzero"`
	Format     string           `json:"format,omitzero"`
	Selector   *uitree.Selector `json:"selector,omitzero"`

	// Snapshot: the viewport and the projected tree (compact), or the app's payload (full).
	Viewport            *uitree.Rect   `json:"viewport,omitzero"`
	Root                *NodeView      `json:"root,omitzero"`
	NodeCount           int            `json:"nodeCount,omitzero"`
	MeaningfulNodeCount int            `json:"meaningfulNodeCount,omitzero"`
	ReturnedNodeCount   int            `json:"returnedNodeCount,omitzero"`
	Tree                jsontext.Value `json:"tree,omitzero"`

	// Find, wait, assert: the matches (find: at most Limit; a failed wait: 20), how many
	// matched, and the nearest candidates when none did.
	MatchCount *int        `json:"matchCount,omitzero"`
	Matches    []NodeView  `json:"matches,omitzero"`
	Truncated  bool        `json:"truncated,omitzero"`
	Nearest    []Candidate `json:"nearest,omitzero"`

	// Actions: the node acted on, the action and the reference it went to, the app's
	// outcome, the attempts made, how long the target took to become actionable, and
	// whether a stale reference was resolved again.
	Target     *NodeView      `json:"target,omitzero"`
	Action     string         `json:"action,omitzero"`
	Reference  *Reference     `json:"reference,omitzero"`
	Outcome    jsontext.Value `json:"outcome,omitzero"`
	Attempts   int            `json:"attempts,omitzero"`
	WaitedMs   int64          `json:"waitedMs,omitzero"`
	Reresolved bool           `json:"reresolved,omitzero"`

	// Wait.
	Condition     string `json:"condition,omitzero"`
	Satisfied     *bool  `json:"satisfied,omitzero"`
	ElapsedMs     *int64 `json:"elapsedMs,omitzero"`
	TimeoutMs     int    `json:"timeoutMs,omitzero"`
	StableSamples int    `json:"stableSamples,omitzero"`
	TreeHash      string `json:"treeHash,omitzero"`

	// Assert.
	Passed   *bool     `json:"passed,omitzero"`
	Selected *NodeView `json:"selected,omitzero"`
	Failures []string  `json:"failures,omitzero"`
}

// Reference is ui.perform_action's node reference.
type Reference struct {
	Source     string `json:"source"`
	SnapshotID string `json:"snapshotId"`
	Revision   int64  `json:"revision"`
	NodeID     string `json:"nodeId"`
}

// NodeView is a node as results show it: the readings every client relies on, the state
// with ancestors, and where it is.
type NodeView struct {
	ID           string   `json:"id"`
	Type         string   `json:"type,omitzero"`
	Role         string   `json:"role"`
	AutomationID string   `json:"automationId,omitzero"`
	Text         string   `json:"text,omitzero"`
	Value        string   `json:"value,omitzero"`
	Actions      []string `json:"actions"`
	// Visible and Enabled are the node's state with its ancestors.
	Visible bool         `json:"visible"`
	Enabled bool         `json:"enabled"`
	Checked *bool        `json:"checked,omitzero"`
	Secure  bool         `json:"secure,omitzero"`
	Bounds  *uitree.Rect `json:"bounds,omitzero"`
	// ViewportRelation is inside, partial, outside (of the viewport), or unknown (no
	// bounds or no viewport).
	ViewportRelation      string      `json:"viewportRelation,omitzero"`
	AncestorAutomationIDs []string    `json:"ancestorAutomationIds,omitzero"`
	Children              []*NodeView `json:"children,omitzero"`
}

// Candidate is a node near a selector that matched nothing, and what it lacks.
type Candidate struct {
	Node   NodeView `json:"node"`
	Score  float64  `json:"score"` // 0-1, in hundredths
	Missed []string `json:"missed"`
}

// String says what the candidate is and how it differs: `button "Add note" (id list.add)
// differs in automationId ("addNoteButton")`. A missed criterion the node's name does not
// show carries the node's value, so that a person sees what to select instead.
func (c Candidate) String() string {
	n := c.Node
	name := cmpOrString(n.Text, n.AutomationID)
	missed := make([]string, len(c.Missed))
	for i, m := range c.Missed {
		missed[i] = m
		var v string
		switch m {
		case "automationId":
			v = n.AutomationID
		case "type":
			v = n.Type
		case "ancestor":
			v = strings.Join(n.AncestorAutomationIDs, ", ")
		default:
			continue
		}
		switch {
		case v == "":
			missed[i] += " (none)"
		case v != name:
			missed[i] += fmt.Sprintf(" (%q)", v)
		}
	}
	return fmt.Sprintf("%s %q (id %s) differs in %s", n.Role, name, n.ID, strings.Join(missed, ", "))
}

// View projects a node (without children).
func View(t *uitree.Tree, n *uitree.Node) NodeView {
	v := NodeView{
		ID: n.ID, Type: n.Type, Role: n.Role, AutomationID: n.AutomationID, Text: n.Text, Value: n.Value,
		Actions: n.Actions, Visible: n.Shown(), Enabled: n.Usable(), Checked: n.Checked, Secure: n.Secure,
		Bounds: n.Bounds, ViewportRelation: relation(t, n),
	}
	if v.Actions == nil {
		v.Actions = []string{}
	}
	for p := n.Parent; p != nil; p = p.Parent {
		if p.AutomationID != "" {
			v.AncestorAutomationIDs = append(v.AncestorAutomationIDs, p.AutomationID)
		}
	}
	return v
}

// relation says where a node's bounds are against the viewport.
func relation(t *uitree.Tree, n *uitree.Node) string {
	vp, ok := t.Viewport()
	if !ok || !vp.Usable() || n.Bounds == nil || !n.Bounds.Usable() {
		return "unknown"
	}
	in, ok := n.Bounds.Intersect(vp)
	switch {
	case !ok:
		return "outside"
	case in == *n.Bounds:
		return "inside"
	}
	return "partial"
}

// meaningful reports whether a node says something: text, an automation id or an action.
func meaningful(n *uitree.Node) bool {
	return n.Text != "" || n.AutomationID != "" || len(n.Actions) > 0
}

func views(t *uitree.Tree, nodes []*uitree.Node, limit int) []NodeView {
	out := make([]NodeView, 0, min(len(nodes), limit))
	for _, n := range nodes {
		if len(out) == limit {
			break
		}
		out = append(out, View(t, n))
	}
	return out
}

// minNearScore leaves out candidates too far to help (a window whose name shares two
// letters with the text asked for).
const minNearScore = 0.25

func candidates(t *uitree.Tree, cs []uitree.Candidate) []Candidate {
	out := make([]Candidate, 0, len(cs))
	for _, c := range cs {
		if c.Score < minNearScore {
			continue
		}
		out = append(out, Candidate{Node: View(t, c.Node), Score: math.Round(c.Score*100) / 100, Missed: c.Missed})
	}
	return out
}
