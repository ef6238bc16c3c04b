package ui_test

import (
	"cmp"
	"context"
	"fmt"
	"image"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/apptest"
	"github.com/ansight-go/ansight/app/ui"
	"github.com/ansight-go/ansight/wire/uitree"
)

// treeScreen captures a fixed tree.
type treeScreen struct{ root *ui.Node }

func (s treeScreen) Capture(context.Context) (*ui.Node, error) { return s.root, nil }
func (s treeScreen) Perform(context.Context, string, ui.Action) (map[string]any, error) {
	return nil, ui.ErrNodeNotFound
}
func (s treeScreen) Render(context.Context) (image.Image, error) {
	return image.NewRGBA(image.Rect(0, 0, 4, 4)), nil
}

// nodeGen draws a screen's tree: any types (blank included), roles, labels and texts
// (Unicode, long ones), actions, states, bounds, properties, secure entries.
func nodeGen(next *int) *rapid.Generator[*ui.Node] {
	var gen func(depth int) *rapid.Generator[*ui.Node]
	gen = func(depth int) *rapid.Generator[*ui.Node] {
		return rapid.Custom(func(t *rapid.T) *ui.Node {
			*next++
			n := &ui.Node{
				ID:           "n" + strconv.Itoa(*next),
				Type:         rapid.SampledFrom([]string{"", " ", "Button", "TextField", "Window", "Label", "Toggle", "Ünïcode"}).Draw(t, "type"),
				AutomationID: rapid.SampledFrom([]string{"", "save", " spaced "}).Draw(t, "automationId"),
				Label:        rapid.StringN(0, 12, -1).Draw(t, "label"),
				Text:         rapid.OneOf(rapid.StringN(0, 8, -1), rapid.StringN(239, 260, -1)).Draw(t, "text"),
				Role:         rapid.SampledFrom([]string{"", "button", "textbox", "switch", "window"}).Draw(t, "role"),
				Actions:      rapid.SliceOfNDistinct(rapid.SampledFrom([]string{ui.ActionTap, ui.ActionFocus, ui.ActionSetValue, ui.ActionTypeText, "scroll"}), 0, 3, rapid.ID).Draw(t, "actions"),
				Hidden:       rapid.Bool().Draw(t, "hidden"),
				Disabled:     rapid.Bool().Draw(t, "disabled"),
				Focused:      rapid.Bool().Draw(t, "focused"),
				Secure:       rapid.Bool().Draw(t, "secure"),
			}
			if n.Secure {
				n.Text = "s3cret-" + n.ID // what a password field holds: never published
			}
			if rapid.Bool().Draw(t, "checkable") {
				c := rapid.Bool().Draw(t, "checked")
				n.Checked = &c
			}
			if rapid.Bool().Draw(t, "hasBounds") {
				n.Bounds = &ui.Bounds{X: rapid.Float64Range(-100, 1000).Draw(t, "x"), Y: rapid.Float64Range(-100, 1000).Draw(t, "y"),
					Width: rapid.Float64Range(0, 500).Draw(t, "w"), Height: rapid.Float64Range(0, 500).Draw(t, "h")}
			}
			if rapid.Bool().Draw(t, "hasProperties") {
				n.Properties = map[string]string{"fontSize": "17", rapid.StringN(1, 5, -1).Draw(t, "key"): "v"}
			}
			if depth < 4 {
				n.Children = rapid.SliceOfN(gen(depth+1), 0, 3).Draw(t, "children")
			}
			return n
		})
	}
	return gen(0)
}

// TestEveryTreePassesTheGate: whatever tree a screen captures and whatever the capture
// options, ui.get_visual_tree answers a payload the official host's gate accepts, which
// reads back node for node as the screen reported it (a secure node without its text).
func TestEveryTreePassesTheGate(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		next := 0
		root := nodeGen(&next).Draw(rt, "root")
		a := app.New(app.Options{})
		if err := ui.Register(a, treeScreen{root}, ui.Options{}); err != nil {
			rt.Fatal(err)
		}
		h := apptest.New(t, a)
		args := map[string]string{
			"includeBounds":         rapid.SampledFrom([]string{"", "true", "false"}).Draw(rt, "includeBounds"),
			"includeComputedStyles": rapid.SampledFrom([]string{"", "true"}).Draw(rt, "styles"),
			"maxDepth":              rapid.SampledFrom([]string{"", "0", "1", "2", "32"}).Draw(rt, "maxDepth"),
			"maxNodes":              rapid.SampledFrom([]string{"", "1", "3", "2000"}).Draw(rt, "maxNodes"),
			"root":                  rapid.SampledFrom([]string{"", `"window"`, `"currentPage"`}).Draw(rt, "rootScope"),
		}
		var parts []string
		for k, v := range args {
			if v != "" {
				parts = append(parts, fmt.Sprintf("%q:%s", k, v))
			}
		}
		res, _ := h.Call(ui.GetVisualTreeToolID, "{"+strings.Join(parts, ",")+"}")
		if err := uitree.Validate(res); err != nil {
			rt.Fatalf("%v\n%s", err, res)
		}
		tree, err := uitree.Parse(res)
		if err != nil {
			rt.Fatal(err)
		}
		byID := map[string]*ui.Node{}
		var index func(n *ui.Node)
		index = func(n *ui.Node) {
			byID[n.ID] = n
			for _, c := range n.Children {
				index(c)
			}
		}
		index(root)
		for _, got := range tree.All() {
			want := byID[got.ID]
			// The official reading: the label, else the displayed or typed text (never a
			// secure node's), else a checkable node's state.
			shown := strings.TrimSpace(want.Text)
			if want.Secure {
				shown = ""
			}
			state := ""
			if want.Checked != nil && !want.Secure {
				state = strconv.FormatBool(*want.Checked)
			}
			text := cmp.Or(strings.TrimSpace(want.Label), shown, state)
			if got.Type != uitree.TypeName(want.Type) || got.AutomationID != strings.TrimSpace(want.AutomationID) ||
				got.Text != strings.TrimSpace(text) || got.Visible == want.Hidden || got.Enabled == want.Disabled ||
				got.Secure != want.Secure || len(got.Actions) != len(want.Actions) {
				rt.Fatalf("node %s reads %+v, want %+v", got.ID, got, want)
			}
		}
		if strings.Contains(string(res), "s3cret-") {
			rt.Fatalf("a secure node's text was published:\n%s", res)
		}
	})
}
