package host

import "fmt"

// fileReserve is the descriptors the host needs beside one per session: its listeners,
// the control socket, the player, the recordings' database and the files it writes.
const fileReserve = 128

// FileLimit is the process's open-file limit as Start found and raised it, judged against
// MaxSessions: each connected session holds one descriptor (its socket).
type FileLimit struct {
	// Soft is the limit in force, Hard the most it may be raised to without privilege;
	// both 0 when unknown (the system has no such limit, or it could not be read).
	Soft uint64 `json:"soft"`
	Hard uint64 `json:"hard"`
	// Raised says Start raised the soft limit.
	Raised bool `json:"raised,omitzero"`
	// Sessions is MaxSessions; Needed the descriptors that many sessions need.
	Sessions int `json:"sessions"`
	Needed   int `json:"needed"`
}

// Enough reports whether the limit allows MaxSessions sessions (true when unknown).
func (l FileLimit) Enough() bool { return l.Soft == 0 || l.Soft >= uint64(l.Needed) }

// String describes the limit for people, with what to do when it is too low.
func (l FileLimit) String() string {
	if l.Soft == 0 {
		return "open-file limit unknown"
	}
	s := fmt.Sprintf("open-file limit %d (hard %d)", l.Soft, l.Hard)
	if l.Raised {
		s += ", raised at start"
	}
	if l.Enough() {
		return s + fmt.Sprintf("; enough for %d sessions", l.Sessions)
	}
	return s + fmt.Sprintf("; too low for %d sessions, which need about %d: raise it (ulimit -n %d, or LimitNOFILE= for a service) or lower MaxSessions",
		l.Sessions, l.Needed, l.Needed)
}

// FileLimit returns the open-file limit as Start left it (zero before Start).
func (s *Server) FileLimit() FileLimit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fileLimit
}

// checkFileLimitLocked raises the open-file limit as far as the system allows, records it
// and warns when it is too low for MaxSessions.
func (s *Server) checkFileLimitLocked() {
	need := s.opts.MaxSessions + fileReserve
	l := raiseFileLimit(uint64(need))
	l.Sessions, l.Needed = s.opts.MaxSessions, need
	s.fileLimit = l
	if !l.Enough() {
		s.log.Warn("host: the open-file limit is too low for MaxSessions", "limit", l.String())
	}
}
