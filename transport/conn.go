package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"unicode/utf8"
)

// Conn is a bidirectional connection of whole messages. See the package documentation for the
// concurrency contract and the errors it returns.
type Conn interface {
	// Read returns the next whole message. At most one goroutine may call Read at a time;
	// the returned slice belongs to the caller.
	Read(ctx context.Context) (MessageType, []byte, error)
	// Write sends one whole message. Safe for concurrent use: writes are serialized and a
	// message is never interleaved with another. The slice may be reused after Write returns.
	Write(ctx context.Context, typ MessageType, data []byte) error
	// Close closes the connection with a WebSocket status code and reason. Safe to call
	// concurrently and repeatedly; pending and later Read/Write calls fail with ErrClosed
	// (wrapped), or a *CloseError carrying the peer's code if the peer closed first.
	// The first call returns nil or an error from the closing handshake; later calls return
	// an error matching ErrClosed.
	Close(code StatusCode, reason string) error
}

// BufferReader is implemented by connections that can read a message into the caller's
// buffer: a reader that is done with each message before it reads the next (a tool
// runtime answering a request) then reads without allocating. Every Conn in this package
// implements it; use it through [ReadBuffer], which falls back to Read for others.
type BufferReader interface {
	// ReadBuffer is Read, but the message is read into buf (grown when it is too small)
	// and the returned slice shares buf's memory.
	ReadBuffer(ctx context.Context, buf []byte) (MessageType, []byte, error)
}

// ReadBuffer reads c's next message into buf when c implements [BufferReader], and with
// c.Read otherwise. The returned slice may share buf's memory (or a larger buffer grown
// from it): it is valid until buf, or the returned slice, is read into again, and the
// caller must copy what it keeps. Pass the returned slice back (as msg[:0]) to reuse what
// grew. The concurrency rules, limits and errors are Read's.
func ReadBuffer(ctx context.Context, c Conn, buf []byte) (MessageType, []byte, error) {
	if br, ok := c.(BufferReader); ok {
		return br.ReadBuffer(ctx, buf)
	}
	return c.Read(ctx)
}

// MessageType is the kind of a message: text (UTF-8 JSON in this protocol) or binary (ASFT
// frames). The numbers are the RFC 6455 opcodes.
type MessageType int

// Message types.
const (
	MessageText   MessageType = 1
	MessageBinary MessageType = 2
)

// String returns "text", "binary" or "MessageType(n)".
func (t MessageType) String() string {
	switch t {
	case MessageText:
		return "text"
	case MessageBinary:
		return "binary"
	}
	return fmt.Sprintf("MessageType(%d)", int(t))
}

func (t MessageType) valid() bool { return t == MessageText || t == MessageBinary }

// StatusCode is a WebSocket close status code (RFC 6455 section 7.4).
type StatusCode int

// Status codes used by this module. StatusAbnormalClosure is never sent: it reports a
// connection that ended without a close handshake.
const (
	StatusNormalClosure   StatusCode = 1000
	StatusGoingAway       StatusCode = 1001
	StatusProtocolError   StatusCode = 1002
	StatusAbnormalClosure StatusCode = 1006
	StatusPolicyViolation StatusCode = 1008
	StatusMessageTooBig   StatusCode = 1009
	StatusInternalError   StatusCode = 1011
)

// String returns the code's RFC 6455 name, or its number.
func (c StatusCode) String() string {
	switch c {
	case StatusNormalClosure:
		return "normal closure"
	case StatusGoingAway:
		return "going away"
	case StatusProtocolError:
		return "protocol error"
	case StatusAbnormalClosure:
		return "abnormal closure"
	case StatusPolicyViolation:
		return "policy violation"
	case StatusMessageTooBig:
		return "message too big"
	case StatusInternalError:
		return "internal error"
	}
	return fmt.Sprintf("status %d", int(c))
}

// sendable reports whether c may appear in a close frame on the wire: 1000–1003, 1007–1014
// and the registered/private range 3000–4999.
func (c StatusCode) sendable() bool {
	switch {
	case c >= 1000 && c <= 1003, c >= 1007 && c <= 1014, c >= 3000 && c <= 4999:
		return true
	}
	return false
}

// maxCloseReason is the longest close reason a close frame can carry (125-byte control frame
// payload minus the 2-byte code).
const maxCloseReason = 123

// closeArgs normalizes Close's arguments the same way for every implementation: a code that
// cannot be sent becomes StatusInternalError (reported in the returned error, the connection
// is closed regardless, so a mistaken code never leaks a connection), and a reason too long
// for a close frame is cut at a UTF-8 boundary.
func closeArgs(code StatusCode, reason string) (StatusCode, string, error) {
	var err error
	if !code.sendable() {
		err = fmt.Errorf("transport: status code %d cannot be sent in a close frame; closed with %d", int(code), int(StatusInternalError))
		code = StatusInternalError
	}
	if len(reason) > maxCloseReason {
		n := maxCloseReason
		for n > 0 && !utf8.RuneStart(reason[n]) {
			n--
		}
		reason = reason[:n]
	}
	return code, reason, err
}

// CloseError reports a connection that was closed by the peer, by a limit violation
// (StatusMessageTooBig) or without a close handshake (StatusAbnormalClosure).
type CloseError struct {
	Code   StatusCode
	Reason string

	err error // the underlying failure, if any (a socket error for StatusAbnormalClosure)
}

// Unwrap returns the underlying failure, if any.
func (e *CloseError) Unwrap() error { return e.err }

// Error describes the close.
func (e *CloseError) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("transport: connection closed: %d (%v)", int(e.Code), e.Code)
	}
	return fmt.Sprintf("transport: connection closed: %d (%v): %s", int(e.Code), e.Code, e.Reason)
}

// CloseStatus returns the code of the *CloseError in err's chain, or -1 if there is none.
func CloseStatus(err error) StatusCode {
	if ce, ok := errors.AsType[*CloseError](err); ok {
		return ce.Code
	}
	return -1
}

// ErrClosed is returned (wrapped) by Read and Write after this side closed the connection,
// and by Close when the connection was already closed. It matches net.ErrClosed too.
var ErrClosed = fmt.Errorf("transport: use of closed connection: %w", net.ErrClosed)

// errMessageType is returned by Write for a MessageType other than text or binary.
func errMessageType(t MessageType) error {
	return fmt.Errorf("transport: invalid message type %v", t)
}

// DefaultReadLimit is the largest message a Conn accepts unless configured otherwise: the
// protocol's 64 MiB text message cap (wire.DefaultMaxMessageBytes) plus 1 KiB of slack, which
// also covers binary ASFT chunks (at most 512 KiB plus a 56-byte header).
const DefaultReadLimit = 64<<20 + 1<<10
