package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/ansight-go/ansight/internal/fanout"
	"github.com/ansight-go/ansight/transport"
)

// ErrServerClosed is the cause given to sessions' tool clients when the server closes, and
// returned by Start on a closed server.
var ErrServerClosed = errors.New("host: server closed")

// ErrReplaced is the cause given to a connection's pending requests when a newer
// connection of the same app process replaces it.
var ErrReplaced = errors.New("host: the session was replaced by a newer WebSocket connection")

// Server is the session host. Create it with New, then Start it; Close stops it. The
// pairing API (IssueInvite, ListInvites, Grants, Revoke) works before Start.
type Server struct {
	opts Options
	log  *slog.Logger

	mu       sync.Mutex // guards everything below, up to the sockets
	store    *store
	records  *records
	tickets  ticketTable // by pairing.HashToken(token)
	sessions map[string]*Session
	// resumable indexes sessions by what a reconnection must match (resumableLocked).
	resumable map[resumeKey]*Session
	nextSeq   int
	// upgrading holds the tickets of upgrades admitted for a new connected session that
	// have not attached yet: they hold a place in the session budget while the handshake
	// runs.
	upgrading map[*ticket]bool
	// occupied counts connected sessions and upgrading, in all and per grant.
	occupied  occupancy
	saveTimer *time.Timer    // a pending saveSoonLocked
	saving    sync.WaitGroup // its write, once under way
	started   bool
	closed    bool

	udp      *net.UDPConn
	listener net.Listener
	httpSrv  *http.Server
	udpAddr  netip.AddrPort
	wsAddr   netip.AddrPort

	ctx       context.Context // ends at Close; bounds every connection
	cancel    context.CancelFunc
	stopWatch func() bool
	wg        sync.WaitGroup

	events fanout.Hub[Event] // session changes, to Subscribe's channels

	// fileLimit is the open-file limit Start found and raised.
	fileLimit FileLimit

	// limiter and enrollStats are the enrollment reader's, with locks of their own.
	limiter     *enrollLimiter
	enrollStats enrollCounters

	// profileReply is the device.profile answer's payload (Options.JpegCapture).
	profileReply []byte
}

// New checks opts and opens the pairing store. It binds nothing: see Start.
func New(opts Options) (*Server, error) {
	opts = opts.withDefaults()
	if !opts.LAN {
		for _, a := range []string{opts.DiscoveryAddr, opts.ListenAddr} {
			if err := requireLoopback(a); err != nil {
				return nil, err
			}
		}
	}
	if err := opts.WebSocketPorts.check(); err != nil {
		return nil, err
	}
	if err := checkJpegCapture(opts.JpegCapture); err != nil {
		return nil, err
	}
	if _, port, _ := net.SplitHostPort(opts.ListenAddr); !opts.WebSocketPorts.IsZero() && port != "0" {
		return nil, fmt.Errorf("host: listen address %q has a port and WebSocketPorts is set: give one of them", opts.ListenAddr)
	}
	st, err := openStore(opts.StateDir)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{
		opts:      opts,
		log:       opts.Logger,
		store:     st,
		records:   newRecords(opts.Tools.ArtifactDir, opts.Records),
		tickets:   newTicketTable(),
		sessions:  make(map[string]*Session),
		resumable: make(map[resumeKey]*Session),
		upgrading: make(map[*ticket]bool),
		occupied:  occupancy{ofGrant: make(map[string]int)},
		limiter:   newEnrollLimiter(opts.EnrollmentBurst, opts.EnrollmentInterval),
		ctx:       ctx,
		cancel:    cancel,

		profileReply: deviceProfileReply(opts.JpegCapture),
	}, nil
}

func requireLoopback(addr string) error {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("host: address %q: %w", addr, err)
	}
	if h == "localhost" {
		return nil
	}
	ip, err := netip.ParseAddr(h)
	if err != nil || !isLoopback(ip) {
		return fmt.Errorf("host: address %q is not loopback; set Options.LAN to serve the network", addr)
	}
	return nil
}

// Start binds the UDP enrollment socket and the WebSocket listener and starts serving.
// The server stops when ctx ends or Close is called.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrServerClosed
	}
	if s.started {
		return errors.New("host: server already started")
	}
	s.checkFileLimitLocked()
	udp, err := s.listenDiscovery()
	if err != nil {
		return fmt.Errorf("host: enrollment socket: %w", err)
	}
	ln, err := s.listenWebSocket()
	if err != nil {
		udp.Close()
		return fmt.Errorf("host: WebSocket listener: %w", err)
	}
	s.udp, s.listener = udp, ln
	s.udpAddr = udp.LocalAddr().(*net.UDPAddr).AddrPort()
	s.wsAddr = ln.Addr().(*net.TCPAddr).AddrPort()
	s.httpSrv = &http.Server{
		Handler:           http.HandlerFunc(s.serveUpgrade),
		ReadHeaderTimeout: s.opts.HandshakeTimeout,
		ReadTimeout:       s.opts.HandshakeTimeout,
		MaxHeaderBytes:    s.opts.MaxHeaderBytes,
		IdleTimeout:       s.opts.HandshakeTimeout,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		BaseContext:       func(net.Listener) context.Context { return s.ctx },
	}
	s.started = true
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		s.serveEnrollment(udp)
	}()
	go func() {
		defer s.wg.Done()
		if err := s.httpSrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("host: WebSocket listener failed", "err", err)
		}
	}()
	s.stopWatch = context.AfterFunc(ctx, func() { s.Close() })
	s.log.Info("host: serving", "discovery", s.udpAddr.String(), "websocket", s.wsAddr.String(), "lan", s.opts.LAN,
		"dualStack", DualStack(s.wsAddr), "files", s.fileLimit.String(), "enrollment", s.enrollStats.buffer.ReceiveBufferText())
	return nil
}

// DiscoveryAddr is the bound UDP enrollment address (valid after Start).
func (s *Server) DiscoveryAddr() netip.AddrPort {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.udpAddr
}

// WebSocketAddr is the bound WebSocket listener address (valid after Start).
func (s *Server) WebSocketAddr() netip.AddrPort {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wsAddr
}

// WebSocketPorts is the range the WebSocket listener's port was taken from (zero when
// none was set).
func (s *Server) WebSocketPorts() PortRange { return s.opts.WebSocketPorts }

// HostID is this host's persistent identity, sent in enrollment results and invites.
func (s *Server) HostID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.store.data.HostID
}

// Close stops serving: sockets are closed, every connection is closed with 1001 and every
// pending tool request fails with ErrServerClosed. It waits for all goroutines and is safe
// to call more than once.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.flushLocked()
	var conns []*connection
	for _, sess := range s.sessions {
		if c := sess.current(); c != nil {
			conns = append(conns, c)
		}
	}
	s.mu.Unlock()
	if s.stopWatch != nil {
		s.stopWatch()
	}
	var err error
	if s.udp != nil {
		s.udp.Close()
	}
	if s.httpSrv != nil {
		err = s.httpSrv.Close()
	}
	// Close the connections before cancelling the server context, so that apps get a
	// proper 1001 rather than a dropped socket; in parallel, as each close handshake may
	// wait for a slow peer.
	var closing sync.WaitGroup
	for _, c := range conns {
		c.client.Close(ErrServerClosed)
		closing.Go(func() { c.conn.Close(transport.StatusGoingAway, "Host shutting down.") })
	}
	closing.Wait()
	s.cancel()
	s.wg.Wait()
	s.saving.Wait() // a delayed store write under way when flushLocked ran
	s.events.Close()
	return err
}

func (s *Server) now() time.Time { return s.opts.Clock() }
