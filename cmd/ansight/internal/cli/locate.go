package cli

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/internal/privdir"
)

// AI agent clients (Claude Desktop, Cursor, VS Code) start 'ansight mcp' without the user's
// shell environment: a host started from a terminal with XDG_STATE_HOME or
// ANSIGHT_STATE_DIR set keeps its control socket where the bridge would not look. So a
// resident host whose state directory comes from the environment leaves a pointer to it in
// the plain default directory (~/.local/state/ansight, which needs only HOME), and the
// bridge, when not told where to look, tries the environment's directory, the plain
// default and the pointer, in that order. A directory given with --state-dir leaves no
// pointer: whoever chose it passes it to the bridge too.

// hostPointerName is the pointer's file name in the plain default state directory.
const hostPointerName = "resident-host"

// plainStateDir is the state directory of a process that has only HOME:
// ~/.local/state/ansight.
func plainStateDir() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "state", "ansight"), nil
}

// pointToHost records stateDir, where a resident host now serves its control socket, in
// the plain default directory, when the environment chose it and it is another one. The
// returned function removes the pointer if it still names stateDir.
func pointToHost(stateDir string) (remove func()) {
	fromEnv, err := hostapi.DefaultStateDir()
	if err != nil || fromEnv != stateDir {
		return func() {}
	}
	plain, err := plainStateDir()
	abs, err2 := filepath.Abs(stateDir)
	if err != nil || err2 != nil || plain == abs {
		return func() {}
	}
	if err := privdir.Ensure(plain); err != nil {
		return func() {}
	}
	path := filepath.Join(plain, hostPointerName)
	if err := os.WriteFile(path, []byte(abs+"\n"), 0o600); err != nil {
		return func() {}
	}
	return func() {
		if b, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(b)) == abs {
			os.Remove(path)
		}
	}
}

// hostSockets lists where the resident host's control socket may be: the state directory
// this command was told (--state-dir) alone; otherwise the environment's, the plain
// default, and the one the pointer names.
func (g *globals) hostSockets() ([]string, error) {
	primary, err := g.stateDirPath()
	if err != nil {
		return nil, err
	}
	dirs := []string{primary}
	if g.stateDir == "" {
		if plain, err := plainStateDir(); err == nil {
			dirs = append(dirs, plain)
			if d, ok := readPointer(plain); ok {
				dirs = append(dirs, d)
			}
		}
	}
	var out []string
	for _, d := range dirs {
		if s := filepath.Join(d, hostapi.SocketName); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

// locateHost returns a function that finds the live socket among g.hostSockets, looking
// again at every connection (the host may start, stop or move while the bridge runs);
// when none answers, it names the first.
func (g *globals) locateHost() (func() string, error) {
	if _, err := g.hostSockets(); err != nil {
		return nil, err
	}
	return func() string {
		sockets, err := g.hostSockets()
		if err != nil || len(sockets) == 0 {
			return ""
		}
		for _, s := range sockets {
			if c, err := net.DialTimeout("unix", s, time.Second); err == nil {
				c.Close()
				return s
			}
		}
		return sockets[0]
	}, nil
}

// readPointer reads the pointer in dir, trusted only when nobody but the user could have
// written it: the directory passes privdir.Ensure, the file is the user's and writable by
// nobody else. (Another user's pointer could send the bridge to a host of theirs.)
func readPointer(dir string) (string, bool) {
	path := filepath.Join(dir, hostPointerName)
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o022 != 0 || privdir.Ensure(dir) != nil {
		return "", false
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return "", false
	}
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 4096 {
		return "", false
	}
	d := strings.TrimSpace(string(b))
	return d, filepath.IsAbs(d)
}
