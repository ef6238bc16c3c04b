package connect

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/ansight-go/ansight/pairing"
)

// A Mode says how the app finds a host and what proves that it may connect: [Local],
// [Invite] or [Direct], passed to [Run] or [Dial]. Each value carries only the fields that
// apply to it. The set is closed: the session client knows how to use each one.
type Mode interface {
	// String returns the mode's name: "local", "invite" or "direct".
	String() string
	// setup checks the mode's fields and completes c with the mode's enrollment (or direct
	// endpoint) and session.open config id.
	setup(c *config, now time.Time) error
}

// Local enrolls with a host on the same machine using the app's own random token, which
// the host trusts on first use. The zero value tries 127.0.0.1 on UDP ports 45123 then
// 46123, as the official SDKs do.
type Local struct {
	// HostAddress is the only host address tried. Default: 127.0.0.1.
	HostAddress string
	// DiscoveryPorts are the host's UDP enrollment ports, tried in order. Default: 45123
	// then 46123.
	DiscoveryPorts []int
	// EnrollTimeout is how long to wait for an answer from each host candidate. Default:
	// [DefaultEnrollTimeoutLocal] (the official SDKs' value).
	EnrollTimeout time.Duration
}

// Invite enrolls with the secret of an invite the host issued ("ansight pairing issue"),
// at the host addresses the invite lists. The secret is presented on every connect. Code
// is required.
type Invite struct {
	// Code is an "ans2:" code, an invite document's JSON or a bare invite's JSON.
	Code string
	// HostAddress, when set, is the only host address tried instead of the invite's.
	// Required for a bare invite, which lists no address.
	HostAddress string
	// DiscoveryPorts are the host's UDP enrollment ports, tried in order. Default: the
	// invite's port.
	DiscoveryPorts []int
	// EnrollTimeout is how long to wait for an answer from each host candidate. Default:
	// [DefaultEnrollTimeoutInvite] (the official SDKs' value).
	EnrollTimeout time.Duration
}

// Direct skips enrollment and opens URL with Token, both obtained elsewhere: for embedding
// and tests. Both are required.
type Direct struct {
	// URL is the host's ws:// or wss:// endpoint, without the token.
	URL string
	// Token authenticates the WebSocket upgrade. It never appears in logs or errors.
	Token string
}

// String returns "local".
func (Local) String() string { return "local" }

// String returns "invite".
func (Invite) String() string { return "invite" }

// String returns "direct".
func (Direct) String() string { return "direct" }

func (m Local) setup(c *config, _ time.Time) error {
	timeout, err := enrollTimeout("Local", m.EnrollTimeout, DefaultEnrollTimeoutLocal)
	if err != nil {
		return err
	}
	if err := checkPorts("Local", m.DiscoveryPorts); err != nil {
		return err
	}
	host := m.HostAddress
	if host == "" {
		host = "127.0.0.1"
	}
	ports := m.DiscoveryPorts
	if len(ports) == 0 {
		ports = []int{pairing.DefaultDiscoveryPort, pairing.DeveloperDiscoveryPort}
	}
	id, err := c.identity()
	if err != nil {
		return err
	}
	c.configID = pairing.LocalInviteID(c.AppID)
	c.enrollment = c.newEnrollment(pairing.ModeLocal, c.configID, id.DeviceID, id.LocalToken, candidates([]string{host}, ports), timeout)
	return nil
}

func (m Invite) setup(c *config, now time.Time) error {
	timeout, err := enrollTimeout("Invite", m.EnrollTimeout, DefaultEnrollTimeoutInvite)
	if err != nil {
		return err
	}
	if err := checkPorts("Invite", m.DiscoveryPorts); err != nil {
		return err
	}
	if strings.TrimSpace(m.Code) == "" {
		return errors.New("connect: Invite.Code is required (an ans2: code or the invite JSON)")
	}
	doc, err := pairing.ParseInvite(m.Code)
	if err != nil {
		return fmt.Errorf("connect: Invite.Code: %w", err)
	}
	inv := &doc.Invite
	if err := inv.Check(c.AppID, now); err != nil {
		return fmt.Errorf("connect: Invite.Code cannot be used: %w", err)
	}
	hosts := inviteHosts(doc)
	if m.HostAddress != "" {
		hosts = []string{m.HostAddress}
	}
	if len(hosts) == 0 {
		return errors.New("connect: the invite lists no host address; set Invite.HostAddress")
	}
	ports := m.DiscoveryPorts
	if len(ports) == 0 {
		p := inv.Host.DiscoveryPort
		if doc.Discovery != nil && doc.Discovery.DiscoveryPort >= 1 && doc.Discovery.DiscoveryPort <= 65535 {
			p = doc.Discovery.DiscoveryPort
		}
		ports = []int{p}
	}
	id, err := c.identity()
	if err != nil {
		return err
	}
	c.configID = inv.InviteID
	// The invite's secret is the long-lived credential: it is presented on every connect,
	// first to create the grant, then to prove it (docs/protocol/session.md#invite-mode).
	c.enrollment = c.newEnrollment(pairing.ModeInvite, inv.InviteID, id.DeviceID, inv.Enrollment.AccessToken, candidates(hosts, ports), timeout)
	return nil
}

func (m Direct) setup(c *config, _ time.Time) error {
	if m.URL == "" || m.Token == "" {
		return errors.New("connect: Direct needs both URL and Token")
	}
	u, err := url.Parse(m.URL)
	if err != nil {
		return errors.New("connect: Direct.URL is not a URL") // the parse error may echo a token
	}
	if u.Scheme != "ws" && u.Scheme != "wss" {
		return errors.New("connect: Direct.URL must be a ws:// or wss:// URL")
	}
	if u.Host == "" || u.User != nil || u.Fragment != "" {
		return errors.New("connect: Direct.URL needs a host and no user info or fragment")
	}
	if u.Query().Has("token") {
		return errors.New("connect: put the token in Direct.Token, not in Direct.URL")
	}
	if u.Path == "" {
		u.Path = "/"
	}
	c.direct = endpoint{url: u, token: m.Token}
	return nil
}

// enrollTimeout returns d, or def when d is zero.
func enrollTimeout(mode string, d, def time.Duration) (time.Duration, error) {
	if d < 0 {
		return 0, fmt.Errorf("connect: %s.EnrollTimeout must not be negative", mode)
	}
	if d == 0 {
		return def, nil
	}
	return d, nil
}

// checkPorts checks that every UDP port is in range.
func checkPorts(mode string, ports []int) error {
	for _, p := range ports {
		if p < 1 || p > 65535 {
			return fmt.Errorf("connect: %s.DiscoveryPorts: port %d is out of range", mode, p)
		}
	}
	return nil
}

// candidates pairs every host with every port, in that order: all ports of the first host,
// then of the next.
func candidates(hosts []string, ports []int) []candidate {
	out := make([]candidate, 0, len(hosts)*len(ports))
	for _, h := range hosts {
		for _, p := range ports {
			out = append(out, candidate{host: h, port: p})
		}
	}
	return out
}

// inviteHosts returns the discovery hint's addresses trimmed, without blanks and duplicates
// (compared case-insensitively, as .NET does), in their order.
func inviteHosts(doc *pairing.InviteDocument) []string {
	if doc.Discovery == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, h := range doc.Discovery.HostAddresses {
		h = strings.TrimSpace(h)
		if h == "" || seen[strings.ToLower(h)] {
			continue
		}
		seen[strings.ToLower(h)] = true
		out = append(out, h)
	}
	return out
}
