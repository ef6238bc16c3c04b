//go:build !unix

package files

import "os"

// readFlags open a file to read (open_unix.go says why they differ there).
const readFlags = os.O_RDONLY
