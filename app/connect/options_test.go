package connect

import (
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ansight-go/ansight/pairing"
)

func TestOptionsRejected(t *testing.T) {
	t.Parallel()
	now := time.Now()
	code := func(mutate func(*pairing.InviteDocument)) string {
		doc := testInvite(now, testAppID, 45123)
		mutate(doc)
		c, err := doc.Code()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	tests := []struct {
		name string
		mode Mode
		o    Options
		want string
	}{
		{"no mode", nil, Options{AppID: testAppID}, "Mode"},
		{"no app id", Local{}, Options{}, "AppID"},
		{"any-app id", Local{}, Options{AppID: "*"}, "AppID"},
		{"long app id", Local{}, Options{AppID: strings.Repeat("a", 600)}, "AppID"},
		{"negative timeout", Local{}, Options{AppID: testAppID, ControlTimeout: -1}, "negative"},
		{"negative enroll timeout", Local{EnrollTimeout: -1}, Options{AppID: testAppID}, "Local.EnrollTimeout"},
		{"port 0", Local{DiscoveryPorts: []int{0}}, Options{AppID: testAppID}, "port"},
		{"port too big", Local{DiscoveryPorts: []int{65536}}, Options{AppID: testAppID}, "port"},
		{"invite port too big", Invite{Code: code(func(*pairing.InviteDocument) {}), DiscoveryPorts: []int{65536}}, Options{AppID: testAppID}, "Invite.DiscoveryPorts"},
		{"invite missing", Invite{}, Options{AppID: testAppID}, "Invite.Code"},
		{"invite garbage", Invite{Code: "hello"}, Options{AppID: testAppID}, "Invite.Code"},
		{"invite bad code", Invite{Code: "ans2:!!!"}, Options{AppID: testAppID}, "Invite.Code"},
		{"invite other app", Invite{Code: code(func(*pairing.InviteDocument) {})}, Options{AppID: "com.other"}, "not \"com.other\""},
		{"invite grant expired", Invite{Code: code(func(d *pairing.InviteDocument) {
			d.Invite.Enrollment.GrantExpiresAt = now.Add(-time.Hour)
		})}, Options{AppID: testAppID}, "expired"},
		{"invite without addresses", Invite{Code: code(func(d *pairing.InviteDocument) {
			d.Discovery.HostAddresses = []string{" ", ""}
		})}, Options{AppID: testAppID}, "HostAddress"},
		{"direct missing token", Direct{URL: "ws://h/ws"}, Options{AppID: testAppID}, "Token"},
		{"direct http", Direct{URL: "http://h/ws", Token: "t"}, Options{AppID: testAppID}, "ws://"},
		{"direct token in url", Direct{URL: "ws://h/ws?token=zzsecret", Token: "t"}, Options{AppID: testAppID}, "Direct.Token"},
		{"direct user info", Direct{URL: "ws://u:zzsecret@h/ws", Token: "t"}, Options{AppID: testAppID}, "user info"},
		{"direct bad url", Direct{URL: "ws://h/%zzsecret", Token: "t"}, Options{AppID: testAppID}, "not a URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.o.StateDir = t.TempDir()
			_, err := newConfig(tt.mode, tt.o, now)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not mention %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "zzsecret") {
				t.Errorf("error %q echoes a secret", err)
			}
		})
	}
}

func TestOptionsDefaults(t *testing.T) {
	if runtime.GOOS == "linux" {
		t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	}
	c, err := newConfig(Local{}, Options{AppID: "com.example/../x"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if c.mode.String() != "local" || c.enrollment.timeout != time.Second || c.ControlTimeout != 15*time.Second ||
		c.DialTimeout != 10*time.Second || c.ReconnectDelay != time.Second || c.MaxReconnectDelay != 30*time.Second {
		t.Errorf("defaults = %+v", c.Options)
	}
	var got []string
	for _, cand := range c.enrollment.candidates {
		got = append(got, cand.String())
	}
	if want := []string{"127.0.0.1:45123", "127.0.0.1:46123"}; !slices.Equal(got, want) {
		t.Errorf("candidates = %v, want %v", got, want)
	}
	if c.DeviceName == "" || c.AppName != c.AppID || c.configID != "local:com.example/../x" {
		t.Errorf("device %q app %q config %q", c.DeviceName, c.AppName, c.configID)
	}
	if filepath.Base(c.StateDir) != "com.example%2F..%2Fx" || filepath.Base(filepath.Dir(c.StateDir)) != "ansight" {
		t.Errorf("StateDir = %s", c.StateDir)
	}

	inv := testInvite(time.Now(), testAppID, 45200)
	inv.Discovery.DiscoveryPort = 0 // falls back to the invite's host port
	code, _ := inv.Code()
	c, err = newConfig(Invite{Code: code}, Options{AppID: testAppID, StateDir: t.TempDir()}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if c.enrollment.timeout != 5*time.Second || len(c.enrollment.candidates) != 1 || c.enrollment.candidates[0].String() != "127.0.0.1:45200" {
		t.Errorf("invite config: timeout %v candidates %v", c.enrollment.timeout, c.enrollment.candidates)
	}
	if c.enrollment.request.AccessToken != inv.Invite.Enrollment.AccessToken || c.configID != inv.Invite.InviteID {
		t.Error("invite mode must present the invite's secret under its invite id")
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	addrs, err := resolve(t.Context(), "localhost")
	if err != nil {
		t.Skipf("no resolver: %v", err)
	}
	if len(addrs) == 0 || !addrs[0].IsLoopback() {
		t.Errorf("localhost = %v", addrs)
	}
	if a, _ := resolve(t.Context(), "::ffff:127.0.0.1"); len(a) != 1 || !a[0].Is4() {
		t.Errorf("mapped address not unmapped: %v", a)
	}
}

func TestStateString(t *testing.T) {
	t.Parallel()
	for s, want := range map[State]string{StateConnecting: "connecting", StateConnected: "connected", StateDisconnected: "disconnected", 9: "State(9)"} {
		t.Run(want, func(t *testing.T) {
			t.Parallel()
			if s.String() != want {
				t.Errorf("%d.String() = %q", int(s), s.String())
			}
		})
	}
}

func TestModeString(t *testing.T) {
	t.Parallel()
	for _, m := range []Mode{Local{}, Invite{}, Direct{}, &Local{}} {
		want := map[string]string{"connect.Local": "local", "connect.Invite": "invite", "connect.Direct": "direct", "*connect.Local": "local"}[fmt.Sprintf("%T", m)]
		t.Run(fmt.Sprintf("%T", m), func(t *testing.T) {
			t.Parallel()
			if got := m.String(); got != want {
				t.Errorf("String() = %q, want %q", got, want)
			}
		})
	}
}
