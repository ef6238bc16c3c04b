package cli

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/connect"
	"github.com/ansight-go/ansight/app/files"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/hostapi"
)

// fileAppID is the app cmdFileApp plays; bareAppID the one "fileapp -bare" plays.
const (
	fileAppID = "com.example.files"
	bareAppID = "com.example.bare"
)

// cmdFileApp connects an app with the SDK's file tools and no UI tools to the resident host
// of $ANSIGHT_STATE_DIR, in local mode, serving $WORK/appfiles as root "docs"; it sets
// $FILEAPP to its session id and runs until the script ends. With -bare the app has no
// file tools either (app ID com.example.bare, $BAREAPP).
func cmdFileApp(ts *testscript.TestScript, neg bool, args []string) {
	bare := len(args) == 1 && args[0] == "-bare"
	if neg || (len(args) != 0 && !bare) {
		ts.Fatalf("usage: fileapp [-bare]")
	}
	appID, name, env := fileAppID, "Files", "FILEAPP"
	if bare {
		appID, name, env = bareAppID, "Bare", "BAREAPP"
	}
	b := hostapi.NewClient(filepath.Join(ts.Getenv("ANSIGHT_STATE_DIR"), hostapi.SocketName))
	ctx, cancel := context.WithCancel(context.Background())
	st, err := b.Status(ctx)
	cancel()
	ts.Check(err)
	dir := ts.MkAbs("appfiles")
	ts.Check(os.MkdirAll(dir, 0o755))
	a := app.New(app.Options{Guard: catalog.GuardFullAccess})
	if !bare {
		ts.Check(files.Register(a, files.Options{Roots: []files.Root{{Alias: "docs", Path: dir}}}))
	}
	ap, err := netip.ParseAddrPort(st.Discovery)
	ts.Check(err)
	port := int(ap.Port())
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		connect.Run(runCtx, a, connect.Local{HostAddress: "127.0.0.1", DiscoveryPorts: []int{port}}, connect.Options{
			AppID: appID, AppName: name, DeviceName: "files (test)", StateDir: ts.MkAbs(env + "-state"),
			Logger: slog.New(slog.DiscardHandler), ReconnectDelay: 200 * time.Millisecond,
		})
	}()
	// The app stops with its host: left running, it would enroll with whichever host binds
	// the port next — the default port, which another script's demo may take (it joined
	// fleet.txtar's hosts and satisfied their waitfleet once).
	go func() {
		for {
			select {
			case <-runCtx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			if _, err := b.Status(runCtx); errors.Is(err, hostapi.ErrHostUnavailable) {
				stop()
				return
			}
		}
	}()
	ts.Defer(func() { stop(); <-done })
	waitHost(ts, "the file app's session", func(ctx context.Context, c *hostapi.Client) bool {
		s, err := c.Sessions(ctx)
		if err != nil {
			return false
		}
		for _, ss := range s.Sessions {
			if ss.AppID == appID && ss.State == hostapi.StateConnected {
				ts.Setenv(env, ss.ID)
				return true
			}
		}
		return false
	})
}
