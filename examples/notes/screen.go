package notes

import (
	"context"
	"fmt"
	"image"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ansight-go/ansight/app/ui"
)

// The Model is the app's screen.
var _ ui.Screen = (*Model)(nil)

// Capture returns the tree of the current screen (ui.Screen).
func (m *Model) Capture(ctx context.Context) (*ui.Node, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.settle()
	return m.view().node(), nil
}

// Render draws the current screen (ui.Screen): 390×844 points at the model's scale.
func (m *Model) Render(ctx context.Context) (image.Image, error) {
	m.mu.Lock()
	m.settle()
	v, dark, clock := m.view(), m.dark, m.now()
	m.mu.Unlock()
	return render(v, dark, clock, m.scale)
}

// Perform applies a UI action to a live node (ui.Screen). The toolkit has checked the
// reference against its latest snapshot; the screen may still have changed since (a tool
// may have navigated), so the node is looked up again in the current layout.
func (m *Model) Perform(ctx context.Context, id string, act ui.Action) (map[string]any, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.settle()
	w := m.view().find(id)
	switch {
	case w == nil:
		return nil, fmt.Errorf("%w: %q is not on the %s screen", ui.ErrNodeNotFound, id, m.screen)
	case !slices.Contains(w.actions, act.Name):
		return nil, fmt.Errorf("%w: %s does not take %q", ui.ErrActionNotSupported, id, act.Name)
	case w.disabled:
		return nil, fmt.Errorf("%w: %s is disabled", ui.ErrActionNotSupported, id)
	}

	switch w.kind {
	case kindSearchField, kindTextField, kindTextArea, kindSecureField:
		return m.editField(w, act)
	case kindToggle:
		switch act.Name {
		case ui.ActionSetValue:
			on, ok := act.Value.(bool)
			if !ok {
				return nil, fmt.Errorf("%w: setValue on a toggle needs true or false", ui.ErrInvalidValue)
			}
			m.dark = on
		default: // tap, toggle
			m.dark = !m.dark
		}
		return map[string]any{"checked": m.dark}, nil
	case kindRow:
		noteID := strings.TrimPrefix(id, "note.")
		n := m.notes[m.index(noteID)] // the row is on screen, so the note exists
		m.screen, m.focus = screenEditor, ""
		m.editNoteID, m.editTitle, m.editBody = n.ID, n.Title, n.Body
		return map[string]any{"screen": screenEditor, "noteId": n.ID}, nil
	}

	switch id {
	case "list.account":
		if m.unload() {
			return map[string]any{"signedIn": false}, nil
		}
		m.toList()
		m.screen, m.focus = screenSignIn, "signin.user"
		return map[string]any{"screen": screenSignIn}, nil
	case "signin.back":
		m.toList()
		return map[string]any{"screen": screenList}, nil
	case "signin.submit":
		user := strings.TrimSpace(m.signInUser)
		m.load(user)
		m.toList() // forgets the password
		m.status = "Signed in as " + user
		return map[string]any{"screen": screenList, "account": user}, nil
	case "list.add":
		m.screen, m.focus = screenEditor, "editor.titleField"
		m.editNoteID, m.editTitle, m.editBody = "", "", ""
		return map[string]any{"screen": screenEditor}, nil
	case "list.sync":
		m.syncUntil = m.now().Add(syncDuration)
		m.status, m.syncErr, m.synced = "", nil, false
		m.uploadInBackground()
		return map[string]any{"syncing": true}, nil
	case "list.syncedOK":
		m.status, m.synced = "", false
		return map[string]any{"dismissed": true}, nil
	case "list.notes":
		return m.scroll(act)
	case "editor.back":
		m.toList()
		return map[string]any{"screen": screenList}, nil
	case "editor.save":
		title, body := strings.TrimSpace(m.editTitle), m.editBody
		var n Note
		if i := m.index(m.editNoteID); i >= 0 {
			m.notes[i].Title, m.notes[i].Body, m.notes[i].UpdatedAt = title, body, m.now().UTC()
			n = m.notes[i]
		} else {
			n = m.addNote(title, body, m.now().UTC())
		}
		m.changed()
		m.toList()
		m.status = "Saved “" + n.Title + "”"
		return map[string]any{"screen": screenList, "noteId": n.ID, "saved": true}, nil
	case "editor.delete":
		if i := m.index(m.editNoteID); i >= 0 {
			m.notes = slices.Delete(m.notes, i, i+1)
			m.changed()
		}
		deleted := m.editNoteID
		m.toList()
		m.status = "Deleted a note"
		return map[string]any{"screen": screenList, "deletedNoteId": deleted}, nil
	}
	return nil, fmt.Errorf("%w: %s has no behaviour for %q", ui.ErrActionNotSupported, id, act.Name)
}

// scroll moves the list by a page: "up" (a swipe up) reveals the rows below, "down" the
// rows above. Callers hold mu.
func (m *Model) scroll(act ui.Action) (map[string]any, error) {
	dir, _ := act.Value.(string)
	switch dir {
	case "up":
		m.offset = min(m.offset+listRows, max(0, len(m.visibleNotes())-listRows))
	case "down":
		m.offset = max(0, m.offset-listRows)
	default:
		return nil, fmt.Errorf("%w: scroll takes up or down, not %v", ui.ErrInvalidValue, act.Value)
	}
	return map[string]any{"firstRow": m.offset}, nil
}

// editField applies a text action to a field. Callers hold mu.
func (m *Model) editField(w *widget, act ui.Action) (map[string]any, error) {
	m.focus = w.id
	if act.Name == ui.ActionTap || act.Name == ui.ActionFocus {
		return map[string]any{"focused": true, "text": w.text}, nil // a secure field's text: dropped by the toolkit
	}
	v, ok := act.Value.(string)
	if !ok {
		return nil, fmt.Errorf("%w: %s needs a string value", ui.ErrInvalidValue, act.Name)
	}
	text := v
	if act.Name == ui.ActionTypeText {
		text = w.text + v
	}
	target, limit := &m.search, maxSearch
	switch w.id {
	case "editor.titleField":
		target, limit = &m.editTitle, maxTitleLen
	case "editor.body":
		target, limit = &m.editBody, maxBodyLen
	case "signin.user":
		target, limit = &m.signInUser, maxUserName
	case "signin.password":
		target, limit = &m.signInPassword, maxPassword
	}
	if n := utf8.RuneCountInString(text); n > limit {
		return nil, fmt.Errorf("%w: %s holds at most %d characters, not %d", ui.ErrInvalidValue, w.label, limit, n)
	}
	if w.kind != kindTextArea {
		text = strings.ReplaceAll(text, "\n", " ") // single-line fields
	}
	*target = text
	return map[string]any{"focused": true, "text": text}, nil
}
