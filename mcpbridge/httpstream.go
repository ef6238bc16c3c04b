package mcpbridge

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"iter"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/wire"
)

// MCP over HTTP that behaves like stdio. The Go MCP SDK's streamable HTTP server (v1.8) leaves
// five things to its user, for the protocol versions clients speak today (2025-03-26 to
// 2025-11-25, with sessions); this layer, between the guard and the SDK's handler, adds them:
//
//   - A client that drops its request's stream without notifications/cancelled left the
//     call running: the SDK ties a handler to the HTTP request only for the 2026-07-28
//     revision (StreamableHTTPOptions.PropagateRequestCancellation). Here a call whose stream
//     dropped is cancelled — the host stops waiting and frees it — unless the client resumes
//     the stream within HTTPResumeWindow (the specification's resumability: a disconnect
//     "SHOULD NOT be interpreted as the client cancelling", so a reconnecting client keeps
//     its call; one that does not come back has given up).
//   - After notifications/cancelled the SDK still writes an error response on the request's
//     stream; here it is dropped, as over stdio (cancel.go), and the stream is not replayed.
//   - Nothing kept stream events, so Last-Event-ID could not resume anything: the SDK's
//     bounded MemoryEventStore (maxStoredEvents) keeps them here.
//   - A long call sent no response headers until its answer (the SDK flushes headers on the
//     first event), and clients with a short header timeout gave up: here headers and an SSE
//     comment go out as soon as the call starts, and a comment every HTTPKeepAlive after.
//   - The server's own origin (http://127.0.0.1:PORT) was refused like any page's (httpGuard).
//
// The SDK gives a handler its HTTP request's headers but not its response: the layer tags
// each POST with a header of its own (streamHeader, removed from what clients send) that the
// receiving middleware reads, so that a handler finds its stream.

// Defaults of the HTTP layer's Options.
const (
	// DefaultHTTPResumeWindow is how long a call whose stream dropped waits for the client to
	// resume it (Last-Event-ID) before it is cancelled. The SDKs' clients reconnect within a
	// second or two (the Go SDK after 1–2 s, the TypeScript SDK after 1 s).
	DefaultHTTPResumeWindow = 5 * time.Second
	// DefaultHTTPKeepAlive is how often a long call's stream gets an SSE comment.
	DefaultHTTPKeepAlive = 15 * time.Second
	// maxStoredEvents bounds the bytes of stream events kept for resumption, over all
	// sessions; the oldest go first (a resumption that needs them is refused).
	maxStoredEvents = 8 << 20
	// maxNoReplay bounds the cancelled streams remembered as not to be replayed.
	maxNoReplay = 4096
)

// streamHeader tags a POST for the receiving middleware (see above).
const streamHeader = "Ansight-Bridge-Stream"

// errStreamGone is the cause a call's context ends with when its stream dropped and was not
// resumed.
var errStreamGone = errors.New("mcpbridge: the client dropped the request's stream and did not resume it")

var errWriterClosed = errors.New("mcpbridge: the response is over")

// httpLayer is the bridge's HTTP layer (see above): one per Serve.
type httpLayer struct {
	next      http.Handler // the SDK's handler
	window    time.Duration
	keepAlive time.Duration
	store     *eventStore

	mu       sync.Mutex
	posts    map[string]*post    // by token
	byStream map[streamKey]*post // by session and the SDK's stream id
	byCall   map[callKey]*post   // by session and JSON-RPC id
	// noReplay holds the streams of cancelled calls, never replayed, in the order they were
	// added (the oldest forgotten beyond maxNoReplay, or with their session).
	noReplay map[streamKey]bool
	replayed []streamKey
}

type streamKey struct{ session, stream string }

type callKey struct {
	session string
	id      jsonrpc.ID
}

// post is one POST that carried calls, from its arrival until its calls are answered (or
// cancelled) and no response serves its stream.
type post struct {
	token, session, stream string
	ids                    []jsonrpc.ID
	answered               int                 // handlers that returned
	running                map[*run]struct{}   // handlers running
	cancelled              map[jsonrpc.ID]bool // the client cancelled them (notifications/cancelled)
	gone                   bool                // dropped and not resumed: everything is cancelled
	attached               int                 // responses serving the stream (the POST, GETs resuming it)
	timer                  *time.Timer         // the resume window, while detached
	w                      *streamWriter       // the POST's response while it is served
	// endHolder ends the request of the response that holds the stream (the POST, or the
	// latest GET resuming it) as the SDK sees it, and held is closed once the SDK's handler
	// of that request returned: the SDK has released the stream (see serveResume).
	endHolder context.CancelCauseFunc
	held      chan struct{}
}

// run is one handler of a post's call.
type run struct{ cancel context.CancelCauseFunc }

func (p *post) done() bool { return p.answered >= len(p.ids) }

// newHTTPLayer returns the layer; Serve sets next, the SDK's handler.
func newHTTPLayer(window, keepAlive time.Duration) *httpLayer {
	l := &httpLayer{window: window, keepAlive: keepAlive,
		posts: map[string]*post{}, byStream: map[streamKey]*post{}, byCall: map[callKey]*post{}, noReplay: map[streamKey]bool{}}
	store := mcp.NewMemoryEventStore(nil)
	store.SetMaxBytes(maxStoredEvents)
	l.store = &eventStore{MemoryEventStore: store, l: l}
	return l
}

// tokenKey is the context key of a POST's token, for eventStore.Open.
type tokenKey struct{}

func (l *httpLayer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.Header.Del(streamHeader) // only this layer sets it
	session := r.Header.Get("Mcp-Session-Id")
	switch {
	case r.Method == http.MethodPost:
		l.servePOST(w, r, session)
	case r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "":
		l.serveResume(w, r, session)
	default:
		l.next.ServeHTTP(w, r)
	}
}

// servePOST reads the POST's messages (the SDK reads the same bytes after), applies the
// cancellations it carries, and tracks its calls while the SDK answers them.
func (l *httpLayer) servePOST(w http.ResponseWriter, r *http.Request, session string) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, mcp.DefaultMaxRequestBodyBytes))
	if err != nil {
		http.Error(w, "request body too large or unreadable", http.StatusRequestEntityTooLarge)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	calls, cancels := readMessages(body)
	for _, id := range cancels {
		l.cancelCall(session, id)
	}
	if len(calls) == 0 {
		l.next.ServeHTTP(w, r)
		return
	}
	held := make(chan struct{})
	dropped := r.Context()
	ctx, end := context.WithCancelCause(r.Context())
	defer end(nil)
	p := &post{token: rand.Text(), session: session, ids: calls, running: map[*run]struct{}{}, cancelled: map[jsonrpc.ID]bool{}, attached: 1,
		endHolder: end, held: held}
	sw := &streamWriter{ResponseWriter: w, post: p, layer: l}
	p.w = sw
	l.mu.Lock()
	l.posts[p.token] = p
	if session != "" {
		for _, id := range calls {
			l.byCall[callKey{session, id}] = p
		}
	}
	l.mu.Unlock()
	r.Header.Set(streamHeader, p.token)
	r = r.WithContext(context.WithValue(ctx, tokenKey{}, p.token))
	l.next.ServeHTTP(sw, r)
	sw.close()
	l.detach(p, dropped.Err() != nil || context.Cause(ctx) == errResumed, sw.refused())
	close(held) // after detach: a resumption that waits on it finds the stream free of this response
}

// errResumed ends a POST's request when a GET resumes its stream (serveResume).
var errResumed = errors.New("mcpbridge: the client resumed the stream on another request")

// serveResume serves a GET that resumes a stream (Last-Event-ID): while it does, the
// stream's call waits for its answer however long it takes.
//
// A client resumes a stream when it lost the response that carried it; the server may not
// have noticed yet — its handler of the POST still runs until net/http sees the connection
// closed, which a busy machine delays — and the SDK refuses a stream another request still
// holds ("409 stream ID conflicts with ongoing stream": it enforces one response per
// stream). So a resumption first ends the request of the response that holds the stream
// (the POST, or an earlier resumption: the client has given that response up), waits until
// the SDK's handler of it returned and released the stream, and holds it in its turn.
func (l *httpLayer) serveResume(w http.ResponseWriter, r *http.Request, session string) {
	stream, _, _ := strings.Cut(r.Header.Get("Last-Event-ID"), "_")
	ctx, end := context.WithCancelCause(r.Context())
	defer end(nil)
	held := make(chan struct{})
	defer close(held)
	l.mu.Lock()
	p := l.byStream[streamKey{session, stream}]
	var prev <-chan struct{}
	if p != nil {
		p.attached++
		if p.timer != nil {
			p.timer.Stop()
			p.timer = nil
		}
		p.endHolder(errResumed)
		prev, p.endHolder, p.held = p.held, end, held
	}
	l.mu.Unlock()
	if prev != nil {
		select {
		case <-prev:
		case <-ctx.Done(): // the resuming client went away too, or resumed again
			l.detach(p, true, false)
			return
		}
	}
	r = r.WithContext(ctx)
	live := false
	if p != nil {
		l.mu.Lock()
		// The SDK will take it (a stream no other response serves, whose call runs, that
		// may be replayed): its response can start at once.
		live = p.attached == 1 && !p.done() && !p.gone && !l.noReplay[streamKey{session, stream}]
		l.mu.Unlock()
	}
	sw := &streamWriter{ResponseWriter: w, post: p, layer: l, resume: true}
	if live {
		sw.commitResume()
	}
	l.next.ServeHTTP(sw, r)
	sw.close()
	if p != nil {
		l.detach(p, r.Context().Err() != nil, false)
	}
}

// detach ends one response's service of p's stream. When none serves it any more and a
// call is not answered: dropped (the client went away), the call waits the resume window,
// then is cancelled; otherwise (the SDK closed the stream) it goes on. A POST the SDK
// refused (an error status: its calls never run) is forgotten.
func (l *httpLayer) detach(p *post, dropped, refused bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p.attached--
	if p.attached > 0 {
		return
	}
	if p.done() || refused && len(p.running) == 0 && p.answered == 0 {
		l.forget(p)
		return
	}
	if dropped && !p.gone && p.timer == nil {
		p.timer = time.AfterFunc(l.window, func() { l.giveUp(p) })
	}
}

// giveUp cancels p's calls: its stream dropped and nobody resumed it.
func (l *httpLayer) giveUp(p *post) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p.timer = nil
	if p.attached > 0 || p.done() {
		return
	}
	p.gone = true
	l.refuseReplay(p)
	for r := range p.running {
		r.cancel(errStreamGone)
	}
}

// refuseReplay marks p's stream as never to be replayed. The caller holds l.mu.
func (l *httpLayer) refuseReplay(p *post) {
	if p.stream == "" {
		return // bindStream marks it when the stream opens
	}
	k := streamKey{p.session, p.stream}
	if l.noReplay[k] {
		return
	}
	if len(l.replayed) >= maxNoReplay {
		delete(l.noReplay, l.replayed[0])
		l.replayed = l.replayed[1:]
	}
	l.noReplay[k] = true
	l.replayed = append(l.replayed, k)
}

// cancelCall applies a client's notifications/cancelled to the POST that carried the call:
// its response is not written (the SDK cancels the handler itself), nor replayed.
func (l *httpLayer) cancelCall(session string, id jsonrpc.ID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p := l.byCall[callKey{session, id}]; p != nil && !p.done() {
		p.cancelled[id] = true
		l.refuseReplay(p)
	}
}

// forget drops p from the maps. The caller holds l.mu.
func (l *httpLayer) forget(p *post) {
	delete(l.posts, p.token)
	for _, id := range p.ids {
		if l.byCall[callKey{p.session, id}] == p {
			delete(l.byCall, callKey{p.session, id})
		}
	}
	if p.stream != "" && l.byStream[streamKey{p.session, p.stream}] == p {
		delete(l.byStream, streamKey{p.session, p.stream})
	}
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
}

// middleware is the server's receiving middleware: a call that came in a tagged POST runs
// with a context its stream can cancel, and its start sends the stream's headers.
func (l *httpLayer) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		extra := req.GetExtra()
		if extra == nil || extra.Header == nil || strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		token := extra.Header.Get(streamHeader)
		l.mu.Lock()
		p := l.posts[token]
		if p == nil {
			l.mu.Unlock()
			return next(ctx, method, req)
		}
		ctx, cancel := context.WithCancelCause(ctx)
		rn := &run{cancel: cancel}
		if p.gone {
			cancel(errStreamGone) // the stream dropped before the call started
		} else {
			p.running[rn] = struct{}{}
		}
		w := p.w
		l.mu.Unlock()
		if w != nil {
			w.commit()
		}
		defer func() {
			cancel(nil)
			l.mu.Lock()
			delete(p.running, rn)
			p.answered++
			if p.done() && p.attached == 0 {
				l.forget(p)
			}
			l.mu.Unlock()
		}()
		return next(ctx, method, req)
	}
}

// bindStream records the SDK's stream id of the POST tagged token (eventStore.Open).
func (l *httpLayer) bindStream(token, session, stream string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p := l.posts[token]; p != nil {
		p.stream = stream
		l.byStream[streamKey{session, stream}] = p
		if p.gone || len(p.cancelled) > 0 {
			l.refuseReplay(p)
		}
	}
}

// replayRefused reports whether a stream must not be replayed: a call of it was cancelled.
func (l *httpLayer) replayRefused(session, stream string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.noReplay[streamKey{session, stream}]
}

// sessionClosed forgets the posts of a closed session, cancelling what still runs.
func (l *httpLayer) sessionClosed(session string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range l.posts {
		if p.session == session {
			for r := range p.running {
				r.cancel(errStreamGone)
			}
			l.forget(p)
		}
	}
	kept := l.replayed[:0]
	for _, k := range l.replayed {
		if k.session == session {
			delete(l.noReplay, k)
		} else {
			kept = append(kept, k)
		}
	}
	l.replayed = kept
}

// readMessages returns the ids of the calls a POST body carries and the ids its
// notifications/cancelled name. A body that does not decode is left to the SDK.
func readMessages(body []byte) (calls, cancels []jsonrpc.ID) {
	raws := []jsontext.Value{body}
	if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 && trimmed[0] == '[' { // a batch (2025-03-26)
		if wire.Unmarshal(trimmed, &raws) != nil {
			return nil, nil
		}
	}
	for _, raw := range raws {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			continue
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			continue
		}
		switch {
		case req.IsCall():
			calls = append(calls, req.ID)
		case req.Method == "notifications/cancelled":
			var p struct {
				RequestID any `json:"requestId"`
			}
			if wire.Unmarshal(req.Params, &p) == nil {
				if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
					cancels = append(cancels, id)
				}
			}
		}
	}
	return calls, cancels
}

// eventStore is the SDK's bounded MemoryEventStore, told which POST opened each stream,
// refusing to replay a cancelled stream, and forgetting a closed session's posts.
type eventStore struct {
	*mcp.MemoryEventStore
	l *httpLayer
}

func (s *eventStore) Open(ctx context.Context, session, stream string) error {
	if token, ok := ctx.Value(tokenKey{}).(string); ok {
		s.l.bindStream(token, session, stream)
	}
	return s.MemoryEventStore.Open(ctx, session, stream)
}

func (s *eventStore) After(ctx context.Context, session, stream string, index int) iter.Seq2[[]byte, error] {
	if s.l.replayRefused(session, stream) {
		return func(yield func([]byte, error) bool) { yield(nil, mcp.ErrEventsPurged) }
	}
	return s.MemoryEventStore.After(ctx, session, stream, index)
}

func (s *eventStore) SessionClosed(ctx context.Context, session string) error {
	s.l.sessionClosed(session)
	return s.MemoryEventStore.SessionClosed(ctx, session)
}

// streamWriter is the response of a POST with calls, or of a GET resuming one: it sends the
// headers and an SSE comment once a call starts (commit), a comment every keep-alive
// interval, and drops the SDK's response to a call the client cancelled.
type streamWriter struct {
	http.ResponseWriter
	post   *post // nil for a GET resuming a stream this layer does not know
	layer  *httpLayer
	resume bool

	mu      sync.Mutex
	wrote   bool // the status line went out
	status  int
	closed  bool // the handler returned: nothing more may be written
	tick    *time.Timer
	started bool
}

// Header is the response's header map; it is taken under the writer's lock, as net/http's
// response keeps state of its own there that a keep-alive's write also touches.
func (w *streamWriter) Header() http.Header {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ResponseWriter.Header()
}

func (w *streamWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.wrote || w.closed {
		return
	}
	w.wrote, w.status = true, code
	w.ResponseWriter.WriteHeader(code)
}

func (w *streamWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, errWriterClosed
	}
	if w.dropped(b) {
		return len(b), nil
	}
	if !w.wrote {
		w.wrote, w.status = true, http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush flushes what was written (http.NewResponseController finds it).
func (w *streamWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		_ = http.NewResponseController(w.ResponseWriter).Flush()
	}
}

// Unwrap gives http.ResponseController the response underneath.
func (w *streamWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// dropped reports whether an SSE event the SDK writes answers a call the client cancelled
// (it is not sent: the client forgot the id). The caller holds w.mu.
func (w *streamWriter) dropped(event []byte) bool {
	if w.post == nil {
		return false
	}
	l := w.layer
	l.mu.Lock()
	cancelled := len(w.post.cancelled) > 0
	l.mu.Unlock()
	if !cancelled {
		return false
	}
	_, data, ok := bytes.Cut(event, []byte("\ndata: "))
	if !ok {
		data, ok = bytes.CutPrefix(event, []byte("data: "))
	}
	if !ok {
		return false
	}
	data, _, _ = bytes.Cut(data, []byte("\n"))
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return false
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return w.post.cancelled[resp.ID]
}

// commit sends the headers (the SDK has set them by the time a call starts) and a first
// SSE comment, so that a client sees its response start at once, then keeps the stream
// alive.
func (w *streamWriter) commit() {
	w.comment("ok")
	w.startKeepAlive()
}

// comment writes an SSE comment (ignored by every client), the status line first if it
// has not gone out. Nothing is written on a response that is not a 200 stream.
func (w *streamWriter) comment(text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.wrote && w.status != http.StatusOK {
		return
	}
	if !w.wrote {
		// The headers are read once, before they go out: a POST's were set by the SDK before
		// its call started (commit runs then); a resumption commits itself (commitResume).
		if w.resume || !strings.HasPrefix(w.ResponseWriter.Header().Get("Content-Type"), "text/event-stream") {
			return // not (yet) a stream: a JSON answer, or an error coming
		}
		w.wrote, w.status = true, http.StatusOK
		w.ResponseWriter.WriteHeader(http.StatusOK)
	}
	_, _ = io.WriteString(w.ResponseWriter, ": "+text+"\n\n")
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// commitResume starts the response of a GET resuming a live stream, before the SDK serves
// it: the headers the SDK would set (it sets them again, to no effect), a first comment,
// the keep-alive. The SDK writes the replayed events and the answer after.
func (w *streamWriter) commitResume() {
	w.mu.Lock()
	h := w.ResponseWriter.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Connection", "keep-alive")
	w.wrote, w.status = true, http.StatusOK
	w.ResponseWriter.WriteHeader(http.StatusOK)
	w.mu.Unlock()
	w.comment("ok")
	w.startKeepAlive()
}

// startKeepAlive writes a comment every keep-alive interval until the handler returns.
func (w *streamWriter) startKeepAlive() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.started || w.closed || w.layer.keepAlive <= 0 {
		return
	}
	w.started = true
	tick := func() {
		w.comment("keep-alive")
		w.mu.Lock()
		defer w.mu.Unlock()
		if !w.closed {
			w.tick.Reset(w.layer.keepAlive)
		}
	}
	w.tick = time.AfterFunc(w.layer.keepAlive, tick)
}

// refused reports whether the response was an error status (the SDK refused the request).
func (w *streamWriter) refused() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.wrote && w.status >= 300
}

// close ends the writer when the handler returns: net/http owns the response after.
func (w *streamWriter) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if w.tick != nil {
		w.tick.Stop()
	}
	if w.post != nil && w.post.w == w {
		w.layer.mu.Lock()
		w.post.w = nil
		w.layer.mu.Unlock()
	}
}
