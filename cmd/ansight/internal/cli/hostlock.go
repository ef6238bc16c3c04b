package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/ansight-go/ansight/internal/privdir"
)

// One resident host per state directory: two would share the pairing store, the control
// socket and the recordings. A host takes the directory's lock before it binds anything,
// and holds it until its process ends (the kernel releases it even after a crash), so a
// second 'ansight host run' (or 'ansight demo --keep-running') says who holds it, plainly,
// instead of failing later on a port already in use.

// hostLockName is the lock file's name in the state directory.
const hostLockName = "host.lock"

// lockHolder is what the lock file says about the host holding it.
type lockHolder struct {
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"startedAt"`
}

// hostLock is a held state directory lock.
type hostLock struct{ f *os.File }

// lockStateDir takes the host lock of dir, or returns an error naming the host that holds
// it.
func lockStateDir(dir string) (*hostLock, error) {
	if err := privdir.Ensure(dir); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, hostLockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("host lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("host lock: %w", err)
		}
		who := ""
		var h lockHolder
		if b, err := os.ReadFile(f.Name()); err == nil && json.Unmarshal(b, &h) == nil && h.PID > 0 {
			who = fmt.Sprintf(" (pid %d, since %s)", h.PID, since(h.StartedAt))
		}
		return nil, &exitError{code: ExitFailure, err: fmt.Errorf("a host is already running on state directory %s%s", dir, who),
			hint: "use it ('ansight host status'), stop it ('ansight host stop'), or give this one another --state-dir"}
	}
	b, _ := json.Marshal(lockHolder{PID: os.Getpid(), StartedAt: time.Now().Round(time.Second)})
	if err := f.Truncate(0); err == nil {
		f.WriteAt(b, 0)
	}
	return &hostLock{f: f}, nil
}

// lockFree reports whether no process holds dir's host lock (no lock file: none does).
func lockFree(dir string) bool {
	f, err := os.Open(filepath.Join(dir, hostLockName))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return false
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return true
}

// release gives the lock up (the process's end does too).
func (l *hostLock) release() {
	l.f.Truncate(0)
	l.f.Close()
}

// since shows a past time: the clock time today, else the date, with how long ago.
func since(t time.Time) string {
	local := t.Local()
	when := local.Format("15:04:05")
	if y, m, d := time.Now().Date(); local.Year() != y || local.Month() != m || local.Day() != d {
		when = local.Format("2006-01-02 15:04")
	}
	return when + ", " + ago(t)
}
