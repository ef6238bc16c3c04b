package hostile

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/pairing"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// Revocation: what `ansight pairing revoke` withdraws must stop working at once — live
// sessions, tokens already issued, and the credential the device keeps.

// invited enrolls a new installation of appID with a fresh invite and opens its session.
func invited(t *testing.T, h *testHost, appID string) (*evilApp, host.Invite, *pairing.EnrollmentConnect) {
	t.Helper()
	inv, _, err := h.IssueInvite(host.InviteOptions{AppID: appID, MaxToolPolicy: wire.PolicyWrite})
	if err != nil {
		t.Fatal(err)
	}
	id := newIdentity(appID)
	id.token = inv.Document.Invite.Enrollment.AccessToken
	return connectAs(t, h, id, inviteEnrollment(id, inv.ID)), inv, inviteEnrollment(id, inv.ID)
}

func inviteEnrollment(id identity, inviteID string) *pairing.EnrollmentConnect {
	req := id.enrollment()
	req.EnrollmentMode, req.InviteID = pairing.ModeInvite, inviteID
	return req
}

// endedBy waits until the host has closed e's connection.
func endedBy(t *testing.T, e *evilApp, what string) {
	t.Helper()
	select {
	case <-e.served:
	case <-t.Context().Done():
		t.Fatalf("%s: the session is still connected", what)
	}
}

// TestRevokeInvite: revoking an invite that was already used ends the live session of the
// device it paired, kills the token that device was issued and has not used yet, and
// revokes its grant, so that the device cannot enroll again with the secret it stored.
// Other sessions are not touched.
func TestRevokeInvite(t *testing.T) {
	h := newTestHost(t, nil)
	bystander := connectEvil(t, h, "dev.ansight.bystander")
	e, inv, req := invited(t, h, "dev.ansight.invited")
	u := newUDPClient(t, "127.0.0.1", h.DiscoveryAddr())
	req.RequestID = pairing.NewToken(16)
	pending := u.enroll(t, req)
	if !pending.Accepted {
		t.Fatalf("the paired device was refused before the revocation: %s", pending.Reason)
	}

	if _, err := h.Revoke(inv.ID); err != nil {
		t.Fatal(err)
	}
	endedBy(t, e, "after revoking its invite")
	wantStatus(t, "a token issued before the revocation", h.wsURL(pending), http.Header{"Authorization": {"Bearer " + pending.WebSocketToken}}, http.StatusUnauthorized)
	req.RequestID = pairing.NewToken(16)
	if res := u.enroll(t, req); res.Accepted || res.Reason != pairing.ReasonRegistrationExpired {
		t.Fatalf("re-enrollment with the stored secret: accepted=%v reason %s, want RegistrationExpired", res.Accepted, res.Reason)
	}
	bystander.alive(t)
}

// TestRevokeLocalGrantFromCLI: local-mode grants are listed by `ansight pairing list` (and
// --json) and `ansight pairing revoke <grant>` ends the session and refuses the app's
// token from then on, until `ansight pairing forget <grant>`.
func TestRevokeLocalGrantFromCLI(t *testing.T) {
	h := newTestHost(t, nil)
	dir := serveControl(t, h)
	bystander := connectEvil(t, h, "dev.ansight.bystander")
	e := connectEvil(t, h, "dev.ansight.local")

	run := runCLI(t, dir, "pairing", "list", "--json")
	if run.code != 0 {
		t.Fatalf("pairing list --json: exit %d: %s", run.code, run.stderr)
	}
	var list struct {
		Grants []struct {
			ID       string `json:"grantId"`
			Mode     string `json:"mode"`
			AppID    string `json:"appId"`
			DeviceID string `json:"deviceId"`
		} `json:"grants"`
	}
	if err := json.Unmarshal([]byte(run.stdout), &list); err != nil {
		t.Fatalf("pairing list --json: %v\n%s", err, run.stdout)
	}
	grantID := ""
	for _, g := range list.Grants {
		if g.AppID == e.id.appID && g.DeviceID == e.id.deviceID && g.Mode == pairing.ModeLocal {
			grantID = g.ID
		}
	}
	if grantID == "" {
		t.Fatalf("the local grant is not listed by pairing list --json:\n%s", run.stdout)
	}
	if human := runCLI(t, dir, "pairing", "list"); !strings.Contains(human.stdout, grantID) || !strings.Contains(human.stdout, e.id.appID) {
		t.Fatalf("the local grant is not listed by pairing list:\n%s", human.stdout)
	}

	if run := runCLI(t, dir, "pairing", "revoke", grantID); run.code != 0 {
		t.Fatalf("pairing revoke %s: exit %d: %s", grantID, run.code, run.stderr)
	}
	endedBy(t, e, "after revoking its grant")
	u := newUDPClient(t, "127.0.0.1", h.DiscoveryAddr())
	if res := u.enroll(t, e.id.enrollment()); res.Accepted || res.Reason != pairing.ReasonRegistrationRevoked {
		t.Fatalf("re-enrollment after the revocation: accepted=%v reason %s, want RegistrationRevoked", res.Accepted, res.Reason)
	}
	// The user lets the app in again: forgotten, the revoked grant no longer refuses it,
	// and its next enrollment makes a new local grant.
	if run := runCLI(t, dir, "pairing", "forget", grantID); run.code != 0 {
		t.Fatalf("pairing forget %s: exit %d: %s", grantID, run.code, run.stderr)
	}
	if res := u.enroll(t, e.id.enrollment()); !res.Accepted {
		t.Fatalf("enrollment after forgetting the revoked grant: %s", res.Reason)
	}
	bystander.alive(t)
}

// TestRevokeDuringUpgrade: a token redeemed just before the revocation cannot attach after
// it. The upgrade below has used its token up and been accepted when its grant is revoked
// (from the host's connection hook, which runs between the two: deterministic, no timing);
// the host closes the connection as revoked, and no session is made.
func TestRevokeDuringUpgrade(t *testing.T) {
	var revokeNext atomic.Pointer[func()]
	h := newTestHost(t, func(o *host.Options) {
		o.WrapConn = func(c transport.Conn) transport.Conn {
			if f := revokeNext.Swap(nil); f != nil {
				(*f)()
			}
			return c
		}
	})
	bystander := connectEvil(t, h, "dev.ansight.bystander")
	id := newIdentity("dev.ansight.revoked")
	u := newUDPClient(t, "127.0.0.1", h.DiscoveryAddr())
	res := u.enroll(t, id.enrollment())
	if !res.Accepted {
		t.Fatalf("enrollment refused: %s", res.Reason)
	}
	grantID := ""
	for _, g := range h.Grants() {
		if g.DeviceID == id.deviceID {
			grantID = g.ID
		}
	}
	revoke := func() {
		if _, err := h.Revoke(grantID); err != nil {
			t.Error(err)
		}
	}
	revokeNext.Store(&revoke)
	conn, err := h.upgrade(res)
	if err != nil {
		t.Fatalf("the upgrade was refused before the revocation: %v", err)
	}
	defer conn.Close(transport.StatusNormalClosure, "")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	_, _, err = conn.Read(ctx)
	var ce *transport.CloseError
	if !errors.As(err, &ce) || !strings.Contains(ce.Reason, "revoked") {
		t.Fatalf("the connection of a revoked grant: %v, want closed as revoked", err)
	}
	for _, s := range h.Sessions() {
		if s.Info().DeviceID == id.deviceID {
			t.Fatalf("a session was made for the revoked grant: %+v", s.Info())
		}
	}
	if res := u.enroll(t, id.enrollment()); res.Accepted || res.Reason != pairing.ReasonRegistrationRevoked {
		t.Fatalf("re-enrollment after the revocation: accepted=%v reason %s", res.Accepted, res.Reason)
	}
	bystander.alive(t)
}
