package notes

import (
	"strings"
	"testing"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/apptest"
	"github.com/ansight-go/ansight/catalog"
)

// TestRegisterData: the notes are in notes.db as they change, for data.query; the settings
// have their defaults, for prefs.get_value; notes.db is a file of the files root.
func TestRegisterData(t *testing.T) {
	a := app.New(app.Options{Guard: catalog.GuardFullAccess})
	m := New(Options{})
	if err := m.Register(a); err != nil {
		t.Fatal(err)
	}
	dir, cleanup, err := m.RegisterFiles(a, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	stop, err := m.RegisterData(a, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	h := apptest.New(t, a)
	count := func() string {
		v, _ := h.Call("data.query", `{"path":"notes","sql":"SELECT count(*) AS n FROM notes"}`)
		i := strings.Index(string(v), `"rows":[`)
		return string(v)[i : i+16]
	}
	if got := count(); got != `"rows":[{"n":3}]` {
		t.Fatalf("the sample notes in notes.db: %s", got)
	}
	h.Call("notes.create", `{"title":"From a tool","body":"Hello"}`)
	if got := count(); got != `"rows":[{"n":4}]` {
		t.Errorf("after notes.create: %s", got)
	}
	v, _ := h.Call("data.query", `{"path":"notes.db","sql":"SELECT title FROM notes WHERE body = 'Hello'"}`)
	if !strings.Contains(string(v), `"rows":[{"title":"From a tool"}]`) {
		t.Errorf("the new note: %s", v)
	}
	h.Call("notes.delete_all", `{}`)
	if got := count(); got != `"rows":[{"n":0}]` {
		t.Errorf("after notes.delete_all: %s", got)
	}
	if v, _ := h.Call("prefs.get_value", `{"key":"notes.sortOrder"}`); !strings.Contains(string(v), `"value":"updated","valueType":"string"`) {
		t.Errorf("a default setting: %s", v)
	}
	if v, _ := h.Call("files.list_directory", `{"root":"demo"}`); !strings.Contains(string(v), `"relativePath":"notes.db"`) {
		t.Errorf("notes.db is not in the files root: %s", v)
	}
}
