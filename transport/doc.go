// Package transport carries whole protocol messages between an app and a host.
//
// A [Conn] moves whole messages, text or binary, in both directions. Two implementations
// exist: [Pipe], an in-memory pair used by tests and in-process wiring, and a WebSocket
// connection made by [Dial] (client side) or [Accept] (server side, from an HTTP handler).
// Both behave the same way as seen through [Conn], so code tested over a Pipe behaves the
// same over a socket.
//
// # Concurrency contract
//
// Every Conn in this package follows the same rules:
//
//   - Read: at most one goroutine may call Read at a time. The connection's owner runs one
//     reader loop; nothing in this package reads behind its back. Over WebSocket the owner's
//     Read is also what processes control frames (pings, pongs, the peer's close), so a
//     connection nobody reads cannot answer pings or notice the peer closing.
//   - Write: safe for concurrent use. Writes are serialized; a message is never interleaved
//     with another. The data slice may be reused as soon as Write returns.
//   - Close: safe at any time, concurrently with Read and Write and repeatedly. It unblocks
//     pending Read and Write calls. Over WebSocket, Close sends the close frame and waits for
//     the peer's answer (the library bounds each step at 5 s) before closing the socket; the
//     peer answers from its Read, so closing a connection whose peer is not reading takes that
//     long. Messages written before Close reach the peer before its Read reports the close.
//
// # Write combining
//
// Over WebSocket, concurrent writes are combined: while another message is on its way, a
// small frame (up to 4 KiB, at most 16 KiB held) is kept under the WebSocket library
// instead of written, and the next write takes it along, so that several messages leave in
// one system call and the peer reads them with one. A message that meets no other one on
// its way first lets ready goroutines run, on a connection whose writes lately met others,
// so that they join it. A lone writer is never held: with no other message on its way its
// frame is written at once, and nothing waits on a timer; the last writer to leave sends
// what is still held, and closing the socket sends it first. The bytes on the wire are
// the plain path's, in the same order. A Write that returns nil has handed its message to
// the connection, as the kernel's buffer does on the plain path; a later write that fails
// tears the connection down. Dial combines when its HTTP client's transport is an
// *http.Transport (a copy of it dials the connection) and no redirect dialed another
// connection; Accept when the ResponseWriter can be hijacked.
//
// # Errors
//
// After this side closed the connection, Read and Write fail with an error matching
// [ErrClosed] (which also matches [net.ErrClosed]). After the peer closed it, they fail with
// a [*CloseError] carrying the peer's status code and reason; use [CloseStatus] to get the
// code. A connection that died without a close handshake (TCP reset, peer vanished, keep-alive
// timeout) reports [StatusAbnormalClosure]. A message larger than the reader's limit closes the
// connection with [StatusMessageTooBig], and both sides see that code.
//
// [Abort] drops a connection without the close handshake, for peers that are not worth
// waiting for and for tests that simulate a network failure.
//
// # Contexts
//
// A Read or Write whose context ends returns the context's error. Over WebSocket that also
// tears the connection down (the library cannot abandon a half-read or half-written frame);
// over a Pipe it does not. Code that wants the connection to survive should not cancel
// individual reads and writes; it should Close the connection instead.
package transport
