//go:build !unix

package host

import "net"

// receiveBuffer is unknown here.
func receiveBuffer(*net.UDPConn) int { return 0 }
