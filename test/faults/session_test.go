package faults

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ansight-go/ansight/app/connect"
	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/host/tools"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/transport/faultconn"
	"github.com/ansight-go/ansight/wire"
)

// Session-level faults: the real host and the real SDK session client, over UDP enrollment
// and the WebSocket on loopback.

const faultAppID = "dev.ansight.faults"

// newHost starts a host with its pairing state and artifacts under stateDir, enrolling on
// the UDP port given (0: any). Transfers that received bytes are reported to m.
func newHost(t *testing.T, stateDir string, port int, m midway) *host.Server {
	t.Helper()
	srv, err := host.New(host.Options{
		DiscoveryAddr: fmt.Sprintf("127.0.0.1:%d", port), ListenAddr: "127.0.0.1:0", StateDir: stateDir, HostName: "faults",
		Tools: tools.Options{ArtifactDir: filepath.Join(stateDir, "artifacts"), Timeout: hostWait, OnTransfer: m.observe},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// running is a connect.Run in the background.
type running struct {
	states chan connect.StateChange
	done   chan error
	cancel context.CancelFunc
}

// runApp keeps f's app connected to the host enrolling on port, in local mode.
func runApp(t *testing.T, f *fixture, port int) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{states: make(chan connect.StateChange, 64), done: make(chan error, 1), cancel: cancel}
	local := connect.Local{HostAddress: "127.0.0.1", DiscoveryPorts: []int{port}}
	opts := connect.Options{AppID: faultAppID, StateDir: t.TempDir(),
		ReconnectDelay: 20 * time.Millisecond, MaxReconnectDelay: 200 * time.Millisecond,
		OnState: func(s connect.StateChange) {
			select {
			case r.states <- s:
			default:
			}
		}}
	go func() { r.done <- connect.Run(ctx, f.app, local, opts) }()
	t.Cleanup(func() {
		cancel()
		if err := <-r.done; err != nil {
			t.Errorf("connect.Run = %v", err)
		}
	})
	return r
}

// await waits for the next report of state want.
func (r *running) await(t *testing.T, want connect.State) connect.StateChange {
	t.Helper()
	timeout := t.Context().Done()
	for {
		select {
		case s := <-r.states:
			if s.State == want {
				return s
			}
		case err := <-r.done:
			r.done <- err
			t.Fatalf("connect.Run ended (%v) before %v", err, want)
		case <-timeout:
			t.Fatalf("the app never reached %v", want)
		}
	}
}

// openSession waits for the app's opened, connected session on srv.
func openSession(t *testing.T, srv *host.Server) *host.Session {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s, err := srv.WaitSession(ctx, func(s *host.Session) bool {
		in := s.Info()
		return in.AppID == faultAppID && in.Opened && in.State == host.StateConnected
	})
	if err != nil {
		t.Fatalf("no open session for the app: %v", err)
	}
	return s
}

func sessionEcho(t *testing.T, s *host.Session, nonce string) {
	t.Helper()
	echo(t, s.Tools(), nonce)
}

// oneFailedTransfer checks a call whose transfer was cut: the call has its answer, with
// one artifact that failed.
func oneFailedTransfer(t *testing.T, what string, res *tools.CallResult, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if len(res.Artifacts) != 1 || res.Artifacts[0].Err == nil {
		t.Fatalf("artifacts %+v, want one failed transfer", res.Artifacts)
	}
}

// TestResumeAfterDropMidCall: the host loses the connection while a call runs; the caller
// gets a transport error at once, the tool's context is cancelled, and the app reconnects
// with the same process session id, resuming the same session id.
func TestResumeAfterDropMidCall(t *testing.T) {
	leakCheck(t)
	f := newFixture(t)
	srv := newHost(t, t.TempDir(), 0, newMidway())
	r := runApp(t, f, int(srv.DiscoveryAddr().Port()))
	first := r.await(t, connect.StateConnected)
	s := openSession(t, srv)
	id := s.ID()
	sessionEcho(t, s, "before")

	wait := start(t, "f.block", func() (*tools.CallResult, error) { return s.Tools().Call(bg, wire.Call{ToolID: "f.block"}) })
	f.await(t, "f.block")
	s.Disconnect()
	_, err := wait()
	wantTransportError(t, err, tools.ErrSessionClosed)
	if herr := <-f.blockErrs; herr == nil {
		t.Error("the tool's context was not cancelled when its connection died")
	}

	again := r.await(t, connect.StateConnected)
	if again.ProcessSessionID != first.ProcessSessionID {
		t.Errorf("process session id changed across the reconnect: %s, then %s", first.ProcessSessionID, again.ProcessSessionID)
	}
	resumed := openSession(t, srv)
	if resumed.ID() != id || resumed != s {
		t.Errorf("reconnect made session %s, want %s resumed", resumed.ID(), id)
	}
	if n := len(srv.Sessions()); n != 1 {
		t.Errorf("%d sessions listed, want the one resumed", n)
	}
	sessionEcho(t, resumed, "after")
}

// TestResumeAfterDropMidTransfer: the host loses the connection while an artifact streams;
// the call keeps its answer with the transfer failed, no partial file is left in the
// session's artifact directory, and the session resumes.
func TestResumeAfterDropMidTransfer(t *testing.T) {
	leakCheck(t)
	f := newFixture(t)
	state := t.TempDir()
	m := newMidway()
	srv := newHost(t, state, 0, m)
	r := runApp(t, f, int(srv.DiscoveryAddr().Port()))
	r.await(t, connect.StateConnected)
	s := openSession(t, srv)

	wait := start(t, "f.file", func() (*tools.CallResult, error) { return s.Tools().Call(bg, fileCall(4*chunk, true)) })
	f.await(t, "f.file")
	m.await(t)
	s.Disconnect()
	f.releaseAll()
	res, err := wait()
	oneFailedTransfer(t, "call", res, err)
	r.await(t, connect.StateConnected)
	resumed := openSession(t, srv)
	if resumed.ID() != s.ID() {
		t.Errorf("session %s after the reconnect, want %s", resumed.ID(), s.ID())
	}
	sessionEcho(t, resumed, "after")
	noPartialArtifacts(t, filepath.Join(state, "artifacts"))
}

// TestHostRestart: the host stops while a call and a transfer are pending and starts again
// on the same state directory. The pending requests end with transport errors, the partial
// artifact is deleted, the grant persists (no second grant), and the app re-enrolls by
// itself and works.
func TestHostRestart(t *testing.T) {
	leakCheck(t)
	f := newFixture(t)
	state := t.TempDir()
	m := newMidway()
	srv := newHost(t, state, 0, m)
	port := int(srv.DiscoveryAddr().Port())
	r := runApp(t, f, port)
	r.await(t, connect.StateConnected)
	s := openSession(t, srv)
	grants := srv.Grants()
	if len(grants) != 1 {
		t.Fatalf("grants %+v, want the app's one", grants)
	}

	call := start(t, "f.block", func() (*tools.CallResult, error) { return s.Tools().Call(bg, wire.Call{ToolID: "f.block"}) })
	f.await(t, "f.block")
	file := start(t, "f.file", func() (*tools.CallResult, error) { return s.Tools().Call(bg, fileCall(4*chunk, true)) })
	f.await(t, "f.file")
	m.await(t)

	srv.Close()
	_, err := call()
	wantTransportError(t, err, tools.ErrSessionClosed)
	f.releaseAll()
	res, err := file()
	oneFailedTransfer(t, "transfer call", res, err)
	noPartialArtifacts(t, filepath.Join(state, "artifacts"))
	if st := r.await(t, connect.StateDisconnected); st.Err == nil {
		t.Error("the app saw no error when the host went away")
	}

	srv2 := newHost(t, state, port, newMidway())
	r.await(t, connect.StateConnected)
	s2 := openSession(t, srv2)
	sessionEcho(t, s2, "restarted")
	after := srv2.Grants()
	if len(after) != 1 || after[0].ID != grants[0].ID {
		t.Errorf("grants after the restart %+v, want the same grant %s", after, grants[0].ID)
	}
	if s2.Info().GrantID != grants[0].ID {
		t.Errorf("the new session uses grant %s, want %s", s2.Info().GrantID, grants[0].ID)
	}
	noPartialArtifacts(t, filepath.Join(state, "artifacts"))
}

// TestReplacedConnectionFailsPending: a second connection of the same app process (same
// grant and process session id) replaces the first; a call pending on the first ends with
// a transport error naming the replacement.
func TestReplacedConnectionFailsPending(t *testing.T) {
	leakCheck(t)
	f := newFixture(t)
	srv := newHost(t, t.TempDir(), 0, newMidway())
	port := int(srv.DiscoveryAddr().Port())
	dir := t.TempDir()
	local := connect.Local{HostAddress: "127.0.0.1", DiscoveryPorts: []int{port}}
	opts := connect.Options{AppID: faultAppID, StateDir: dir}
	first, err := connect.Dial(bg, f.app, local, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	s := openSession(t, srv)
	wait := start(t, "f.block", func() (*tools.CallResult, error) { return s.Tools().Call(bg, wire.Call{ToolID: "f.block"}) })
	f.await(t, "f.block")

	second, err := connect.Dial(bg, f.app, local, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	_, err = wait()
	wantTransportError(t, err, host.ErrReplaced)
	if err := first.Wait(); err == nil {
		t.Error("the replaced connection ended without an error")
	}
	s2 := openSession(t, srv)
	if s2.ID() != s.ID() {
		t.Errorf("session %s, want %s", s2.ID(), s.ID())
	}
	sessionEcho(t, s2, "second")
	if errors.Is(second.Err(), transport.ErrClosed) {
		t.Error("the replacing connection is closed")
	}
}

// TestAppNetworkDiesMidCall: the app's network fails (no close handshake: the host sees an
// abnormal closure) as the request of a call arrives, before the app can run it. The caller
// gets a transport error at once, and the app reconnects on its own and resumes the same
// session.
func TestAppNetworkDiesMidCall(t *testing.T) {
	leakCheck(t)
	f := newFixture(t)
	srv := newHost(t, t.TempDir(), 0, newMidway())
	var wrapped atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	states := make(chan connect.StateChange, 64)
	done := make(chan error, 1)
	go func() {
		local := connect.Local{HostAddress: "127.0.0.1", DiscoveryPorts: []int{int(srv.DiscoveryAddr().Port())}}
		done <- connect.Run(ctx, f.app, local, connect.Options{AppID: faultAppID, StateDir: t.TempDir(),
			ReconnectDelay: 20 * time.Millisecond, MaxReconnectDelay: 200 * time.Millisecond,
			OnState: func(s connect.StateChange) { states <- s },
			// Only the first connection fails: the one that reads the blocking call's request.
			WrapConn: func(c transport.Conn) transport.Conn {
				if wrapped.Add(1) > 1 {
					return c
				}
				return faultconn.Wrap(c, faultconn.Plan{Rules: []faultconn.Rule{{
					Direction: faultconn.Inbound, Match: faultconn.Contains(`"toolId":"f.block"`), Action: faultconn.Kill}}})
			}})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("connect.Run = %v", err)
		}
	})
	connected := func() {
		t.Helper()
		timeout := t.Context().Done()
		for {
			select {
			case s := <-states:
				if s.State == connect.StateConnected {
					return
				}
			case <-timeout:
				t.Fatal("the app never connected")
			}
		}
	}
	connected()
	s := openSession(t, srv)
	id := s.ID()

	wait := start(t, "f.block", func() (*tools.CallResult, error) { return s.Tools().Call(bg, wire.Call{ToolID: "f.block"}) })
	_, err := wait()
	wantTransportError(t, err, tools.ErrSessionClosed)

	connected()
	resumed := openSession(t, srv)
	if resumed.ID() != id {
		t.Errorf("reconnect made session %s, want %s resumed", resumed.ID(), id)
	}
	sessionEcho(t, resumed, "after")
	if n := wrapped.Load(); n < 2 {
		t.Errorf("%d connections, want a second one after the failure", n)
	}
}
