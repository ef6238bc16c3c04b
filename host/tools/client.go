package tools

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ansight-go/ansight/internal/bpool"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// Client is the host's protocol client for one app connection. Create it with NewClient,
// feed it every inbound message through HandleMessage, call Open once session.open is
// acknowledged and Close when the connection ends. All methods are safe for concurrent use.
type Client struct {
	conn transport.Conn
	opts Options
	// systemClock: Options.Clock is time.Now, so a request's sentAt is the time its
	// deadline counts from, read once (reading the clock is not free).
	systemClock bool

	opened    chan struct{}
	openOnce  sync.Once
	closed    chan struct{}
	closeOnce sync.Once
	slots     chan struct{} // one token per request in flight (MaxPending)
	spare     chan *pending // finished requests' records, for reuse (see newPending)

	mu       sync.Mutex
	closeErr error               // set once by Close
	pending  map[string]*pending // request id → waiter
	// sweep ends the waits that last longer than Options.Timeout: one timer for every
	// request in flight, armed for the earliest deadline (sweepAt, zero while disarmed).
	// Requests wait the same Timeout, so one sent while the sweep is armed ends later and
	// sending costs no timer of its own; one whose deadline comes earlier re-arms it.
	sweep   *time.Timer
	sweepAt time.Time

	// given are the requests the host gave up on (their limit passed, or their caller
	// left) while the app may still be running them: by request id, until LateAnswerWait
	// after they were given up (see Busy).
	given map[string]givenUp

	transfers *registry

	catalogs catalogCache
	answers  catalogAnswers

	unmatched atomic.Int64
	malformed atomic.Int64
	late      atomic.Int64

	calling  atomic.Int32  // Calls and Batches running (see use.go)
	lastCall atomic.Uint64 // the last one's stamp

	cancelable atomic.Bool // the app takes tool.cancel (EnableCancel)
}

// pending is one request waiting for its response. Whoever removes it from Client.pending
// (the response, Close, or the waiter giving up) owns it, and the first two send exactly one
// response on ch.
type pending struct {
	id string
	op string
	ch chan response // capacity 1
	// deadline ends the wait for the response: limit.Timeout after sending.
	deadline time.Time
	limit    Limit
	// subject names what the request is about in its errors: a call's tool id, a batch's.
	subject string
	sent    time.Time // for OnTraffic, set only with it (reading the clock is not free)
	tools   []string  // for OnTraffic
	query   string    // a tool.query's payload, which its answer is kept by
	// ctx is the request's: its WithProgress function, if any, is looked up only when the
	// response announces transfers, not on every call.
	ctx context.Context
}

// response is what HandleMessage hands to a waiter.
type response struct {
	typ       string
	payload   []byte            // inflated payload; nil for a kept catalog answer repeated
	kept      *keptAnswer       // the catalog answer this one repeats, if any
	tail      []byte            // what follows the kept answer's head in this one
	inflated  int               // the inflated payload's length when payload is nil
	catalog   *wire.Catalog     // tool.catalog
	result    *CallResult       // tool.result: Payload decoded, the rest filled by Call
	batch     *wire.BatchResult // tool.batch.result
	descs     []descriptor      // ASFT descriptors found in the payload
	transfers []*transfer       // registered transfers, one per distinct transfer id
	err       error             // *wire.Error or *TransportError
}

// Stats counts what the client dropped or received; see Client.Stats.
type Stats struct {
	// UnmatchedResponses: tool responses whose replyTo matches no request in flight and
	// none given up on (never sent, or duplicates). They are dropped.
	UnmatchedResponses int64
	// LateResponses: answers to requests the host had given up on (LateAnswerWait). They
	// are logged and dropped.
	LateResponses int64
	// MalformedResponses: tool responses whose envelope or payload could not be decoded.
	MalformedResponses int64
	// RejectedFrames: ASFT frames that could not be parsed or name no known transfer.
	RejectedFrames int64
	// TransfersCompleted and TransfersFailed count finished transfers.
	TransfersCompleted int64
	TransfersFailed    int64
}

// NewClient returns a client that writes requests to conn. The host keeps reading conn and
// passes every message to HandleMessage.
func NewClient(conn transport.Conn, opts Options) *Client {
	systemClock := opts.Clock == nil
	opts = opts.withDefaults()
	c := &Client{
		conn:    conn,
		opts:    opts,
		opened:  make(chan struct{}),
		closed:  make(chan struct{}),
		slots:   make(chan struct{}, opts.MaxPending),
		pending: make(map[string]*pending),
		spare:   make(chan *pending, spareRequests),
	}
	c.systemClock = systemClock
	c.observeTransfers()
	c.transfers = newRegistry(&c.opts)
	c.catalogs.sem = make(chan struct{}, 1)
	return c
}

// Open lets requests flow: the host has acknowledged session.open. Requests made before
// wait. Calling Open again has no effect.
func (c *Client) Open() { c.openOnce.Do(func() { close(c.opened) }) }

// Close fails every pending request at once with a *TransportError matching
// ErrSessionClosed (and cause, when non-nil), aborts every transfer (partial files are
// deleted) and makes later requests fail the same way. It does not close the connection,
// which belongs to the host session. Calling Close again has no effect.
func (c *Client) Close(cause error) {
	c.closeOnce.Do(func() {
		err := ErrSessionClosed
		if cause != nil {
			err = fmt.Errorf("%w: %w", ErrSessionClosed, cause)
		}
		c.mu.Lock()
		c.closeErr = err
		waiting := c.pending
		c.pending = make(map[string]*pending)
		c.given = nil
		if c.sweep != nil {
			c.sweep.Stop()
		}
		c.sweepAt = time.Time{}
		c.mu.Unlock()
		close(c.closed)
		for _, p := range waiting {
			p.ch <- response{err: &TransportError{Op: p.op, RequestID: p.id, Subject: p.subject, Err: err}}
		}
		c.transfers.abortAll(err)
	})
}

// Stats returns the client's counters.
func (c *Client) Stats() Stats {
	done, failed := c.transfers.finished()
	return Stats{
		UnmatchedResponses: c.unmatched.Load(),
		LateResponses:      c.late.Load(),
		MalformedResponses: c.malformed.Load(),
		RejectedFrames:     c.transfers.rejected.Load(),
		TransfersCompleted: done,
		TransfersFailed:    failed,
	}
}

// spareRequests is how many finished requests' records a client keeps for reuse.
const spareRequests = 64

// newPending returns a request record, a spare one when there is one. Records (their
// channel) are kept per client rather than in a global pool because a channel made in a
// testing/synctest bubble must not be used outside it, and a client lives in one.
func (c *Client) newPending(id, op string) *pending {
	select {
	case p := <-c.spare:
		p.id, p.op = id, op
		return p
	default:
		return &pending{id: id, op: op, ch: make(chan response, 1)}
	}
}

// Busy reports whether the client is waiting for the app: a request in flight, a request
// given up on less than LateAnswerWait ago and not answered since, or a transfer being
// received. The host's keep-alive never drops a busy session for missing pongs: an SDK
// that runs tools inside its receive loop answers no ping until the tool is done — and it
// keeps running a call the host stopped waiting for (the official .NET SDK cannot be told
// to stop), so that call still counts until it is answered or LateAnswerWait passes.
func (c *Client) Busy() bool {
	now := time.Now()
	c.mu.Lock()
	n := len(c.pending)
	for id, g := range c.given {
		if now.Before(g.until) {
			n++
		} else {
			delete(c.given, id)
		}
	}
	c.mu.Unlock()
	return n > 0 || c.transfers.receiving()
}

// LateAnswerWait is how long after the host gave up on a request (its limit passed, or its
// caller left) the request still counts as pending for the keep-alive (Busy), and its answer
// is recognised as a late one (logged, counted in Stats.LateResponses and dropped) rather
// than as an unmatched response. It is the longest limit the deadline model derives for a
// call (MaxDerivedTimeout): an app that has not answered by then is taken to be stuck, and
// its silence counts again.
const LateAnswerWait = MaxDerivedTimeout

// maxGivenUp bounds the requests remembered as given up on: beyond it the oldest is
// forgotten (it then no longer keeps the session busy).
const maxGivenUp = 1024

// givenUp is a request the host stopped waiting for.
type givenUp struct {
	op, subject string
	at, until   time.Time
}

// giveUp remembers p as given up on at now. The caller holds c.mu and has removed p from
// c.pending.
func (c *Client) giveUp(p *pending, now time.Time) {
	if c.given == nil {
		c.given = map[string]givenUp{}
	}
	if len(c.given) >= maxGivenUp {
		oldest := ""
		for id, g := range c.given {
			if oldest == "" || g.at.Before(c.given[oldest].at) {
				oldest = id
			}
		}
		delete(c.given, oldest)
	}
	c.given[p.id] = givenUp{op: p.op, subject: p.subject, at: now, until: now.Add(LateAnswerWait)}
}

// lateAnswer reports whether id names a request given up on, and forgets it: its answer
// has come.
func (c *Client) lateAnswer(id string) (givenUp, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, ok := c.given[id]
	if ok {
		delete(c.given, id)
	}
	return g, ok
}

// recycle keeps p for reuse. Its request must be over: p out of the pending map and its
// channel drained, so that nothing is or will be sent on it.
func (c *Client) recycle(p *pending) {
	p.id, p.op, p.deadline, p.sent, p.tools, p.query, p.ctx = "", "", time.Time{}, time.Time{}, nil, "", nil
	p.limit, p.subject = Limit{}, ""
	select {
	case c.spare <- p:
	default:
	}
}

// closedErr returns the error Close recorded, or nil while the client is open.
func (c *Client) closedErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeErr
}

// claim removes and returns the request waiting for id, or nil.
func (c *Client) claim(id string) *pending {
	if id == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pending[id]
	if p != nil {
		delete(c.pending, id)
	}
	return p
}

// claimBytes is claim of an id read as bytes (a piece of the response): the map lookup
// makes no string of it.
func (c *Client) claimBytes(id []byte) *pending {
	if len(id) == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pending[string(id)]
	if p != nil {
		delete(c.pending, p.id)
	}
	return p
}

// forget removes p if it is still waiting and reports whether it did. When it returns
// false, a response (or Close's error) is or will be sent on p.ch.
func (c *Client) forget(p *pending) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending[p.id] == p {
		delete(c.pending, p.id)
		return true
	}
	return false
}

// abandon is forget for a request the app has received: when it was still waiting, it is
// given up on (see Busy).
func (c *Client) abandon(p *pending) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending[p.id] == p {
		delete(c.pending, p.id)
		c.giveUp(p, time.Now())
		return true
	}
	return false
}

// EnableCancel tells the client that the app takes tool.cancel (it advertised
// session.ExtensionToolCancel in session.open): from then on, a call or batch whose caller
// gives up (its context is cancelled) is cancelled in the app too (docs/protocol/cancel.md).
// An app that did not advertise it is never sent one.
func (c *Client) EnableCancel() { c.cancelable.Store(true) }

// cancelRequest tells the app that the request id is given up, when it takes tool.cancel
// and the caller cancelled it (a limit that ran out leaves the tool to its own end: its
// answer is dropped when it comes), and reports whether it did. Best effort: a write that
// fails ends with the connection.
func (c *Client) cancelRequest(op, id string, cause error) bool {
	if !c.cancelable.Load() || op == wire.TypeQuery || errors.Is(cause, ErrTimeout) || errors.Is(cause, context.DeadlineExceeded) {
		return false
	}
	payload, err := wire.Marshal(wire.Cancel{RequestID: id, Reason: "the caller gave up the request"})
	if err != nil {
		return false
	}
	env := wire.Envelope{Type: wire.TypeCancel, ID: c.opts.NewRequestID(), SessionID: c.opts.SessionID,
		SentAt: c.opts.Clock().UTC(), Capability: wire.CapabilityToolExec, Payload: payload}
	msg, err := wire.AppendEnvelope(nil, &env)
	if err == nil {
		err = c.write(msg)
	}
	if err != nil {
		c.opts.Logger.Debug("tools: tool.cancel not sent", "request", id, "err", err)
		return false
	}
	return true
}

// roundTrip sends one request and waits for its response. The returned response has err
// nil; a tool.error comes back as a *wire.Error, everything else as a *TransportError.
// The response's transfers, if any, are still running.
// The request waits for its answer until lim; subject names it in errors.
func (c *Client) roundTrip(ctx context.Context, op string, payload any, lim Limit, subject string) (response, error) {
	body, err := wire.Marshal(payload)
	if err != nil {
		return response{}, fmt.Errorf("tools: encode %s payload: %w", op, err)
	}
	var tools []string
	if c.opts.OnTraffic != nil {
		tools = toolsOf(payload)
	}
	return c.send(ctx, op, body, tools, lim, subject)
}

// callRoundTrip is roundTrip of a tool.call, its payload written into a pooled buffer.
func (c *Client) callRoundTrip(ctx context.Context, call *wire.Call, lim Limit) (response, error) {
	buf := messageBuffers.Get()
	defer messageBuffers.Put(buf)
	body, err := wire.AppendCall((*buf)[:0], call)
	*buf = body[:0]
	if err != nil {
		return response{}, fmt.Errorf("tools: encode %s payload: %w", wire.TypeCall, err)
	}
	var tools []string
	if c.opts.OnTraffic != nil {
		tools = []string{call.ToolID}
	}
	return c.send(ctx, wire.TypeCall, body, tools, lim, call.ToolID)
}

// send is roundTrip of an encoded payload; tools are the tool ids it names, for OnTraffic.
func (c *Client) send(ctx context.Context, op string, body []byte, tools []string, lim Limit, subject string) (response, error) {
	if err := c.waitOpen(ctx, op, subject, lim); err != nil {
		return response{}, err
	}
	select {
	case c.slots <- struct{}{}: // a free slot: no need to lock three channels
	default:
		select {
		case c.slots <- struct{}{}:
		case <-c.closed:
			return response{}, &TransportError{Op: op, Subject: subject, Err: c.closedErr()}
		case <-ctx.Done():
			return response{}, &TransportError{Op: op, Subject: subject, Err: c.ended(ctx, op, subject, lim)}
		}
	}
	defer func() { <-c.slots }()

	id := c.opts.NewRequestID()
	if id == "" {
		return response{}, fmt.Errorf("tools: NewRequestID returned an empty id")
	}
	// p's deadline bounds the wait for the answer; it runs from before the write, as the
	// answer may arrive before the write returns. The client's one timer handles deadlines
	// that differ per request.
	p := c.newPending(id, op)
	p.ctx, p.limit, p.subject = ctx, lim, subject
	now := time.Now()
	p.deadline = now.Add(lim.Timeout)
	if dl, ok := ctx.Deadline(); ok && lim.Basis == BasisCaller {
		p.deadline = dl
	}
	if op == wire.TypeQuery {
		p.query = string(body)
	}
	if c.opts.OnTraffic != nil {
		p.sent, p.tools = now, tools
	}
	c.mu.Lock()
	if c.closeErr != nil {
		err := c.closeErr
		c.mu.Unlock()
		c.recycle(p)
		return response{}, &TransportError{Op: op, Subject: subject, Err: err}
	}
	if _, dup := c.pending[p.id]; dup {
		c.mu.Unlock()
		c.recycle(p)
		return response{}, fmt.Errorf("tools: request id %q is already in flight", id)
	}
	c.pending[p.id] = p
	if c.sweepAt.IsZero() || p.deadline.Before(c.sweepAt) {
		c.armSweep(p.deadline)
	}
	c.mu.Unlock()
	// Every way out from here leaves p out of the map with its channel drained.
	defer c.recycle(p)

	sentAt := now
	if !c.systemClock {
		sentAt = c.opts.Clock()
	}
	env := wire.Envelope{
		Type:       op,
		ID:         p.id,
		SessionID:  c.opts.SessionID,
		SentAt:     sentAt.UTC(),
		Capability: wire.CapabilityToolExec,
		Payload:    body,
	}
	buf := messageBuffers.Get()
	msg, err := wire.AppendEnvelope((*buf)[:0], &env)
	*buf = msg[:0]
	if err != nil {
		messageBuffers.Put(buf)
		c.forget(p)
		return response{}, fmt.Errorf("tools: encode %s envelope: %w", op, err)
	}
	c.trafficRequest(p, len(msg), body)
	err = c.write(msg)
	messageBuffers.Put(buf)
	if err != nil {
		if c.forget(p) {
			if cerr := c.closedErr(); cerr != nil {
				err = cerr
			}
			return response{}, &TransportError{Op: op, RequestID: id, Subject: subject, Err: err}
		}
		// Already answered (or closed) while the write was failing: take that outcome.
	}

	var r response
	var cause error
	select {
	case r = <-p.ch: // a response, Close's error, or expire's ErrTimeout
	case <-ctx.Done():
		cause = c.ended(ctx, op, subject, lim)
	}
	if cause != nil {
		if c.abandon(p) {
			if c.cancelRequest(op, id, cause) {
				c.lateAnswer(id) // the app answers a cancelled request with nothing: nothing to wait for
			}
			return response{}, &TransportError{Op: op, RequestID: id, Subject: subject, Err: cause}
		}
		// The response was claimed just as the wait ended; it is being delivered.
		r = <-p.ch
		if r.err == nil {
			c.transfers.abortEach(r.transfers, cause)
			return response{}, &TransportError{Op: op, RequestID: id, Subject: subject, Err: cause}
		}
	}
	if r.err != nil {
		return response{}, r.err
	}
	return r, nil
}

// armSweep arms the sweep for at, the earliest deadline of the requests in flight (a
// sweep that fires early finds nothing due and arms itself again). The caller holds c.mu.
func (c *Client) armSweep(at time.Time) {
	c.sweepAt = at
	d := time.Until(at)
	if c.sweep == nil {
		c.sweep = time.AfterFunc(d, c.expire)
	} else {
		c.sweep.Reset(d)
	}
}

// expire ends the waits whose deadline has passed with ErrTimeout and arms the sweep for
// the earliest deadline left.
func (c *Client) expire() {
	now := time.Now()
	var due []*pending
	var next time.Time
	c.mu.Lock()
	for id, p := range c.pending {
		switch {
		case !p.deadline.After(now):
			delete(c.pending, id)
			c.giveUp(p, now)
			due = append(due, p)
		case next.IsZero() || p.deadline.Before(next):
			next = p.deadline
		}
	}
	c.sweepAt = time.Time{}
	if !next.IsZero() {
		c.armSweep(next)
	}
	c.mu.Unlock()
	for _, p := range due {
		p.ch <- response{err: &TransportError{Op: p.op, RequestID: p.id, Subject: p.subject,
			Err: &TimeoutError{Op: p.op, Subject: p.subject, Limit: p.limit}}}
	}
}

// write sends one request message. Neither the caller's cancellation nor a deadline
// reaches the connection: over WebSocket a write whose context ends tears the whole
// connection down, and one abandoned request must not end the session (a context that can
// end also costs the WebSocket library a timer registration per write). A write that
// cannot proceed because the app stopped reading is ended with the connection: by the
// host's keep-alive, which closes a connection whose peer stops answering pings, or by
// the connection's owner.
func (c *Client) write(msg []byte) error {
	return c.conn.Write(context.Background(), transport.MessageText, msg)
}

// messageBuffers recycles the buffers requests are assembled in (Conn.Write does not keep
// them), up to 64 KiB: not the buffers of huge batches.
var messageBuffers = bpool.New(512, 64<<10)

// ended is why ctx ended, as a request's cause: a deadline it carried (the caller's limit)
// is a *TimeoutError like the client's own, anything else context.Cause.
func (c *Client) ended(ctx context.Context, op, subject string, lim Limit) error {
	cause := context.Cause(ctx)
	if errors.Is(cause, context.DeadlineExceeded) && lim.Basis == BasisCaller {
		return &TimeoutError{Op: op, Subject: subject, Limit: lim}
	}
	return cause
}

// waitOpen blocks until Open, Close or the end of ctx.
func (c *Client) waitOpen(ctx context.Context, op, subject string, lim Limit) error {
	select {
	case <-c.opened: // the common case, without the three-way select's locking
	default:
		select {
		case <-c.opened:
		case <-c.closed:
		case <-ctx.Done():
			return &TransportError{Op: op, Subject: subject, Err: c.ended(ctx, op, subject, lim)}
		}
	}
	if err := c.closedErr(); err != nil {
		return &TransportError{Op: op, Subject: subject, Err: err}
	}
	return nil
}

// expectedType maps a request type to the success response type answering it.
func expectedType(op string) string {
	switch op {
	case wire.TypeQuery:
		return wire.TypeCatalog
	case wire.TypeCall:
		return wire.TypeResult
	case wire.TypeBatch:
		return wire.TypeBatchResult
	}
	return ""
}
