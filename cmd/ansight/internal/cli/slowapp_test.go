package cli

import (
	"context"
	"image"
	"log/slog"
	"net/netip"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/connect"
	"github.com/ansight-go/ansight/app/ui"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// slowAppID is the app cmdSlowApp plays.
const slowAppID = "com.example.slow"

// slowApp is the app of one script's cmdSlowApp: a screen that shows "Saved" once saved,
// and test.hang, a tool that answers only when released.
type slowApp struct {
	saved    atomic.Bool
	captured chan struct{} // a capture happened (buffered 1: "at least once since")
	hung     chan struct{} // test.hang started (buffered 1)
	mu       sync.Mutex
	release  chan struct{} // closed by "slowapp release", then replaced
	stop     context.CancelFunc
	done     chan struct{}
}

var slowApps sync.Map // *testscript.TestScript → *slowApp

// cmdSlowApp plays an app for the tests of long calls, limits and disconnects:
//
//	slowapp              connects it to the host of $ANSIGHT_STATE_DIR; $SLOWAPP is its session
//	slowapp saveafter D  once its screen was next captured (a ui.wait polls it), waits D, then shows "Saved"
//	slowapp killonhang   drops its connection once test.hang next starts (the app "crashes" mid-call)
//	slowapp release      answers every test.hang running
//
// The waits are for events (a capture, a call) and a duration that only has to be longer
// than the host's lowered default: a busy machine makes them longer, never too short.
func cmdSlowApp(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("usage: slowapp [saveafter D | killonhang | release]")
	}
	if len(args) == 0 {
		startSlowApp(ts)
		return
	}
	v, ok := slowApps.Load(ts)
	if !ok {
		ts.Fatalf("slowapp %s: run slowapp first", args[0])
	}
	s := v.(*slowApp)
	switch {
	case args[0] == "saveafter" && len(args) == 2:
		d, err := time.ParseDuration(args[1])
		ts.Check(err)
		s.saved.Store(false)
		drain(s.captured)
		go func() {
			<-s.captured
			time.Sleep(d)
			s.saved.Store(true)
		}()
	case args[0] == "killonhang" && len(args) == 1:
		drain(s.hung)
		go func() {
			<-s.hung
			s.stop()
		}()
	case args[0] == "release" && len(args) == 1:
		s.mu.Lock()
		close(s.release)
		s.release = make(chan struct{})
		s.mu.Unlock()
	default:
		ts.Fatalf("usage: slowapp [saveafter D | killonhang | release]")
	}
}

func drain(c chan struct{}) {
	select {
	case <-c:
	default:
	}
}

func startSlowApp(ts *testscript.TestScript) {
	s := &slowApp{captured: make(chan struct{}, 1), hung: make(chan struct{}, 1), release: make(chan struct{}), done: make(chan struct{})}
	a := app.New(app.Options{Guard: catalog.GuardFullAccess})
	ts.Check(ui.Register(a, slowScreen{s}, ui.Options{}))
	ts.Check(a.Register(app.Tool{Definition: catalog.Definition{ID: "test.hang", Name: "Hang", Description: "Answers when the test releases it.",
		Category: "test", Policy: wire.PolicyRead, ArgumentsSchema: jsontext.Value(`{"type":"object"}`),
		ResultSchema: jsontext.Value(`{"type":"object","properties":{"released":{"type":"boolean"}}}`)},
		Handler: func(ctx context.Context, _ *app.Call) (any, error) {
			s.mu.Lock()
			release := s.release
			s.mu.Unlock()
			select {
			case s.hung <- struct{}{}:
			default:
			}
			select {
			case <-release:
				return map[string]bool{"released": true}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}}))
	b := hostapi.NewClient(filepath.Join(ts.Getenv("ANSIGHT_STATE_DIR"), hostapi.SocketName))
	st, err := b.Status(context.Background())
	ts.Check(err)
	ap, err := netip.ParseAddrPort(st.Discovery)
	ts.Check(err)
	runCtx, stop := context.WithCancel(context.Background())
	s.stop = stop
	go func() {
		defer close(s.done)
		connect.Run(runCtx, a, connect.Local{HostAddress: "127.0.0.1", DiscoveryPorts: []int{int(ap.Port())}}, connect.Options{
			AppID: slowAppID, AppName: "Slow", DeviceName: "slow (test)", StateDir: ts.MkAbs("slowapp-state"),
			Logger: slog.New(slog.DiscardHandler), ReconnectDelay: 200 * time.Millisecond,
		})
	}()
	ts.Defer(func() { stop(); <-s.done })
	slowApps.Store(ts, s)
	ts.Defer(func() { slowApps.Delete(ts) })
	waitHost(ts, "the slow app's session", func(ctx context.Context, c *hostapi.Client) bool {
		list, err := c.Sessions(ctx)
		if err != nil {
			return false
		}
		for _, ss := range list.Sessions {
			if ss.AppID == slowAppID && ss.State == hostapi.StateConnected {
				ts.Setenv("SLOWAPP", ss.ID)
				return true
			}
		}
		return false
	})
}

// slowScreen shows a status "Saved" once the app is saved.
type slowScreen struct{ s *slowApp }

func (sc slowScreen) Capture(context.Context) (*ui.Node, error) {
	select {
	case sc.s.captured <- struct{}{}:
	default:
	}
	root := &ui.Node{ID: "root", Role: "window", Label: "Editor", Bounds: &ui.Bounds{Width: 100, Height: 100}}
	if sc.s.saved.Load() {
		root.Children = []*ui.Node{{ID: "status", Role: "status", Label: "Saved", Bounds: &ui.Bounds{Width: 50, Height: 10}}}
	}
	return root, nil
}

func (slowScreen) Perform(context.Context, string, ui.Action) (map[string]any, error) {
	return nil, nil
}

func (slowScreen) Render(context.Context) (image.Image, error) {
	return image.NewGray(image.Rect(0, 0, 4, 4)), nil
}
