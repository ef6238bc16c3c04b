package app

import (
	"bytes"
	"context"
	"errors"
	"sync"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// ServeOptions configures one Serve call.
type ServeOptions struct {
	// OnMessage receives every message that is not a tool request: binary messages, and
	// text messages that are not tool.query, tool.call or tool.batch for the tool.exec
	// capability (the session layer's control traffic, for one). It is called by the
	// goroutine reading conn at the time (only one reads at a time), in arrival order, so it
	// must return quickly; the slice is the callee's to keep. Nil drops such messages.
	OnMessage func(typ transport.MessageType, data []byte)
}

// Serve reads conn until it fails or ctx ends, answering tool requests. Requests are
// handled concurrently, at most Options.MaxConcurrent at a time (Serve stops reading while
// the bound is reached); each response is written as soon as it is ready, followed by the
// ASFT frames of the transfers it announces, and correlates with its request by replyTo.
//
// Serve does not own conn: it writes nothing but responses and frames, other goroutines
// may write to conn meanwhile, and it does not close conn, except that it aborts it
// ([transport.Abort]) when ctx ends. That is the only way to end a read in progress (over
// WebSocket a read whose context ends tears the connection down all the same), and it lets
// Serve read and write with a context that never ends, which costs the WebSocket library
// no timer registration per message. When reading fails or ctx ends, the contexts of the
// requests in flight are cancelled and Serve returns once their handlers have returned:
// with ctx's error if ctx ended, else with the read error.
func (a *App) Serve(ctx context.Context, conn transport.Conn, opts ServeOptions) error {
	s := &server{
		app:    a,
		parent: ctx,
		conn:   conn,
		opts:   opts,
		slots:  make(chan struct{}, a.concurrent),
		lead:   make(chan struct{}),
		done:   make(chan struct{}),
		max:    a.concurrent + 1,
	}
	s.ctx, s.cancel = context.WithCancel(ctx)
	s.io = &connIO{conn: conn, ctx: context.WithoutCancel(ctx)}
	aborted := make(chan struct{})
	stopWatch := context.AfterFunc(ctx, func() {
		_ = transport.Abort(conn) // an error means conn was already closed
		close(aborted)
	})
	s.started = 1
	s.run() // this goroutine reads first
	s.wg.Wait()
	if !stopWatch() {
		<-aborted // no goroutine of Serve outlives it
	}
	s.cancel()
	return s.err
}

// server is one Serve call. Its goroutines share the work leader/follower style: one of
// them (the leader) reads conn; when it reads a tool request it hands the reading to an
// idle goroutine (starting one if none is idle) and answers the request itself, then waits
// idle to lead again. The goroutine that wakes up goes straight back to a socket read,
// while the request is answered at once by the goroutine that read it, its bytes still in
// cache: cheaper than handing each request to a worker. The goroutines are started on
// demand and kept until Serve returns: a long-lived goroutine has grown its stack once,
// where a goroutine per request would grow a fresh one every time.
type server struct {
	app    *App
	parent context.Context // Serve's ctx
	ctx    context.Context // the requests' context, cancelled when Serve stops
	cancel context.CancelFunc
	conn   transport.Conn
	io     *connIO
	opts   ServeOptions

	slots chan struct{} // one token per request being answered (MaxConcurrent)
	lead  chan struct{} // hands the reading to an idle goroutine
	done  chan struct{} // closed when Serve stops

	// started counts the goroutines, at most max: one reading and MaxConcurrent answering.
	// Only the leader touches it.
	started, max int
	wg           sync.WaitGroup // the goroutines Serve started

	stopOnce sync.Once
	err      error // why Serve stopped; written once, before done is closed

	// inflight holds the contexts of the calls and batches being answered, by request id,
	// for tool.cancel: each is the answering goroutine's own (callContext), so tracking a
	// request allocates nothing.
	inflightMu sync.Mutex
	inflight   map[string]*callContext
}

// callContext is the context one goroutine of the pool answers its calls and batches
// with. A cancellable context costs two allocations (context.WithCancelCause's context and
// its cancel function: a context type of our own would not carry a cause context.Cause can
// read), which were most of the app's per-call allocations; so a goroutine keeps its
// context from request to request for as long as nothing cancels it, and makes a new one
// only after a tool.cancel (or Serve's end) did. A tool.cancel cancels it only while its
// request is tracked (cancelMessage and untrack hold inflightMu), so a late one never
// reaches the goroutine's next request.
type callContext struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// ErrCancelled is the cause (context.Cause) of a handler's context when the host gave up
// the request with tool.cancel (docs/protocol/cancel.md): the request is not answered.
var ErrCancelled = errors.New("app: the host cancelled the request (tool.cancel)")

// track makes own's context, when it has none, the one the call or batch id is answered
// with, and has a tool.cancel naming id cancel it; untrack forgets it.
func (s *server) track(id string, own *callContext) context.Context {
	if own.ctx == nil {
		own.ctx, own.cancel = context.WithCancelCause(s.ctx)
	}
	s.inflightMu.Lock()
	if s.inflight == nil {
		s.inflight = map[string]*callContext{}
	}
	s.inflight[id] = own
	s.inflightMu.Unlock()
	return own.ctx
}

// untrack ends what track started for id. Once id is forgotten no tool.cancel can cancel
// own's context any more: if one did (or Serve is stopping), the context is dropped and
// the goroutine's next request gets a new one.
func (s *server) untrack(id string, own *callContext) {
	s.inflightMu.Lock()
	if s.inflight[id] == own { // a later request of the same id may hold the entry now
		delete(s.inflight, id)
	}
	s.inflightMu.Unlock()
	if own.ctx.Err() != nil {
		own.cancel(nil)
		*own = callContext{}
	}
}

// cancelMessage handles msg if it is a tool.cancel: the request it names, when still being
// answered, has its context cancelled with ErrCancelled. It reports whether msg was one.
func (s *server) cancelMessage(msg []byte) bool {
	if !bytes.Contains(msg, cancelType) {
		return false // the common case: no decoding
	}
	env, err := wire.DecodeEnvelope(msg)
	if err != nil || env.Type != wire.TypeCancel || !toolCapability(env.Capability) {
		return false
	}
	var c wire.Cancel
	if wire.Unmarshal(env.Payload, &c) != nil || c.RequestID == "" {
		return true // a tool.cancel, unusable: nothing to cancel, and not the session layer's
	}
	// Cancelled under the lock: the context is the goroutine's (callContext), and once
	// untrack has run it belongs to the goroutine's next request. Cancelling calls no code
	// of ours or of handlers (context.AfterFunc functions run in goroutines of their own).
	s.inflightMu.Lock()
	if own := s.inflight[c.RequestID]; own != nil {
		own.cancel(ErrCancelled)
	}
	s.inflightMu.Unlock()
	return true
}

var cancelType = []byte(`"` + wire.TypeCancel + `"`)

// run is one goroutine of the pool, starting as the leader. It reads into a buffer of its
// own, reused from request to request: answer is done with a request's bytes when it
// returns (what decoding keeps is copied, as Handle's contract requires), and the goroutine
// reads again only after that.
func (s *server) run() {
	var buf []byte
	var own callContext
	for {
		req, ok := s.read(&buf)
		if !ok {
			return
		}
		if !s.take() {
			return
		}
		if !s.promote() {
			<-s.slots
			return
		}
		ctx, tracked := s.ctx, false
		if t := req.env.Type; req.err == nil && req.env.ID != "" && (t == wire.TypeCall || t == wire.TypeBatch) {
			ctx, tracked = s.track(req.env.ID, &own), true
		}
		if err := s.app.answer(ctx, &req, s.io); err != nil && s.ctx.Err() == nil {
			s.app.log.DebugContext(s.ctx, "writing a tool response failed", "err", err)
		}
		if tracked {
			s.untrack(req.env.ID, &own)
		}
		<-s.slots
		select { // idle until asked to lead
		case <-s.lead:
		case <-s.done:
			return
		}
	}
}

// take takes a slot for a request, waiting (and not reading) while every slot is taken.
// It reports false once Serve has stopped.
func (s *server) take() bool {
	select {
	case s.slots <- struct{}{}: // a free slot: no need to lock two channels
		return true
	default:
	}
	select {
	case s.slots <- struct{}{}:
		return true
	case <-s.ctx.Done():
		s.stop(s.parent.Err())
		return false
	}
}

// read reads conn into *buf until a tool request arrives and returns it; other messages
// go to OnMessage, as a copy that is the callee's to keep. It returns false once Serve has
// stopped.
func (s *server) read(buf *[]byte) (request, bool) {
	for {
		typ, msg, err := transport.ReadBuffer(s.io.ctx, s.conn, (*buf)[:0])
		if cap(msg) <= maxReadBuffer {
			*buf = msg[:0] // keep what grew, up to a bound: one huge request must not pin its size
		}
		if err != nil {
			if perr := s.parent.Err(); perr != nil {
				err = perr
			}
			s.stop(err)
			return request{}, false
		}
		if typ != transport.MessageText {
			deliver(s.opts.OnMessage, typ, msg)
			continue
		}
		req, ok := classify(msg)
		if !ok {
			if !s.cancelMessage(msg) {
				deliver(s.opts.OnMessage, typ, msg)
			}
			continue
		}
		return req, true
	}
}

// promote hands the reading to an idle goroutine, or to a new one while there are fewer
// than max. It reports false if Serve stopped meanwhile.
func (s *server) promote() bool {
	select {
	case s.lead <- struct{}{}:
		return true
	default:
	}
	if s.started < s.max {
		s.started++
		s.wg.Go(s.run)
		return true
	}
	// All started: the leader holds one slot, so at least one other goroutine holds none
	// and is about to be idle.
	select {
	case s.lead <- struct{}{}:
		return true
	case <-s.ctx.Done():
		s.stop(s.parent.Err())
		return false
	}
}

// stop records why Serve stops, releases the idle goroutines and cancels the requests in
// flight. The first reason wins.
func (s *server) stop(err error) {
	s.stopOnce.Do(func() {
		s.err = err
		close(s.done)
		s.cancel()
	})
}

// deliver hands a copy of msg, which is in a reader's buffer, to f.
func deliver(f func(transport.MessageType, []byte), typ transport.MessageType, msg []byte) {
	if f != nil {
		f(typ, bytes.Clone(msg))
	}
}

// maxReadBuffer bounds the read buffer a Serve goroutine keeps between requests.
const maxReadBuffer = 64 << 10

// connIO reads and writes conn with a context that never ends (Serve aborts conn instead).
// A write for a request whose context has ended is not made: a transfer stops at its next
// frame once Serve is stopping.
type connIO struct {
	conn transport.Conn
	ctx  context.Context
}

func (c *connIO) Write(ctx context.Context, typ transport.MessageType, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.conn.Write(c.ctx, typ, data)
}
