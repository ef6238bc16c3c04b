package fleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// exampleConfig is the server configuration docs/fleet.md shows.
const exampleConfig = "testdata/nats-server.conf"

// TestExampleConfigPermissions runs a fleet on the documented server configuration: a CI
// user lists and calls read tools, and is refused the others by NATS itself.
func TestExampleConfigPermissions(t *testing.T) {
	opts, err := server.ProcessConfigFile(exampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	ns := startNATS(t, opts)
	user := func(name, password, inbox string) Config {
		cfg := testConfig(ns)
		cfg.User, cfg.Password, cfg.InboxPrefix = name, password, inbox
		return cfg
	}
	hostCfg := user("lab-host", "change-me-host", "")
	a := startTestHost(t, hostCfg, "a")
	b := startTestHost(t, hostCfg, "b")
	aID := QualifiedID(a.connectApp(notesApp), "a")
	bID := QualifiedID(b.connectApp(notesApp), "b")
	ctx := context.Background()

	dev := dialClient(t, user("dev", "change-me-dev", "_INBOX_dev"))
	ci := dialClient(t, user("ci", "change-me-ci", "_INBOX_ci"))
	waitListing(t, dev, 2)
	waitListing(t, ci, 2)

	t.Run("ci calls read tools", func(t *testing.T) {
		res, err := ci.Call(ctx, bID, hostapi.CallRequest{ToolID: "notes.list"}, nil)
		if err != nil || !res.Success {
			t.Fatalf("read call = %+v, %v", res, err)
		}
		shot, err := ci.Call(ctx, aID, hostapi.CallRequest{ToolID: wire.ScreenshotToolID}, nil)
		if err != nil || !shot.Success || len(shot.Artifacts) != 1 || shot.Artifacts[0].Path == "" {
			t.Fatalf("screenshot = %+v, %v", shot, err)
		}
		if _, err := ci.Tools(ctx, aID, hostapi.ToolsRequest{}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("ci is refused write tools", func(t *testing.T) {
		for _, call := range []func() (*hostapi.ToolError, error){
			func() (*hostapi.ToolError, error) {
				res, err := ci.Call(ctx, aID, hostapi.CallRequest{ToolID: "notes.create", Arguments: jsontext.Value(`{"title":"from ci"}`)}, nil)
				if res == nil {
					return nil, err
				}
				return res.Error, err
			},
			func() (*hostapi.ToolError, error) {
				res, err := ci.Batch(ctx, aID, hostapi.BatchRequest{Calls: []hostapi.CallRequest{
					{ToolID: "notes.list"}, {ToolID: "notes.create", Arguments: jsontext.Value(`{"title":"from ci"}`)}}}, nil)
				if res == nil {
					return nil, err
				}
				return res.Error, err
			},
		} {
			te, err := call()
			if err != nil || te == nil || te.Code != wire.CodePermissionDenied || te.Kind != wire.KindDenied ||
				!strings.Contains(te.Message, "ansight.lab.host.a.") || !strings.Contains(te.Message, "write") {
				t.Errorf("write call by ci: %+v, %v", te, err)
			}
		}
		// Nothing ran: the developer sees no note from ci.
		res, err := dev.Call(ctx, aID, hostapi.CallRequest{ToolID: "notes.list"}, nil)
		if err != nil || !res.Success || strings.Contains(string(res.Result.Result), "from ci") {
			t.Fatalf("notes on a = %+v, %v", res, err)
		}
	})

	t.Run("dev calls write tools", func(t *testing.T) {
		res, err := dev.Call(ctx, aID, hostapi.CallRequest{ToolID: "notes.create", Arguments: jsontext.Value(`{"title":"from dev"}`)}, nil)
		if err != nil || !res.Success {
			t.Fatalf("write call by dev = %+v, %v", res, err)
		}
	})

	t.Run("ci is refused renames, dev is not", func(t *testing.T) {
		if _, err := ci.Rename(ctx, aID, hostapi.RenameRequest{Label: "from ci"}); wire.CodeOf(err) != wire.CodePermissionDenied {
			t.Errorf("rename by ci: %v, want %s", err, wire.CodePermissionDenied)
		}
		// The test hosts record nothing: the host itself answers dev.
		if _, err := dev.Rename(ctx, aID, hostapi.RenameRequest{Label: "from dev"}); wire.CodeOf(err) != wire.CodeRecordingOff {
			t.Errorf("rename by dev: %v, want the host's %s", err, wire.CodeRecordingOff)
		}
	})

	t.Run("ci cannot answer for a host", func(t *testing.T) {
		errs := make(chan error, 4)
		cfg := user("ci", "change-me-ci", "_INBOX_ci")
		nc, err := dial(cfg, "impostor", handlers{asyncError: func(_ *nats.Subscription, err error) { errs <- err }})
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		if _, err := nc.Subscribe("ansight.lab.host.a.>", func(*nats.Msg) {}); err != nil {
			t.Fatal(err)
		}
		nc.Flush()
		select {
		case err := <-errs:
			if !errors.Is(err, nats.ErrPermissionViolation) || !strings.Contains(err.Error(), "ansight.lab.host.a.>") {
				t.Errorf("subscription error = %v", err)
			}
		case <-t.Context().Done():
			t.Error("the server let ci subscribe to a host's requests")
		}
	})

	t.Run("ci cannot read others' answers", func(t *testing.T) {
		_, err := Dial(ctx, ClientOptions{Config: user("ci", "change-me-ci", "")}) // the default _INBOX prefix
		if wire.CodeOf(err) != wire.CodePermissionDenied || !strings.Contains(err.Error(), "InboxPrefix") {
			t.Errorf("ci on the shared inbox prefix: %v", err)
		}
	})

	t.Run("bad password", func(t *testing.T) {
		_, err := Dial(ctx, ClientOptions{Config: user("ci", "wrong", "_INBOX_ci")})
		if err == nil || strings.Contains(err.Error(), "wrong") {
			t.Errorf("bad password: %v", err)
		}
	})
}

// TestInboxRefusalKnownAtOnce subscribes a CI user's mux on the shared inbox prefix over a
// connection whose error handler drops everything: the refusal must be known when subscribe
// returns, from the connection itself, not only when NATS's callback goroutine gets to run
// (on a busy machine that was after Dial's first listing stopped waiting, and Dial succeeded).
func TestInboxRefusalKnownAtOnce(t *testing.T) {
	opts, err := server.ProcessConfigFile(exampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	ns := startNATS(t, opts)
	for _, tc := range []struct {
		inbox string
		ok    bool
	}{{"", false}, {"_INBOX_ci", true}} {
		natsOpts := []nats.Option{nats.UserInfo("ci", "change-me-ci"), nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {})}
		if tc.inbox != "" {
			natsOpts = append(natsOpts, nats.CustomInboxPrefix(tc.inbox))
		}
		nc, err := nats.Connect(ns.url(), natsOpts...)
		if err != nil {
			t.Fatal(err)
		}
		err = newMux(nc).subscribe(t.Context())
		nc.Close()
		switch {
		case tc.ok && err != nil:
			t.Errorf("inbox %q: %v", tc.inbox, err)
		case !tc.ok && (wire.CodeOf(err) != wire.CodePermissionDenied || !strings.Contains(fmt.Sprint(err), "InboxPrefix")):
			t.Errorf("inbox %q: %v, want %s naming InboxPrefix", tc.inbox, err, wire.CodePermissionDenied)
		}
	}
}

// TestNoSecretsLogged runs a call with an argument and credentials through a host and a
// client that log everything at debug level, and looks for them in the logs.
func TestNoSecretsLogged(t *testing.T) {
	opts, err := server.ProcessConfigFile(exampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	ns := startNATS(t, opts)
	var logs lockedBuffer
	cfg := testConfig(ns)
	cfg.Logger = logs.logger()
	hostCfg := cfg
	hostCfg.User, hostCfg.Password = "lab-host", "change-me-host"
	h := startTestHost(t, hostCfg, "a")
	id := QualifiedID(h.connectApp(notesApp), "a")
	devCfg := cfg
	devCfg.User, devCfg.Password, devCfg.InboxPrefix = "dev", "change-me-dev", "_INBOX_dev"
	devCfg.URL = "nats://dev:change-me-dev@" + strings.TrimPrefix(ns.url(), "nats://")
	devCfg.User, devCfg.Password = "", ""
	c := dialClient(t, devCfg)
	res, err := c.Call(context.Background(), id, hostapi.CallRequest{ToolID: "notes.create", Arguments: jsontext.Value(`{"title":"argument-canary-7f3a"}`)}, nil)
	if err != nil || !res.Success {
		t.Fatalf("call = %+v, %v", res, err)
	}
	h.close()
	c.Close()
	out := logs.bytes()
	if !bytes.Contains(out, []byte("fleet: request")) {
		t.Fatalf("the host logged no request at debug level:\n%s", out)
	}
	for _, secret := range []string{"argument-canary-7f3a", "change-me-host", "change-me-dev"} {
		if bytes.Contains(out, []byte(secret)) {
			t.Errorf("the logs hold %q:\n%s", secret, out)
		}
	}
}

// lockedBuffer collects logs from many goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.b.Bytes())
}

func (l *lockedBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// TestDocumentedConfig keeps the configuration in docs/fleet.md identical to the one
// tested here.
func TestDocumentedConfig(t *testing.T) {
	want, err := os.ReadFile(exampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../docs/fleet.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(doc, append(append([]byte("```\n"), want...), "```"...)) {
		t.Error("docs/fleet.md does not show fleet/testdata/nats-server.conf as it is: copy it there, in a fenced block")
	}
}
