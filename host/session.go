package host

import (
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/host/tools"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/session"
)

// State is a session's connection state.
type State string

// Session states.
const (
	StateConnected    State = "connected"
	StateDisconnected State = "disconnected"
)

// Session is one app process's session: it survives reconnects of that process (same
// appId, processSessionId and grant) and keeps its id. Its methods are safe for
// concurrent use.
type Session struct {
	srv *Server

	// Identity, fixed at creation.
	id               string
	appID            string
	deviceID         string
	grantID          string
	configID         string
	processSessionID string
	policy           wire.Policy

	mu             sync.Mutex
	deviceName     string
	clientName     string
	remote         netip.Addr
	state          State
	opened         bool
	connectedAt    time.Time
	disconnectedAt time.Time
	profile        *session.DeviceProfile
	appState       string
	properties     jsontext.Value
	crashReports   int // kept in this session's directory by this host
	annotations    int
	conn           *connection // nil when disconnected
	client         *tools.Client
	// For the session budget (budget.go): the order of the last attach among all sessions'
	// attaches, and the last call stamp of the connections before the current one.
	connectOrder uint64
	priorCall    uint64
}

// connection is one WebSocket of a session.
type connection struct {
	conn   transport.Conn
	client *tools.Client
	// displaced: an upgrade took this connection's place in the session budget, and it is
	// closing. The server's lock guards it: concurrent upgrades never pick the same one.
	displaced bool
}

// SessionInfo is a snapshot of a session, for listing and display.
type SessionInfo struct {
	ID               string                 `json:"id"`
	AppID            string                 `json:"appId"`
	DeviceID         string                 `json:"deviceId"`
	DeviceName       string                 `json:"deviceName"`
	ClientName       string                 `json:"clientName,omitzero"`
	Platform         string                 `json:"platform,omitzero"`
	ProcessSessionID string                 `json:"processSessionId,omitzero"`
	GrantID          string                 `json:"grantId"`
	ConfigID         string                 `json:"configId"`
	MaxToolPolicy    wire.Policy            `json:"maxToolPolicy"`
	State            State                  `json:"state"`
	Opened           bool                   `json:"opened"`
	AppState         string                 `json:"appState,omitzero"`
	RemoteAddr       string                 `json:"remoteAddr,omitzero"`
	ConnectedAt      time.Time              `json:"connectedAt"`
	DisconnectedAt   time.Time              `json:"disconnectedAt,omitzero"`
	Profile          *session.DeviceProfile `json:"profile,omitempty"`
	Properties       jsontext.Value         `json:"properties,omitzero"`
	// CrashReports and Annotations count what the app handed over in this session (see
	// Server.Crashes and Server.Annotations).
	CrashReports int `json:"crashReports,omitzero"`
	Annotations  int `json:"annotations,omitzero"`
}

// ID is the host-assigned session id, "<app-hint>-NNN".
func (s *Session) ID() string { return s.id }

// AppID is the app's id as enrolled.
func (s *Session) AppID() string { return s.appID }

// MaxToolPolicy is the grant's policy: the most a tool may do in this session.
func (s *Session) MaxToolPolicy() wire.Policy { return s.policy }

// State reports whether the session has a live connection.
func (s *Session) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// Tools is the tool client of the session's current connection (or of its last one, whose
// requests fail at once, when disconnected). A reconnect gives a new client; call Tools
// for each operation rather than keeping the client.
func (s *Session) Tools() *tools.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.client
}

// Info returns a snapshot of the session.
func (s *Session) Info() SessionInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.infoLocked()
}

func (s *Session) infoLocked() SessionInfo {
	in := SessionInfo{
		ID: s.id, AppID: s.appID, DeviceID: s.deviceID, DeviceName: s.deviceName, ClientName: s.clientName,
		ProcessSessionID: s.processSessionID, GrantID: s.grantID, ConfigID: s.configID, MaxToolPolicy: s.policy,
		State: s.state, Opened: s.opened, AppState: s.appState, ConnectedAt: s.connectedAt,
		DisconnectedAt: s.disconnectedAt, Profile: s.profile, Properties: s.properties,
		CrashReports: s.crashReports, Annotations: s.annotations,
	}
	if s.remote.IsValid() {
		in.RemoteAddr = s.remote.String()
	}
	if s.profile != nil {
		in.Platform = s.profile.Device.OSName
	}
	return in
}

// Disconnect closes the session's connection (1000) and fails its pending requests. The
// session stays listed as disconnected; the app may reconnect and resume it.
func (s *Session) Disconnect() {
	s.disconnect(transport.StatusNormalClosure, "Disconnected by the host.")
}

func (s *Session) disconnect(code transport.StatusCode, reason string) {
	c := s.current()
	if c == nil {
		return
	}
	c.client.Close(ErrDisconnected)
	c.conn.Close(code, reason)
}

// Send writes one raw message on the session's current connection, bypassing the tool
// client and its checks: for tools that speak the protocol themselves (Options.Tap). It
// fails with ErrDisconnected when the session has no connection.
func (s *Session) Send(ctx context.Context, typ transport.MessageType, data []byte) error {
	c := s.current()
	if c == nil {
		return ErrDisconnected
	}
	return c.conn.Write(ctx, typ, data)
}

// Opened reports whether the app's session.open was acknowledged on the current
// connection: tool requests may flow.
func (s *Session) Opened() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn != nil && s.opened
}

// ErrDisconnected is the cause given to pending requests when the host disconnects a
// session (Session.Disconnect, or its grant revoked).
var ErrDisconnected = fmt.Errorf("host: session disconnected by the host")

func (s *Session) current() *connection {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn
}

func (s *Session) publish(kind EventKind) {
	info := s.Info()
	s.srv.recordSession(s, kind, info)
	s.srv.events.Publish(Event{Kind: kind, Session: s, Info: info})
}

// Sessions returns every session, connected ones first, then by id.
func (s *Server) Sessions() []*Session {
	s.mu.Lock()
	list := make([]*Session, 0, len(s.sessions))
	for _, sess := range s.sessions {
		list = append(list, sess)
	}
	s.mu.Unlock()
	state := make(map[*Session]State, len(list))
	for _, sess := range list {
		state[sess] = sess.State()
	}
	slices.SortFunc(list, func(a, b *Session) int {
		if (state[a] == StateConnected) != (state[b] == StateConnected) {
			if state[a] == StateConnected {
				return -1
			}
			return 1
		}
		return strings.Compare(a.id, b.id)
	})
	return list
}

// Session returns the session with id, if the registry still holds it.
func (s *Server) Session(id string) (*Session, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.sessions[id]
	return sess, ok
}

// resumableLocked finds the session a ticket resumes: same appId, same non-blank
// processSessionId, and the same grant. Matching the grant is what stops another client
// (any other grant for the app, even local mode on this machine) from taking a session
// over with a processSessionId it saw on the network.
func (s *Server) resumableLocked(t *ticket) *Session {
	if strings.TrimSpace(t.processSessionID) == "" {
		return nil
	}
	return s.resumable[resumeKey{t.appID, t.processSessionID, t.grantID}]
}

// resumeKey is what a reconnection must match to resume a session (resumableLocked). The
// registry holds at most one session per key: attach resumes the one it finds.
type resumeKey struct {
	appID, processSessionID, grantID string
}

// addSessionLocked and removeSessionLocked keep the registry and its index by resumeKey.
func (s *Server) addSessionLocked(sess *Session) {
	s.sessions[sess.id] = sess
	if strings.TrimSpace(sess.processSessionID) != "" {
		s.resumable[resumeKey{sess.appID, sess.processSessionID, sess.grantID}] = sess
	}
}

func (s *Server) removeSessionLocked(sess *Session) {
	delete(s.sessions, sess.id)
	k := resumeKey{sess.appID, sess.processSessionID, sess.grantID}
	if s.resumable[k] == sess {
		delete(s.resumable, k)
	}
}

// appHint derives the session id prefix from an app id as the reference host does:
// lower case, runs of other characters than [a-z0-9] become "-", edges trimmed, at most 48
// characters, "app" when nothing is left.
func appHint(appID string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(appID) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	h := strings.Trim(b.String(), "-")
	if len(h) > 48 {
		h = strings.TrimRight(h[:48], "-")
	}
	if h == "" {
		return "app"
	}
	return h
}

// newSessionIDLocked returns "<app-hint>-NNN" with the next number whose session is not
// in the registry and has no directory on disk: an id is never reused, so that a session's
// directory (its artifacts, crash reports and annotations) belongs to it alone, even across
// host restarts (the official host skips ids in use or retired too), nor an id that a
// recording from an earlier run holds.
func (s *Server) newSessionIDLocked(appID string) string {
	for {
		s.nextSeq++
		id := fmt.Sprintf("%s-%03d", appHint(appID), s.nextSeq)
		if _, taken := s.sessions[id]; taken || s.records.exists(id) {
			continue
		}
		if s.opts.Recorder == nil || !s.opts.Recorder.Recorded(id) {
			return id
		}
	}
}

// attach binds a new connection to the session its ticket resumes, or to a new session.
// A connection it replaces fails its pending requests at once and is closed. It closes
// conn and returns nil when the server is closed or the ticket's grant was revoked.
func (s *Server) attach(t *ticket, conn transport.Conn, remote netip.Addr) (*Session, *connection) {
	now := s.now()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		conn.Close(transport.StatusGoingAway, "Host shutting down.")
		return nil, nil
	}
	// Revoke ends the sessions of a grant under s.mu: a connection whose token was
	// redeemed just before must not attach after it.
	g := s.store.grantByID(t.grantID)
	if g == nil || !g.active(now) {
		s.mu.Unlock()
		conn.Close(transport.StatusNormalClosure, "Pairing revoked by the host.")
		return nil, nil
	}
	g.LastUsedAt = now // what the grant budget keeps first
	s.saveSoonLocked()
	sess := s.resumableLocked(t)
	resumed := sess != nil
	if sess == nil {
		sess = &Session{
			srv: s, id: s.newSessionIDLocked(t.appID),
			appID: t.appID, deviceID: t.deviceID, grantID: t.grantID, configID: t.configID,
			processSessionID: t.processSessionID, policy: t.policy,
		}
		s.addSessionLocked(sess)
	}
	topts := s.opts.Tools
	topts.SessionID = sess.id
	if topts.ArtifactDir != "" {
		// Each session's artifacts go to a directory of its own, so that names of different
		// apps never collide and a session's files can be found (and removed) together.
		topts.ArtifactDir = filepath.Join(topts.ArtifactDir, sess.id)
	}
	topts.MaxToolPolicy = t.policy
	s.recordTraffic(&topts)
	if topts.Logger == nil {
		topts.Logger = s.log
	}
	c := &connection{conn: conn, client: tools.NewClient(conn, topts)}

	s.endUpgradeLocked(t)
	sess.mu.Lock()
	old := sess.conn
	if old == nil {
		s.occupied.add(sess.grantID, 1)
	}
	if sess.client != nil { // a resumed session keeps its use across connections
		sess.priorCall = max(sess.priorCall, sess.client.LastCall())
	}
	s.occupied.connects++
	sess.connectOrder = s.occupied.connects
	sess.conn, sess.client = c, c.client
	sess.state, sess.connectedAt, sess.disconnectedAt = StateConnected, now, time.Time{}
	sess.deviceName, sess.remote, sess.opened = t.deviceName, remote, false
	sess.mu.Unlock()
	s.mu.Unlock()

	if old != nil {
		s.log.Info("host: session replaced by a newer connection", "session", sess.id)
		old.client.Close(ErrReplaced)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			old.conn.Close(transport.StatusNormalClosure, "Replaced by a newer connection.")
		}()
	}
	s.log.Info("host: session connected", "session", sess.id, "app", sess.appID, "device", sess.deviceID, "resumed", resumed)
	sess.publish(EventConnected)
	return sess, c
}

// detach ends a connection's part in its session; the session becomes disconnected unless
// a newer connection already replaced this one.
func (s *Server) detach(sess *Session, c *connection) {
	now := s.now()
	s.mu.Lock() // for occupied; then sess.mu, as attach takes them
	sess.mu.Lock()
	current := sess.conn == c
	if current {
		sess.conn = nil
		sess.state = StateDisconnected
		sess.disconnectedAt = now
		s.occupied.add(sess.grantID, -1)
	}
	sess.mu.Unlock()
	s.mu.Unlock()
	if !current {
		return
	}
	s.log.Info("host: session disconnected", "session", sess.id)
	sess.publish(EventDisconnected)
	s.evict()
}

// evict drops the oldest disconnected sessions beyond MaxRetained.
func (s *Server) evict() {
	s.mu.Lock()
	if len(s.sessions) <= s.opts.MaxRetained {
		s.mu.Unlock() // no more disconnected sessions than sessions: nothing to count
		return
	}
	var gone []*Session
	for {
		var oldest *Session
		var oldestAt time.Time
		n := 0
		for _, sess := range s.sessions {
			sess.mu.Lock()
			if sess.conn == nil {
				n++
				if oldest == nil || sess.disconnectedAt.Before(oldestAt) {
					oldest, oldestAt = sess, sess.disconnectedAt
				}
			}
			sess.mu.Unlock()
		}
		if n <= s.opts.MaxRetained {
			break
		}
		s.removeSessionLocked(oldest)
		gone = append(gone, oldest)
	}
	s.mu.Unlock()
	for _, sess := range gone {
		sess.publish(EventRemoved)
	}
}
