package notes

import (
	"strings"

	"github.com/ansight-go/ansight/app/ui"
)

// The simulated phone's screen, in points.
const (
	screenWidth  = 390
	screenHeight = 844
	statusBarH   = 47
	rowHeight    = 72
	listTop      = 159
	listBottom   = 664
)

// rect is a frame in points.
type rect struct{ x, y, w, h float64 }

func (r rect) bounds() *ui.Bounds { return &ui.Bounds{X: r.x, Y: r.y, Width: r.w, Height: r.h} }

// kind selects how a widget is drawn.
type kind int

const (
	kindScreen kind = iota
	kindLargeTitle
	kindNavTitle
	kindSearchField
	kindTextField
	kindTextArea
	kindList
	kindRow
	kindEmpty
	kindToggle
	kindButton
	kindBackButton
	kindDestructiveButton
	kindSecondaryButton
	kindCaption
	kindStatus
	kindSmallButton
	kindSecureField
)

// actionScroll scrolls the list: ui.perform_action's value is the swipe's direction, up
// revealing the rows below (ansight ui swipe --direction up).
const actionScroll = "scroll"

// listRows is how many rows the list's frame shows.
const listRows = (listBottom - listTop) / rowHeight

// widget is one element of the laid-out screen. The same tree feeds Capture (as ui.Nodes)
// and Render, so what the tools see is what the screenshot shows.
type widget struct {
	kind         kind
	id           string
	typ, role    string
	automationID string
	label, text  string
	placeholder  string // shown when text is empty
	detail       string // a row's date
	actions      []string
	hidden       bool
	disabled     bool
	back         bool // navigates back (ui.Node.NavigatesBack)
	focused      bool
	secure       bool // a secure entry: its text is drawn as dots and never published
	checked      *bool
	r            rect
	children     []*widget
}

var (
	fieldActions  = []string{ui.ActionTap, ui.ActionFocus, ui.ActionSetValue, ui.ActionTypeText}
	buttonActions = []string{ui.ActionTap}
	rowActions    = []string{ui.ActionTap, ui.ActionSelect}
	listActions   = []string{actionScroll}
	toggleActions = []string{ui.ActionTap, ui.ActionToggle, ui.ActionSetValue}
)

// view lays out the current screen. Callers hold mu and have called settle.
func (m *Model) view() *widget {
	switch m.screen {
	case screenEditor:
		return m.editorView()
	case screenSignIn:
		return m.signInView()
	}
	return m.listView()
}

func (m *Model) listView() *widget {
	root := &widget{kind: kindScreen, id: "list.screen", typ: "Screen", role: "window", label: "Notes",
		r: rect{0, 0, screenWidth, screenHeight}}
	add := func(w *widget) *widget { root.children = append(root.children, w); return w }

	add(&widget{kind: kindLargeTitle, id: "list.title", typ: "TitleBar", role: "header", automationID: "screenTitle",
		text: "Notes", r: rect{0, statusBarH, screenWidth, 52}})
	account := "Sign in"
	if m.account != "" {
		account = "Sign out"
	}
	add(&widget{kind: kindSecondaryButton, id: "list.account", typ: "Button", role: "button", automationID: "accountButton",
		text: account, actions: buttonActions, r: rect{262, 57, 112, 36}})
	add(&widget{kind: kindSearchField, id: "list.search", typ: "SearchField", role: "textbox", automationID: "searchField",
		label: "Search notes", placeholder: "Search notes", text: m.search, actions: fieldActions,
		focused: m.focus == "list.search", r: rect{16, 107, 358, 40}})

	list := add(&widget{kind: kindList, id: "list.notes", typ: "List", role: "list", automationID: "notesList",
		label: "Notes", actions: listActions, r: rect{0, listTop, screenWidth, listBottom - listTop}})
	notes := m.visibleNotes()
	m.offset = min(m.offset, max(0, len(notes)-listRows))
	for i, n := range notes {
		// Rows above the list's top are scrolled away (swipe up scrolls further down).
		y := float64(listTop + (i-m.offset)*rowHeight)
		list.children = append(list.children, &widget{kind: kindRow, id: "note." + n.ID, typ: "ListItem", role: "listitem",
			automationID: "noteRow-" + n.ID, label: n.Title, text: firstLine(n.Body),
			detail: n.UpdatedAt.In(m.now().Location()).Format("Jan 2"), actions: rowActions,
			// Rows outside the list's frame are scrolled away: in the tree, not on screen.
			hidden: y < listTop || y+rowHeight > listBottom, r: rect{0, y, screenWidth, rowHeight}})
	}
	if len(notes) == 0 {
		text := "No notes yet. Tap “Add note” to write one."
		if strings.TrimSpace(m.search) != "" {
			text = "No notes match “" + strings.TrimSpace(m.search) + "”."
		}
		list.children = append(list.children, &widget{kind: kindEmpty, id: "list.empty", typ: "Label", role: "text",
			automationID: "emptyLabel", text: text, r: rect{16, listTop + 40, 358, 24}})
	}

	dark := m.dark
	add(&widget{kind: kindToggle, id: "list.darkMode", typ: "Toggle", role: "switch", automationID: "darkModeToggle",
		label: "Dark mode", checked: &dark, actions: toggleActions, r: rect{16, 672, 358, 48}})
	add(&widget{kind: kindButton, id: "list.add", typ: "Button", role: "button", automationID: "addNoteButton",
		text: "Add note", actions: buttonActions, r: rect{16, 732, 171, 50}})
	add(&widget{kind: kindSecondaryButton, id: "list.sync", typ: "Button", role: "button", automationID: "syncButton",
		text: "Sync", actions: buttonActions, disabled: m.account == "" || !m.syncUntil.IsZero(), r: rect{203, 732, 171, 50}})
	status := add(&widget{kind: kindStatus, id: "list.status", typ: "Label", role: "status", automationID: "statusLabel",
		text: m.statusLine(), r: rect{16, 794, 358, 24}})
	// The banner's OK button is in the tree all along, hidden until a sync from the Sync
	// button has ended: a target that appears after a second.
	if m.synced {
		status.r.w = 300
	}
	add(&widget{kind: kindSmallButton, id: "list.syncedOK", typ: "Button", role: "button", automationID: "syncedOkButton",
		label: "Dismiss", text: "OK", actions: buttonActions, hidden: !m.synced, r: rect{322, 790, 52, 32}})
	return root
}

func (m *Model) editorView() *widget {
	title := "New note"
	if m.editNoteID != "" {
		title = "Edit note"
	}
	root := &widget{kind: kindScreen, id: "editor.screen", typ: "Screen", role: "window", label: title,
		r: rect{0, 0, screenWidth, screenHeight}}
	add := func(w *widget) { root.children = append(root.children, w) }
	add(&widget{kind: kindNavTitle, id: "editor.title", typ: "TitleBar", role: "header", automationID: "screenTitle",
		text: title, r: rect{0, statusBarH, screenWidth, 52}})
	add(&widget{kind: kindBackButton, id: "editor.back", typ: "Button", role: "button", automationID: "backButton",
		label: "Back", text: "Notes", actions: buttonActions, back: true, r: rect{8, 53, 96, 40}})
	add(&widget{kind: kindCaption, id: "editor.titleCaption", typ: "Label", role: "text", text: "Title", r: rect{20, 111, 350, 18}})
	add(&widget{kind: kindTextField, id: "editor.titleField", typ: "TextField", role: "textbox", automationID: "titleField",
		label: "Title", placeholder: "Title", text: m.editTitle, actions: fieldActions,
		focused: m.focus == "editor.titleField", r: rect{16, 133, 358, 44}})
	add(&widget{kind: kindCaption, id: "editor.bodyCaption", typ: "Label", role: "text", text: "Body", r: rect{20, 193, 350, 18}})
	add(&widget{kind: kindTextArea, id: "editor.body", typ: "TextArea", role: "textbox", automationID: "bodyField",
		label: "Body", placeholder: "Write something…", text: m.editBody, actions: fieldActions,
		focused: m.focus == "editor.body", r: rect{16, 215, 358, 330}})
	add(&widget{kind: kindButton, id: "editor.save", typ: "Button", role: "button", automationID: "saveButton",
		text: "Save", actions: buttonActions, disabled: strings.TrimSpace(m.editTitle) == "", r: rect{16, 565, 358, 50}})
	add(&widget{kind: kindDestructiveButton, id: "editor.delete", typ: "Button", role: "button", automationID: "deleteButton",
		text: "Delete note", actions: buttonActions, hidden: m.editNoteID == "", r: rect{16, 627, 358, 50}})
	return root
}

// signInView is the sign-in screen: a user name, a password (a secure entry) and a
// button that signs in once both are filled.
func (m *Model) signInView() *widget {
	root := &widget{kind: kindScreen, id: "signin.screen", typ: "Screen", role: "window", label: "Sign in",
		r: rect{0, 0, screenWidth, screenHeight}}
	add := func(w *widget) { root.children = append(root.children, w) }
	add(&widget{kind: kindNavTitle, id: "signin.title", typ: "TitleBar", role: "header", automationID: "screenTitle",
		text: "Sign in", r: rect{0, statusBarH, screenWidth, 52}})
	add(&widget{kind: kindBackButton, id: "signin.back", typ: "Button", role: "button", automationID: "backButton",
		label: "Back", text: "Notes", actions: buttonActions, r: rect{8, 53, 96, 40}})
	add(&widget{kind: kindCaption, id: "signin.userCaption", typ: "Label", role: "text", text: "User name", r: rect{20, 111, 350, 18}})
	add(&widget{kind: kindTextField, id: "signin.user", typ: "TextField", role: "textbox", automationID: "userNameField",
		label: "User name", placeholder: "you@example.com", text: m.signInUser, actions: fieldActions,
		focused: m.focus == "signin.user", r: rect{16, 133, 358, 44}})
	add(&widget{kind: kindCaption, id: "signin.passwordCaption", typ: "Label", role: "text", text: "Password", r: rect{20, 193, 350, 18}})
	add(&widget{kind: kindSecureField, id: "signin.password", typ: "SecureField", role: "textbox", automationID: "passwordField",
		label: "Password", placeholder: "Password", text: m.signInPassword, actions: fieldActions, secure: true,
		focused: m.focus == "signin.password", r: rect{16, 215, 358, 44}})
	add(&widget{kind: kindButton, id: "signin.submit", typ: "Button", role: "button", automationID: "signInButton",
		text: "Sign in", actions: buttonActions, disabled: strings.TrimSpace(m.signInUser) == "" || m.signInPassword == "",
		r: rect{16, 283, 358, 50}})
	return root
}

// firstLine is a note's preview in the list.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// find returns the widget with id in the tree under w.
func (w *widget) find(id string) *widget {
	if w.id == id {
		return w
	}
	for _, c := range w.children {
		if f := c.find(id); f != nil {
			return f
		}
	}
	return nil
}

// node converts the widget tree to the toolkit's nodes.
func (w *widget) node() *ui.Node {
	n := &ui.Node{ID: w.id, Type: w.typ, AutomationID: w.automationID, Label: w.label, Text: w.text, Role: w.role,
		Actions: w.actions, Hidden: w.hidden, Disabled: w.disabled, Checked: w.checked, Focused: w.focused,
		NavigatesBack: w.back, Secure: w.secure, Bounds: w.r.bounds()}
	for _, c := range w.children {
		n.Children = append(n.Children, c.node())
	}
	return n
}
