package hostapi

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/ansight-go/ansight/internal/privdir"
)

// SocketName is the control socket's file name inside the state directory.
const SocketName = "host.sock"

// Listen creates the control socket at path, reachable only by the current user: the
// directory is created with mode 0700 (an existing one that other users can reach is
// refused, see privdir.Ensure) and the socket file is 0600. A stale
// socket left by a host that died is replaced; a live one is an error, so two hosts never
// share a state directory.
func Listen(path string) (net.Listener, error) {
	dir := filepath.Dir(path)
	if err := privdir.Ensure(dir); err != nil {
		return nil, fmt.Errorf("control: %w", err)
	}
	if _, err := os.Lstat(path); err == nil {
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("control: a host is already running (socket %s)", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("control: remove stale socket: %w", err)
		}
	}
	// The umask makes the socket 0600 from its creation on, with no window in which
	// another user could connect.
	old := syscall.Umask(0o177)
	l, err := net.Listen("unix", path)
	syscall.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("control: listen: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("control: socket mode: %w", err)
	}
	return l, nil
}

// DefaultStateDir is where the host keeps its socket, pairing store and artifacts:
// $ANSIGHT_STATE_DIR, else $XDG_STATE_HOME/ansight, else ~/.local/state/ansight.
func DefaultStateDir() (string, error) {
	if d := os.Getenv("ANSIGHT_STATE_DIR"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "ansight"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("control: no home directory; set ANSIGHT_STATE_DIR")
	}
	return filepath.Join(home, ".local", "state", "ansight"), nil
}
