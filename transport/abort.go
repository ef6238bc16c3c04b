package transport

// Aborter is implemented by connections that can be dropped without a close handshake.
// Every Conn in this package implements it, and so do wrappers that forward it.
type Aborter interface {
	// Abort drops the connection at once, without a close handshake. See Abort.
	Abort() error
}

// Abort drops c without a close handshake, as if the network had failed: it returns at once,
// this side's pending and later calls fail with ErrClosed, and the peer's Read reports
// StatusAbnormalClosure; messages still in flight may be lost. Use it when waiting for a
// dead or unresponsive peer to answer a close frame is pointless, and in tests that
// simulate a connection dying. A Conn that does not implement Aborter is closed with
// StatusInternalError instead.
func Abort(c Conn) error {
	if a, ok := c.(Aborter); ok {
		return a.Abort()
	}
	return c.Close(StatusInternalError, "connection aborted")
}
