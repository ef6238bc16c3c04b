//go:build unix

package host

import (
	"net"
	"syscall"
)

// receiveBuffer returns the socket's receive buffer as the system reports it (SO_RCVBUF),
// 0 when unknown.
func receiveBuffer(c *net.UDPConn) int {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	raw.Control(func(fd uintptr) {
		n, _ = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF)
	})
	return n
}
