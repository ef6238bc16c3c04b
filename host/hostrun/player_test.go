package hostrun

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPlayerToken: the kept token is reused, a file that is not private or holds anything
// else is replaced, and renew replaces it.
func TestPlayerToken(t *testing.T) {
	dir := t.TempDir()
	a, err := playerToken(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := playerToken(dir, false); b != a {
		t.Errorf("the kept token was not reused")
	}
	path := filepath.Join(dir, PlayerTokenName)
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	os.Chmod(path, 0o644)
	if b, _ := playerToken(dir, false); b == a {
		t.Errorf("a token others can read was reused")
	}
	os.WriteFile(path, []byte("short\n"), 0o600)
	if b, _ := playerToken(dir, false); b == "short" {
		t.Errorf("a malformed token was reused")
	}
	c, _ := playerToken(dir, false)
	if d, _ := playerToken(dir, true); d == c {
		t.Errorf("renew kept the token")
	}
}
