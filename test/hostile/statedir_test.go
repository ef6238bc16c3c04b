package hostile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/hostapi"
)

// TestSharedStateDir: a state directory that other users can write to (a shared directory
// such as /tmp) is refused by the host and by the control socket, and no existing
// directory has its mode changed: tightening /tmp to 0700 as root would break the machine.
// A directory others may only read is used as it is (what the host keeps there is private
// on its own); a directory that does not exist yet is created private.
func TestSharedStateDir(t *testing.T) {
	for _, tc := range []struct {
		mode    os.FileMode
		refused bool
	}{{0o777 | os.ModeSticky, true}, {0o775, true}, {0o733, true}, {0o755, false}} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "shared")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, tc.mode); err != nil {
				t.Fatal(err)
			}
			srv, err := host.New(host.Options{StateDir: dir})
			if err == nil {
				srv.Close()
			}
			if (err != nil) != tc.refused {
				t.Errorf("host.New: %v, want refused=%v", err, tc.refused)
			}
			l, err := hostapi.Listen(filepath.Join(dir, hostapi.SocketName))
			if err == nil {
				l.Close()
			}
			if (err != nil) != tc.refused {
				t.Errorf("hostapi.Listen: %v, want refused=%v", err, tc.refused)
			}
			fi, err := os.Stat(dir)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode() & (os.ModePerm | os.ModeSticky); got != tc.mode {
				t.Errorf("the directory's mode changed from %v to %v", tc.mode, got)
			}
		})
	}
	// Regression guard: passed before the fix (c2d4ac5) too — a missing directory was
	// already created 0700; kept because the fix rewrote how the directory is made
	// (internal/privdir), and a new state directory must stay private.
	t.Run("MissingGuard", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "new", "state")
		srv, err := host.New(host.Options{StateDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		srv.Close()
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
			t.Fatalf("a new state directory is not private: %v %v", fi.Mode(), err)
		}
	})
}
