package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/ansight-go/ansight/internal/privdir"
	"github.com/ansight-go/ansight/pairing"
	"github.com/ansight-go/ansight/wire"
)

// storeSchema names the pairing store's file format.
const storeSchema = "ansight-go.pairing-store.v1"

// storeFileName is the pairing store's file inside Options.StateDir.
const storeFileName = "pairing.json"

// Retention of dead records: long enough that a late device still gets a precise reason
// (EnrollmentConsumed rather than EnrollmentRequired), short enough that the file does not
// grow without bound.
const (
	inviteRetention = 7 * 24 * time.Hour
	grantRetention  = 30 * 24 * time.Hour
)

// Grant modes.
const (
	GrantLocal  = pairing.ModeLocal
	GrantInvite = pairing.ModeInvite
)

// grantRecord is a grant as stored. Only the SHA-256 of the app's token is kept.
type grantRecord struct {
	GrantID       string      `json:"grantId"`
	Mode          string      `json:"mode"`
	ConfigID      string      `json:"configId"`
	AppID         string      `json:"appId"`
	DeviceID      string      `json:"deviceId"`
	DeviceName    string      `json:"deviceName"`
	SecretHash    string      `json:"secretHash"`
	MaxToolPolicy wire.Policy `json:"maxToolPolicy"`
	CreatedAt     time.Time   `json:"createdAt"`
	ExpiresAt     time.Time   `json:"expiresAt"`
	RevokedAt     time.Time   `json:"revokedAt,omitzero"`
	// LastUsedAt is when a session last connected on the grant (zero: never).
	LastUsedAt time.Time `json:"lastUsedAt,omitzero"`
}

func (g *grantRecord) active(now time.Time) bool {
	return g.RevokedAt.IsZero() && !now.After(g.ExpiresAt)
}

// inviteRecord is an invite as stored (the members of Invite, inline, without its
// Document), with its secret only as SHA-256.
type inviteRecord struct {
	Invite
	SecretHash string `json:"secretHash"`
}

type storeData struct {
	Schema  string          `json:"schema"`
	HostID  string          `json:"hostId"`
	Grants  []*grantRecord  `json:"grants"`
	Invites []*inviteRecord `json:"invites"`
}

// store is the pairing state. Its data is not safe for concurrent use: the server
// serializes access under its own lock. Writing the file is split in two, so that the
// slow half (write, fsync, rename) can run outside that lock: snapshot encodes the data
// under it, write puts a snapshot on disk, in generation order. With an empty dir it
// lives in memory only.
type store struct {
	dir  string
	data storeData
	// dirty is set by changes whose write may wait (see Server.saveSoonLocked).
	dirty bool
	// gen numbers snapshots (under the server's lock).
	gen uint64

	writeMu sync.Mutex // serializes writes; never held while taking the server's lock
	written uint64     // the generation on disk

	// The grants by id and by what identifies them (grantKey): with thousands of
	// installations, a scan of the list for each enrollment and upgrade was quadratic.
	// addGrant, removeGrant and prune keep them; index rebuilds them.
	byID  map[string]*grantRecord
	byKey map[grantKey]*grantRecord
	// shared: some grants share an id or a key (a file edited by hand), so a removal
	// rebuilds the lookups instead of deleting from them.
	shared bool
}

// grantKey identifies a grant: a local grant by app and device, an invite grant by its
// invite too.
type grantKey struct {
	mode, configID, appID, deviceID string
}

func keyOf(mode, configID, appID, deviceID string) grantKey {
	if mode == GrantLocal {
		configID = ""
	}
	return grantKey{mode, configID, appID, deviceID}
}

// index rebuilds the lookups of data.Grants; of grants with the same key (a file edited by
// hand), the first is found, as a scan of the list would.
func (s *store) index() {
	s.byID = make(map[string]*grantRecord, len(s.data.Grants))
	s.byKey = make(map[grantKey]*grantRecord, len(s.data.Grants))
	s.shared = false
	for _, g := range s.data.Grants {
		s.indexGrant(g)
	}
}

func (s *store) indexGrant(g *grantRecord) {
	if _, dup := s.byID[g.GrantID]; dup {
		s.shared = true
	} else {
		s.byID[g.GrantID] = g
	}
	k := keyOf(g.Mode, g.ConfigID, g.AppID, g.DeviceID)
	if _, dup := s.byKey[k]; dup {
		s.shared = true
	} else {
		s.byKey[k] = g
	}
}

// storeSnapshot is the store's encoded data at one generation.
type storeSnapshot struct {
	data []byte
	gen  uint64
}

// openStore loads dir/pairing.json, creating dir (mode 0700) when needed; an existing dir
// that other users can reach is refused (privdir.Ensure). A missing file is
// an empty store with a fresh host id; a corrupt one is an error rather than silently
// dropping every grant.
func openStore(dir string) (*store, error) {
	s := &store{dir: dir, data: storeData{Schema: storeSchema, HostID: pairing.NewID(pairing.GrantIDBytes)}}
	s.index()
	if dir == "" {
		return s, nil
	}
	// Grants must not be readable by other users: a shared directory is refused, never
	// tightened (it may be /tmp).
	if err := privdir.Ensure(dir); err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	path := filepath.Join(dir, storeFileName)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, s.save()
	}
	if err != nil {
		return nil, fmt.Errorf("host: pairing store: %w", err)
	}
	var d storeData
	if err := wire.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("host: pairing store %s is corrupt: %w", path, err)
	}
	if d.Schema != storeSchema || d.HostID == "" {
		return nil, fmt.Errorf("host: pairing store %s has schema %q, want %s", path, d.Schema, storeSchema)
	}
	s.data = d
	s.index()
	return s, nil
}

// save writes the store now (snapshot and write).
func (s *store) save() error {
	snap, err := s.snapshot()
	if err != nil {
		return err
	}
	return s.write(snap)
}

// snapshot encodes the store's data for write; the changes made so far are then no longer
// dirty.
func (s *store) snapshot() (storeSnapshot, error) {
	s.dirty = false
	if s.dir == "" {
		return storeSnapshot{}, nil
	}
	b, err := wire.Marshal(&s.data)
	if err != nil {
		return storeSnapshot{}, fmt.Errorf("host: encode pairing store: %w", err)
	}
	s.gen++
	return storeSnapshot{data: b, gen: s.gen}, nil
}

// write puts snap on disk atomically — a temporary file (mode 0600) in the same directory,
// synced, renamed over the old one, then the directory synced so the rename survives a
// crash — unless a later snapshot is there already. It is safe to call without the
// server's lock, concurrently.
func (s *store) write(snap storeSnapshot) error {
	if s.dir == "" || snap.data == nil {
		return nil
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if snap.gen <= s.written {
		return nil
	}
	b := snap.data
	tmp, err := os.CreateTemp(s.dir, ".pairing-*.tmp")
	if err != nil {
		return fmt.Errorf("host: save pairing store: %w", err)
	}
	name := tmp.Name()
	fail := func(err error) error {
		tmp.Close()
		os.Remove(name)
		return fmt.Errorf("host: save pairing store: %w", err)
	}
	if err := tmp.Chmod(0o600); err != nil {
		return fail(err)
	}
	if _, err := tmp.Write(b); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(name, filepath.Join(s.dir, storeFileName)); err != nil {
		os.Remove(name)
		return fmt.Errorf("host: save pairing store: %w", err)
	}
	if d, err := os.Open(s.dir); err == nil {
		d.Sync()
		d.Close()
	}
	s.written = snap.gen
	return nil
}

// prune drops records dead for longer than their retention.
func (s *store) prune(now time.Time) {
	grants := s.data.Grants[:0]
	for _, g := range s.data.Grants {
		if now.Sub(g.ExpiresAt) < grantRetention {
			grants = append(grants, g)
		}
	}
	if len(grants) != len(s.data.Grants) {
		clear(s.data.Grants[len(grants):])
		s.data.Grants = grants
		s.index()
	}
	invites := s.data.Invites[:0]
	for _, inv := range s.data.Invites {
		if now.Sub(inv.ExpiresAt) < inviteRetention {
			invites = append(invites, inv)
		}
	}
	s.data.Invites = invites
}

// grant finds the grant of an installation: local grants by app and device, invite
// grants by invite (configID), app and device.
func (s *store) grant(mode, configID, appID, deviceID string) *grantRecord {
	return s.byKey[keyOf(mode, configID, appID, deviceID)]
}

func (s *store) grantByID(id string) *grantRecord { return s.byID[id] }

// addGrant stores a new grant.
func (s *store) addGrant(g *grantRecord) {
	s.data.Grants = append(s.data.Grants, g)
	s.indexGrant(g)
}

func (s *store) removeGrant(g *grantRecord) {
	i := slices.Index(s.data.Grants, g)
	if i < 0 {
		return
	}
	s.data.Grants = slices.Delete(s.data.Grants, i, i+1)
	if s.shared {
		s.index() // another grant may now be the one found
		return
	}
	delete(s.byID, g.GrantID)
	delete(s.byKey, keyOf(g.Mode, g.ConfigID, g.AppID, g.DeviceID))
}

func (s *store) invite(id string) *inviteRecord {
	for _, inv := range s.data.Invites {
		if inv.ID == id {
			return inv
		}
	}
	return nil
}

func (s *store) removeInvite(id string) bool {
	for i, inv := range s.data.Invites {
		if inv.ID == id {
			s.data.Invites = append(s.data.Invites[:i], s.data.Invites[i+1:]...)
			return true
		}
	}
	return false
}
