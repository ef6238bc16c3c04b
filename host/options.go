package host

import (
	"log/slog"
	"os"
	"time"

	"github.com/ansight-go/ansight/host/tools"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/session"
)

// Defaults of Options.
const (
	DefaultDiscoveryAddr = "127.0.0.1:45123"
	DefaultListenAddr    = "127.0.0.1:0"
	// The LAN defaults listen on every address, IPv6 and IPv4 alike (one dual-stack socket;
	// IPv4 only where the system has no IPv6), as the official host does.
	DefaultLANDiscoveryAddr = "[::]:45123"
	DefaultLANListenAddr    = "[::]:0"

	// DefaultTokenTTL is how long a WebSocket token from an accepted enrollment stays valid.
	DefaultTokenTTL = 2 * time.Minute
	// DefaultHandshakeTimeout bounds reading an upgrade request's headers.
	DefaultHandshakeTimeout = 10 * time.Second
	// DefaultMaxHeaderBytes bounds an upgrade request's headers (the reference uses 16 KiB).
	DefaultMaxHeaderBytes = 16 << 10
	// DefaultMaxSessions bounds concurrently connected sessions.
	DefaultMaxSessions = 64
	// DefaultMaxTokens bounds WebSocket tokens issued and not yet used or expired; each
	// grant holds at most 4 of them.
	DefaultMaxTokens = 256
	// DefaultMaxRetained bounds disconnected sessions kept for resumption and inspection.
	DefaultMaxRetained = 64
	// DefaultMaxLocalGrants bounds the local-mode grants the pairing store keeps.
	DefaultMaxLocalGrants = 512
	// DefaultEnrollmentBurst and DefaultEnrollmentInterval shape the per-sender enrollment
	// rate: a burst of this many datagrams, then one per interval. The SDKs probe every 5 s.
	DefaultEnrollmentBurst    = 10
	DefaultEnrollmentInterval = time.Second
	// DefaultEnrollmentReadBuffer is the receive buffer asked for the enrollment socket
	// (SO_RCVBUF): with the enrollment reader it keeps a burst of thousands of datagrams
	// from being dropped by the kernel. The system may grant less (on Linux at most
	// net.core.rmem_max, doubled for bookkeeping); EnrollmentStats says what it granted.
	DefaultEnrollmentReadBuffer = 4 << 20
	// DefaultControlWriteTimeout bounds writing one control response.
	DefaultControlWriteTimeout = 10 * time.Second
	// DefaultKeepAliveInterval is the ping interval that detects dead peers.
	DefaultKeepAliveInterval = 30 * time.Second
)

// Options configures a Server. The zero value serves loopback only, keeps pairing state in
// memory and uses the defaults above.
type Options struct {
	// DiscoveryAddr is the UDP enrollment address (DefaultDiscoveryAddr, or
	// DefaultLANDiscoveryAddr with LAN).
	DiscoveryAddr string
	// ListenAddr is the WebSocket listener's address (DefaultListenAddr, or
	// DefaultLANListenAddr with LAN). One listener serves every session on path /ws. An
	// unspecified IPv6 address ("[::]") listens dual-stack, and falls back to "0.0.0.0"
	// where the system has no IPv6.
	ListenAddr string
	// WebSocketPorts, when set, pins the WebSocket listener's port: it binds the first
	// free port of the range on ListenAddr's host (whose port must then be 0), so that
	// firewall rules can name it. OfficialWebSocketPorts is the official host's range.
	WebSocketPorts PortRange
	// LAN allows non-loopback addresses, so that phones on the network can connect. Without
	// it, Start refuses non-loopback addresses and the upgrade handler also refuses a Host
	// header that is not a loopback name (DNS rebinding).
	LAN bool
	// AdvertiseAddrs are the addresses put in invite documents' discovery hints. When empty:
	// the machine's non-loopback IPv4 addresses with LAN, 127.0.0.1 without.
	AdvertiseAddrs []string
	// StateDir holds the pairing store (pairing.json, mode 0600). A missing directory is
	// created with mode 0700; an existing one that other users can write to (/tmp) is
	// refused, and no existing directory's mode is changed. Empty keeps grants and invites
	// in memory only.
	StateDir string
	// HostName is sent in enrollment results and invites (os.Hostname when empty).
	HostName string

	// TokenTTL is the validity of a WebSocket token (DefaultTokenTTL).
	TokenTTL time.Duration
	// HandshakeTimeout bounds reading the upgrade request headers (DefaultHandshakeTimeout).
	HandshakeTimeout time.Duration
	// MaxHeaderBytes bounds the upgrade request headers (DefaultMaxHeaderBytes).
	MaxHeaderBytes int
	// MaxMessageBytes bounds one WebSocket message, text or binary
	// (transport.DefaultReadLimit). A larger message closes the connection with 1009.
	MaxMessageBytes int64
	// MaxSessions bounds connected sessions (DefaultMaxSessions). One grant holds at most
	// 4; when the table is full, a newcomer displaces a session that has no call running:
	// one never called before one called, of an app over its share first, else the least
	// recently used (see budget.go); when every session has a call running, the upgrade
	// gets 503.
	MaxSessions int
	// MaxTokens bounds outstanding WebSocket tokens (DefaultMaxTokens). An enrollment
	// beyond drops the oldest unused token (and a grant's fifth drops that grant's
	// oldest): the newest enrollment always gets its token.
	MaxTokens int
	// MaxRetained bounds disconnected sessions kept in the registry (DefaultMaxRetained).
	MaxRetained int
	// MaxLocalGrants bounds the local-mode grants kept (DefaultMaxLocalGrants). A new one
	// beyond prunes a grant that was never used to connect, the oldest first, else the one
	// used least recently; grants with a live session and revoked ones are kept. A pruned
	// grant is made again on its app's next connection (trust on first use).
	MaxLocalGrants int
	// EnrollmentBurst and EnrollmentInterval rate-limit datagrams per sender, that is per
	// source address and port (DefaultEnrollmentBurst, DefaultEnrollmentInterval); a source
	// address that is not loopback also shares 16 senders' budgets among its ports.
	// Datagrams over the limit are dropped unanswered.
	EnrollmentBurst    int
	EnrollmentInterval time.Duration
	// EnrollmentReadBuffer is the receive buffer asked for the enrollment socket, in bytes
	// (DefaultEnrollmentReadBuffer; negative: the system's default).
	EnrollmentReadBuffer int
	// KeepAlive pings each connection (DefaultKeepAliveInterval; a negative Interval
	// disables pings). Its Busy is set by the server: a session waiting for the app's
	// answer to a tool request is never dropped for missing pongs; a session silent for
	// Interval+Timeout with nothing pending is (see transport.KeepAlive).
	KeepAlive transport.KeepAlive

	// Tools is the template for each session's tool client. SessionID and MaxToolPolicy are
	// set per session from the session id and the grant; a non-empty ArtifactDir gets the
	// session id appended, one directory per session. That session directory also keeps
	// the crash reports and annotations the app hands over (a temporary directory does
	// when ArtifactDir is empty); see Server.Crashes.
	Tools tools.Options
	// Records bounds the crash reports and annotations kept per session.
	Records RecordLimits

	// OnFrame, when set, receives every live screenshot frame (ASJP) an app streams, with
	// its session id; malformed frames are dropped. It runs on the session's reader
	// goroutine and must return quickly. The frame's JPEG is not reused by the server.
	OnFrame func(sessionID string, f wire.ASJPFrame)

	// Recorder, when set, keeps session recordings: it is given every message the server
	// does not consume (telemetry, live frames), every control request with its answer,
	// every session change and the tool traffic (see Recorder).
	Recorder Recorder
	// JpegCapture is the live-screen policy answered to device.profile (sessionJpegCapture).
	// The zero value asks the app to stream its own frames (mode "app") every
	// DefaultJpegIntervalMilliseconds at DefaultJpegQuality; this host captures none itself.
	// New refuses an interval or a quality out of range (MinJpegIntervalMilliseconds to
	// MaxJpegIntervalMilliseconds, MinJpegQuality to MaxJpegQuality); zero takes the default.
	JpegCapture session.JpegCapturePolicy

	// Tap, when set, is offered every inbound message of every session before anything
	// else; returning true consumes it. It exists for tools that speak the tool protocol
	// themselves, such as the conformance suite (with Session.Send). It runs on the
	// session's reader goroutine and must return quickly.
	Tap func(s *Session, typ transport.MessageType, data []byte) bool

	// WrapConn, when set, wraps every accepted connection before the session uses it: a
	// seam for fault injection in tests (transport/faultconn) and for instrumentation.
	WrapConn func(transport.Conn) transport.Conn

	// Logger receives the server's logs (discarded when nil). Tokens are never logged.
	Logger *slog.Logger
	// Clock gives the time for expiries and rate limits (time.Now when nil).
	Clock func() time.Time
}

func (o Options) withDefaults() Options {
	if o.DiscoveryAddr == "" {
		o.DiscoveryAddr = DefaultDiscoveryAddr
		if o.LAN {
			o.DiscoveryAddr = DefaultLANDiscoveryAddr
		}
	}
	if o.ListenAddr == "" {
		o.ListenAddr = DefaultListenAddr
		if o.LAN {
			o.ListenAddr = DefaultLANListenAddr
		}
	}
	if o.HostName == "" {
		o.HostName, _ = os.Hostname()
		if o.HostName == "" {
			o.HostName = "ansight-host"
		}
	}
	setDefault(&o.TokenTTL, DefaultTokenTTL)
	setDefault(&o.HandshakeTimeout, DefaultHandshakeTimeout)
	setDefault(&o.MaxHeaderBytes, DefaultMaxHeaderBytes)
	setDefault(&o.MaxMessageBytes, transport.DefaultReadLimit)
	setDefault(&o.MaxSessions, DefaultMaxSessions)
	setDefault(&o.MaxTokens, DefaultMaxTokens)
	setDefault(&o.MaxRetained, DefaultMaxRetained)
	setDefault(&o.MaxLocalGrants, DefaultMaxLocalGrants)
	setDefault(&o.EnrollmentBurst, DefaultEnrollmentBurst)
	setDefault(&o.EnrollmentInterval, DefaultEnrollmentInterval)
	if o.EnrollmentReadBuffer == 0 {
		o.EnrollmentReadBuffer = DefaultEnrollmentReadBuffer
	}
	if o.KeepAlive.Interval == 0 {
		o.KeepAlive.Interval = DefaultKeepAliveInterval
	} else if o.KeepAlive.Interval < 0 {
		o.KeepAlive = transport.KeepAlive{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	return o
}

func setDefault[T int | int64 | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}
