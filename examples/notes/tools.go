package notes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/ui"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/wire"
)

// Tool failure codes of the demo app.
const (
	CodeNoteNotFound         wire.Code = "note_not_found"
	CodeSyncAccountNotLoaded wire.Code = "sync_account_not_loaded"
	CodeSyncFailed           wire.Code = "sync_failed"
)

// Register adds the standard UI tools over the model's screen and the app's own tools to
// a. Call it once, before serving.
func (m *Model) Register(a *app.App) error { return m.RegisterReporting(a, nil) }

// RegisterReporting is Register with the taps ui.perform_action performs reported to taps
// (ui.Options.Taps): the app's *telemetry.Telemetry, so that recordings show them — a tap
// on the sign-in screen's password field keeps its position in the app.
func (m *Model) RegisterReporting(a *app.App, taps ui.TapRecorder) error {
	if err := ui.Register(a, m.overlays, ui.Options{Now: m.now, Taps: taps}); err != nil {
		return err
	}
	for _, register := range []func(*app.App) error{
		m.registerNotes, m.registerSettings, m.registerAccount, m.registerBench,
	} {
		if err := register(a); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	return nil
}

// def builds a definition. Arguments schemas are written out so that every bound is
// published; result schemas are inferred from the Go result types.
func def(id, name, category string, policy wire.Policy, keywords, description, args string) catalog.Definition {
	return catalog.Definition{ID: id, Name: name, Category: category, Policy: policy, Keywords: keywords,
		Description: description, ArgumentsSchema: jsontext.Value(args)}
}

const noArguments = `{"type":"object","properties":{}}`

// notesPage is the result of notes.list.
type notesPage struct {
	Count int    `json:"count" jsonschema:"notes listed"`
	Total int    `json:"total" jsonschema:"notes matching the query"`
	Notes []Note `json:"notes"`
}

type listArgs struct {
	Limit int    `json:"limit,omitzero"`
	Query string `json:"query,omitzero"`
}

type idArgs struct {
	ID string `json:"id"`
}

type createArgs struct {
	Title string `json:"title"`
	Body  string `json:"body,omitzero"`
}

type updateArgs struct {
	ID    string  `json:"id"`
	Title *string `json:"title,omitzero"`
	Body  *string `json:"body,omitzero"`
}

type deleted struct {
	Deleted int `json:"deleted" jsonschema:"notes deleted"`
}

func noteNotFound(id string) error {
	return app.ToolErrorDetails(CodeNoteNotFound, fmt.Sprintf("Note %q does not exist; notes.list shows the ids.", id),
		map[string]string{"id": id})
}

func (m *Model) registerNotes(a *app.App) error {
	const noteID = `"id":{"type":"string","minLength":1,"maxLength":32,"description":"Note id, as notes.list returns it (e.g. \"n1\")."}`
	const title = `"title":{"type":"string","minLength":1,"maxLength":200,"description":"The note's title."}`
	const body = `"body":{"type":"string","maxLength":10000,"description":"The note's text; newlines allowed."}`
	return errors.Join(
		app.Register(a, def("notes.list", "List notes", "notes", wire.PolicyRead, "notes list search find all",
			"Lists the notes, most recently updated first, optionally only those whose title or body contains query (case-insensitive).",
			`{"type":"object","properties":{`+
				`"limit":{"type":"integer","minimum":1,"maximum":100,"default":20,"description":"Most notes to return."},`+
				`"query":{"type":"string","maxLength":100,"description":"Case-insensitive text to look for in titles and bodies."}}}`),
			func(ctx context.Context, c *app.Call, in listArgs) (*notesPage, error) {
				if in.Limit == 0 {
					in.Limit = 20
				}
				notes, total := m.listNotes(in.Query, in.Limit)
				if notes == nil {
					notes = []Note{}
				}
				return &notesPage{Count: len(notes), Total: total, Notes: notes}, nil
			}),
		app.Register(a, def("notes.get", "Get note", "notes", wire.PolicyRead, "note read open show",
			"Returns one note with its full body.",
			`{"type":"object","properties":{`+noteID+`},"required":["id"]}`),
			func(ctx context.Context, c *app.Call, in idArgs) (*Note, error) {
				n, ok := m.note(in.ID)
				if !ok {
					return nil, noteNotFound(in.ID)
				}
				return &n, nil
			}),
		// The hint: words tell MCP clients what a write does (see catalog.HintAdditive).
		app.Register(a, def("notes.create", "Create note", "notes", wire.PolicyWrite, "note add new write hint:additive",
			"Adds a note. It appears at the top of the list screen.",
			`{"type":"object","properties":{`+title+`,`+body+`},"required":["title"]}`),
			func(ctx context.Context, c *app.Call, in createArgs) (*Note, error) {
				n := m.createNote(strings.TrimSpace(in.Title), in.Body)
				return &n, nil
			}),
		app.Register(a, def("notes.update", "Update note", "notes", wire.PolicyWrite, "note edit change rename hint:idempotent",
			"Changes a note's title and/or body.",
			`{"type":"object","properties":{`+noteID+`,`+title+`,`+body+`},"required":["id"],"minProperties":2}`),
			func(ctx context.Context, c *app.Call, in updateArgs) (*Note, error) {
				if in.Title != nil {
					t := strings.TrimSpace(*in.Title)
					in.Title = &t
				}
				n, err := m.updateNote(in.ID, in.Title, in.Body)
				if err != nil {
					return nil, noteNotFound(in.ID)
				}
				return &n, nil
			}),
		app.Register(a, def("notes.delete_all", "Delete all notes", "notes", wire.PolicyCritical, "notes delete remove clear all destructive",
			"Deletes every note. Destructive: there is no undo.", noArguments),
			func(ctx context.Context, c *app.Call, _ struct{}) (*deleted, error) {
				return &deleted{Deleted: m.deleteAll()}, nil
			}),
	)
}

type darkModeArgs struct {
	Enabled bool `json:"enabled"`
}

type darkModeResult struct {
	DarkMode bool `json:"darkMode"`
}

func (m *Model) registerSettings(a *app.App) error {
	return errors.Join(
		app.Register(a, def("settings.set_dark_mode", "Set dark mode", "settings", wire.PolicyWrite, "dark mode theme appearance light night hint:idempotent",
			"Switches the app between the dark and the light theme.",
			`{"type":"object","properties":{"enabled":{"type":"boolean","description":"true for the dark theme."}},"required":["enabled"]}`),
			func(ctx context.Context, c *app.Call, in darkModeArgs) (*darkModeResult, error) {
				m.setDarkMode(in.Enabled)
				return &darkModeResult{DarkMode: in.Enabled}, nil
			}),
		app.Register(a, def("app.get_state", "Get app state", "app", wire.PolicyRead, "state screen status current",
			"Reports what the app shows: the screen, the theme, the search text, the note count, the account and the status line.", noArguments),
			func(ctx context.Context, c *app.Call, _ struct{}) (*appState, error) {
				s := m.state()
				return &s, nil
			}),
		app.Register(a, def("app.reset", "Reset app", "app", wire.PolicyCritical, "reset restore initial default sample destructive",
			"Restores the app's initial state: the sample notes, the light theme, signed out, the list screen. Destructive: notes are lost.", noArguments),
			func(ctx context.Context, c *app.Call, _ struct{}) (*appState, error) {
				m.Reset()
				s := m.state()
				return &s, nil
			}),
	)
}

type signInArgs struct {
	UserName string `json:"userName"`
}

type accountResult struct {
	Account        string `json:"account,omitzero" jsonschema:"the signed-in user; absent when signed out"`
	SignedIn       bool   `json:"signedIn"`
	PendingChanges int    `json:"pendingChanges"`
}

type pushResult struct {
	Account     string    `json:"account"`
	Pushed      int       `json:"pushed" jsonschema:"changes sent"`
	SyncedAtUtc time.Time `json:"syncedAtUtc"`
	Revision    int       `json:"revision,omitzero" jsonschema:"the sync server's revision of the account's notes (with a sync server)"`
}

// syncAvailability makes the sync tools unavailable until an account is signed in.
func (m *Model) syncAvailability(ctx context.Context) wire.Runtime {
	if m.accountLoaded() {
		return wire.Runtime{Available: true}
	}
	return accountNotLoaded
}

var accountNotLoaded = wire.Runtime{
	Available:     false,
	Code:          CodeSyncAccountNotLoaded,
	Reason:        "No account is signed in, so there is nothing to sync with.",
	RequiredState: "account.signedIn",
	Remediation:   "Call account.sign_in with a userName, then retry.",
	Retryable:     true,
}

func (m *Model) registerAccount(a *app.App) error {
	return errors.Join(
		app.Register(a, def("account.sign_in", "Sign in", "account", wire.PolicyWrite, "account sign in log in login user",
			"Signs a user in (no password in this demo). Makes sync.status and sync.push available.",
			`{"type":"object","properties":{"userName":{"type":"string","minLength":1,"maxLength":64,"pattern":"^[A-Za-z0-9._-]+$","description":"User name: letters, digits, '.', '_' or '-'."}},"required":["userName"]}`),
			func(ctx context.Context, c *app.Call, in signInArgs) (*accountResult, error) {
				m.signIn(in.UserName)
				s := m.syncStatus()
				return &accountResult{Account: s.Account, SignedIn: true, PendingChanges: s.PendingChanges}, nil
			}),
		app.Register(a, def("account.sign_out", "Sign out", "account", wire.PolicyWrite, "account sign out log out logout",
			"Signs the user out. The sync tools become unavailable.", noArguments),
			func(ctx context.Context, c *app.Call, _ struct{}) (*accountResult, error) {
				m.signOut()
				return &accountResult{}, nil
			}),
		app.Register(a, def("sync.status", "Sync status", "sync", wire.PolicyRead, "sync status pending changes last",
			"Reports the signed-in account, the changes waiting to be synced and the last sync. Unavailable until an account is signed in.", noArguments),
			func(ctx context.Context, c *app.Call, _ struct{}) (*syncState, error) {
				s := m.syncStatus()
				return &s, nil
			}, app.WithAvailability(m.syncAvailability)),
		app.Register(a, def("sync.push", "Push changes", "sync", wire.PolicyWrite, "sync push upload send changes",
			"Sends the notes to the account's sync server now. Unavailable until an account is signed in.", noArguments),
			func(ctx context.Context, c *app.Call, _ struct{}) (*pushResult, error) {
				rev, err := m.upload(ctx)
				if err != nil && !errors.Is(err, errSignedOut) {
					return nil, &wire.Error{Code: CodeSyncFailed, Message: "The sync server could not be reached: " + err.Error(), Retryable: true}
				}
				account, pushed, at, ok := m.push()
				if !ok { // signed out between the availability check and now
					return nil, &wire.Error{Code: accountNotLoaded.Code, Message: accountNotLoaded.Reason, Retryable: true}
				}
				return &pushResult{Account: account, Pushed: pushed, SyncedAtUtc: at, Revision: rev}, nil
			}, app.WithAvailability(m.syncAvailability)),
	)
}
