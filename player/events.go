package player

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// Server-sent event names.
const (
	eventSessions = "sessions" // data: hostapi.Sessions
	eventTraffic  = "traffic"  // data: TrafficEntry
	eventFrame    = "frame"    // data: FrameInfo
)

// subscriberBuffer bounds the events queued for one page. A page that falls further
// behind is disconnected; its EventSource reconnects and starts from a fresh snapshot.
const subscriberBuffer = 256

// keepAliveEvery sends an SSE comment so that a vanished page is noticed.
const keepAliveEvery = 20 * time.Second

type sseEvent struct {
	name string
	data []byte
}

// hub fans events out to the pages' streams without ever blocking the publisher.
type hub struct {
	mu     sync.Mutex
	subs   map[*subscriber]struct{}
	closed bool
}

type subscriber struct {
	ch   chan sseEvent
	gone chan struct{} // closed when dropped (lagging) or the hub closed
	once sync.Once
}

func (s *subscriber) drop() { s.once.Do(func() { close(s.gone) }) }

func newHub() *hub { return &hub{subs: map[*subscriber]struct{}{}} }

// subscribe returns nil once the hub is closed.
func (h *hub) subscribe() *subscriber {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	s := &subscriber{ch: make(chan sseEvent, subscriberBuffer), gone: make(chan struct{})}
	h.subs[s] = struct{}{}
	return s
}

func (h *hub) unsubscribe(s *subscriber) {
	h.mu.Lock()
	delete(h.subs, s)
	h.mu.Unlock()
	s.drop()
}

func (h *hub) publish(name string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		return
	}
	ev := sseEvent{name, data}
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		select {
		case s.ch <- ev:
		default:
			delete(h.subs, s)
			s.drop()
		}
	}
}

// dropAll ends every page's stream; the pages connect again (or are refused).
func (h *hub) dropAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		s.drop()
	}
	h.subs = map[*subscriber]struct{}{}
}

func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.subs {
		s.drop()
	}
	h.subs = map[*subscriber]struct{}{}
}

// follow follows the backend's session events: each one asks for the session list to be
// published again, and a removed session is forgotten. When the events end before Close (a
// host over its socket that restarts), the player follows them again after a pause.
func (p *Player) follow(ctx context.Context) {
	defer p.watchWG.Done()
	for {
		err := p.backend.Events(ctx, func(ev hostapi.Event) error {
			if ev.Kind == hostapi.EventRemoved {
				p.forget(ev.SessionID)
			}
			p.markDirty()
			return nil
		})
		if ctx.Err() != nil {
			return
		}
		p.opts.Logger.Debug("player: session events ended", "err", err)
		p.markDirty()
		t := time.NewTimer(eventsRetry)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// eventsRetry is the pause before following the backend's events again.
const eventsRetry = time.Second

// watch republishes the session list whenever it may have changed (a session event, or
// traffic that shows a new catalog), until Close.
func (p *Player) watch() {
	defer p.watchWG.Done()
	for {
		select {
		case <-p.stop:
			return
		case <-p.dirty:
		}
		p.publishSessions()
	}
}

func (p *Player) publishSessions() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	list, err := p.backend.Sessions(ctx)
	if err != nil {
		p.opts.Logger.Debug("player: list sessions", "err", err)
		return
	}
	p.hub.publish(eventSessions, list)
}

// markDirty asks the watcher to republish the session list, without blocking.
func (p *Player) markDirty() {
	select {
	case p.dirty <- struct{}{}:
	default:
	}
}

// events streams server-sent events: the session list and the latest live frames at
// once, then every change, traffic entry and live frame.
func (p *Player) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, wire.CodeInternal, "streaming is not supported")
		return
	}
	sub := p.hub.subscribe()
	if sub == nil {
		writeError(w, http.StatusServiceUnavailable, "closed", "the player is shutting down")
		return
	}
	defer p.hub.unsubscribe(sub)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	list, err := p.backend.Sessions(r.Context())
	if err != nil {
		return
	}
	first, _ := json.Marshal(list)
	if writeEvent(w, sseEvent{eventSessions, first}, "retry: 2000\n") != nil {
		return
	}
	for _, f := range p.latestFrames() {
		data, _ := json.Marshal(f)
		if writeEvent(w, sseEvent{eventFrame, data}, "") != nil {
			return
		}
	}
	flusher.Flush()
	tick := time.NewTicker(keepAliveEvery)
	defer tick.Stop()
	for {
		var err error
		select {
		case <-r.Context().Done():
			return
		case <-sub.gone:
			return
		case <-tick.C:
			_, err = w.Write([]byte(": keep-alive\n\n"))
		case ev := <-sub.ch:
			err = writeEvent(w, ev, "")
		}
		if err != nil {
			return
		}
		flusher.Flush()
	}
}

// writeEvent writes one event; data is one line of compact JSON.
func writeEvent(w http.ResponseWriter, ev sseEvent, prefix string) error {
	b := make([]byte, 0, len(prefix)+len(ev.name)+len(ev.data)+16)
	b = append(b, prefix...)
	b = append(b, "event: "...)
	b = append(b, ev.name...)
	b = append(b, "\ndata: "...)
	b = append(b, ev.data...)
	b = append(b, "\n\n"...)
	_, err := w.Write(b)
	return err
}
