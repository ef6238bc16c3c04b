package app

import (
	"context"
	"sync"

	"github.com/ansight-go/ansight/transport"
)

// ServeOptions configures one Serve call.
type ServeOptions struct {
	// OnMessage receives every message that is not a tool request: binary messages, and
	// text messages that are not tool.query, tool.call or tool.batch for the tool.exec
	// capability (the session layer's control traffic, for one). It is called on Serve's
	// reader goroutine, in arrival order, so it must return quickly; the slice is the
	// callee's to keep. Nil drops such messages.
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
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	aborted := make(chan struct{})
	stopWatch := context.AfterFunc(parent, func() {
		_ = transport.Abort(conn) // an error means conn was already closed
		close(aborted)
	})
	defer func() {
		if !stopWatch() {
			<-aborted // no goroutine of Serve outlives it
		}
		cancel()
		wg.Wait()
	}()
	rw := &connIO{conn: conn, ctx: context.WithoutCancel(ctx)}
	// Requests go to a pool of at most a.concurrent workers, started on demand and kept
	// until Serve returns: a long-lived worker has grown its stack once, where a goroutine
	// per request would grow a fresh one every time (a large share of a small call's cost).
	work := make(chan *request)
	workers := 0
	worker := func(req *request) {
		defer wg.Done()
		for {
			if err := a.answer(ctx, req, rw); err != nil && ctx.Err() == nil {
				a.log.DebugContext(ctx, "writing a tool response failed", "err", err)
			}
			select {
			case req = <-work:
			case <-ctx.Done():
				return
			}
		}
	}
	for {
		typ, msg, err := conn.Read(rw.ctx)
		if err != nil {
			if parent.Err() != nil {
				return parent.Err()
			}
			return err
		}
		if typ != transport.MessageText {
			deliver(opts.OnMessage, typ, msg)
			continue
		}
		req, ok := classify(msg)
		if !ok {
			deliver(opts.OnMessage, typ, msg)
			continue
		}
		select {
		case work <- req: // an idle worker takes it
			continue
		default:
		}
		if workers < a.concurrent {
			workers++
			wg.Add(1)
			go worker(req)
			continue
		}
		select { // every worker is busy: stop reading until one is free
		case work <- req:
		case <-ctx.Done():
			return parent.Err()
		}
	}
}

func deliver(f func(transport.MessageType, []byte), typ transport.MessageType, msg []byte) {
	if f != nil {
		f(typ, msg)
	}
}

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
