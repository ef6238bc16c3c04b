package notes

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"modernc.org/sqlite" // the demo's database driver (the SDK brings none)

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/data"
	"github.com/ansight-go/ansight/app/prefs"
)

// Names of what RegisterData keeps in the files directory.
const (
	NotesDB      = "notes.db"      // the notes, as a SQLite database (data.* tools, database "notes")
	SettingsFile = "settings.json" // the app's preferences (prefs.* tools, store "settings")
)

// RegisterData keeps the notes in the SQLite file notes.db of dir, rewritten in one
// transaction whenever they change, and adds the data tools (package app/data, database
// "notes") over it and the preference tools (package app/prefs, store "settings") over
// dir's settings.json, created with the app's defaults when missing. A host can then look
// at the notes with data.query, browse them as a file (dir is also the files root of
// RegisterFiles), and read and change the settings. stop closes the database.
func (m *Model) RegisterData(a *app.App, dir string) (stop func(), err error) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, NotesDB)+"?_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, err
	}
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS notes (
	id TEXT PRIMARY KEY,
	title TEXT NOT NULL,
	body TEXT NOT NULL,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS notes_updated ON notes (updated_at)`); err != nil {
		db.Close()
		return nil, fmt.Errorf("notes: %s: %w", NotesDB, err)
	}
	m.mu.Lock()
	m.db = db
	m.persist()
	m.mu.Unlock()

	settings, err := m.settings(filepath.Join(dir, SettingsFile))
	if err == nil {
		err = data.Register(a, data.Options{Databases: []data.Database{{Name: "notes", DB: db, Limit: sqlite.Limit,
			Description: "The demo's notes, kept as they change (table notes)."}}})
	}
	if err == nil {
		err = prefs.Register(a, prefs.Options{Stores: map[string]prefs.Store{"settings": settings}})
	}
	if err != nil {
		m.detach()
		db.Close()
		return nil, err
	}
	return func() { m.detach(); db.Close() }, nil
}

// detach stops keeping the notes in the database.
func (m *Model) detach() {
	m.mu.Lock()
	m.db = nil
	m.mu.Unlock()
}

// settings opens the preferences file, writing the app's defaults into a new one.
func (m *Model) settings(path string) (*prefs.FileStore, error) {
	_, statErr := os.Stat(path)
	st, err := prefs.OpenFile(path)
	if err != nil || !os.IsNotExist(statErr) {
		return st, err
	}
	ctx := context.Background()
	for key, v := range map[string]prefs.Value{
		"notes.sortOrder":    {Type: prefs.String, String: "updated"},
		"notes.previewLines": {Type: prefs.Integer, Int: 2},
		"sync.onStart":       {Type: prefs.Boolean, Bool: false},
		"sync.servers":       {Type: prefs.StringArray, Strings: []string{"127.0.0.1"}},
		"screen.fontScale":   {Type: prefs.Number, Number: 1.0},
	} {
		if err := st.Set(ctx, key, v); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// persist writes the notes into the database, when there is one. A failure is not the
// user's concern in a demo: the next change writes them all again. Callers hold mu.
func (m *Model) persist() {
	if m.db == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tx, err := m.db.BeginTx(ctx, nil)
	if err != nil {
		return
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM notes`); err != nil {
		return
	}
	for _, n := range m.notes {
		if _, err := tx.ExecContext(ctx, `INSERT INTO notes (id, title, body, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`,
			n.ID, n.Title, n.Body, n.CreatedAt.UTC().Format(time.RFC3339Nano), n.UpdatedAt.UTC().Format(time.RFC3339Nano)); err != nil {
			return
		}
	}
	_ = tx.Commit()
}
