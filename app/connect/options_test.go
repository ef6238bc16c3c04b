package connect

import (
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ansight-go/ansight/pairing"
)

func TestOptionsRejected(t *testing.T) {
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
		o    Options
		want string
	}{
		{"no app id", Options{}, "AppID"},
		{"any-app id", Options{AppID: "*"}, "AppID"},
		{"long app id", Options{AppID: strings.Repeat("a", 600)}, "AppID"},
		{"negative timeout", Options{AppID: testAppID, ControlTimeout: -1}, "negative"},
		{"port 0", Options{AppID: testAppID, DiscoveryPorts: []int{0}}, "port"},
		{"port too big", Options{AppID: testAppID, DiscoveryPorts: []int{65536}}, "port"},
		{"unknown mode", Options{AppID: testAppID, Mode: "bluetooth"}, "Mode"},
		{"local with invite", Options{AppID: testAppID, Invite: "ans2:x"}, "local mode"},
		{"invite missing", Options{AppID: testAppID, Mode: ModeInvite}, "Options.Invite"},
		{"invite garbage", Options{AppID: testAppID, Mode: ModeInvite, Invite: "hello"}, "Options.Invite"},
		{"invite bad code", Options{AppID: testAppID, Mode: ModeInvite, Invite: "ans2:!!!"}, "Options.Invite"},
		{"invite other app", Options{AppID: "com.other", Mode: ModeInvite, Invite: code(func(*pairing.InviteDocument) {})}, "not \"com.other\""},
		{"invite grant expired", Options{AppID: testAppID, Mode: ModeInvite, Invite: code(func(d *pairing.InviteDocument) {
			d.Invite.Enrollment.GrantExpiresAt = now.Add(-time.Hour)
		})}, "expired"},
		{"invite without addresses", Options{AppID: testAppID, Mode: ModeInvite, Invite: code(func(d *pairing.InviteDocument) {
			d.Discovery.HostAddresses = []string{" ", ""}
		})}, "HostAddress"},
		{"invite with URL", Options{AppID: testAppID, Mode: ModeInvite, Invite: "x", URL: "ws://h/ws"}, "not used"},
		{"direct missing token", Options{AppID: testAppID, Mode: ModeDirect, URL: "ws://h/ws"}, "Options.Token"},
		{"direct http", Options{AppID: testAppID, Mode: ModeDirect, URL: "http://h/ws", Token: "t"}, "ws://"},
		{"direct token in url", Options{AppID: testAppID, Mode: ModeDirect, URL: "ws://h/ws?token=zzsecret", Token: "t"}, "Options.Token"},
		{"direct user info", Options{AppID: testAppID, Mode: ModeDirect, URL: "ws://u:zzsecret@h/ws", Token: "t"}, "user info"},
		{"direct bad url", Options{AppID: testAppID, Mode: ModeDirect, URL: "ws://h/%zzsecret", Token: "t"}, "not a URL"},
		{"direct with ports", Options{AppID: testAppID, Mode: ModeDirect, URL: "ws://h/ws", Token: "t", DiscoveryPorts: []int{1}}, "not used"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.StateDir = t.TempDir()
			_, err := newConfig(tt.o, now)
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
	c, err := newConfig(Options{AppID: "com.example/../x"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if c.Mode != ModeLocal || c.EnrollTimeout != time.Second || c.ControlTimeout != 15*time.Second ||
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
	c, err = newConfig(Options{AppID: testAppID, Mode: ModeInvite, Invite: code, StateDir: t.TempDir()}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if c.EnrollTimeout != 5*time.Second || len(c.enrollment.candidates) != 1 || c.enrollment.candidates[0].String() != "127.0.0.1:45200" {
		t.Errorf("invite config: timeout %v candidates %v", c.EnrollTimeout, c.enrollment.candidates)
	}
	if c.enrollment.request.AccessToken != inv.Invite.Enrollment.AccessToken || c.configID != inv.Invite.InviteID {
		t.Error("invite mode must present the invite's secret under its invite id")
	}
}

func TestResolve(t *testing.T) {
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
	for s, want := range map[State]string{StateConnecting: "connecting", StateConnected: "connected", StateDisconnected: "disconnected", 9: "State(9)"} {
		if s.String() != want {
			t.Errorf("%d.String() = %q", int(s), s.String())
		}
	}
}
