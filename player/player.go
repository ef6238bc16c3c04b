package player

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sync"

	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/internal/control"
)

// DefaultAddr is where the player listens unless told otherwise.
const DefaultAddr = "127.0.0.1:47231"

// Defaults of Options.
const (
	// DefaultTrafficPerSession bounds the traffic log kept for each session.
	DefaultTrafficPerSession = 2000
	// maxTracked bounds the sessions whose traffic and latest frame are kept (sessions the
	// host evicted are forgotten at once; this only guards against missed events).
	maxTracked = 256
)

// Options configures a Player.
type Options struct {
	// Token is the access token of this run (printed in the URL; never logged). A random
	// one is made when empty.
	Token string
	// ArtifactDir is where the host saves artifacts (tools.Options.ArtifactDir); the
	// player serves files from under it and nowhere else. Empty: no artifacts are served.
	ArtifactDir string
	// TrafficPerSession bounds each session's traffic log (DefaultTrafficPerSession).
	TrafficPerSession int
	// Version is shown in the page footer.
	Version string
	// Logger receives the player's logs (discarded when nil).
	Logger *slog.Logger
}

// Player is the local web console: an http.Handler serving the embedded page and its API
// over a control.Backend, with live updates from the host. Feed it the host's traffic
// (OnTraffic) and live frames (OnFrame); Close ends its live streams.
type Player struct {
	backend control.Backend
	srv     Events
	opts    Options
	token   string
	csrf    string
	mux     *http.ServeMux
	index   *template.Template
	hub     *hub

	mu      sync.Mutex
	traffic map[string]*ring      // session id → traffic log
	frames  map[string]*liveFrame // session id → latest live frame
	order   []string              // tracked session ids, oldest first (eviction)
	seq     int64                 // last traffic or frame sequence number
	dirty   chan struct{}         // asks the watcher to republish sessions
	stop    chan struct{}         // closed by Close
	watchWG sync.WaitGroup
	closed  bool
}

// Events are the session changes the player follows: a *host.Server, or a fleet's
// client (package fleet) for a player that shows a device lab.
type Events interface {
	Subscribe(buffer int) (<-chan host.Event, func())
}

// New returns a player over backend. srv gives the live session events; the player
// subscribes at once and until Close.
func New(backend control.Backend, srv Events, opts Options) (*Player, error) {
	if backend == nil || srv == nil {
		return nil, errors.New("player: a backend and a source of session events are required")
	}
	if opts.TrafficPerSession <= 0 {
		opts.TrafficPerSession = DefaultTrafficPerSession
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	token := opts.Token
	if token == "" {
		var b [32]byte
		_, _ = rand.Read(b[:]) // never fails (crypto/rand contract)
		token = base64.RawURLEncoding.EncodeToString(b[:])
	}
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write([]byte("ansight player csrf"))
	index, err := template.ParseFS(webFS, "web/index.html")
	if err != nil {
		return nil, fmt.Errorf("player: page template: %w", err)
	}
	p := &Player{
		backend: backend, srv: srv, opts: opts, token: token, csrf: hex.EncodeToString(mac.Sum(nil)),
		index: index, hub: newHub(), traffic: map[string]*ring{}, frames: map[string]*liveFrame{},
		dirty: make(chan struct{}, 1), stop: make(chan struct{}),
	}
	p.routes()
	events, unsubscribe := srv.Subscribe(64)
	p.watchWG.Add(1)
	go p.watch(events, unsubscribe)
	return p, nil
}

// Close ends the live streams and the subscription to the host. The handler keeps
// answering plain requests.
func (p *Player) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	close(p.stop)
	p.hub.close()
	p.watchWG.Wait()
	return nil
}

// URL is the address to open in a browser: the player at addr with this run's token.
func (p *Player) URL(addr string) string {
	return "http://" + addr + "/?token=" + url.QueryEscape(p.token)
}

// Listen listens on addr for the player, which must be a loopback address: the player
// drives apps and must never be reachable from the network.
func Listen(addr string) (net.Listener, error) {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("player: address %q: %w", addr, err)
	}
	if h != "localhost" {
		ip, err := netip.ParseAddr(h)
		if err != nil || !ip.IsLoopback() {
			return nil, fmt.Errorf("player: address %q is not a loopback address (the player serves this machine only)", addr)
		}
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("player: %w", err)
	}
	return l, nil
}
