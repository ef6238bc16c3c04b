package connect

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/ansight-go/ansight/app/telemetry"
	"github.com/ansight-go/ansight/pairing"
	"github.com/ansight-go/ansight/transport"
)

// Mode selects how the app finds and authenticates to a host.
type Mode string

// Connect modes.
const (
	// ModeLocal enrolls with a host on the same machine (loopback by default) using the
	// app's own token, which the host trusts on first use. The default.
	ModeLocal Mode = "local"
	// ModeInvite enrolls with the secret of an invite the host issued (Options.Invite), at
	// the host addresses the invite lists.
	ModeInvite Mode = "invite"
	// ModeDirect skips enrollment and opens Options.URL with Options.Token, for embedding
	// and tests.
	ModeDirect Mode = "direct"
)

// Options configures [Run] and [Dial]. Only AppID is required; the zero value of every
// other field selects the default documented on it.
type Options struct {
	// AppID is the app's real package or bundle id, e.g. "com.example.notes". Required.
	AppID string
	// AppName and AppVersion describe the app in its device profile.
	AppName, AppVersion string
	// DeviceName labels this installation on the host. Default: the machine's host name.
	DeviceName string

	// Mode is ModeLocal (default), ModeInvite or ModeDirect.
	Mode Mode
	// HostAddress is the only host address tried. Default: 127.0.0.1 in local mode, the
	// invite's addresses in invite mode. Not used in direct mode.
	HostAddress string
	// DiscoveryPorts are the host's UDP enrollment ports, tried in order. Default: 45123 then
	// 46123 in local mode, the invite's port in invite mode.
	DiscoveryPorts []int
	// Invite is an "ans2:" code, an invite document's JSON or a bare invite's JSON
	// (ModeInvite only).
	Invite string
	// URL (ws:// or wss://, no token in it) and Token are the endpoint of ModeDirect.
	URL, Token string

	// StateDir keeps this app's device id and local token (directory 0700, files 0600).
	// Default: <os.UserConfigDir()>/ansight/<AppID>.
	StateDir string
	// Logger receives connection events; tokens are never logged. Default: discard.
	Logger *slog.Logger
	// OnState, if set, is called on every change of the connection state, from the
	// goroutine running Run. It must return quickly.
	OnState func(StateChange)

	// EnrollTimeout is how long to wait for an answer from each host candidate. Default:
	// 1 s in local mode, 5 s in invite mode (the official SDKs' values).
	EnrollTimeout time.Duration
	// DialTimeout bounds the WebSocket handshake. Default: 10 s.
	DialTimeout time.Duration
	// ControlTimeout is how long a control request may stay unanswered before the session
	// is dropped. Default: 15 s (the official SDKs' value for session.open).
	ControlTimeout time.Duration
	// WrapConn, when set, wraps every WebSocket connection before the session uses it: a
	// seam for fault injection in tests (transport/faultconn) and for instrumentation.
	WrapConn func(transport.Conn) transport.Conn
	// Telemetry, when set, is attached to every session once its handshake is done: it
	// sends the app's logs, HTTP request metadata, runtime metrics and, when the host asks
	// for app capture, its screen (see package telemetry).
	Telemetry *telemetry.Telemetry
	// ReconnectDelay is the first delay before reconnecting (default 1 s); delays double up
	// to MaxReconnectDelay (default 30 s), with jitter.
	ReconnectDelay, MaxReconnectDelay time.Duration
}

// State is a step of the connection life cycle reported to Options.OnState.
type State int

// Connection states.
const (
	// StateConnecting: an attempt (enrollment, upgrade, handshake) has started.
	StateConnecting State = iota + 1
	// StateConnected: the host acknowledged session.open, device.profile and app.state;
	// tool requests are being served.
	StateConnected
	// StateDisconnected: an attempt failed or a session ended; Err says why (nil on a clean
	// stop).
	StateDisconnected
)

// String returns "connecting", "connected" or "disconnected".
func (s State) String() string {
	switch s {
	case StateConnecting:
		return "connecting"
	case StateConnected:
		return "connected"
	case StateDisconnected:
		return "disconnected"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// StateChange is one report to Options.OnState.
type StateChange struct {
	State State
	// ProcessSessionID is the id this process presents to hosts (see [ProcessSessionID]);
	// the host resumes the same session for it after a reconnect.
	ProcessSessionID string
	// Endpoint is the WebSocket URL, token redacted, once known.
	Endpoint string
	// Err is why an attempt failed or a session ended (StateDisconnected only).
	Err error
}

// Defaults of Options.
const (
	DefaultEnrollTimeoutLocal  = time.Second
	DefaultEnrollTimeoutInvite = 5 * time.Second
	DefaultDialTimeout         = 10 * time.Second
	DefaultControlTimeout      = 15 * time.Second
	DefaultReconnectDelay      = time.Second
	DefaultMaxReconnectDelay   = 30 * time.Second
)

// completeTimeout bounds the wait for the acknowledgement of session.complete on a clean
// stop: long enough for any live host, short enough not to hold up an exiting app.
const completeTimeout = 5 * time.Second

// config is Options checked and completed with defaults.
type config struct {
	Options
	log        *slog.Logger
	enrollment *enrollment // nil in direct mode
	direct     endpoint    // direct mode only
	configID   string      // session.open configId: the invite id or local:<appId>
}

// newConfig validates o and fills in the defaults. It reads (and on first use creates) the
// identity files in local and invite mode.
func newConfig(o Options, now time.Time) (*config, error) {
	c := &config{Options: o}
	if strings.TrimSpace(o.AppID) == "" || o.AppID == pairing.AnyApp {
		return nil, errors.New(`connect: Options.AppID must be the app's real id (not empty, not "*")`)
	}
	if len(o.AppID) > pairing.MaxFieldLength {
		return nil, fmt.Errorf("connect: Options.AppID is longer than %d bytes", pairing.MaxFieldLength)
	}
	c.log = o.Logger
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.Mode == "" {
		c.Mode = ModeLocal
	}
	if c.DeviceName == "" {
		c.DeviceName, _ = os.Hostname()
	}
	c.DeviceName = pairing.NormalizeDeviceName(c.DeviceName)
	if c.AppName == "" {
		c.AppName = c.AppID
	}
	for _, d := range []struct {
		p   *time.Duration
		def time.Duration
	}{
		{&c.DialTimeout, DefaultDialTimeout},
		{&c.ControlTimeout, DefaultControlTimeout},
		{&c.ReconnectDelay, DefaultReconnectDelay},
		{&c.MaxReconnectDelay, DefaultMaxReconnectDelay},
	} {
		if *d.p < 0 {
			return nil, errors.New("connect: Options timeouts and delays must not be negative")
		}
		if *d.p == 0 {
			*d.p = d.def
		}
	}
	c.MaxReconnectDelay = max(c.MaxReconnectDelay, c.ReconnectDelay)
	for _, p := range c.DiscoveryPorts {
		if p < 1 || p > 65535 {
			return nil, fmt.Errorf("connect: discovery port %d is out of range", p)
		}
	}

	switch c.Mode {
	case ModeLocal:
		if o.Invite != "" || o.URL != "" || o.Token != "" {
			return nil, errors.New("connect: Invite, URL and Token are not used in local mode; set Options.Mode")
		}
		return c, c.setupLocal()
	case ModeInvite:
		if o.URL != "" || o.Token != "" {
			return nil, errors.New("connect: URL and Token are not used in invite mode")
		}
		return c, c.setupInvite(now)
	case ModeDirect:
		if o.Invite != "" || o.HostAddress != "" || len(o.DiscoveryPorts) > 0 {
			return nil, errors.New("connect: Invite, HostAddress and DiscoveryPorts are not used in direct mode")
		}
		return c, c.setupDirect()
	}
	return nil, fmt.Errorf("connect: unknown Options.Mode %q", o.Mode)
}

func (c *config) setupLocal() error {
	if c.EnrollTimeout == 0 {
		c.EnrollTimeout = DefaultEnrollTimeoutLocal
	}
	host := c.HostAddress
	if host == "" {
		host = "127.0.0.1"
	}
	ports := c.DiscoveryPorts
	if len(ports) == 0 {
		ports = []int{pairing.DefaultDiscoveryPort, pairing.DeveloperDiscoveryPort}
	}
	id, err := c.identity()
	if err != nil {
		return err
	}
	c.configID = pairing.LocalInviteID(c.AppID)
	c.enrollment = c.newEnrollment(pairing.ModeLocal, c.configID, id.DeviceID, id.LocalToken, candidates([]string{host}, ports))
	return nil
}

func (c *config) setupInvite(now time.Time) error {
	if c.EnrollTimeout == 0 {
		c.EnrollTimeout = DefaultEnrollTimeoutInvite
	}
	if strings.TrimSpace(c.Invite) == "" {
		return errors.New("connect: invite mode needs Options.Invite (an ans2: code or the invite JSON)")
	}
	doc, err := pairing.ParseInvite(c.Invite)
	if err != nil {
		return fmt.Errorf("connect: Options.Invite: %w", err)
	}
	inv := &doc.Invite
	if err := inv.Check(c.AppID, now); err != nil {
		return fmt.Errorf("connect: Options.Invite cannot be used: %w", err)
	}
	hosts := inviteHosts(doc)
	if c.HostAddress != "" {
		hosts = []string{c.HostAddress}
	}
	if len(hosts) == 0 {
		return errors.New("connect: the invite lists no host address; set Options.HostAddress")
	}
	ports := c.DiscoveryPorts
	if len(ports) == 0 {
		p := inv.Host.DiscoveryPort
		if doc.Discovery != nil && doc.Discovery.DiscoveryPort >= 1 && doc.Discovery.DiscoveryPort <= 65535 {
			p = doc.Discovery.DiscoveryPort
		}
		ports = []int{p}
	}
	id, err := c.identity()
	if err != nil {
		return err
	}
	c.configID = inv.InviteID
	// The invite's secret is the long-lived credential: it is presented on every connect,
	// first to create the grant, then to prove it (reference §1.4).
	c.enrollment = c.newEnrollment(pairing.ModeInvite, inv.InviteID, id.DeviceID, inv.Enrollment.AccessToken, candidates(hosts, ports))
	return nil
}

// candidates pairs every host with every port, in that order: all ports of the first host,
// then of the next.
func candidates(hosts []string, ports []int) []candidate {
	out := make([]candidate, 0, len(hosts)*len(ports))
	for _, h := range hosts {
		for _, p := range ports {
			out = append(out, candidate{host: h, port: p})
		}
	}
	return out
}

// inviteHosts returns the discovery hint's addresses trimmed, without blanks and duplicates
// (compared case-insensitively, as .NET does), in their order.
func inviteHosts(doc *pairing.InviteDocument) []string {
	if doc.Discovery == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, h := range doc.Discovery.HostAddresses {
		h = strings.TrimSpace(h)
		if h == "" || seen[strings.ToLower(h)] {
			continue
		}
		seen[strings.ToLower(h)] = true
		out = append(out, h)
	}
	return out
}

func (c *config) setupDirect() error {
	if c.URL == "" || c.Token == "" {
		return errors.New("connect: direct mode needs Options.URL and Options.Token")
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		return errors.New("connect: Options.URL is not a URL") // the parse error may echo a token
	}
	if u.Scheme != "ws" && u.Scheme != "wss" {
		return errors.New("connect: Options.URL must be a ws:// or wss:// URL")
	}
	if u.Host == "" || u.User != nil || u.Fragment != "" {
		return errors.New("connect: Options.URL needs a host and no user info or fragment")
	}
	if u.Query().Has("token") {
		return errors.New("connect: put the token in Options.Token, not in Options.URL")
	}
	if u.Path == "" {
		u.Path = "/"
	}
	c.direct = endpoint{url: u, token: c.Token}
	return nil
}

func (c *config) identity() (identity, error) {
	if c.StateDir == "" {
		dir, err := defaultStateDir(c.AppID)
		if err != nil {
			return identity{}, err
		}
		c.StateDir = dir
	}
	return loadIdentity(c.StateDir, c.log)
}

func (c *config) newEnrollment(mode, inviteID, deviceID, token string, cands []candidate) *enrollment {
	return &enrollment{
		request: pairing.EnrollmentConnect{
			EnrollmentMode:   mode,
			InviteID:         inviteID,
			AppID:            c.AppID,
			DeviceID:         deviceID,
			DeviceName:       c.DeviceName,
			AccessToken:      token,
			ProcessSessionID: ProcessSessionID(),
		},
		candidates: cands,
		timeout:    c.EnrollTimeout,
		stateDir:   c.StateDir,
	}
}
