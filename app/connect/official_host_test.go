package connect

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/pairing"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/session"
	"github.com/go-json-experiment/json"
)

// officialHost imitates the official C# host byte for byte where the reference fixes the
// bytes: the ENROLLMENT_RESULT it writes (key order, nulls), the upgrade checks (path then
// token query, never the Authorization header; the token is single-use), the tool.query it
// sends right after the upgrade, and its CONTROL_RESP shapes (id null, payload null except
// for device.profile, explicit success, messages). It assigns session ids per (appId,
// processSessionId) as the reference does, so a reconnect resumes the same id.
type officialHost struct {
	t   *testing.T
	udp *udpHost
	srv *httptest.Server

	mu        sync.Mutex
	tokens    map[string]string // unused WebSocket token -> session id
	sessionOf map[string]string // appId + "\x00" + processSessionId -> session id
	next      int
	sessions  []*officialSession
	dropAfter int // close the n first sessions abruptly after their handshake

	wg sync.WaitGroup
}

type officialSession struct {
	id      string
	conn    transport.Conn
	mu      sync.Mutex
	actions []string
	catalog []byte // the app's answer to the first tool.query
	profile []byte
	done    chan struct{}
	closeBy error
}

func newOfficialHost(t *testing.T) *officialHost {
	h := &officialHost{t: t, tokens: map[string]string{}, sessionOf: map[string]string{}}
	h.srv = httptest.NewServer(http.HandlerFunc(h.upgrade))
	h.udp = newUDPHost(t, h.enroll)
	t.Cleanup(func() {
		h.srv.Close()
		h.mu.Lock()
		for _, s := range h.sessions {
			s.conn.Close(transport.StatusGoingAway, "test over")
		}
		h.mu.Unlock()
		h.wg.Wait()
	})
	return h
}

func (h *officialHost) wsPort() int {
	_, p, _ := net.SplitHostPort(h.srv.Listener.Addr().String())
	n, _ := strconv.Atoi(p)
	return n
}

func (h *officialHost) enroll(req *pairing.EnrollmentConnect) []reply {
	if req.AppID == "" || req.DeviceID == "" || req.AccessToken == "" || req.DeviceName == "" {
		return []reply{{data: []byte(h.refusal(req.RequestID, "LocalEnrollmentInvalid"))}}
	}
	h.mu.Lock()
	key := req.AppID + "\x00" + req.ProcessSessionID
	id, ok := h.sessionOf[key]
	if !ok || req.ProcessSessionID == "" {
		h.next++
		id = fmt.Sprintf("%s-%03d", strings.ReplaceAll(req.AppID, ".", "-"), h.next)
		h.sessionOf[key] = id
	}
	token := pairing.NewToken(pairing.WebSocketTokenBytes)
	h.tokens[token] = id
	h.mu.Unlock()
	// Exactly what ConnectResponse serialises to: every key, nulls written.
	b := fmt.Sprintf(`{"type":"ENROLLMENT_RESULT","ver":2,"requestId":%q,"accepted":true,"reason":"Ok",`+
		`"reasonMessage":"Device registered.","hostId":"3q2-hostid","hostName":"Build Mac","hostWifiName":null,`+
		`"message":"Connection accepted. WebSocket issued on port %d.","webSocketPort":%d,"webSocketPath":"/ws","webSocketToken":%q}`,
		req.RequestID, h.wsPort(), h.wsPort(), token)
	return []reply{{data: []byte(b)}}
}

func (h *officialHost) refusal(requestID, reason string) string {
	return fmt.Sprintf(`{"type":"ENROLLMENT_RESULT","ver":2,"requestId":%q,"accepted":false,"reason":%q,`+
		`"reasonMessage":"Refused.","hostId":"3q2-hostid","hostName":"Build Mac","hostWifiName":null,"message":"Refused.",`+
		`"webSocketPort":null,"webSocketPath":null,"webSocketToken":null}`, requestID, reason)
}

func (h *officialHost) upgrade(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/ws" {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	h.mu.Lock()
	id, ok := h.tokens[r.URL.Query().Get("token")]
	delete(h.tokens, r.URL.Query().Get("token")) // single use
	h.mu.Unlock()
	if !ok {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	conn, err := transport.Accept(w, r, transport.AcceptOptions{})
	if err != nil {
		return
	}
	s := &officialSession{id: id, conn: conn, done: make(chan struct{})}
	h.mu.Lock()
	h.sessions = append(h.sessions, s)
	drop := len(h.sessions) <= h.dropAfter
	h.mu.Unlock()
	h.wg.Go(func() { h.serve(s, drop) })
}

func (h *officialHost) serve(s *officialSession, drop bool) {
	defer close(s.done)
	ctx := context.Background()
	// The official host captures the catalog at once, before or while the app opens.
	q := fmt.Sprintf(`{"type":"tool.query","id":"query-1","sessionId":%q,"sentAt":"2026-07-30T01:00:00.0000000+00:00","payload":{"detail":"index"}}`, s.id)
	if err := s.conn.Write(ctx, transport.MessageText, []byte(q)); err != nil {
		return
	}
	for {
		_, data, err := s.conn.Read(ctx)
		if err != nil {
			s.mu.Lock()
			s.closeBy = err
			s.mu.Unlock()
			return
		}
		var head struct {
			Type    string `json:"type"`
			ID      string `json:"id"`
			ReplyTo string `json:"replyTo"`
			Action  string `json:"action"`
		}
		if json.Unmarshal(data, &head, json.RejectUnknownMembers(false)) != nil {
			continue
		}
		if head.Type == wire.TypeCatalog && head.ReplyTo == "query-1" {
			s.mu.Lock()
			s.catalog = data
			s.mu.Unlock()
			continue
		}
		if head.Type != "CONTROL_REQ" {
			continue
		}
		env, err := session.ParseControl(data)
		if err != nil {
			continue
		}
		s.mu.Lock()
		s.actions = append(s.actions, env.Action)
		if env.Action == session.ActionDeviceProfile {
			s.profile = env.Payload
		}
		n := len(s.actions)
		s.mu.Unlock()
		ok, msg, payload := true, "", "null"
		switch env.Action {
		case session.ActionSessionOpen:
			msg = "Session open accepted for test-box."
		case session.ActionDeviceProfile:
			if err := checkProfileTypes(env.Payload); err != nil {
				ok, msg = false, "Invalid device profile payload: "+err.Error()
			} else {
				msg = "Device profile received."
				payload = `{"sessionJpegCapture":{"mode":"app","source":null,"fallbackMode":"app","intervalMilliseconds":2000,"quality":60,"maxWidth":null}}`
			}
		case session.ActionAppState:
			msg = "App state received."
		case session.ActionSessionComplete:
			msg = "Session complete acknowledged."
		default:
			ok, msg = false, fmt.Sprintf("Unsupported control action '%s'.", env.Action)
		}
		resp := fmt.Sprintf(`{"type":"CONTROL_RESP","id":null,"replyTo":%q,"action":%q,"payload":%s,"success":%t,"message":%q}`,
			env.ID, env.Action, payload, ok, msg)
		if err := s.conn.Write(ctx, transport.MessageText, []byte(resp)); err != nil {
			return
		}
		if env.Action == session.ActionSessionComplete {
			s.conn.Close(transport.StatusNormalClosure, "WebSocket session complete.")
		}
		if drop && n == 3 {
			s.conn.Close(transport.StatusInternalError, "simulated drop")
		}
	}
}

// checkProfileTypes decodes the profile the way a typed model does: every member the SDK
// sends must have the type the official DeviceAppProfile declares.
func checkProfileTypes(p []byte) error {
	var v struct {
		Type       string `json:"type"`
		Schema     string `json:"schema"`
		SentAt     int64  `json:"sentAt"`
		ReasonCode int    `json:"reasonCode"`
		ProfileSeq int64  `json:"profileSeq"`
		SDK        struct {
			Name, PackageID, Version, Language string
		} `json:"sdk"`
		Device struct {
			IsVirtual, IsEmulator     bool
			TimeZone, OSName, CPUArch string
			CPUCoreCount              int
		} `json:"device"`
		App struct {
			AppID, AppName, VersionName string
			ProcessID                   int
		} `json:"app"`
		SessionJpegCaptureControlVersion int `json:"sessionJpegCaptureControlVersion"`
	}
	return json.Unmarshal(p, &v, json.MatchCaseInsensitiveNames(true), json.RejectUnknownMembers(true))
}

func (s *officialSession) catalogReceived() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.catalog != nil
}

func (h *officialHost) session(i int) *officialSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	if i >= len(h.sessions) {
		return nil
	}
	return h.sessions[i]
}

func testApp(t *testing.T) *app.App {
	t.Helper()
	a := app.New(app.Options{})
	err := app.Register(a, catalog.Definition{ID: "notes.count", Name: "Count notes", Description: "Counts the notes.",
		Category: "notes", Policy: wire.PolicyRead},
		func(ctx context.Context, c *app.Call, in struct{}) (struct{ Count int }, error) {
			return struct{ Count int }{3}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// runUntil runs Run until cond holds for the OnState reports seen so far, then stops it
// and returns its result and every report.
func runUntil(t *testing.T, a *app.App, mode Mode, opts Options, cond func([]StateChange) bool) ([]StateChange, error) {
	t.Helper()
	var (
		mu     sync.Mutex
		states []StateChange
	)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stop := make(chan struct{})
	var once sync.Once
	opts.OnState = func(s StateChange) {
		mu.Lock()
		states = append(states, s)
		met := cond(states)
		mu.Unlock()
		if met {
			once.Do(func() { close(stop) })
		}
	}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, a, mode, opts) }()
	select {
	case <-stop:
		cancel()
	case err := <-done:
		return states, err
	}
	err := <-done
	mu.Lock()
	defer mu.Unlock()
	return states, err
}

func connectedTimes(n int) func([]StateChange) bool {
	return func(s []StateChange) bool {
		c := 0
		for _, x := range s {
			if x.State == StateConnected {
				c++
			}
		}
		return c >= n
	}
}

func TestLocalModeAgainstOfficialHost(t *testing.T) {
	t.Parallel()
	h := newOfficialHost(t)
	var logs bytes.Buffer
	var logMu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	stateDir := t.TempDir()
	local := Local{HostAddress: "127.0.0.1", DiscoveryPorts: []int{h.udp.port()}}
	opts := Options{AppID: testAppID, AppName: "Notes", DeviceName: "test-box", StateDir: stateDir, Logger: logger}
	states, err := runUntil(t, testApp(t), local, opts, func(s []StateChange) bool {
		if !connectedTimes(1)(s) {
			return false
		}
		// The app answers the host's early tool.query concurrently with the handshake;
		// stop only once the answer is in.
		for range 1000 {
			if sess := h.session(0); sess != nil && sess.catalogReceived() {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		return true
	})
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	if last := states[len(states)-1]; last.State != StateDisconnected || last.Err != nil {
		t.Errorf("last state = %+v, want a clean disconnect", last)
	}
	s := h.session(0)
	<-s.done
	want := []string{session.ActionSessionOpen, session.ActionDeviceProfile, session.ActionAppState, session.ActionSessionComplete}
	if strings.Join(s.actions, ",") != strings.Join(want, ",") {
		t.Errorf("actions = %v, want %v", s.actions, want)
	}
	if !bytes.Contains(s.catalog, []byte(`"sessionId":"`+s.id+`"`)) || !bytes.Contains(s.catalog, []byte("notes.count")) {
		t.Errorf("catalog answer = %s", s.catalog)
	}
	if err := checkProfileTypes(s.profile); err != nil {
		t.Errorf("profile: %v", err)
	}
	if ce, ok := s.closeBy.(*transport.CloseError); ok && ce.Code != transport.StatusNormalClosure {
		t.Errorf("session ended with %v", s.closeBy)
	}

	// No secret reaches the log.
	id, _ := loadIdentity(stateDir, discard)
	logMu.Lock()
	text := logs.String()
	logMu.Unlock()
	if !strings.Contains(text, "ansight: connected") {
		t.Errorf("log lacks the connection event:\n%s", text)
	}
	if strings.Contains(text, id.LocalToken) || strings.Contains(text, "token=") && !strings.Contains(text, "token="+redacted) {
		t.Errorf("log leaks a token:\n%s", text)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestReconnectResumesSession(t *testing.T) {
	t.Parallel()
	h := newOfficialHost(t)
	h.dropAfter = 1
	local := Local{HostAddress: "127.0.0.1", DiscoveryPorts: []int{h.udp.port()}}
	opts := Options{AppID: testAppID, StateDir: t.TempDir(), ReconnectDelay: 10 * time.Millisecond}
	states, err := runUntil(t, testApp(t), local, opts, connectedTimes(2))
	if err != nil {
		t.Fatal(err)
	}
	reqs := h.udp.requests()
	if len(reqs) != 2 {
		t.Fatalf("enrollments = %d, want 2", len(reqs))
	}
	if reqs[0].ProcessSessionID != reqs[1].ProcessSessionID || reqs[0].DeviceID != reqs[1].DeviceID ||
		reqs[0].AccessToken != reqs[1].AccessToken || reqs[0].RequestID == reqs[1].RequestID {
		t.Errorf("reconnect changed identity: %+v then %+v", reqs[0], reqs[1])
	}
	first, second := h.session(0), h.session(1)
	if first.id != second.id {
		t.Errorf("session ids %s then %s, want the same", first.id, second.id)
	}
	var disconnectErr error
	for _, s := range states {
		if s.State == StateDisconnected {
			disconnectErr = s.Err
			break
		}
	}
	if transport.CloseStatus(disconnectErr) != transport.StatusInternalError {
		t.Errorf("first disconnect = %v, want the host's 1011", disconnectErr)
	}
}

func TestInviteModeAgainstOfficialHost(t *testing.T) {
	t.Parallel()
	h := newOfficialHost(t)
	doc := testInvite(time.Now(), testAppID, h.udp.port())
	code, err := doc.Code()
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{AppID: testAppID, StateDir: t.TempDir()}
	if _, err := runUntil(t, testApp(t), Invite{Code: code}, opts, connectedTimes(1)); err != nil {
		t.Fatal(err)
	}
	r := h.udp.requests()[0]
	if r.Mode() != pairing.ModeInvite || r.InviteID != doc.Invite.InviteID || r.AccessToken != doc.Invite.Enrollment.AccessToken {
		t.Errorf("enrollment = %+v", r)
	}
}

func TestRunReturnsPermanentRefusal(t *testing.T) {
	t.Parallel()
	h := newUDPHost(t, func(req *pairing.EnrollmentConnect) []reply {
		return []reply{{data: refuse(req, pairing.ReasonEnrollmentConsumed)}}
	})
	doc := testInvite(time.Now(), testAppID, h.port())
	code, _ := doc.Code()
	err := Run(t.Context(), testApp(t), Invite{Code: code}, Options{AppID: testAppID, StateDir: t.TempDir()})
	if ee, ok := err.(*EnrollmentError); !ok || ee.Reason != pairing.ReasonEnrollmentConsumed {
		t.Fatalf("Run = %v, want EnrollmentConsumed", err)
	}
	if strings.Contains(err.Error(), doc.Invite.Enrollment.AccessToken) {
		t.Error("error leaks the invite secret")
	}
}

func TestDialOnce(t *testing.T) {
	t.Parallel()
	h := newOfficialHost(t)
	s, err := Dial(t.Context(), testApp(t), Local{HostAddress: "127.0.0.1", DiscoveryPorts: []int{h.udp.port()}},
		Options{AppID: testAppID, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("ws://127.0.0.1:%d/ws", h.wsPort()); s.Endpoint() != want {
		t.Errorf("Endpoint() = %s", s.Endpoint())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Wait(); err != nil {
		t.Errorf("Wait after Close = %v", err)
	}
}
