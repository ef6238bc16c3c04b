package transport

import (
	"context"
	"fmt"
	"sync"
)

// DefaultPipeQueue is the number of messages a Pipe buffers per direction by default.
const DefaultPipeQueue = 64

// PipeOptions configures Pipe. The zero value is ready to use.
type PipeOptions struct {
	// Queue is how many messages each direction buffers before Write blocks
	// (DefaultPipeQueue when zero).
	Queue int
	// ReadLimit is the largest message either end accepts, in bytes (DefaultReadLimit when
	// zero). As over WebSocket, the limit is the reader's: Write of a larger message succeeds,
	// and the reader's Read closes the pipe with StatusMessageTooBig.
	ReadLimit int64
}

// Pipe returns the two ends of an in-memory connection. It behaves like a WebSocket
// connection seen through Conn: whole messages in order, a bounded queue per direction (Write
// blocks while the peer's queue is full, until its context ends or the pipe closes), a read
// limit, and close codes. Messages written before a Close are still delivered to the peer
// before its Read reports the *CloseError; messages queued toward the end that closed are
// discarded.
func Pipe(opts PipeOptions) (Conn, Conn) {
	if opts.Queue <= 0 {
		opts.Queue = DefaultPipeQueue
	}
	if opts.ReadLimit <= 0 {
		opts.ReadLimit = DefaultReadLimit
	}
	p := &pipe{limit: opts.ReadLimit, done: make(chan struct{})}
	ab := make(chan pipeMessage, opts.Queue)
	ba := make(chan pipeMessage, opts.Queue)
	a := &pipeEnd{p: p, side: 0, in: ba, out: ab}
	b := &pipeEnd{p: p, side: 1, in: ab, out: ba}
	return a, b
}

// pipe is the state shared by both ends.
type pipe struct {
	limit int64
	done  chan struct{} // closed by the first close, whoever makes it

	mu       sync.Mutex
	closer   int // side that closed the pipe (meaningful once done is closed)
	closeErr *CloseError
	drain    bool    // the peer of closer still receives what closer queued before closing
	local    [2]bool // side called Close
}

// pipeMessage is one queued message. Oversize messages travel as their length only: the
// reader rejects them without the writer copying them.
type pipeMessage struct {
	typ      MessageType
	data     []byte
	oversize int64
}

type pipeEnd struct {
	p    *pipe
	side int
	in   <-chan pipeMessage
	out  chan<- pipeMessage
}

// shut closes the pipe on behalf of side if it is still open and reports whether it did.
func (p *pipe) shut(side int, ce *CloseError, drain bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.done:
		return false
	default:
	}
	p.closer, p.closeErr, p.drain = side, ce, drain
	close(p.done)
	return true
}

// err is the error side sees once the pipe is closed.
func (p *pipe) err(side int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.local[side] {
		return ErrClosed
	}
	return p.closeErr
}

// drains reports whether side's Read still hands out queued messages after the close.
func (p *pipe) drains(side int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.drain && p.closer != side && !p.local[side]
}

// ReadBuffer is Read: a pipe's messages are copies already, so buf is not needed.
func (e *pipeEnd) ReadBuffer(ctx context.Context, _ []byte) (MessageType, []byte, error) {
	return e.Read(ctx)
}

func (e *pipeEnd) Read(ctx context.Context) (MessageType, []byte, error) {
	select {
	case <-e.p.done:
		return e.readClosed()
	default:
	}
	// Queued messages come before anything else: a close that follows them must not
	// overtake them.
	select {
	case m := <-e.in:
		return e.deliver(m)
	default:
	}
	select {
	case m := <-e.in:
		return e.deliver(m)
	case <-e.p.done:
		return e.readClosed()
	case <-ctx.Done():
		return 0, nil, ctx.Err()
	}
}

// readClosed serves a Read after the close: what the closer queued first, then the error.
func (e *pipeEnd) readClosed() (MessageType, []byte, error) {
	if e.p.drains(e.side) {
		select {
		case m := <-e.in:
			return e.deliver(m)
		default:
		}
	}
	return 0, nil, e.p.err(e.side)
}

func (e *pipeEnd) deliver(m pipeMessage) (MessageType, []byte, error) {
	if m.oversize > 0 {
		ce := &CloseError{Code: StatusMessageTooBig, Reason: fmt.Sprintf("message of %d bytes exceeds the %d-byte limit", m.oversize, e.p.limit)}
		e.p.shut(e.side, ce, true)
		return 0, nil, ce
	}
	return m.typ, m.data, nil
}

func (e *pipeEnd) Write(ctx context.Context, typ MessageType, data []byte) error {
	if !typ.valid() {
		return errMessageType(typ)
	}
	select {
	case <-e.p.done:
		return e.p.err(e.side)
	default:
	}
	m := pipeMessage{typ: typ}
	if int64(len(data)) > e.p.limit {
		m.oversize = int64(len(data))
	} else {
		m.data = append(make([]byte, 0, len(data)), data...)
	}
	select {
	case e.out <- m:
		return nil
	case <-e.p.done:
		return e.p.err(e.side)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (e *pipeEnd) Close(code StatusCode, reason string) error {
	code, reason, err := closeArgs(code, reason)
	if !e.closeLocal() {
		return ErrClosed
	}
	e.p.shut(e.side, &CloseError{Code: code, Reason: reason}, true)
	e.discardInbound()
	return err
}

// Abort drops the pipe as a failed network would: the peer's Read reports
// StatusAbnormalClosure once it has read what this end wrote before (deterministically, so
// fault-injection tests know what got through); what the peer queued toward this end is lost.
func (e *pipeEnd) Abort() error {
	if !e.closeLocal() {
		return ErrClosed
	}
	e.p.shut(e.side, &CloseError{Code: StatusAbnormalClosure, Reason: "connection aborted"}, true)
	e.discardInbound()
	return nil
}

// closeLocal marks this end closed and reports whether it was open.
func (e *pipeEnd) closeLocal() bool {
	e.p.mu.Lock()
	defer e.p.mu.Unlock()
	already := e.p.local[e.side]
	e.p.local[e.side] = true
	return !already
}

func (e *pipeEnd) discardInbound() {
	// Nothing will read what the peer queued toward this end; let it go.
	for {
		select {
		case <-e.in:
		default:
			return
		}
	}
}
