package host

import "time"

// The session budget. MaxSessions bounds the connected sessions; within it, no app
// installation and no app may keep the others out:
//   - one grant (one installation: app id and device id) holds at most
//     maxSessionsPerGrant sessions at once;
//   - when the table is full, a newcomer takes the place of the oldest session of the app
//     id holding the most sessions, when that app holds at least two more than the
//     newcomer's own (max-min fairness: the table converges to equal shares per app, and a
//     newcomer's app never loses a session to its own arrival).
// A process that keeps MaxSessions distinct app ids connected at once still fills the
// table: local mode trusts local processes (SECURITY.md).

// maxSessionsPerGrant bounds the connected sessions of one grant: a few processes of one
// app at once.
const maxSessionsPerGrant = 4

// admitLocked decides whether t's upgrade may add a connected session, and names the
// session it displaces, if any. Connected sessions and admitted upgrades count.
func (s *Server) admitLocked(t *ticket) (displace *Session, ok bool) {
	// The common case, a table with room, needs two counts, kept as sessions come and go;
	// the shares of every app only matter once it is full.
	switch {
	case s.occupied.ofGrant[t.grantID] >= maxSessionsPerGrant:
		return nil, false
	case s.occupied.total < s.opts.MaxSessions:
		return nil, true
	}
	return s.displaceLocked(t)
}

// occupancy counts what the session budget counts — connected sessions and admitted
// upgrades not yet attached — in all and per grant, so that admitting an upgrade costs no
// scan of the registry (with thousands of sessions, that scan was most of the host's work
// while apps connected). The server's lock guards it: attach and detach change a
// session's connection under it.
type occupancy struct {
	total   int
	ofGrant map[string]int
}

func (o *occupancy) add(grantID string, d int) {
	o.total += d
	if n := o.ofGrant[grantID] + d; n != 0 {
		o.ofGrant[grantID] = n
	} else {
		delete(o.ofGrant, grantID)
	}
}

// displaceLocked decides, the table being full, whether t's upgrade displaces the oldest
// session of the app holding the most.
func (s *Server) displaceLocked(t *ticket) (displace *Session, ok bool) {
	perApp := make(map[string]int)
	oldest := make(map[string]*Session) // the oldest connected session of each app id
	var oldestAt = make(map[string]time.Time)
	for _, sess := range s.sessions {
		sess.mu.Lock()
		connected, at := sess.conn != nil, sess.connectedAt
		sess.mu.Unlock()
		if !connected {
			continue
		}
		perApp[sess.appID]++
		if o := oldest[sess.appID]; o == nil || at.Before(oldestAt[sess.appID]) {
			oldest[sess.appID], oldestAt[sess.appID] = sess, at
		}
	}
	for u := range s.upgrading {
		perApp[u.appID]++
	}
	busiest := ""
	for app, n := range perApp {
		if oldest[app] != nil && (busiest == "" || n > perApp[busiest] || n == perApp[busiest] && app < busiest) {
			busiest = app
		}
	}
	if busiest == "" || busiest == t.appID || perApp[busiest] < perApp[t.appID]+2 {
		return nil, false
	}
	return oldest[busiest], true
}

// The grant budget. Local mode makes a grant for every new (app id, device id) that
// enrolls from loopback, so a local process could make them without end; the store keeps
// at most MaxLocalGrants. A new local grant beyond prunes the grant least worth keeping:
// one never used to connect (the oldest first), else the one used least recently. Grants
// with a live session and revoked grants (which must keep refusing) are never pruned; a
// pruned grant is made again when its app connects next (trust on first use). Invite
// grants are bounded by the invites a user issues and are not pruned.

// pruneLocalGrantsLocked enforces MaxLocalGrants after keep was added.
func (s *Server) pruneLocalGrantsLocked(keep *grantRecord) {
	n := 0
	for _, g := range s.store.data.Grants {
		if g.Mode == GrantLocal {
			n++
		}
	}
	if n <= s.opts.MaxLocalGrants {
		return
	}
	live := make(map[string]bool)
	for _, sess := range s.sessions {
		if sess.current() != nil {
			live[sess.grantID] = true
		}
	}
	var victim *grantRecord
	for _, g := range s.store.data.Grants {
		if g == keep || g.Mode != GrantLocal || !g.RevokedAt.IsZero() || live[g.GrantID] {
			continue
		}
		if victim == nil || prunesBefore(g, victim) {
			victim = g
		}
	}
	if victim != nil {
		s.store.removeGrant(victim)
		s.log.Info("host: local grant pruned (budget)", "app", victim.AppID, "device", victim.DeviceName)
		s.log.Debug("host: pruned pairing", "pairing", victim.GrantID)
	}
}

// prunesBefore orders grants for pruning: never used before used, then by last use (or,
// never used, by creation).
func prunesBefore(a, b *grantRecord) bool {
	if a.LastUsedAt.IsZero() != b.LastUsedAt.IsZero() {
		return a.LastUsedAt.IsZero()
	}
	if a.LastUsedAt.IsZero() {
		return a.CreatedAt.Before(b.CreatedAt)
	}
	return a.LastUsedAt.Before(b.LastUsedAt)
}

// storeSaveDelay is how long a change whose write may wait stays unwritten at most.
const storeSaveDelay = time.Second

// saveSoonLocked writes the store within storeSaveDelay. It is for changes a crash may
// lose without harm — a new local grant (made again on the app's next connection), a
// grant's last use — so that a flood of local enrollments costs at most one write a
// second instead of a write and an fsync each. Invites, their use and revocations are
// written at once. The data is encoded under s.mu and written after it is released:
// enrollments and upgrades do not wait for the disk.
func (s *Server) saveSoonLocked() {
	s.store.dirty = true
	if s.store.dir == "" || s.saveTimer != nil || s.closed {
		return
	}
	s.saveTimer = time.AfterFunc(storeSaveDelay, func() {
		s.mu.Lock()
		if s.saveTimer == nil { // Close took over
			s.mu.Unlock()
			return
		}
		s.saveTimer = nil
		snap, err := s.store.snapshot()
		s.saving.Add(1) // Close waits for the write
		s.mu.Unlock()
		defer s.saving.Done()
		if err == nil {
			err = s.store.write(snap)
		}
		if err != nil {
			s.log.Error("host: pairing store not saved", "err", err)
		}
	})
}

// flushLocked writes pending changes now (Close).
func (s *Server) flushLocked() {
	if s.saveTimer != nil {
		s.saveTimer.Stop()
		s.saveTimer = nil
	}
	if s.store.dirty {
		if err := s.store.save(); err != nil {
			s.log.Error("host: pairing store not saved", "err", err)
		}
	}
}
