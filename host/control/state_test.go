package control

import (
	"testing"
	"time"

	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/pairing"
)

// TestPairingStates computes the state 'pairing list' shows for invites and grants at a
// fixed time (issue 14.1). The expiry edge is the host's: it still accepts an invite or a
// grant at its expiry instant (host/authorize.go: expired once now is after it), so the
// list calls it expired only after that instant too.
func TestPairingStates(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		inv  host.Invite
		want string
	}{
		{"open", host.Invite{ExpiresAt: now.Add(time.Hour), MaxUses: 1}, "open"},
		{"open at its expiry instant", host.Invite{ExpiresAt: now, MaxUses: 1}, "open"},
		{"expired", host.Invite{ExpiresAt: now.Add(-time.Nanosecond), MaxUses: 1}, "expired"},
		{"used", host.Invite{ExpiresAt: now.Add(time.Hour), MaxUses: 1, Uses: 1}, "used"},
		{"partly used", host.Invite{ExpiresAt: now.Add(time.Hour), MaxUses: 3, Uses: 2}, "open"},
		{"used, then expired", host.Invite{ExpiresAt: now.Add(-time.Hour), MaxUses: 1, Uses: 1}, "used"},
		{"revoked", host.Invite{ExpiresAt: now.Add(time.Hour), MaxUses: 1, RevokedAt: now.Add(-time.Minute)}, "revoked"},
		{"revoked, used and expired", host.Invite{ExpiresAt: now.Add(-time.Hour), MaxUses: 1, Uses: 1, RevokedAt: now.Add(-time.Minute)}, "revoked"},
	} {
		if got := inviteOf(tc.inv, now).State; got != tc.want {
			t.Errorf("invite %s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := inviteOf(host.Invite{AppID: pairing.AnyApp, ExpiresAt: now.Add(time.Hour), MaxUses: 1}, now); got.AppID != "" {
		t.Errorf("an invite for any app lists app %q", got.AppID)
	}

	for _, tc := range []struct {
		name string
		g    host.Grant
		want string
	}{
		{"active", host.Grant{Mode: host.GrantLocal, ExpiresAt: now.Add(time.Hour)}, "active"},
		{"active at its expiry instant", host.Grant{Mode: host.GrantLocal, ExpiresAt: now}, "active"},
		{"expired", host.Grant{Mode: host.GrantInvite, ExpiresAt: now.Add(-time.Nanosecond)}, "expired"},
		{"revoked", host.Grant{Mode: host.GrantInvite, ExpiresAt: now.Add(time.Hour), RevokedAt: now.Add(-time.Minute)}, "revoked"},
		{"revoked and expired", host.Grant{Mode: host.GrantLocal, ExpiresAt: now.Add(-time.Hour), RevokedAt: now.Add(-2 * time.Hour)}, "revoked"},
	} {
		if got := grantOf(tc.g, now).State; got != tc.want {
			t.Errorf("grant %s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
