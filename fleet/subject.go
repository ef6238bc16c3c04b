package fleet

import (
	"fmt"
	"strings"

	"github.com/ansight-go/ansight/wire"
)

// Root is the first token of every subject the fleet uses.
const Root = "ansight"

// DefaultFleet is the fleet name used when none is given.
const DefaultFleet = "default"

// maxNameLen bounds fleet and host names: they are subject tokens, and a session id
// carries its host's name.
const maxNameLen = 64

// ValidName reports whether s can name a fleet or a host: 1 to 64 characters of
// [A-Za-z0-9_-]. Names are single subject tokens, so they can hold no '.', wildcard or
// space, and a NATS permission can name them exactly.
func ValidName(s string) error {
	if s == "" || len(s) > maxNameLen {
		return fmt.Errorf("fleet: a name has 1 to %d characters, not %d", maxNameLen, len(s))
	}
	for i := 0; i < len(s); i++ {
		if !nameByte(s[i]) {
			return fmt.Errorf("fleet: name %q: only letters, digits, '-' and '_' are allowed", s)
		}
	}
	return nil
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// HostName turns a machine's host name into a valid fleet host name: its first label,
// with other characters than [A-Za-z0-9_-] replaced by '-'.
func HostName(machine string) string {
	machine, _, _ = strings.Cut(machine, ".")
	b := []byte(machine)
	for i, c := range b {
		if !nameByte(c) {
			b[i] = '-'
		}
	}
	if len(b) > maxNameLen {
		b = b[:maxNameLen]
	}
	if len(b) == 0 {
		return "host"
	}
	return string(b)
}

// Operations a host serves, the last tokens of its subjects (ansight.<fleet>.host.<host>.<op>).
const (
	opSessions = "sessions"
	opTools    = "tools"
	opTool     = "tool"
	opCall     = "call"  // followed by the policy class: call.read, call.write, call.critical
	opBatch    = "batch" // likewise, with the highest policy of the batch's calls
	opBlob     = "blob"
	opCancel   = "cancel"
	opPing     = "ping"
	// The recordings of the host's sessions (read-only): the list, one page of a
	// session's records, one record's file.
	opRecordings = "recordings"
	opRecords    = "records"
	opRecordFile = "recordfile"
	// A session's label (Backend.Rename): a change, on a subject of its own so that the
	// NATS permissions can keep read-only users from it.
	opRename = "rename"
)

// subjects are the subjects of one fleet.
type subjects struct{ prefix string } // "ansight.<fleet>"

func newSubjects(fleet string) subjects { return subjects{prefix: Root + "." + fleet} }

// discover is where clients ask every host for its presence and sessions.
func (s subjects) discover() string { return s.prefix + ".discover" }

// presence is where host publishes its heartbeats and changes.
func (s subjects) presence(host string) string { return s.prefix + ".presence." + host }

// presenceAll matches every host's presence.
func (s subjects) presenceAll() string { return s.prefix + ".presence.*" }

// hostAll matches every request to host.
func (s subjects) hostAll(host string) string { return s.prefix + ".host." + host + ".>" }

// op is the subject of an operation of host; class is the policy class of calls and
// batches ("" for the others).
func (s subjects) op(host, op string, class wire.Policy) string {
	subj := s.prefix + ".host." + host + "." + op
	if class != "" {
		subj += "." + string(class)
	}
	return subj
}

// parseOp reads the operation and class of a request subject of host.
func (s subjects) parseOp(host, subject string) (op string, class wire.Policy, ok bool) {
	rest, found := strings.CutPrefix(subject, s.prefix+".host."+host+".")
	if !found {
		return "", "", false
	}
	op, c, hasClass := strings.Cut(rest, ".")
	switch op {
	case opCall, opBatch:
		if !hasClass {
			return "", "", false
		}
		class = wire.Policy(c)
		if !class.Valid() {
			return "", "", false
		}
		return op, class, true
	case opSessions, opTools, opTool, opBlob, opCancel, opPing, opRecordings, opRecords, opRecordFile, opRename:
		return op, "", !hasClass
	}
	return "", "", false
}

// Session ids in a fleet are qualified with their host: "<session>@<host>". A host's own
// ids never hold '@' (they are "<app-hint>-NNN").
const hostSep = "@"

// QualifiedID is the fleet-wide id of a host's session.
func QualifiedID(session, host string) string { return session + hostSep + host }

// SplitID splits a fleet-wide session id into the host's session id and the host name;
// host is "" for an id without a host.
func SplitID(id string) (session, host string) {
	if i := strings.LastIndex(id, hostSep); i >= 0 {
		return id[:i], id[i+1:]
	}
	return id, ""
}
