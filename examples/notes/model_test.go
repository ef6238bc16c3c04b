package notes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/apptest"
	"github.com/ansight-go/ansight/app/ui"
)

// tree captures the screen and indexes its nodes by id.
func tree(t *testing.T, m *Model) (*ui.Node, map[string]*ui.Node) {
	t.Helper()
	root, err := m.Capture(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*ui.Node{}
	var walk func(n *ui.Node)
	walk = func(n *ui.Node) {
		if byID[n.ID] != nil {
			t.Fatalf("duplicate node id %q", n.ID)
		}
		byID[n.ID] = n
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(root)
	return root, byID
}

// rows returns the titles of the list's rows in order.
func rows(t *testing.T, m *Model) []string {
	t.Helper()
	_, nodes := tree(t, m)
	var out []string
	for _, c := range nodes["list.notes"].Children {
		if c.Type == "ListItem" {
			out = append(out, c.Label)
		}
	}
	return out
}

func TestListScreen(t *testing.T) {
	m, _ := newTestModel(t, Options{})
	root, nodes := tree(t, m)
	if root.ID != "list.screen" || root.Role != "window" {
		t.Errorf("root = %+v", root)
	}
	for _, id := range []string{"list.title", "list.search", "list.notes", "list.darkMode", "list.add", "list.sync", "list.status"} {
		n := nodes[id]
		if n == nil || n.Bounds == nil || n.Hidden {
			t.Fatalf("%s missing or not on screen: %+v", id, n)
		}
		if b := n.Bounds; b.X < 0 || b.Y < 0 || b.X+b.Width > screenWidth || b.Y+b.Height > screenHeight {
			t.Errorf("%s is off screen: %+v", id, b)
		}
	}
	if got := strings.Join(rows(t, m), ","); got != "Book list,Ideas for the talk,Groceries" {
		t.Errorf("rows = %s (newest first)", got)
	}
	if n := nodes["list.sync"]; !n.Disabled {
		t.Error("Sync is enabled before sign-in")
	}
	if n := nodes["list.darkMode"]; n.Checked == nil || *n.Checked || n.Role != "switch" {
		t.Errorf("dark mode toggle = %+v", n)
	}
	if got := nodes["list.status"].Text; got != "Not signed in · sign in to sync" {
		t.Errorf("status = %q", got)
	}
}

func TestSearch(t *testing.T) {
	m, _ := newTestModel(t, Options{})
	act(t, m, "list.search", ui.ActionTypeText, "BOOK")
	if got := rows(t, m); len(got) != 1 || got[0] != "Book list" {
		t.Errorf("rows for BOOK = %v", got)
	}
	act(t, m, "list.search", ui.ActionTypeText, "s!")
	_, nodes := tree(t, m)
	if got := rows(t, m); len(got) != 0 || nodes["list.empty"] == nil || !strings.Contains(nodes["list.empty"].Text, "BOOKs!") {
		t.Errorf("no-match screen: rows %v, empty %+v", got, nodes["list.empty"])
	}
	if !nodes["list.search"].Focused || nodes["list.search"].Text != "BOOKs!" {
		t.Errorf("search field = %+v", nodes["list.search"])
	}
	act(t, m, "list.search", ui.ActionSetValue, "sourdough") // a body match
	if got := rows(t, m); len(got) != 1 || got[0] != "Groceries" {
		t.Errorf("rows for a body match = %v", got)
	}
}

func TestAddEditDeleteThroughTheUI(t *testing.T) {
	m, clock := newTestModel(t, Options{})
	if out := act(t, m, "list.add", ui.ActionTap, nil); out["screen"] != screenEditor {
		t.Errorf("add = %v", out)
	}
	_, nodes := tree(t, m)
	if nodes["list.add"] != nil || nodes["editor.screen"] == nil || !nodes["editor.titleField"].Focused {
		t.Fatal("Add note did not open a focused editor")
	}
	if !nodes["editor.save"].Disabled || !nodes["editor.delete"].Hidden || nodes["editor.title"].Text != "New note" {
		t.Errorf("a new note's editor: save %+v delete %+v", nodes["editor.save"], nodes["editor.delete"])
	}
	// The list's nodes are gone: acting on them is a stale reference for the toolkit.
	if _, err := m.Perform(context.Background(), "list.add", ui.Action{Name: ui.ActionTap}); !errors.Is(err, ui.ErrNodeNotFound) {
		t.Errorf("tap on a node of the other screen = %v", err)
	}
	if _, err := m.Perform(context.Background(), "editor.save", ui.Action{Name: ui.ActionTap}); !errors.Is(err, ui.ErrActionNotSupported) {
		t.Errorf("tap on the disabled Save = %v", err)
	}

	act(t, m, "editor.titleField", ui.ActionTypeText, "Call ")
	act(t, m, "editor.titleField", ui.ActionTypeText, "mum")
	act(t, m, "editor.body", ui.ActionSetValue, "Sunday,\nafter lunch")
	clock.t = clock.t.Add(time.Minute)
	out := act(t, m, "editor.save", ui.ActionTap, nil)
	if out["screen"] != screenList || out["saved"] != true {
		t.Errorf("save = %v", out)
	}
	if got := rows(t, m); got[0] != "Call mum" || len(got) != 4 {
		t.Errorf("rows after save = %v", got)
	}
	id := out["noteId"].(string)
	n, _ := m.note(id)
	if n.Body != "Sunday,\nafter lunch" || !n.CreatedAt.Equal(clock.t) {
		t.Errorf("saved note = %+v", n)
	}
	_, nodes = tree(t, m)
	if nodes["list.status"].Text != "Saved “Call mum”" || nodes["note."+id].Text != "Sunday," {
		t.Errorf("status %q, row preview %q", nodes["list.status"].Text, nodes["note."+id].Text)
	}

	// Open an existing note, change it, go back: nothing changes.
	act(t, m, "note.n1", ui.ActionTap, nil)
	_, nodes = tree(t, m)
	if nodes["editor.titleField"].Text != "Groceries" || nodes["editor.delete"].Hidden || nodes["editor.title"].Text != "Edit note" {
		t.Fatalf("editor of n1: %+v", nodes["editor.titleField"])
	}
	act(t, m, "editor.titleField", ui.ActionSetValue, "Shopping")
	act(t, m, "editor.back", ui.ActionTap, nil)
	if n, _ := m.note("n1"); n.Title != "Groceries" {
		t.Errorf("Back saved the edit: %+v", n)
	}
	// Now save it; the edited note moves to the top.
	clock.t = clock.t.Add(time.Minute)
	act(t, m, "note.n1", ui.ActionSelect, nil)
	act(t, m, "editor.titleField", ui.ActionSetValue, "  Shopping  ")
	act(t, m, "editor.save", ui.ActionTap, nil)
	if got := rows(t, m); got[0] != "Shopping" {
		t.Errorf("rows after an edit = %v", got)
	}
	// And delete it.
	act(t, m, "note.n1", ui.ActionTap, nil)
	if out := act(t, m, "editor.delete", ui.ActionTap, nil); out["deletedNoteId"] != "n1" {
		t.Errorf("delete = %v", out)
	}
	if _, ok := m.note("n1"); ok || len(rows(t, m)) != 3 {
		t.Error("the note was not deleted")
	}
}

func TestFieldValues(t *testing.T) {
	m, _ := newTestModel(t, Options{})
	tests := []struct {
		id, action string
		value      any
		want       error
	}{
		{"list.search", ui.ActionSetValue, 3.0, ui.ErrInvalidValue},
		{"list.search", ui.ActionTypeText, nil, ui.ErrInvalidValue},
		{"list.search", ui.ActionSetValue, strings.Repeat("x", maxSearch+1), ui.ErrInvalidValue},
		{"list.darkMode", ui.ActionSetValue, "on", ui.ErrInvalidValue},
		{"list.darkMode", ui.ActionFocus, nil, ui.ErrActionNotSupported},
		{"list.sync", ui.ActionTap, nil, ui.ErrActionNotSupported}, // disabled: not signed in
		{"note.n1", ui.ActionTypeText, "x", ui.ErrActionNotSupported},
		{"note.n99", ui.ActionTap, nil, ui.ErrNodeNotFound},
	}
	for _, tt := range tests {
		_, err := m.Perform(context.Background(), tt.id, ui.Action{Name: tt.action, Value: tt.value})
		if !errors.Is(err, tt.want) {
			t.Errorf("%s %s %v = %v, want %v", tt.id, tt.action, tt.value, err, tt.want)
		}
	}
	// Single-line fields take no newlines.
	act(t, m, "list.search", ui.ActionSetValue, "a\nb")
	if _, nodes := tree(t, m); nodes["list.search"].Text != "a b" {
		t.Errorf("search = %q", nodes["list.search"].Text)
	}
}

func TestDarkModeToggle(t *testing.T) {
	m, _ := newTestModel(t, Options{})
	steps := []struct {
		action string
		value  any
		want   bool
	}{
		{ui.ActionToggle, nil, true},
		{ui.ActionTap, nil, false},
		{ui.ActionSetValue, true, true},
		{ui.ActionSetValue, true, true},
		{ui.ActionSetValue, false, false},
	}
	for _, s := range steps {
		if out := act(t, m, "list.darkMode", s.action, s.value); out["checked"] != s.want {
			t.Errorf("%s %v = %v", s.action, s.value, out)
		}
		if _, nodes := tree(t, m); *nodes["list.darkMode"].Checked != s.want || m.state().DarkMode != s.want {
			t.Errorf("after %s: toggle not %v", s.action, s.want)
		}
	}
}

func TestSyncFlow(t *testing.T) {
	m, clock := newTestModel(t, Options{})
	if _, _, _, ok := m.push(); ok {
		t.Fatal("push without an account")
	}
	m.signIn("ada")
	_, nodes := tree(t, m)
	if nodes["list.sync"].Disabled || nodes["list.status"].Text != "Signed in as ada · 3 changes to sync" {
		t.Errorf("signed in: sync %+v status %q", nodes["list.sync"], nodes["list.status"].Text)
	}
	act(t, m, "list.sync", ui.ActionTap, nil)
	_, nodes = tree(t, m)
	if !nodes["list.sync"].Disabled || nodes["list.status"].Text != "Syncing…" || !m.syncStatus().Syncing {
		t.Errorf("syncing: sync %+v status %q", nodes["list.sync"], nodes["list.status"].Text)
	}
	clock.t = clock.t.Add(syncDuration - time.Millisecond)
	if !m.syncStatus().Syncing {
		t.Error("the sync finished early")
	}
	clock.t = clock.t.Add(time.Millisecond)
	s := m.syncStatus()
	if s.Syncing || s.PendingChanges != 0 || !s.LastSyncUtc.Equal(clock.t) {
		t.Errorf("after the sync: %+v", s)
	}
	if _, nodes = tree(t, m); nodes["list.status"].Text != "Synced 3 notes at 09:41" {
		t.Errorf("status = %q", nodes["list.status"].Text)
	}
	m.createNote("One more", "")
	if s := m.syncStatus(); s.PendingChanges != 1 {
		t.Errorf("pending after a change = %d", s.PendingChanges)
	}
	account, pushed, _, ok := m.push()
	if !ok || account != "ada" || pushed != 1 {
		t.Errorf("push = %q %d %v", account, pushed, ok)
	}
	m.signOut()
	if m.accountLoaded() || m.state().Status != "Not signed in · sign in to sync" {
		t.Errorf("after sign-out: %+v", m.state())
	}
}

func TestLongListScrollsAway(t *testing.T) {
	m, clock := newTestModel(t, Options{Empty: true})
	if _, nodes := tree(t, m); nodes["list.empty"] == nil {
		t.Error("an empty app shows no empty label")
	}
	for i := 0; i < 10; i++ {
		clock.t = clock.t.Add(time.Second)
		m.createNote(fmt.Sprint("Note ", i), "")
	}
	_, nodes := tree(t, m)
	var visible, hidden int
	for _, r := range nodes["list.notes"].Children {
		if r.Hidden {
			hidden++
			if r.Bounds.Y+r.Bounds.Height <= listBottom {
				t.Errorf("row %s is hidden although it fits", r.ID)
			}
		} else {
			visible++
		}
	}
	if visible != (listBottom-listTop)/rowHeight || hidden != 10-visible {
		t.Errorf("%d rows visible, %d hidden", visible, hidden)
	}
}

func TestToolOperations(t *testing.T) {
	m, _ := newTestModel(t, Options{})
	act(t, m, "note.n2", ui.ActionTap, nil) // the editor is open on n2
	title := "Renamed"
	if n, err := m.updateNote("n2", &title, nil); err != nil || n.Title != "Renamed" || n.Body == "" {
		t.Errorf("update = %+v, %v", n, err)
	}
	if _, err := m.updateNote("zz", &title, nil); err == nil {
		t.Error("updating an unknown note succeeded")
	}
	if err := m.deleteNote("n2"); err != nil || m.state().Screen != screenList {
		t.Errorf("deleting the open note: %v, screen %s", err, m.state().Screen)
	}
	if n := m.deleteAll(); n != 2 || len(rows(t, m)) != 0 {
		t.Errorf("deleteAll = %d", n)
	}
	m.setDarkMode(true)
	m.signIn("bob")
	m.Reset()
	if s := m.state(); s.DarkMode || s.Account != "" || s.NoteCount != 3 || s.Screen != screenList {
		t.Errorf("after Reset: %+v", s)
	}
	notes, total := m.listNotes("IDEAS", 10)
	if total != 1 || notes[0].Title != "Ideas for the talk" {
		t.Errorf("listNotes = %v %d", notes, total)
	}
	if notes, total := m.listNotes("", 2); len(notes) != 2 || total != 3 {
		t.Errorf("limit: %d of %d", len(notes), total)
	}
}

// TestSignInScreen: the list's Sign in button opens a screen with a user name and a
// secure password field; the password is in no tree and drawn as dots; signing in loads
// the account and forgets the password.
func TestSignInScreen(t *testing.T) {
	m, _ := newTestModel(t, Options{})
	act(t, m, "list.account", ui.ActionTap, nil)
	act(t, m, "signin.user", ui.ActionTypeText, "ann")
	act(t, m, "signin.password", ui.ActionTap, nil)
	act(t, m, "signin.password", ui.ActionTypeText, "hunter2")
	_, nodes := tree(t, m)
	pw := nodes["signin.password"]
	if pw == nil || !pw.Secure || pw.Type != "SecureField" || nodes["signin.submit"].Disabled {
		t.Fatalf("sign-in screen: %+v %+v", pw, nodes["signin.submit"])
	}
	a := app.New(app.Options{})
	if err := ui.Register(a, m, ui.Options{}); err != nil {
		t.Fatal(err)
	}
	published, _ := apptest.New(t, a).Call(ui.GetVisualTreeToolID, `{}`)
	if strings.Contains(string(published), "hunter2") || !strings.Contains(string(published), `"isPassword":true`) {
		t.Errorf("the published tree: %s", published)
	}
	act(t, m, "signin.submit", ui.ActionTap, nil)
	_, nodes = tree(t, m)
	if nodes["list.screen"] == nil || nodes["list.status"].Text != "Signed in as ann" || nodes["list.account"].Text != "Sign out" || m.signInPassword != "" {
		t.Errorf("after signing in: status %q, account %q, password kept %q", nodes["list.status"].Text, nodes["list.account"].Text, m.signInPassword)
	}
	act(t, m, "list.account", ui.ActionTap, nil)
	if _, nodes = tree(t, m); nodes["list.account"].Text != "Sign in" {
		t.Errorf("after signing out: %q", nodes["list.account"].Text)
	}
}
