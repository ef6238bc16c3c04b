package uitree

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func mustParse(t testing.TB, data []byte) *Tree {
	t.Helper()
	tree, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// TestParseAndroidViews reads the official Android runtime's tree: resource-name
// automation ids, hint labels, values in visual, states, the overlay surface left out,
// the node-budget stub.
func TestParseAndroidViews(t *testing.T) {
	t.Parallel()
	tree := mustParse(t, fixture(t, "android-views.json"))
	if tree.Platform != "android" || tree.Adapter != "android.views" || tree.SnapshotID == "" || tree.Revision != 7 ||
		!tree.Compact() || !tree.Truncated || tree.NodeCount != 12 {
		t.Fatalf("payload: %+v", tree)
	}
	if want := time.Date(2026, 3, 14, 9, 26, 53, 589e6, time.UTC); !tree.CapturedAt.Equal(want) {
		t.Errorf("capturedAt %v", tree.CapturedAt)
	}
	search := tree.Node("0.0.1")
	if search.Type != "android.widget.EditText" || search.AutomationID != "com.example.notes:id/search" ||
		search.Text != "Search notes" || search.Value != "milk" || search.Role != "textbox" || !search.Focused ||
		strings.Join(search.Actions, ",") != "tap,typeText,focus" {
		t.Errorf("search field: %+v", search)
	}
	if pin := tree.Node("0.0.2"); pin.Value != "" || pin.Text != "PIN" {
		t.Errorf("pin field: value %q text %q", pin.Value, pin.Text)
	}
	if del := tree.Node("0.0.3.1"); del.Enabled || del.Usable() || !del.Shown() || *del.Opacity != 0.5 {
		t.Errorf("disabled button: %+v", del)
	}
	if save := tree.Node("0.0.3.0"); save.Z != 2 || save.Background != "#FF007AFF" || save.Bounds.Width != 480 {
		t.Errorf("save: %+v", save)
	}
	if dark := tree.Node("0.0.3.2"); dark.Value != "false" {
		t.Errorf("switch value %q", dark.Value)
	}
	stub := tree.Node("0.0.3.3")
	if !stub.Stub || stub.Type != "android.widget.TextView" || stub.Role != "text" || stub.Text != "" {
		t.Errorf("stub: %+v", stub)
	}
	overlay := tree.Node("0.1")
	if !overlay.Injected() {
		t.Errorf("the overlay surface is not marked injected")
	}
	for _, n := range tree.Nodes() {
		if n.Injected() {
			t.Errorf("Nodes lists the overlay surface %s", n.ID)
		}
	}
	if len(tree.All()) != 12 || len(tree.Nodes()) != 11 {
		t.Errorf("All %d Nodes %d", len(tree.All()), len(tree.Nodes()))
	}
	if vp, ok := tree.Viewport(); !ok || vp != (Rect{0, 0, 1080, 2400}) {
		t.Errorf("viewport %v %v", vp, ok)
	}
}

// TestParseUIKit reads the official UIKit tree: decimal object ids, labels, a switch's
// value, a secure field without its value.
func TestParseUIKit(t *testing.T) {
	t.Parallel()
	tree := mustParse(t, fixture(t, "ios-uikit.json"))
	email := tree.Find(Selector{AutomationID: "EmailField"})
	if len(email) != 1 || email[0].Value != "ada@example.com" || email[0].Type != "UITextField" {
		t.Fatalf("email: %+v", email)
	}
	if sw := tree.Find(Selector{Role: "switch"}); len(sw) != 1 || sw[0].Value != "true" {
		t.Errorf("switch: %+v", sw)
	}
	if pw := tree.Find(Selector{AutomationID: "PasswordField"}); len(pw) != 1 || pw[0].Value != "" {
		t.Errorf("password: %+v", pw)
	}
	if tree.Root.ID != "105553116266496" || tree.Root.ChildCount != 1 {
		t.Errorf("root %+v", tree.Root)
	}
}

// TestParseFlags reads MAUI's flags with the payload's flagBits, bounds as arrays (4 and
// 8 elements) and absolute bounds, coordinateSpace, and the page context.
func TestParseFlags(t *testing.T) {
	t.Parallel()
	tree := mustParse(t, fixture(t, "maui-flags.json"))
	if want := time.Date(2026, 3, 14, 9, 31, 0, 0, time.UTC); !tree.CapturedAt.Equal(want) {
		t.Errorf("capturedAt %v (the official host reads a space-separated time)", tree.CapturedAt)
	}
	settings := tree.Node("page-settings")
	if !settings.Visible || settings.Enabled || *settings.Bounds != (Rect{0, 0, 390, 844}) {
		t.Errorf("settings page (flags 1, 8-element bounds): %+v %v", settings, settings.Bounds)
	}
	save := tree.Node("settings-save")
	if !save.Enabled || save.Usable() || *save.Bounds != (Rect{20, 700, 350, 44}) {
		t.Errorf("a button under a disabled page: enabled %v usable %v bounds %v", save.Enabled, save.Usable(), save.Bounds)
	}
	if save.Role != "button" || strings.Join(save.Actions, ",") != "tap" {
		t.Errorf("inferred role %q actions %v", save.Role, save.Actions)
	}
	if n := tree.Node("accounts-name"); n.Role != "textbox" || n.Value != "Ada" || n.Text != "Ada" ||
		strings.Join(n.Actions, ",") != "tap,typeText,focus" {
		t.Errorf("entry: %+v", n)
	}
	if n := tree.Node("accounts-list"); n.Role != "scrollview" {
		t.Errorf("collection view role %q", n.Role)
	}
	if n := tree.Node("page-accounts"); !n.CurrentPage || !n.inActivePage {
		t.Errorf("current page: %+v", n)
	}
	if vp, _ := tree.Viewport(); vp != (Rect{0, 0, 390, 844}) {
		t.Errorf("viewport %v", vp)
	}
}

// TestParseReactProps reads automation ids, text, role and secure entry from React props
// and properties.
func TestParseReactProps(t *testing.T) {
	t.Parallel()
	tree := mustParse(t, fixture(t, "react-props.json"))
	for _, tt := range []struct{ id, automation, text, role, value string }{
		{"r1", "root", "", "view", ""},
		{"r2", "login-button", "Log in", "button", ""},
		{"r3", "password-input", "", "textbox", ""},
		{"r4", "terms-text", "Terms", "text", "Read the terms"},
	} {
		n := tree.Node(tt.id)
		if n.AutomationID != tt.automation || n.Text != tt.text || n.Role != tt.role || n.Value != tt.value {
			t.Errorf("%s: automation %q text %q role %q value %q", tt.id, n.AutomationID, n.Text, n.Role, n.Value)
		}
	}
	if !tree.Node("r3").Secure {
		t.Errorf("props.secureTextEntry does not mark the node secure")
	}
	// The secure entry's value (sent by a careless app) is not held by the reader.
	if string(tree.Node("r4").Properties) != `{"accessibilityIdentifier":"terms-text","value":"Read the terms"}` {
		t.Errorf("properties %s", tree.Node("r4").Properties)
	}
}

// TestParseLegacy reads the per-node form older SDKs (ours included) send.
func TestParseLegacy(t *testing.T) {
	t.Parallel()
	tree := mustParse(t, fixture(t, "legacy-go.json"))
	if !tree.Legacy() || tree.Compact() || tree.TotalNodes != 3 {
		t.Fatalf("form: %+v", tree)
	}
	s := tree.Node("list.search")
	if s.Type != "SearchField" || s.Text != "milk" || s.Label != "Search notes" || s.AutomationID != "searchField" {
		t.Errorf("search: %+v", s)
	}
	if d := tree.Node("list.darkMode"); d.Checked == nil || *d.Checked || d.Text != "Dark mode" {
		t.Errorf("toggle: %+v", d)
	}
}

// TestParseRefuses: what Parse cannot read, and the bounds.
func TestParseRefuses(t *testing.T) {
	t.Parallel()
	deep := `{"root":` + strings.Repeat(`{"id":"x","children":[`, 130) + strings.Repeat(`]}`, 130) + `}`
	for _, tt := range []struct{ name, in, want string }{
		{"not json", `{"root":`, "invalid JSON"},
		{"not an object", `[]`, "not a JSON object"},
		{"no root", `{"format":"x.compact.v2"}`, "no root"},
		{"root not object", `{"root":"0"}`, "no root"},
		{"duplicate member", `{"root":{"id":"a","id":"b"}}`, "duplicate"},
		{"case variant", `{"root":{"id":"a","Visible":false}}`, "only by case"},
		{"payload case variant", `{"Root":{},"root":{"id":"a"}}`, "only by case"},
		{"trailing data", `{"root":{"id":"a"}} {}`, "after the payload"},
		{"invalid utf8", "{\"root\":{\"id\":\"\xff\"}}", "invalid JSON"},
		{"too deep", deep, "deeper than"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse([]byte(tt.in))
			var e *Error
			if !errors.As(err, &e) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse = %v, want an *Error containing %q", err, tt.want)
			}
		})
	}
}

// TestLenientMembers: values of the wrong type are ignored, as the official host does.
func TestLenientMembers(t *testing.T) {
	t.Parallel()
	tree := mustParse(t, []byte(`{"format":"x.compact.v2","types":["Button"],"root":{"id":"a","typeId":0,
		"visible":"no","enabled":1,"flags":"3","bounds":{"x":"1","y":0,"width":1,"height":1},
		"automationId":"  ","accessibilityIdentifier":" save ","label":7,"text":"  ","value":"Go",
		"supportedActions":["Tap","tap"," ",3,"TAP","focus"]}}`))
	n := tree.Root
	if !n.Visible || !n.Enabled || n.Bounds != nil || n.AutomationID != "save" || n.Text != "Go" ||
		strings.Join(n.Actions, ",") != "Tap,focus" || n.Role != "button" {
		t.Fatalf("%+v", n)
	}
}
