package player

import (
	"context"
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
	"sync/atomic"

	"github.com/ansight-go/ansight/hostapi"
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
	// Token is the access token (printed in the URL; never logged). A random one is made
	// when empty; SetToken replaces it.
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
// over a hostapi.Backend, with live updates from the host. Feed it the host's traffic
// (OnTraffic) and live frames (OnFrame); Close ends its live streams.
type Player struct {
	backend hostapi.Backend
	opts    Options
	keys    atomic.Pointer[keys] // the access token and the CSRF token made from it
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
	unwatch context.CancelFunc    // ends the following of the backend's events
	watchWG sync.WaitGroup
	closed  bool
}

// New returns a player over backend: a host's (package host/control), a resident host's
// over its socket (hostapi.Client) or a fleet's (package fleet). The player follows the
// backend's session events at once and until Close.
func New(backend hostapi.Backend, opts Options) (*Player, error) {
	if backend == nil {
		return nil, errors.New("player: a backend is required")
	}
	if opts.TrafficPerSession <= 0 {
		opts.TrafficPerSession = DefaultTrafficPerSession
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	token := opts.Token
	if token == "" {
		token = NewToken()
	}
	index, err := template.ParseFS(webFS, "web/index.html")
	if err != nil {
		return nil, fmt.Errorf("player: page template: %w", err)
	}
	p := &Player{
		backend: backend, opts: opts,
		index: index, hub: newHub(), traffic: map[string]*ring{}, frames: map[string]*liveFrame{},
		dirty: make(chan struct{}, 1), stop: make(chan struct{}),
	}
	p.SetToken(token)
	p.routes()
	ctx, unwatch := context.WithCancel(context.Background())
	p.unwatch = unwatch
	p.watchWG.Add(2)
	go p.follow(ctx)
	go p.watch()
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
	p.unwatch()
	p.hub.close()
	p.watchWG.Wait()
	return nil
}

// keys are the secrets of one access token.
type keys struct {
	token string
	csrf  string // the pages' CSRF token, an HMAC of the access token
}

// NewToken returns a new random access token (32 bytes, base64url).
func NewToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand contract)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// SetToken replaces the access token: pages opened with the old one are refused from then
// on (their cookie and CSRF token no longer match) and told how to get in again.
func (p *Player) SetToken(token string) {
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write([]byte("ansight player csrf"))
	old := p.keys.Swap(&keys{token: token, csrf: hex.EncodeToString(mac.Sum(nil))})
	if old != nil && old.token != token {
		p.hub.dropAll() // open pages reconnect, are refused, and say so
	}
}

// URL is the address to open in a browser: the player at addr with its access token.
func (p *Player) URL(addr string) string {
	return "http://" + addr + "/?token=" + url.QueryEscape(p.keys.Load().token)
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
