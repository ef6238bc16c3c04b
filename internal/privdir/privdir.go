package privdir

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Ensure makes dir (and its missing parents) with mode 0700 when it does not exist, and
// checks that an existing directory is one only the current user can change: owned by the
// user and writable by nobody else. A directory others may only read or search (0755) is
// used as it is: what the host keeps in it is created private (files 0600, directories
// 0700). A shared directory (/tmp, a group's directory) is an error that names a private
// place to use instead.
func Ensure(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("state directory %s is not a directory", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("state directory %s belongs to another user (uid %d): use a directory of your own", dir, st.Uid)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("state directory %s is shared (mode %04o): other users could replace what the host keeps there; "+
			"use a directory of its own, such as %s, which is created private, or run 'chmod 700 %s' if it is yours alone",
			dir, octal(fi.Mode()), filepath.Join(dir, "ansight"), dir)
	}
	return nil
}

// octal writes a mode as chmod takes it (the sticky bit as 1000).
func octal(m fs.FileMode) uint32 {
	v := uint32(m.Perm())
	if m&fs.ModeSticky != 0 {
		v |= 0o1000
	}
	return v
}
