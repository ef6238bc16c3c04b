package notes

import (
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ansight-go/ansight/app/ui"
)

// Options configures a Model. The zero value is ready to use.
type Options struct {
	// Now is the app's clock (note times, sync progress, the status bar). Default time.Now.
	Now func() time.Time
	// Scale is the screenshot's pixels per point: 1 (the default) renders 390×844 images,
	// 2 and 3 match retina phones.
	Scale float64
	// SyntheticTools registers this many extra read tools (bench.synthetic_00001, …) for
	// catalog benchmarks with large tool counts.
	SyntheticTools int
	// Empty starts without the sample notes.
	Empty bool
}

// Note is one note of the app.
type Note struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Body      string    `json:"body"`
	CreatedAt time.Time `json:"createdAtUtc"`
	UpdatedAt time.Time `json:"updatedAtUtc"`
}

// Limits of the app's text fields.
const (
	maxTitleLen = 200
	maxBodyLen  = 10000
	maxSearch   = 100
	maxUserName = 64
)

// How long a sync started from the Sync button takes: ui.wait and the actions' auto-wait
// have something to wait for (the "Synced" banner's OK button appears when it ends).
const syncDuration = time.Second

// The screens.
const (
	screenList   = "list"
	screenEditor = "editor"
	screenSignIn = "signIn"
)

// maxPassword bounds the sign-in screen's password field.
const maxPassword = 128

// Model is the demo app's state: its notes, settings, account and what is on screen.
// It is safe for concurrent use; every tool and the UI toolkit go through its methods.
type Model struct {
	now            func() time.Time
	scale          float64
	syntheticTools int

	// overlays is the model's screen with the UI tools' overlays drawn over it (Screen).
	overlays *ui.OverlayScreen

	mu     sync.Mutex
	notes  []Note // in creation order; the list shows the most recently updated first
	nextID int
	dark   bool
	// account is the signed-in user name, "" when signed out; pending counts changes made
	// since the last sync while signed in; syncUntil is when a running sync finishes.
	account   string
	pending   int
	lastSync  time.Time
	syncUntil time.Time
	status    string // transient status line message; "" shows the account state
	// sync, when set, uploads the notes to the demo's sync server (ServeSync); syncErr is
	// the failure of the Sync button's upload, shown when its progress ends.
	sync    *syncClient
	syncErr error
	// db, when set, holds the notes as they change (RegisterData).
	db *sql.DB

	screen string
	search string
	focus  string // id of the focused field, "" for none
	// offset is how many of the list's rows are scrolled away above its top.
	offset int
	// synced is set when the Sync button's sync has ended and its banner is showing.
	synced bool
	// The editor's working copy: noteID is "" for a new note.
	editNoteID, editTitle, editBody string
	// The sign-in screen's fields; the password is a secure entry (ui.Node.Secure), never
	// in a tree, a query result or a streamed frame, and forgotten once the screen closes.
	signInUser, signInPassword string
}

// New returns a Model on the list screen, with a few sample notes unless opts.Empty.
func New(opts Options) *Model {
	m := &Model{now: opts.Now, scale: opts.Scale, syntheticTools: opts.SyntheticTools}
	if m.now == nil {
		m.now = time.Now
	}
	if m.scale <= 0 {
		m.scale = 1
	}
	m.scale = min(m.scale, 4)
	m.overlays = ui.NewOverlayScreen(m)
	m.reset(!opts.Empty)
	return m
}

// Screen is the model's screen as the app shows it: with the overlays an agent draws
// (ui.show_overlay). Register the UI tools over it and stream its frames
// (ui.FrameSource(m.Screen())), so that a person watching the live screen sees what an
// agent points at.
func (m *Model) Screen() ui.Screen { return m.overlays }

// sampleNotes are the notes a fresh app starts with.
var sampleNotes = []struct{ title, body string }{
	{"Groceries", "Milk, eggs, coffee beans, basil.\nAsk about the sourdough starter."},
	{"Ideas for the talk", "Open with the demo: one command, no phone.\nThen show the catalog revisions."},
	{"Book list", "The Pragmatic Programmer\nA Philosophy of Software Design"},
}

// reset restores the initial state. Callers hold mu (or own m exclusively).
func (m *Model) reset(samples bool) {
	now := m.now().UTC()
	m.notes, m.nextID = nil, 0
	m.dark, m.account, m.pending, m.lastSync, m.syncUntil, m.status = false, "", 0, time.Time{}, time.Time{}, ""
	m.syncErr, m.synced, m.offset = nil, false, 0
	m.toList()
	if samples {
		for i, s := range sampleNotes {
			// Spread the sample times so the list order is stable and visible.
			at := now.Add(time.Duration(i-len(sampleNotes)) * time.Hour)
			m.addNote(s.title, s.body, at)
		}
	}
	m.persist()
}

// toList shows the list screen with a cleared editor. Callers hold mu.
func (m *Model) toList() {
	m.screen, m.focus = screenList, ""
	m.editNoteID, m.editTitle, m.editBody = "", "", ""
	m.signInUser, m.signInPassword = "", ""
}

// settle finishes a sync whose time has come. Every read of the state calls it first, so
// a sync completes without a goroutine. Callers hold mu.
func (m *Model) settle() {
	if !m.syncUntil.IsZero() && !m.now().Before(m.syncUntil) {
		if err := m.syncErr; err != nil {
			m.syncUntil, m.syncErr = time.Time{}, nil
			m.status = "Sync failed: " + err.Error()
			return
		}
		m.lastSync = m.syncUntil.UTC()
		m.syncUntil = time.Time{}
		m.status = fmt.Sprintf("Synced %d %s at %s", len(m.notes), plural(len(m.notes), "note", "notes"), m.lastSync.Format("15:04"))
		m.pending = 0
		m.synced = true
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// changed records a change of the notes for the next sync, and in the notes database
// (RegisterData). Callers hold mu.
func (m *Model) changed() {
	if m.account != "" {
		m.pending++
	}
	m.persist()
}

// addNote appends a note. Callers hold mu.
func (m *Model) addNote(title, body string, at time.Time) Note {
	m.nextID++
	n := Note{ID: "n" + strconv.Itoa(m.nextID), Title: title, Body: body, CreatedAt: at, UpdatedAt: at}
	m.notes = append(m.notes, n)
	return n
}

// index returns the position of note id, or -1. Callers hold mu.
func (m *Model) index(id string) int {
	return slices.IndexFunc(m.notes, func(n Note) bool { return n.ID == id })
}

// visibleNotes returns the notes the list shows: matching the search (case-insensitive,
// title or body), most recently updated first. Callers hold mu.
func (m *Model) visibleNotes() []Note {
	q := strings.ToLower(strings.TrimSpace(m.search))
	var out []Note
	for _, n := range m.notes {
		if q == "" || strings.Contains(strings.ToLower(n.Title), q) || strings.Contains(strings.ToLower(n.Body), q) {
			out = append(out, n)
		}
	}
	slices.SortStableFunc(out, func(a, b Note) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
	return out
}

// --- operations shared by the UI and the tools ---

// errNoteNotFound is the failure for an unknown note id.
type errNoteNotFound string

func (e errNoteNotFound) Error() string { return fmt.Sprintf("note %q does not exist", string(e)) }

// createNote adds a note.
func (m *Model) createNote(title, body string) Note {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.addNote(title, body, m.now().UTC())
	m.changed()
	return n
}

// updateNote changes a note's title and/or body (nil leaves it).
func (m *Model) updateNote(id string, title, body *string) (Note, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := m.index(id)
	if i < 0 {
		return Note{}, errNoteNotFound(id)
	}
	n := &m.notes[i]
	if title != nil {
		n.Title = *title
	}
	if body != nil {
		n.Body = *body
	}
	n.UpdatedAt = m.now().UTC()
	m.changed()
	return *n, nil
}

// deleteNote removes a note; an editor open on it goes back to the list.
func (m *Model) deleteNote(id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := m.index(id)
	if i < 0 {
		return errNoteNotFound(id)
	}
	m.notes = slices.Delete(m.notes, i, i+1)
	if m.screen == screenEditor && m.editNoteID == id {
		m.toList()
	}
	m.changed()
	return nil
}

// deleteAll removes every note and returns how many there were.
func (m *Model) deleteAll() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.notes)
	m.notes = nil
	if m.screen == screenEditor && m.editNoteID != "" {
		m.toList()
	}
	if n > 0 {
		m.changed()
	}
	return n
}

// note returns one note.
func (m *Model) note(id string) (Note, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i := m.index(id); i >= 0 {
		return m.notes[i], true
	}
	return Note{}, false
}

// listNotes returns the notes matching query (all when empty), newest first, at most
// limit, and how many matched.
func (m *Model) listNotes(query string, limit int) ([]Note, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	saved := m.search
	m.search = query
	all := m.visibleNotes()
	m.search = saved
	return all[:min(limit, len(all))], len(all)
}

// setDarkMode switches the theme.
func (m *Model) setDarkMode(on bool) {
	m.mu.Lock()
	m.dark = on
	m.mu.Unlock()
}

// signIn loads an account, which makes the sync tools available.
func (m *Model) signIn(user string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.load(user)
}

// load makes user the signed-in account. Callers hold mu.
func (m *Model) load(user string) {
	if m.account != user {
		m.pending = len(m.notes) // a new account has nothing of ours yet
		m.lastSync = time.Time{}
	}
	m.account, m.status = user, ""
}

// signOut unloads the account.
func (m *Model) signOut() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.unload()
}

// unload signs the account out and reports whether one was signed in. Callers hold mu.
func (m *Model) unload() bool {
	was := m.account != ""
	m.account, m.pending, m.lastSync, m.syncUntil, m.status = "", 0, time.Time{}, time.Time{}, ""
	m.syncErr = nil
	return was
}

// syncState is what sync.status reports.
type syncState struct {
	Account        string    `json:"account"`
	PendingChanges int       `json:"pendingChanges"`
	Syncing        bool      `json:"syncing"`
	LastSyncUtc    time.Time `json:"lastSyncUtc,omitzero"`
	NoteCount      int       `json:"noteCount"`
}

func (m *Model) syncStatus() syncState {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.settle()
	return syncState{Account: m.account, PendingChanges: m.pending, Syncing: !m.syncUntil.IsZero(),
		LastSyncUtc: m.lastSync, NoteCount: len(m.notes)}
}

// push syncs right away (the tool's path; the Sync button takes syncDuration) and
// returns the account, the changes sent and when. It reports false when no account is
// signed in.
func (m *Model) push() (account string, pushed int, at time.Time, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.account == "" {
		return "", 0, time.Time{}, false
	}
	pushed, at = m.pending, m.now().UTC()
	m.pending, m.lastSync, m.syncUntil = 0, at, time.Time{}
	m.status = fmt.Sprintf("Synced %d %s at %s", len(m.notes), plural(len(m.notes), "note", "notes"), at.Format("15:04"))
	return m.account, pushed, at, true
}

// accountLoaded reports whether an account is signed in.
func (m *Model) accountLoaded() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.account != ""
}

// appState is what app.get_state reports.
type appState struct {
	Screen     string `json:"screen"`
	DarkMode   bool   `json:"darkMode"`
	Search     string `json:"search"`
	NoteCount  int    `json:"noteCount"`
	Account    string `json:"account,omitzero"`
	Focused    string `json:"focusedNodeId,omitzero"`
	EditNoteID string `json:"editingNoteId,omitzero"`
	Status     string `json:"status"`
}

func (m *Model) state() appState {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.settle()
	return appState{Screen: m.screen, DarkMode: m.dark, Search: m.search, NoteCount: len(m.notes),
		Account: m.account, Focused: m.focus, EditNoteID: m.editNoteID, Status: m.statusLine()}
}

// statusLine is the list screen's status text. Callers hold mu.
func (m *Model) statusLine() string {
	switch {
	case !m.syncUntil.IsZero():
		return "Syncing…"
	case m.status != "":
		return m.status
	case m.account == "":
		return "Not signed in · sign in to sync"
	case m.pending == 0:
		return "Signed in as " + m.account + " · up to date"
	}
	return fmt.Sprintf("Signed in as %s · %d %s to sync", m.account, m.pending, plural(m.pending, "change", "changes"))
}

// Reset restores the app's initial state (sample notes, light theme, signed out, list
// screen).
func (m *Model) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reset(true)
}
