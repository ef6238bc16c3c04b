package connect

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire/session"
	"github.com/go-json-experiment/json"
)

func newTestClient(c *config, d *pipeDialer) *client {
	return &client{cfg: c, serve: fakeServe, dial: d.dial}
}

func TestHandshakeAndCleanClose(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		d := &pipeDialer{newHost: func(int) *controlHost { return &controlHost{respond: answerAll} }}
		c := directConfig(t, Options{AppName: "Notes", AppVersion: "1.2.3", DeviceName: "box"})
		c.configID = "local:" + testAppID
		s, err := newTestClient(c, d).connect(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		h := d.host(0)
		want := []string{session.ActionSessionOpen, session.ActionDeviceProfile, session.ActionAppState}
		if got := h.actions(); !slices.Equal(got, want) {
			t.Fatalf("actions = %v, want %v", got, want)
		}

		// The token travels in the query (official host) and as a bearer header (ours).
		u, _ := url.Parse(d.urls[0])
		if u.Query().Get("token") != "direct-secret-token" || d.headers[0].Get("Authorization") != "Bearer direct-secret-token" {
			t.Errorf("upgrade url %s header %v", d.urls[0], d.headers[0])
		}
		if strings.Contains(s.Endpoint(), "direct-secret-token") {
			t.Errorf("Endpoint() = %s leaks the token", s.Endpoint())
		}

		for _, r := range h.requests {
			if !strings.HasPrefix(r.ID, "client.") || len(r.ID) != 39 {
				t.Errorf("control id %q is not client.<32 hex>", r.ID)
			}
		}
		var open map[string]any
		decodePayload(t, h.request(session.ActionSessionOpen), &open)
		if open["clientName"] != "box" || open["appId"] != testAppID || open["configId"] != "local:"+testAppID || open["openedAtUtc"] == nil {
			t.Errorf("session.open payload = %v", open)
		}
		var prof map[string]any
		decodePayload(t, h.request(session.ActionDeviceProfile), &prof)
		sdk, _ := prof["sdk"].(map[string]any)
		app, _ := prof["app"].(map[string]any)
		dev, _ := prof["device"].(map[string]any)
		if prof["type"] != "DeviceAppProfile" || prof["schema"] != "ansight.device-app-profile.v1" ||
			prof["sessionJpegCaptureControlVersion"] != float64(1) || prof["reasonCode"] != float64(1) {
			t.Errorf("profile header = %v", prof)
		}
		if sdk["name"] != "ansight-go" || sdk["language"] != "go" || sdk["version"] == "" {
			t.Errorf("profile sdk = %v", sdk)
		}
		if app["appId"] != testAppID || app["appName"] != "Notes" || app["versionName"] != "1.2.3" {
			t.Errorf("profile app = %v", app)
		}
		if dev["osName"] == "" || dev["cpuArch"] == "" {
			t.Errorf("profile device = %v", dev)
		}
		var state map[string]any
		decodePayload(t, h.request(session.ActionAppState), &state)
		if state["state"] != "foreground" || state["changedAtUtc"] == nil {
			t.Errorf("app.state payload = %v", state)
		}

		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		<-h.done
		if got := h.actions(); got[len(got)-1] != session.ActionSessionComplete {
			t.Errorf("last action = %s, want session.complete", got[len(got)-1])
		}
		if s.Wait() != nil {
			t.Errorf("Wait after Close = %v, want nil", s.Wait())
		}
		if s.Close() != nil {
			t.Error("second Close failed")
		}
	})
}

func decodePayload(t *testing.T, env *session.ControlEnvelope, v any) {
	t.Helper()
	if env == nil {
		t.Fatal("request missing")
	}
	if err := json.Unmarshal(env.Payload, v); err != nil {
		t.Fatal(err)
	}
}

// The host may send tool.query before it has seen session.open (the official host does):
// the app's reader must already run. This host answers nothing until the query is answered.
func TestReaderRunsBeforeSessionOpen(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		query := []byte(`{"type":"tool.query","id":"query-1","sessionId":"com-example-notes-001","payload":{}}`)
		d := &pipeDialer{newHost: func(int) *controlHost {
			return &controlHost{preamble: [][]byte{query}, awaitTool: true, respond: answerAll}
		}}
		c := directConfig(t, Options{})
		s, err := newTestClient(c, d).connect(t.Context())
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		if h := d.host(0); len(h.others) != 1 || !strings.Contains(string(h.others[0]), `"replyTo":"query-1"`) {
			t.Errorf("host got %q, want the tool.query's answer", h.others)
		}
		s.Close()
	})
}

func TestUnansweredControlRequestDropsSession(t *testing.T) {
	t.Parallel()
	for _, silentOn := range []string{session.ActionSessionOpen, session.ActionDeviceProfile, session.ActionAppState} {
		t.Run(silentOn, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				d := &pipeDialer{newHost: func(int) *controlHost {
					return &controlHost{respond: func(_ *controlHost, req *session.ControlEnvelope) *session.ControlEnvelope {
						if req.Action == silentOn {
							return nil
						}
						return req.Reply(true, "", nil)
					}}
				}}
				c := directConfig(t, Options{ControlTimeout: 12 * time.Second})
				start := time.Now()
				_, err := newTestClient(c, d).connect(t.Context())
				if !errors.Is(err, ErrControlTimeout) || !strings.Contains(err.Error(), silentOn) {
					t.Fatalf("err = %v, want ErrControlTimeout", err)
				}
				if waited := time.Since(start); waited != 12*time.Second {
					t.Errorf("gave up after %v, want the control timeout", waited)
				}
				h := d.host(0)
				<-h.done
				if transport.CloseStatus(h.closeErr) != transport.StatusPolicyViolation {
					t.Errorf("host saw %v, want a policy-violation close", h.closeErr)
				}
			})
		})
	}
}

func TestRefusedControlRequestDropsSession(t *testing.T) {
	t.Parallel()
	for _, refused := range []string{session.ActionSessionOpen, session.ActionDeviceProfile, session.ActionAppState} {
		t.Run(refused, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				d := &pipeDialer{newHost: func(int) *controlHost {
					return &controlHost{respond: func(_ *controlHost, req *session.ControlEnvelope) *session.ControlEnvelope {
						return req.Reply(req.Action != refused, "nope", nil)
					}}
				}}
				_, err := newTestClient(directConfig(t, Options{}), d).connect(t.Context())
				ce, ok := errors.AsType[*ControlError](err)
				if !ok || ce.Action != refused || ce.Message != "nope" {
					t.Fatalf("err = %v, want ControlError for %s", err, refused)
				}
				<-d.host(0).done
			})
		})
	}
}

func TestStrayMessagesAreIgnored(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		stray := [][]byte{
			[]byte(`garbage`),
			[]byte(`{"type":"CONTROL_RESP","id":null,"replyTo":"client.unknown","action":"session.open","payload":null,"success":true,"message":null}`),
			[]byte(`{"type":"CONTROL_RESP","replyTo":"x","action":"a","success":"yes"}`),
			[]byte(`{"type":"CONTROL_REQ","id":"host.1","action":"session.open","payload":null}`),
			[]byte(`{"type":"CLIENT_LOG","data":"x"}`),
		}
		d := &pipeDialer{newHost: func(int) *controlHost {
			return &controlHost{preamble: stray, respond: answerAll}
		}}
		s, err := newTestClient(directConfig(t, Options{}), d).connect(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	})
}

func TestSessionEndsWhenHostCloses(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		d := &pipeDialer{newHost: func(int) *controlHost { return &controlHost{respond: answerAll} }}
		s, err := newTestClient(directConfig(t, Options{}), d).connect(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if s.Err() != nil {
			t.Errorf("Err() of a live session = %v", s.Err())
		}
		d.host(0).conn.Close(transport.StatusGoingAway, "host shutting down")
		err = s.Wait()
		if transport.CloseStatus(err) != transport.StatusGoingAway {
			t.Fatalf("Wait = %v, want the host's 1001", err)
		}
		if s.Close() != nil || !errors.Is(s.Err(), err) {
			t.Error("Close after the end must keep the session's error")
		}
	})
}

func TestCloseWithoutAck(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		d := &pipeDialer{newHost: func(int) *controlHost {
			return &controlHost{respond: func(_ *controlHost, req *session.ControlEnvelope) *session.ControlEnvelope {
				if req.Action == session.ActionSessionComplete {
					return nil
				}
				return req.Reply(true, "", nil)
			}}
		}}
		s, err := newTestClient(directConfig(t, Options{}), d).connect(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		s.Close()
		if waited := time.Since(start); waited != completeTimeout {
			t.Errorf("Close waited %v, want %v", waited, completeTimeout)
		}
		h := d.host(0)
		<-h.done
		if ce, ok := errors.AsType[*transport.CloseError](h.closeErr); !ok || ce.Code != transport.StatusNormalClosure || ce.Reason != clientCloseReason {
			t.Errorf("host saw %v, want 1000 %q", h.closeErr, clientCloseReason)
		}
	})
}

func TestConnectCancelledDuringHandshake(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		d := &pipeDialer{newHost: func(int) *controlHost {
			return &controlHost{respond: func(*controlHost, *session.ControlEnvelope) *session.ControlEnvelope { return nil }}
		}}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, err := newTestClient(directConfig(t, Options{}), d).connect(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the context's", err)
		}
		h := d.host(0)
		<-h.done
		if transport.CloseStatus(h.closeErr) != transport.StatusGoingAway {
			t.Errorf("host saw %v, want 1001", h.closeErr)
		}
	})
}
