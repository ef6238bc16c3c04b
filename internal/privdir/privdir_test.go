package privdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEnsure(t *testing.T) {
	base := t.TempDir()
	fresh := filepath.Join(base, "a", "b")
	if err := Ensure(fresh); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(fresh); fi.Mode().Perm() != 0o700 {
		t.Errorf("created with mode %v", fi.Mode())
	}
	if err := Ensure(fresh); err != nil {
		t.Errorf("an existing private directory: %v", err)
	}
	shared := filepath.Join(base, "shared")
	os.Mkdir(shared, 0o700)
	os.Chmod(shared, 0o777|os.ModeSticky)
	err := Ensure(shared)
	if err == nil || !strings.Contains(err.Error(), "1777") || !strings.Contains(err.Error(), filepath.Join(shared, "ansight")) {
		t.Errorf("a shared directory: %v", err)
	}
	readable := filepath.Join(base, "readable")
	os.Mkdir(readable, 0o755)
	os.Chmod(readable, 0o755)
	if err := Ensure(readable); err != nil {
		t.Errorf("a directory others may only read: %v", err)
	}
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	if err := Ensure(file); err == nil {
		t.Error("a file was taken for a directory")
	}
}
