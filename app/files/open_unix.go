//go:build unix

package files

import (
	"os"
	"syscall"
)

// readFlags open a file to read without waiting: open(2) of a FIFO in a root would wait
// for a writer, holding the call (and its goroutine) for ever; opened at once, it is then
// refused as not a regular file.
const readFlags = os.O_RDONLY | syscall.O_NONBLOCK
