package connect

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/ansight-go/ansight/app/telemetry"
	"github.com/ansight-go/ansight/pairing"
	"github.com/ansight-go/ansight/transport"
)

// Options configures [Run] and [Dial] whatever their [Mode]. Only AppID is required; the
// zero value of every other field selects the default documented on it.
type Options struct {
	// AppID is the app's real package or bundle id, e.g. "com.example.notes". Required.
	AppID string
	// AppName and AppVersion describe the app in its device profile.
	AppName, AppVersion string
	// DeviceName labels this installation on the host. Default: the machine's host name.
	DeviceName string

	// StateDir keeps this app's device id and local token (directory 0700, files 0600),
	// which [Local] and [Invite] present. Default: <os.UserConfigDir()>/ansight/<AppID>.
	StateDir string
	// Logger receives connection events; tokens are never logged. Default: discard.
	Logger *slog.Logger
	// OnState, if set, is called on every change of the connection state, from the
	// goroutine running Run. It must return quickly.
	OnState func(StateChange)

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

// Defaults of Options and of the modes' fields.
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

// config is Options checked and completed with defaults, and what the mode set up.
type config struct {
	Options
	mode       Mode
	log        *slog.Logger
	enrollment *enrollment // nil in direct mode
	direct     endpoint    // direct mode only
	configID   string      // session.open configId: the invite id or local:<appId>
}

// newConfig validates mode and o and fills in the defaults. It reads (and on first use
// creates) the identity files in local and invite mode.
func newConfig(mode Mode, o Options, now time.Time) (*config, error) {
	if mode == nil {
		return nil, errors.New("connect: no Mode; pass connect.Local{}, connect.Invite{Code: …} or connect.Direct{URL: …, Token: …}")
	}
	c := &config{Options: o, mode: mode}
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
	if err := mode.setup(c, now); err != nil {
		return nil, err
	}
	return c, nil
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

func (c *config) newEnrollment(mode, inviteID, deviceID, token string, cands []candidate, timeout time.Duration) *enrollment {
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
		timeout:    timeout,
		stateDir:   c.StateDir,
	}
}
