package fleet

import (
	"slices"
	"sync"
	"time"

	"github.com/ansight-go/ansight/hostapi"
)

// missedHeartbeats is how many heartbeat intervals a host may stay silent before it is
// taken for dead and dropped from listings.
const missedHeartbeats = 3

// directory is what one side knows of the fleet's hosts, from their presence messages:
// hosts see their peers through it, clients the hosts and their session lists.
type directory struct {
	mu    sync.Mutex
	hosts map[string]*peer
	now   func() time.Time
}

// peer is one host as last heard of.
type peer struct {
	presence Presence
	seen     time.Time
	// list is the host's session list at listRevision (clients only); nil until fetched.
	list         []hostapi.Session
	listRevision string
}

func newDirectory() *directory { return &directory{hosts: map[string]*peer{}, now: time.Now} }

// observe records a presence message and reports whether it changed what a listing shows:
// a new host, a host leaving, or a new session-list revision.
func (d *directory) observe(p Presence) bool {
	if ValidName(p.Host) != nil {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	old, known := d.hosts[p.Host]
	if p.Leaving {
		delete(d.hosts, p.Host)
		return known
	}
	if !known {
		d.hosts[p.Host] = &peer{presence: p, seen: d.now()}
		return true
	}
	changed := old.presence.Revision != p.Revision || !old.presence.StartedAt.Equal(p.StartedAt)
	old.presence, old.seen = p, d.now()
	return changed
}

// expiry is how long a host may stay silent.
func expiry(p Presence) time.Duration {
	hb := time.Duration(p.HeartbeatMS) * time.Millisecond
	if hb <= 0 {
		hb = DefaultHeartbeat
	}
	return missedHeartbeats * hb
}

// expire drops the hosts silent for longer than their expiry and returns their names.
func (d *directory) expire() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	var gone []string
	for name, p := range d.hosts {
		if now.Sub(p.seen) > expiry(p.presence) {
			delete(d.hosts, name)
			gone = append(gone, name)
		}
	}
	return gone
}

// names returns the live hosts, sorted.
func (d *directory) names() []string {
	d.expire()
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]string, 0, len(d.hosts))
	for name := range d.hosts {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// presence returns a live host's last presence.
func (d *directory) presence(host string) (Presence, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p, ok := d.hosts[host]
	if !ok || d.now().Sub(p.seen) > expiry(p.presence) {
		return Presence{}, false
	}
	return p.presence, true
}

// cached returns host's session list when it is current: fetched at the revision the
// host last announced.
func (d *directory) cached(host string) ([]hostapi.Session, string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p, ok := d.hosts[host]
	if !ok || p.list == nil {
		return nil, "", false
	}
	return p.list, p.listRevision, p.listRevision == p.presence.Revision
}

// store keeps a host's session list at a revision.
func (d *directory) store(host, revision string, list []hostapi.Session) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if p, ok := d.hosts[host]; ok {
		// The list is at least as new as the last presence: the revision it was fetched at
		// is the host's current one.
		p.list, p.listRevision, p.presence.Revision = list, revision, revision
	}
}
