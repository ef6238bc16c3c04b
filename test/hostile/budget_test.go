package hostile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/pairing"
	"github.com/ansight-go/ansight/transport"
)

// Budgets: one local process that enrolls, connects or sends without limit must not lock
// the others out of the host — WebSocket tokens, session slots, stored grants and the
// enrollment rate limiter are shared fairly.

// TestTokenBudget: one process enrolls far more often than it connects, first as one
// installation, then as hundreds, and never uses its tokens; an app enrolling afterwards
// still gets a token, and connects with it.
func TestTokenBudget(t *testing.T) {
	h := newTestHost(t, nil)
	u := newUDPClient(t, "127.0.0.1", h.DiscoveryAddr())
	greedy := newIdentity("dev.ansight.greedy")
	for range host.DefaultMaxTokens + 44 {
		u.enroll(t, greedy.enrollment())
	}
	for i := range host.DefaultMaxTokens + 44 {
		u.enroll(t, newIdentity(fmt.Sprintf("dev.ansight.greedy%03d", i)).enrollment())
	}
	connectEvil(t, h, "dev.ansight.legit").alive(t)
}

// holdSession enrolls id with a fresh process session id and upgrades, keeping the
// connection open (and read, so that the host can close it) until the test ends. It
// returns the upgrade's error.
func holdSession(t *testing.T, h *testHost, u *udpClient, id identity) error {
	t.Helper()
	id.psid = "go." + pairing.NewToken(16)
	res := u.enroll(t, id.enrollment())
	if !res.Accepted {
		t.Fatalf("enrollment refused: %s", res.Reason)
	}
	conn, err := h.upgrade(res)
	if err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if _, _, err := conn.Read(context.Background()); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		conn.Close(transport.StatusNormalClosure, "")
		<-done
	})
	return nil
}

// TestSessionBudget: one process opens as many sessions as the host holds, as one
// installation and then as one app on many devices; an app connecting afterwards still
// gets a session, and the greedy installation is held to its share.
func TestSessionBudget(t *testing.T) {
	t.Run("OneInstallation", func(t *testing.T) {
		h := newTestHost(t, nil)
		u := newUDPClient(t, "127.0.0.1", h.DiscoveryAddr())
		greedy := newIdentity("dev.ansight.greedy")
		held := 0
		for range host.DefaultMaxSessions {
			if holdSession(t, h, u, greedy) == nil {
				held++
			}
		}
		if held >= host.DefaultMaxSessions {
			t.Errorf("one installation holds all %d session slots", held)
		}
		connectEvil(t, h, "dev.ansight.legit").alive(t)
	})
	t.Run("OneAppManyDevices", func(t *testing.T) {
		h := newTestHost(t, nil)
		u := newUDPClient(t, "127.0.0.1", h.DiscoveryAddr())
		for range host.DefaultMaxSessions {
			if err := holdSession(t, h, u, newIdentity("dev.ansight.greedy")); err != nil {
				t.Fatalf("a slot was refused before the table was full: %v", err)
			}
		}
		connectEvil(t, h, "dev.ansight.legit").alive(t)
	})
}

// TestGrantBudget: one process enrolls hundreds of new local installations; the host keeps
// a bounded number of grants (the pairing store does not grow without limit), prunes the
// ones never used first, and an app that connected before keeps its grant: its token is
// still the only one accepted for it.
func TestGrantBudget(t *testing.T) {
	dir := t.TempDir()
	h := newTestHost(t, func(o *host.Options) { o.StateDir = dir })
	legit := connectEvil(t, h, "dev.ansight.legit")
	u := newUDPClient(t, "127.0.0.1", h.DiscoveryAddr())
	for i := range host.DefaultMaxLocalGrants + 100 {
		if res := u.enroll(t, newIdentity(fmt.Sprintf("dev.ansight.flood%04d", i)).enrollment()); !res.Accepted {
			t.Fatalf("enrollment %d refused: %s", i, res.Reason)
		}
	}
	if n := len(h.Grants()); n > host.DefaultMaxLocalGrants {
		t.Errorf("the host holds %d local grants, more than %d", n, host.DefaultMaxLocalGrants)
	}
	thief := legit.id
	thief.token = pairing.NewToken(32)
	if res := u.enroll(t, thief.enrollment()); res.Reason != pairing.ReasonAccessTokenInvalid {
		t.Fatalf("a new token for the established installation: %s, want AccessTokenInvalid (its grant was pruned)", res.Reason)
	}
	legit.alive(t)
	h.Close() // writes what is pending
	b, err := os.ReadFile(filepath.Join(dir, "pairing.json"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), `"grantId"`); n > host.DefaultMaxLocalGrants || !strings.Contains(string(b), legit.id.deviceID) {
		t.Errorf("pairing.json holds %d grants (at most %d) or lost the established one", n, host.DefaultMaxLocalGrants)
	}
}

// TestLimiterFlood: datagrams from more distinct loopback addresses than the rate limiter
// tracks do not make it refuse every new source: an app enrolling from a fresh address
// afterwards is answered.
func TestLimiterFlood(t *testing.T) {
	h := newTestHost(t, func(o *host.Options) { o.EnrollmentBurst, o.EnrollmentInterval = 0, 0 }) // the defaults
	victim := connectEvil(t, h, "dev.ansight.flooded")
	wrong := victim.id
	wrong.token = pairing.NewToken(32) // refused cheaply: no grant, no token
	for i := range 4200 {
		u := newUDPClient(t, fmt.Sprintf("127.1.%d.%d", i/250, 1+i%250), h.DiscoveryAddr())
		u.enroll(t, wrong.enrollment())
		u.conn.Close()
	}
	newcomer := newUDPClient(t, "127.2.0.1", h.DiscoveryAddr())
	if res := newcomer.enroll(t, newIdentity("dev.ansight.newcomer").enrollment()); !res.Accepted {
		t.Fatalf("the newcomer was refused: %s", res.Reason)
	}
	victim.alive(t)
}

// TestSessionSquatters: one local process enrolls as many made-up app ids as the host has
// session slots and holds one session each, so that no app is over its share (issue 19.4:
// the host answered 503 to everyone else). A newcomer still gets a session; sessions the
// user is using are never the ones that make room.
func TestSessionSquatters(t *testing.T) {
	// squat connects n sessions of fresh made-up app ids; each must be admitted.
	squat := func(t *testing.T, h *testHost, u *udpClient, n int) {
		t.Helper()
		for i := range n {
			if err := holdSession(t, h, u, newIdentity(fmt.Sprintf("dev.ansight.squat%s", pairing.NewToken(6)))); err != nil {
				t.Fatalf("squatter %d refused: %v", i, err)
			}
		}
	}
	connected := func(e *evilApp) bool { return e.sess.State() == host.StateConnected }
	t.Run("ManyAppIDs", func(t *testing.T) {
		h := newTestHost(t, nil)
		u := newUDPClient(t, "127.0.0.1", h.DiscoveryAddr())
		squat(t, h, u, host.DefaultMaxSessions)
		connectEvil(t, h, "dev.ansight.legit").alive(t)
	})
	// A session the user has called stays while uncalled ones are left, however often the
	// squatters reconnect; one with a call running is never displaced. The squatters churn
	// among themselves.
	t.Run("InUseStays", func(t *testing.T) {
		const slots = 4
		h := newTestHost(t, func(o *host.Options) { o.MaxSessions = slots })
		u := newUDPClient(t, "127.0.0.1", h.DiscoveryAddr())
		squat(t, h, u, slots)
		used := connectEvil(t, h, "dev.ansight.used")
		used.alive(t) // the user calls it
		busy := connectEvil(t, h, "dev.ansight.busy")
		_, result := busy.holdCall(t)
		squat(t, h, u, 3*slots)
		if !connected(used) || !connected(busy) {
			t.Fatalf("a session in use was displaced: used %v, busy %v", used.sess.State(), busy.sess.State())
		}
		busy.release()
		if res, err := result(); err != nil || !bytes.Contains(res.Payload.Result, []byte("genuine")) {
			t.Fatalf("the call running during the churn: %v, %v", res, err)
		}
		used.alive(t)
		busy.alive(t)
	})
	// Every session has been called: the newcomer takes the place of the least recently
	// used one, never of one whose call is still running, even when that call is older.
	t.Run("CallInFlight", func(t *testing.T) {
		h := newTestHost(t, func(o *host.Options) { o.MaxSessions = 2 })
		busy := connectEvil(t, h, "dev.ansight.busy")
		_, result := busy.holdCall(t)
		idle := connectEvil(t, h, "dev.ansight.idle")
		idle.alive(t)
		connectEvil(t, h, "dev.ansight.newcomer").alive(t)
		for ; connected(idle); time.Sleep(2 * time.Millisecond) {
			if t.Context().Err() != nil {
				t.Fatal("the idle session was not displaced")
			}
		}
		if !connected(busy) {
			t.Fatal("the session with a call running was displaced")
		}
		busy.release()
		if res, err := result(); err != nil || !bytes.Contains(res.Payload.Result, []byte("genuine")) {
			t.Fatalf("the running call: %v, %v", res, err)
		}
	})
	// Every session has a call running: nothing makes room, and the newcomer gets 503 (the
	// SDK retries).
	t.Run("AllBusy", func(t *testing.T) {
		h := newTestHost(t, func(o *host.Options) { o.MaxSessions = 1 })
		busy := connectEvil(t, h, "dev.ansight.busy")
		_, result := busy.holdCall(t)
		u := newUDPClient(t, "127.0.0.1", h.DiscoveryAddr())
		err := holdSession(t, h, u, newIdentity("dev.ansight.newcomer"))
		if he, ok := errors.AsType[*transport.HandshakeError](err); !ok || he.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("the newcomer to a table of busy sessions: %v, want 503", err)
		}
		busy.release()
		if res, err := result(); err != nil || !bytes.Contains(res.Payload.Result, []byte("genuine")) {
			t.Fatalf("the running call: %v, %v", res, err)
		}
	})
}
