package notes

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/apptest"
	"github.com/ansight-go/ansight/app/files"
)

func TestRegisterFiles(t *testing.T) {
	t.Run("temporary directory with a welcome file", func(t *testing.T) {
		a := app.New(app.Options{})
		dir, cleanup, err := New(Options{}).RegisterFiles(a, "")
		if err != nil {
			t.Fatal(err)
		}
		res, _ := apptest.New(t, a).Call(files.ListDirectoryToolID, `{}`)
		if !bytes.Contains(res, []byte(`"relativePath":"welcome.txt"`)) {
			t.Errorf("listing = %s", res)
		}
		cleanup()
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("after cleanup, stat %s = %v", dir, err)
		}
	})
	t.Run("given directory", func(t *testing.T) {
		given := t.TempDir()
		if err := os.WriteFile(filepath.Join(given, "mine.txt"), []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
		a := app.New(app.Options{})
		dir, cleanup, err := New(Options{}).RegisterFiles(a, given)
		if err != nil || dir != given {
			t.Fatalf("RegisterFiles = %q, %v", dir, err)
		}
		h := apptest.New(t, a)
		res, _ := h.Call(files.ListDirectoryToolID, `{"root":"demo"}`)
		if !bytes.Contains(res, []byte(`"relativePath":"mine.txt"`)) {
			t.Errorf("listing = %s", res)
		}
		if res, _ := h.Call(files.QueryArtifactsToolID, `{}`); !bytes.Contains(res, []byte(`"notes.export"`)) {
			t.Errorf("artifacts = %s", res)
		}
		cleanup()
		if _, err := os.Stat(filepath.Join(given, "mine.txt")); err != nil {
			t.Errorf("cleanup touched the given directory: %v", err)
		}
	})
}
