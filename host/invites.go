package host

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/ansight-go/ansight/pairing"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// InviteOptions describes an invite to issue.
type InviteOptions struct {
	// AppID is the app that may enroll, or pairing.AnyApp ("*") for any app. Required.
	AppID string
	// AppName labels the invite (AppID, or "Any Ansight app", when empty).
	AppName string
	// Duration is the requested lifetime (pairing.DefaultInviteDuration when zero). The
	// invite itself expires after at most 24 h (10 min for any app); the grant it leads to
	// after at most 90 days.
	Duration time.Duration
	// MaxToolPolicy is the grant's policy (read when empty).
	MaxToolPolicy wire.Policy
	// HostAddresses, when set, are the addresses the invite's discovery hint gives apps
	// instead of Options.AdvertiseAddrs or this machine's own (a LAN address the host cannot
	// see, behind NAT or a VPN).
	HostAddresses []string
}

// Invite describes an issued invite. Document is set only by IssueInvite: the host keeps
// just the secret's hash, so the code cannot be shown again.
type Invite struct {
	ID             string                  `json:"inviteId"`
	AppID          string                  `json:"appId"`
	AppName        string                  `json:"appName"`
	IssuedAt       time.Time               `json:"issuedAt"`
	ExpiresAt      time.Time               `json:"expiresAt"`
	GrantExpiresAt time.Time               `json:"grantExpiresAt"`
	MaxToolPolicy  wire.Policy             `json:"maxToolPolicy"`
	Uses           int                     `json:"uses"`
	MaxUses        int                     `json:"maxUses"`
	RevokedAt      time.Time               `json:"revokedAt,omitzero"`
	Document       *pairing.InviteDocument `json:"-"`
}

// Grant describes a device's registration: what an enrolled app may do, until when.
type Grant struct {
	ID            string      `json:"grantId"`
	Mode          string      `json:"mode"` // GrantLocal or GrantInvite
	ConfigID      string      `json:"configId"`
	AppID         string      `json:"appId"`
	DeviceID      string      `json:"deviceId"`
	DeviceName    string      `json:"deviceName"`
	MaxToolPolicy wire.Policy `json:"maxToolPolicy"`
	CreatedAt     time.Time   `json:"createdAt"`
	ExpiresAt     time.Time   `json:"expiresAt"`
	RevokedAt     time.Time   `json:"revokedAt,omitzero"`
	// LastUsedAt is when a session last connected on the grant (zero: never).
	LastUsedAt time.Time `json:"lastUsedAt,omitzero"`
}

// ErrNotFound is returned by Revoke for an id that names no invite or grant.
var ErrNotFound = errors.New("host: no such invite or grant")

// IssueInvite creates a single-use invite and returns it with its "ans2:" code. The code
// carries the secret: show it to the user once; only its hash is stored.
func (s *Server) IssueInvite(o InviteOptions) (Invite, string, error) {
	appID := strings.TrimSpace(o.AppID)
	if appID == "" {
		return Invite{}, "", errors.New("host: invite needs an app id (or \"*\" for any app)")
	}
	policy := o.MaxToolPolicy
	if policy == "" {
		policy = wire.PolicyRead
	}
	if !policy.Valid() {
		return Invite{}, "", fmt.Errorf("host: invite policy %q is not read, write or critical", policy)
	}
	d := o.Duration
	if d <= 0 {
		d = pairing.DefaultInviteDuration
	}
	// Refused rather than cut: a caller asking for 100 days must not believe it got them.
	if d > pairing.MaxGrantLifetime {
		return Invite{}, "", fmt.Errorf("host: a pairing lasts at most %d days, not %s", pairing.MaxGrantLifetime/(24*time.Hour), d)
	}
	name := strings.TrimSpace(o.AppName)
	limit := pairing.MaxInviteLifetime
	if appID == pairing.AnyApp {
		limit = pairing.MaxAnyAppInviteLifetime
		if name == "" {
			name = "Any Ansight app"
		}
	}
	if name == "" {
		name = appID
	}
	now := s.now()
	secret := pairing.NewToken(pairing.AccessTokenBytes)
	rec := &inviteRecord{Invite: Invite{
		ID: newInviteID(), AppID: appID, AppName: name,
		IssuedAt: now, ExpiresAt: now.Add(min(d, limit)), GrantExpiresAt: now.Add(min(d, pairing.MaxGrantLifetime)),
		MaxToolPolicy: policy, MaxUses: 1,
	}, SecretHash: pairing.HashToken(secret)}

	s.mu.Lock()
	port := int(s.udpAddr.Port())
	hostID := s.store.data.HostID
	s.mu.Unlock()
	if port == 0 {
		port = configuredPort(s.opts.DiscoveryAddr)
	}
	addrs := s.advertised()
	if len(o.HostAddresses) > 0 {
		addrs = slices.Clone(o.HostAddresses)
	}
	doc := &pairing.InviteDocument{
		Schema: pairing.InviteDocumentSchema,
		Invite: pairing.Invite{
			Schema: pairing.InviteSchema, InviteID: rec.ID, AppID: appID, AppName: name,
			IssuedAt: now, ExpiresAt: rec.ExpiresAt, MinProtocolVersion: pairing.EnrollmentVersion,
			AllowedTransports: []string{pairing.TransportWS},
			Host:              pairing.InviteHost{HostID: hostID, HostName: s.opts.HostName, DiscoveryPort: port},
			Enrollment: pairing.InviteEnrollment{AccessToken: secret, ExpiresAt: rec.ExpiresAt,
				GrantExpiresAt: rec.GrantExpiresAt, MaxUses: 1, MaxToolPolicy: policy},
		},
		Discovery: &pairing.DiscoveryHint{
			Schema: pairing.DiscoveryHintSchema, Source: "ansight-go", HostAddresses: addrs,
			DiscoveryPort: port, HostName: s.opts.HostName, CapturedAt: now,
		},
	}
	code, err := doc.Code()
	if err != nil {
		return Invite{}, "", err
	}

	s.mu.Lock()
	s.store.prune(now)
	s.store.data.Invites = append(s.store.data.Invites, rec)
	err = s.store.save()
	if err != nil {
		s.store.removeInvite(rec.ID)
	}
	// Read under the lock: once stored, an enrollment may consume the invite (Uses) at any
	// moment.
	inv := rec.public()
	s.mu.Unlock()
	if err != nil {
		return Invite{}, "", err
	}
	s.log.Info("host: invite issued", "invite", inv.ID, "app", appID, "policy", string(policy), "expires", inv.ExpiresAt)
	inv.Document = doc
	return inv, code, nil
}

func (r *inviteRecord) public() Invite { return r.Invite }

func (g *grantRecord) public() Grant {
	return Grant{ID: g.GrantID, Mode: g.Mode, ConfigID: g.ConfigID, AppID: g.AppID, DeviceID: g.DeviceID,
		DeviceName: g.DeviceName, MaxToolPolicy: g.MaxToolPolicy, CreatedAt: g.CreatedAt, ExpiresAt: g.ExpiresAt, RevokedAt: g.RevokedAt,
		LastUsedAt: g.LastUsedAt}
}

// ListInvites returns the stored invites (used, expired or not), newest first.
func (s *Server) ListInvites() []Invite {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Invite, 0, len(s.store.data.Invites))
	for _, r := range s.store.data.Invites {
		out = append(out, r.public())
	}
	slices.SortFunc(out, func(a, b Invite) int { return b.IssuedAt.Compare(a.IssuedAt) })
	return out
}

// Grants returns the stored grants, newest first.
func (s *Server) Grants() []Grant {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Grant, 0, len(s.store.data.Grants))
	for _, g := range s.store.data.Grants {
		out = append(out, g.public())
	}
	slices.SortFunc(out, func(a, b Grant) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return out
}

// Revocation says what Revoke withdrew.
type Revocation struct {
	ID   string `json:"id"`
	Kind string `json:"kind"` // "invite" or "grant"
	// GrantIDs are the grants revoked: the one named, or every grant made with the invite.
	GrantIDs []string `json:"grantIds,omitempty"`
	// Sessions counts the live sessions ended.
	Sessions int `json:"sessionsEnded"`
}

// Revocation kinds.
const (
	RevokedInvite = "invite"
	RevokedGrant  = "grant"
)

// Revoke withdraws an invite or a grant. An invite is kept as revoked, its secret's hash
// wiped (it can no longer enroll anyone; it is listed as revoked until pruned), and every
// grant made with it is revoked; a grant is kept as revoked (the device
// gets RegistrationRevoked in local mode, RegistrationExpired with an invite). Either way
// the live sessions on the revoked grants are ended, and the WebSocket tokens they were
// issued and have not used stop working.
func (s *Server) Revoke(id string) (Revocation, error) {
	now := s.now()
	s.mu.Lock()
	rev := Revocation{ID: id, Kind: RevokedInvite}
	var grants []*grantRecord
	for _, g := range s.store.data.Grants {
		if g.Mode == GrantInvite && g.ConfigID == id {
			grants = append(grants, g)
		}
	}
	// The invite itself may be gone (pruned a week after it expired) while its grants
	// live on: they are revoked by its id all the same.
	inv := s.store.invite(id)
	if inv != nil {
		if inv.RevokedAt.IsZero() {
			inv.RevokedAt = now
		}
		inv.SecretHash = ""
	}
	if inv == nil && len(grants) == 0 {
		g := s.store.grantByID(id)
		if g == nil {
			s.mu.Unlock()
			return Revocation{}, ErrNotFound
		}
		rev.Kind, grants = RevokedGrant, []*grantRecord{g}
	}
	revoked := make(map[string]bool, len(grants))
	for _, g := range grants {
		if g.RevokedAt.IsZero() {
			g.RevokedAt = now
		}
		revoked[g.GrantID] = true
		rev.GrantIDs = append(rev.GrantIDs, g.GrantID)
	}
	s.tickets.removeGrants(revoked)
	var sessions []*Session
	for _, sess := range s.sessions {
		if revoked[sess.grantID] && sess.current() != nil {
			sessions = append(sessions, sess)
		}
	}
	err := s.store.save()
	s.mu.Unlock()
	// attach checks the grant under s.mu too, so no connection of a revoked grant can
	// attach after the scan above.
	for _, sess := range sessions {
		sess.disconnect(transport.StatusNormalClosure, "Pairing revoked by the host.")
	}
	rev.Sessions = len(sessions)
	s.log.Info("host: revoked", "id", id, "kind", rev.Kind, "grants", len(rev.GrantIDs), "sessions", rev.Sessions)
	return rev, err
}

// ErrGrantActive is returned by Forget for a grant that is neither revoked nor expired.
var ErrGrantActive = errors.New("host: the pairing is active: revoke it first")

// Forget removes a revoked or expired grant from the store, undoing what its record still
// does: a revoked local grant refuses its app on that device (RegistrationRevoked), whatever
// token it presents, until the host drops the record grantRetention after the grant's
// expiry. Once forgotten, the app's next local enrollment is trusted on first use, as a new
// grant; an invite grant's device needs a new invite. An active grant is refused with
// ErrGrantActive (Revoke ends it first), an unknown id with ErrNotFound.
func (s *Server) Forget(id string) (Grant, error) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.store.grantByID(id)
	if g == nil {
		return Grant{}, ErrNotFound
	}
	if g.active(now) {
		return Grant{}, ErrGrantActive
	}
	pub := g.public()
	s.store.removeGrant(g)
	err := s.store.save() // at once, like the revocation it undoes
	s.log.Info("host: pairing forgotten", "app", g.AppID, "device", g.DeviceName, "mode", g.Mode)
	return pub, err
}

// advertised lists the addresses for invite discovery hints.
func (s *Server) advertised() []string {
	if len(s.opts.AdvertiseAddrs) > 0 {
		return slices.Clone(s.opts.AdvertiseAddrs)
	}
	if !s.opts.LAN {
		return []string{"127.0.0.1"}
	}
	// IPv4 first, then global IPv6 when the host listens dual-stack (as the official host
	// orders them); never link-local.
	var out, v6 []string
	ifaces, _ := net.Interfaces()
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			n, ok := a.(*net.IPNet)
			if !ok || n.IP.IsLinkLocalUnicast() || !n.IP.IsGlobalUnicast() {
				continue
			}
			if ip4 := n.IP.To4(); ip4 != nil {
				out = append(out, ip4.String())
			} else {
				v6 = append(v6, n.IP.String())
			}
		}
	}
	if s.listensIPv6() {
		out = append(out, v6...)
	}
	if len(out) == 0 {
		out = []string{"127.0.0.1"}
	}
	return out
}

// listensIPv6 reports whether apps can reach the enrollment socket over IPv6: it is bound
// (or, before Start, configured) to an unspecified address, which Go binds dual-stack, or
// to an IPv6 address.
func (s *Server) listensIPv6() bool {
	if a := s.DiscoveryAddr(); a.IsValid() {
		return a.Addr().Is6() && !a.Addr().Is4In6()
	}
	h, _, err := net.SplitHostPort(s.opts.DiscoveryAddr)
	if err != nil {
		return false
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && (ip.IsUnspecified() || ip.Is6())
}

// newInviteID returns 32 hex digits, the reference's inviteId format.
func newInviteID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func configuredPort(addr string) int {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return pairing.DefaultDiscoveryPort
	}
	var n int
	if _, err := fmt.Sscanf(p, "%d", &n); err != nil || n <= 0 {
		return pairing.DefaultDiscoveryPort
	}
	return n
}
