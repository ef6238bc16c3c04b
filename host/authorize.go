package host

import (
	"net/netip"
	"strings"
	"time"

	"github.com/ansight-go/ansight/pairing"
	"github.com/ansight-go/ansight/wire"
)

// authorization is the outcome of checking an ENROLLMENT_CONNECT against the store.
type authorization struct {
	grant   *grantRecord   // set when accepted
	reason  pairing.Reason // ReasonOK when accepted
	changed bool           // the store was modified and must be saved
}

func reject(r pairing.Reason) authorization { return authorization{reason: r} }

// authorize applies the reference host's rules (docs/protocol/session.md#host-checks) to a
// parsed request from src. It mutates st (new grants, consumed invites) and reports so.
func authorize(st *store, req *pairing.EnrollmentConnect, src netip.Addr, now time.Time) authorization {
	switch req.Mode() {
	case pairing.ModeLocal:
		if !isLoopback(src) {
			return reject(pairing.ReasonLocalEnrollmentUnavailable)
		}
		return authorizeLocal(st, req, now)
	case pairing.ModeInvite:
		return authorizeInvite(st, req, now)
	}
	return reject(pairing.ReasonEnrollmentModeUnsupported)
}

// isLoopback accepts 127.0.0.0/8, ::1 and their IPv4-mapped forms.
func isLoopback(a netip.Addr) bool { return a.IsValid() && a.Unmap().IsLoopback() }

func blank(s string) bool { return strings.TrimSpace(s) == "" }

// authorizeLocal is trust on first use of the app's own token per (appId, deviceId); the
// grant is always write and lasts MaxGrantLifetime. An expired grant is replaced by
// whatever token arrives; a revoked one stays refused until deleted.
func authorizeLocal(st *store, req *pairing.EnrollmentConnect, now time.Time) authorization {
	appID, deviceID := strings.TrimSpace(req.AppID), strings.TrimSpace(req.DeviceID)
	if appID == "" || appID == pairing.AnyApp || deviceID == "" || blank(req.AccessToken) {
		return reject(pairing.ReasonLocalEnrollmentInvalid)
	}
	g := st.grant(GrantLocal, "", appID, deviceID)
	if g != nil && !g.RevokedAt.IsZero() {
		return reject(pairing.ReasonRegistrationRevoked)
	}
	if g != nil && now.After(g.ExpiresAt) {
		st.removeGrant(g)
		g = nil
	}
	if g == nil {
		g = &grantRecord{
			GrantID: pairing.NewID(pairing.GrantIDBytes), Mode: GrantLocal,
			ConfigID: "local:" + pairing.NewID(pairing.GrantIDBytes), AppID: appID, DeviceID: deviceID,
			DeviceName: pairing.NormalizeDeviceName(req.DeviceName), SecretHash: pairing.HashToken(req.AccessToken),
			MaxToolPolicy: wire.PolicyWrite, CreatedAt: now, ExpiresAt: now.Add(pairing.MaxGrantLifetime),
		}
		st.addGrant(g)
		return authorization{grant: g, reason: pairing.ReasonOK, changed: true}
	}
	if !pairing.TokenMatchesHash(req.AccessToken, g.SecretHash) {
		return reject(pairing.ReasonAccessTokenInvalid)
	}
	return authorization{grant: g, reason: pairing.ReasonOK}
}

// authorizeInvite checks an existing grant for (inviteId, appId, deviceId), or on first use
// consumes the invite and creates the grant with the invite's policy and grant expiry.
func authorizeInvite(st *store, req *pairing.EnrollmentConnect, now time.Time) authorization {
	inviteID, appID, deviceID := strings.TrimSpace(req.InviteID), strings.TrimSpace(req.AppID), strings.TrimSpace(req.DeviceID)
	if inviteID == "" || appID == "" || appID == pairing.AnyApp || deviceID == "" || blank(req.AccessToken) {
		return reject(pairing.ReasonEnrollmentRequired)
	}
	// An enrolled device reconnects on its grant alone: the invite may have expired or been
	// pruned long ago.
	if g := st.grant(GrantInvite, inviteID, appID, deviceID); g != nil {
		if !g.active(now) {
			return reject(pairing.ReasonRegistrationExpired)
		}
		if !pairing.TokenMatchesHash(req.AccessToken, g.SecretHash) {
			return reject(pairing.ReasonAccessTokenInvalid)
		}
		return authorization{grant: g, reason: pairing.ReasonOK}
	}
	inv := st.invite(inviteID)
	if inv == nil || !inv.RevokedAt.IsZero() || (inv.AppID != pairing.AnyApp && inv.AppID != appID) {
		return reject(pairing.ReasonEnrollmentRequired) // a revoked invite is as good as none
	}
	if now.After(inv.ExpiresAt) {
		return reject(pairing.ReasonEnrollmentExpired)
	}
	if inv.Uses >= inv.MaxUses {
		return reject(pairing.ReasonEnrollmentConsumed)
	}
	if !pairing.TokenMatchesHash(req.AccessToken, inv.SecretHash) {
		return reject(pairing.ReasonAccessTokenInvalid)
	}
	inv.Uses++
	g := &grantRecord{
		GrantID: pairing.NewID(pairing.GrantIDBytes), Mode: GrantInvite, ConfigID: inviteID,
		AppID: appID, DeviceID: deviceID, DeviceName: pairing.NormalizeDeviceName(req.DeviceName),
		SecretHash: pairing.HashToken(req.AccessToken), MaxToolPolicy: inv.MaxToolPolicy,
		CreatedAt: now, ExpiresAt: inv.GrantExpiresAt,
	}
	st.addGrant(g)
	return authorization{grant: g, reason: pairing.ReasonOK, changed: true}
}
