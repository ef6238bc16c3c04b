package hostile

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/host/tools"
	"github.com/ansight-go/ansight/pairing"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/session"
)

// The host under attack: a malicious app enrolls over real UDP, upgrades with its token,
// opens the session, and then sends hostile messages. A real app runtime answers the
// host's legitimate requests on the same connection, so that the session stays usable.

// hostMaxMessage is the test host's message limit: small, so that an oversized message is
// cheap to send.
const hostMaxMessage = 1 << 20

// testHost is a host configured for the suite, with its transfer events.
type testHost struct {
	*host.Server
	artifacts string

	mu        sync.Mutex
	receiving map[string]chan struct{} // closed when a transfer id starts receiving
}

// newTestHost starts a host on loopback. Its enrollment limit is raised so that the suite
// can enroll an app per case from 127.0.0.1; the flood cases use their own host with the
// default limit.
func newTestHost(t *testing.T, mutate func(*host.Options)) *testHost {
	t.Helper()
	h := &testHost{artifacts: filepath.Join(t.TempDir(), "artifacts"), receiving: map[string]chan struct{}{}}
	opts := host.Options{
		DiscoveryAddr: "127.0.0.1:0", ListenAddr: "127.0.0.1:0", StateDir: t.TempDir(), HostName: "hostile",
		MaxMessageBytes: hostMaxMessage, EnrollmentBurst: 1000, KeepAlive: transport.KeepAlive{Interval: -1},
		Tools: tools.Options{ArtifactDir: h.artifacts, Timeout: hostWait, MaxInflatedBytes: hostMaxMessage,
			OnTransfer: func(p tools.TransferProgress) {
				if p.Status == tools.StatusReceiving {
					h.markReceiving(p.TransferID)
				}
			}},
	}
	if mutate != nil {
		mutate(&opts)
	}
	srv, err := host.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	h.Server = srv
	return h
}

// markReceiving records that transfer id is receiving (OnTransfer reports that state on
// every chunk).
func (h *testHost) markReceiving(id string) {
	ch := h.receivingCh(id)
	select {
	case <-ch:
	default:
		close(ch)
	}
}

func (h *testHost) receivingCh(id string) chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch, ok := h.receiving[id]
	if !ok {
		ch = make(chan struct{})
		h.receiving[id] = ch
	}
	return ch
}

// awaitReceiving waits until the host has registered transfer id.
func (h *testHost) awaitReceiving(t *testing.T, id string) {
	t.Helper()
	select {
	case <-h.receivingCh(id):
	case <-t.Context().Done():
		t.Fatalf("the host never started receiving transfer %s", id)
	}
}

// identity is one installation: app id, device id, token and process session id.
type identity struct {
	appID, deviceID, token, psid string
}

func newIdentity(appID string) identity {
	return identity{appID: appID, deviceID: "dev-" + pairing.NewToken(8), token: pairing.NewToken(32), psid: "go." + pairing.NewToken(16)}
}

func (id identity) enrollment() *pairing.EnrollmentConnect {
	return &pairing.EnrollmentConnect{RequestID: pairing.NewToken(16), EnrollmentMode: pairing.ModeLocal,
		InviteID: pairing.LocalInviteID(id.appID), AppID: id.appID, DeviceID: id.deviceID, DeviceName: "hostile device",
		AccessToken: id.token, ProcessSessionID: id.psid}
}

// udpClient is a UDP socket bound to a loopback source address.
type udpClient struct {
	conn *net.UDPConn
	to   *net.UDPAddr
}

func newUDPClient(t *testing.T, from string, to netip.AddrPort) *udpClient {
	t.Helper()
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(from), 0)))
	if err != nil {
		t.Skipf("cannot bind UDP to %s: %v", from, err)
	}
	t.Cleanup(func() { c.Close() })
	return &udpClient{conn: c, to: net.UDPAddrFromAddrPort(to)}
}

func (u *udpClient) send(t *testing.T, b []byte) {
	t.Helper()
	if _, err := u.conn.WriteToUDP(b, u.to); err != nil {
		t.Fatal(err)
	}
}

// receive returns the next datagram, or nil after wait.
// reply waits for the host's answer, however long a busy machine takes to send it.
func (u *udpClient) reply() []byte {
	u.conn.SetReadDeadline(time.Time{})
	buf := make([]byte, 64<<10)
	n, err := u.conn.Read(buf)
	if err != nil {
		return nil
	}
	return buf[:n]
}

// receive waits at most wait for a datagram: only to drain answers that may not come.
func (u *udpClient) receive(wait time.Duration) []byte {
	u.conn.SetReadDeadline(time.Now().Add(wait))
	buf := make([]byte, 64<<10)
	n, err := u.conn.Read(buf)
	if err != nil {
		return nil
	}
	return buf[:n]
}

// enroll sends req and returns the host's answer to it.
func (u *udpClient) enroll(t *testing.T, req *pairing.EnrollmentConnect) *pairing.EnrollmentResult {
	t.Helper()
	b, err := req.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	u.send(t, b)
	reply := u.reply()
	if reply == nil {
		t.Fatal("no enrollment reply")
	}
	res, err := pairing.ParseEnrollmentResult(reply)
	if err != nil {
		t.Fatalf("enrollment reply: %v", err)
	}
	if res.RequestID != req.RequestID {
		t.Fatalf("reply to request %s, want %s", res.RequestID, req.RequestID)
	}
	return res
}

func (h *testHost) wsURL(res *pairing.EnrollmentResult) string {
	return fmt.Sprintf("ws://127.0.0.1:%d%s", res.WebSocketPort, res.WebSocketPath)
}

// upgrade dials the WebSocket of an accepted enrollment, its token as a bearer credential.
func (h *testHost) upgrade(res *pairing.EnrollmentResult) (transport.Conn, error) {
	return transport.Dial(context.Background(), h.wsURL(res), transport.DialOptions{
		Header: http.Header{"Authorization": {"Bearer " + res.WebSocketToken}}})
}

// enrollAndUpgrade enrolls with req from 127.0.0.1 and upgrades; both must succeed.
func (h *testHost) enrollAndUpgrade(t *testing.T, req *pairing.EnrollmentConnect) transport.Conn {
	t.Helper()
	res := newUDPClient(t, "127.0.0.1", h.DiscoveryAddr()).enroll(t, req)
	if !res.Accepted {
		t.Fatalf("enrollment refused: %s", res.Reason)
	}
	conn, err := h.upgrade(res)
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

// evilApp is a malicious app's connection to the host, with a real runtime answering the
// host's requests.
type evilApp struct {
	id   identity
	conn transport.Conn
	sess *host.Session

	held   chan string   // request ids of e.hold calls, as they arrive
	resume chan struct{} // each receive lets one e.hold call return
	ctl    chan *session.ControlEnvelope
	served chan struct{}
}

type holdOut struct {
	Nonce string `json:"nonce"`
}

type fileArgs struct {
	ID   string `json:"id"`
	Size int64  `json:"size"`
	Name string `json:"name"`
}

// newEvilRuntime returns the runtime of an evil app: e.echo, e.hold (blocks until resumed,
// after publishing its request id) and e.file (announces a transfer the test then sends by
// hand, frame by frame).
func newEvilRuntime(t *testing.T, e *evilApp) *app.App {
	t.Helper()
	a := app.New(app.Options{})
	def := func(id string) catalog.Definition {
		return catalog.Definition{ID: id, Name: id, Description: "Evil app tool " + id + ".", Category: "evil", Policy: wire.PolicyRead}
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(app.Register(a, def("e.echo"), func(ctx context.Context, c *app.Call, in nonceIn) (nonceOut, error) {
		return nonceOut(in), nil
	}))
	must(app.Register(a, def("e.hold"), func(ctx context.Context, c *app.Call, in none) (holdOut, error) {
		e.held <- c.RequestID
		select {
		case <-e.resume:
		case <-ctx.Done():
		}
		return holdOut{Nonce: "genuine"}, nil
	}))
	must(app.Register(a, def("e.file"), func(ctx context.Context, c *app.Call, in fileArgs) (map[string]any, error) {
		return map[string]any{"file": wire.TransferDescriptor{DeliveryMode: wire.DeliveryModeWebSocketBinary,
			WireProtocol: wire.FileTransferProtocol, TransferID: in.ID, SizeBytes: in.Size, FileName: in.Name, Status: "queued"}}, nil
	}))
	return a
}

// connectEvil enrolls a new installation of appID in local mode, upgrades and opens the
// session.
func connectEvil(t *testing.T, h *testHost, appID string) *evilApp {
	t.Helper()
	id := newIdentity(appID)
	return connectAs(t, h, id, id.enrollment())
}

// connectAs enrolls id with req (local or invite mode), upgrades and opens the session.
func connectAs(t *testing.T, h *testHost, id identity, req *pairing.EnrollmentConnect) *evilApp {
	t.Helper()
	appID := id.appID
	e := &evilApp{id: id, held: make(chan string, 4), resume: make(chan struct{}),
		ctl: make(chan *session.ControlEnvelope, 16), served: make(chan struct{})}
	conn := h.enrollAndUpgrade(t, req)
	e.conn = conn
	rt := newEvilRuntime(t, e)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer close(e.served)
		rt.Serve(ctx, conn, app.ServeOptions{OnMessage: func(typ transport.MessageType, data []byte) {
			if env, err := session.ParseControl(data); err == nil && env.Type == session.TypeControlResponse {
				e.ctl <- env
			}
		}})
	}()
	t.Cleanup(func() {
		cancel()
		conn.Close(transport.StatusNormalClosure, "")
		<-e.served
	})
	if r := e.control(t, session.ActionSessionOpen, `{"appId":"`+appID+`"}`); !r.Success {
		t.Fatalf("session.open refused: %s", r.Message)
	}
	ctx, cancelWait := context.WithCancel(t.Context())
	defer cancelWait()
	sess, err := h.WaitSession(ctx, func(s *host.Session) bool {
		in := s.Info()
		return in.AppID == appID && in.DeviceID == e.id.deviceID && in.Opened && in.State == host.StateConnected
	})
	if err != nil {
		t.Fatalf("the session never opened: %v", err)
	}
	e.sess = sess
	return e
}

func (e *evilApp) send(t *testing.T, typ transport.MessageType, data []byte) {
	t.Helper()
	if err := e.conn.Write(context.Background(), typ, data); err != nil {
		t.Fatalf("write: %v", err)
	}
}

// sendControl writes a raw control request and returns the host's answer to id, or nil
// when the host sent none before answering a probe.
func (e *evilApp) sendControl(t *testing.T, raw, id string) *session.ControlEnvelope {
	t.Helper()
	e.send(t, transport.MessageText, []byte(raw))
	probe := session.NewControlRequest(session.ActionAppState, jsontext.Value(`{"state":"foreground"}`))
	b, _ := probe.Marshal()
	e.send(t, transport.MessageText, b)
	var answer *session.ControlEnvelope
	for {
		select {
		case r := <-e.ctl:
			switch r.ReplyTo {
			case probe.ID:
				if !r.Success {
					t.Fatalf("the host refused a normal control request: %s", r.Message)
				}
				return answer
			case id:
				if answer != nil {
					t.Fatalf("two answers to control request %s", id)
				}
				answer = r
			default:
				t.Fatalf("answer to an unknown control request: %+v", r)
			}
		case <-t.Context().Done():
			t.Fatal("the host stopped answering control requests")
		}
	}
}

// control sends a well-formed control request and returns the answer.
func (e *evilApp) control(t *testing.T, action, payload string) *session.ControlEnvelope {
	t.Helper()
	req := session.NewControlRequest(action, jsontext.Value(payload))
	b, err := req.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	e.send(t, transport.MessageText, b)
	select {
	case r := <-e.ctl:
		if r.ReplyTo != req.ID {
			t.Fatalf("answer to %s, want %s", r.ReplyTo, req.ID)
		}
		return r
	case <-t.Context().Done():
		t.Fatalf("no answer to %s", action)
		return nil
	}
}

// alive proves the session still works both ways: a host call reaches the app and is
// answered, and a control request is answered.
func (e *evilApp) alive(t *testing.T) {
	t.Helper()
	callEcho(t, e.sess, "alive")
	if r := e.control(t, session.ActionAppState, `{"state":"foreground"}`); !r.Success {
		t.Fatalf("app.state refused: %s", r.Message)
	}
}

func callEcho(t *testing.T, s *host.Session, nonce string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	res, err := s.Tools().Call(ctx, wire.Call{ToolID: "e.echo", Arguments: jsontext.Value(`{"nonce":"` + nonce + `"}`)})
	if err != nil {
		t.Fatalf("e.echo on %s: %v", s.ID(), err)
	}
	var out nonceOut
	if err := wire.Unmarshal(res.Payload.Result, &out); err != nil || out.Nonce != nonce {
		t.Fatalf("e.echo on %s answered %s", s.ID(), res.Payload.Result)
	}
}

// holdCall starts an e.hold call on s and returns its request id and a function that
// waits for its outcome.
func (e *evilApp) holdCall(t *testing.T) (string, func() (*tools.CallResult, error)) {
	t.Helper()
	type result struct {
		res *tools.CallResult
		err error
	}
	ch := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		r, err := e.sess.Tools().Call(ctx, wire.Call{ToolID: "e.hold"})
		ch <- result{r, err}
	}()
	var id string
	select {
	case id = <-e.held:
	case <-t.Context().Done():
		t.Fatal("e.hold never ran")
	}
	return id, func() (*tools.CallResult, error) {
		t.Helper()
		select {
		case r := <-ch:
			return r.res, r.err
		case <-t.Context().Done():
			t.Fatal("stuck caller")
			return nil, nil
		}
	}
}

// release lets a held call return its genuine result (or does nothing once the app's
// connection is over: the held call ended with it).
func (e *evilApp) release() {
	select {
	case e.resume <- struct{}{}:
	case <-e.served:
	}
}

// waitStats polls the session's client counters until cond holds.
func waitStats(t *testing.T, s *host.Session, what string, cond func(tools.Stats) bool) {
	t.Helper()
	for !cond(s.Tools().Stats()) {
		if t.Context().Err() != nil {
			t.Fatalf("%s: stats %+v", what, s.Tools().Stats())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func bgCtx() context.Context { return context.Background() }
