package host

import "time"

// The session budget. MaxSessions bounds the connected sessions (admitted upgrades count);
// within it, no installation, no app and no local process may keep the others out:
//   - one grant (one installation: app id and device id) holds at most
//     maxSessionsPerGrant sessions at once;
//   - when the table is full, a newcomer takes the place of the first session in this
//     order (displacesBefore):
//     1. never called before called: a session the host's user ran a tool on (a call or
//        a batch) goes last. Catalog queries do not count: the host fetches every
//        session's index as it opens, so they say nothing about the user;
//     2. sessions of an app holding at least two more than the newcomer's own before the
//        others, the app holding the most first (max-min fairness: shares per app id
//        converge, and this rule never takes a session of the newcomer's app);
//     3. least recently used first: by last call, a session never called by its last
//        connection.
//     A session with a call running is never displaced; when every session has one (or
//     the table is all upgrades), the upgrade gets 503.
//
// Why app ids alone are not enough: local mode cannot verify them, so one process that
// enrolls N made-up app ids holds one session per app and no app is over its share. With
// the order above such a process still connects as often as it likes, but each connection
// displaces the least recently used session nobody calls (mostly its own), and the
// sessions the user is using stay. A displaced app that reconnects displaces in turn the
// least recently used uncalled session, not the newcomer: the newcomer connected last,
// and once the user calls it, it is out of reach while any uncalled session is left. So
// squatters churn among themselves. What a squatter can still do: reconnect MaxSessions-1
// times in a row before the user first calls a newcomer, pushing it out; its SDK then
// reconnects and displaces a squatter. SECURITY.md (Budgets) says what users see.

// maxSessionsPerGrant bounds the connected sessions of one grant: a few processes of one
// app at once.
const maxSessionsPerGrant = 4

// admitLocked decides whether t's upgrade may add a connected session, and names the
// session it displaces, if any, with the reason to give it. Connected sessions and
// admitted upgrades count.
func (s *Server) admitLocked(t *ticket) (displace *Session, reason string, ok bool) {
	// The common case, a table with room, needs two counts, kept as sessions come and go;
	// the shares of every app only matter once it is full.
	switch {
	case s.occupied.ofGrant[t.grantID] >= maxSessionsPerGrant:
		return nil, "", false
	case s.occupied.total < s.opts.MaxSessions:
		return nil, "", true
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
	// connects numbers attaches, in order: a session's connectOrder.
	connects uint64
}

func (o *occupancy) add(grantID string, d int) {
	o.total += d
	if n := o.ofGrant[grantID] + d; n != 0 {
		o.ofGrant[grantID] = n
	} else {
		delete(o.ofGrant, grantID)
	}
}

// Reasons given to a displaced session in its close frame (code 1000).
const (
	reasonOverShare = "The host's sessions are full and this app holds more than its share."
	reasonUnused    = "The host's sessions are full and this session was the least recently used."
)

// candidate is a connected session as the budget sees it when the table is full.
type candidate struct {
	sess   *Session
	conn   *connection
	called bool
	used   uint64 // last call stamp when called, else connectOrder
	share  int    // its app's sessions when over the newcomer's share, else 0
}

// displacesBefore orders candidates for displacement (see the order above).
func displacesBefore(a, b candidate) bool {
	if a.called != b.called {
		return !a.called
	}
	if a.share != b.share {
		return a.share > b.share
	}
	if a.share > 0 && a.sess.appID != b.sess.appID {
		return a.sess.appID < b.sess.appID // equal shares: one app at a time, by name
	}
	return a.used < b.used
}

// displaceLocked decides, the table being full, which session t's upgrade displaces.
func (s *Server) displaceLocked(t *ticket) (displace *Session, reason string, ok bool) {
	perApp := make(map[string]int)
	var all []candidate
	for _, sess := range s.sessions {
		sess.mu.Lock()
		c := sess.conn
		connectOrder, prior := sess.connectOrder, sess.priorCall
		sess.mu.Unlock()
		if c == nil || c.displaced {
			continue // a displaced connection's place is already the upgrade's that took it
		}
		perApp[sess.appID]++
		if c.client.Calling() {
			continue // the user is waiting for it
		}
		last := max(prior, c.client.LastCall())
		cand := candidate{sess: sess, conn: c, called: last != 0, used: connectOrder}
		if cand.called {
			cand.used = last
		}
		all = append(all, cand)
	}
	for u := range s.upgrading {
		perApp[u.appID]++
	}
	var best *candidate
	for i := range all {
		c := &all[i]
		if n := perApp[c.sess.appID]; c.sess.appID != t.appID && n >= perApp[t.appID]+2 {
			c.share = n
		}
		if best == nil || displacesBefore(*c, *best) {
			best = c
		}
	}
	if best == nil {
		return nil, "", false
	}
	best.conn.displaced = true
	if best.share > 0 {
		return best.sess, reasonOverShare, true
	}
	return best.sess, reasonUnused, true
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
