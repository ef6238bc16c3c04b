package host

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestStoreIndex: the store's lookups find what a scan of its list finds (the first match),
// through additions, removals, pruning and a file with grants sharing an id or a key.
func TestStoreIndex(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 7, 30, 1, 0, 0, 0, time.UTC)
	scan := func(st *store, mode, configID, appID, deviceID string) *grantRecord {
		for _, g := range st.data.Grants {
			if g.Mode == mode && g.AppID == appID && g.DeviceID == deviceID && (mode == GrantLocal || g.ConfigID == configID) {
				return g
			}
		}
		return nil
	}
	scanID := func(st *store, id string) *grantRecord {
		for _, g := range st.data.Grants {
			if g.GrantID == id {
				return g
			}
		}
		return nil
	}
	rng := rand.New(rand.NewPCG(1, 2))
	newGrant := func() *grantRecord {
		mode := GrantLocal
		if rng.IntN(2) == 0 {
			mode = GrantInvite
		}
		return &grantRecord{
			GrantID: fmt.Sprint("g", rng.IntN(40)), Mode: mode, ConfigID: fmt.Sprint("c", rng.IntN(3)),
			AppID: fmt.Sprint("a", rng.IntN(4)), DeviceID: fmt.Sprint("d", rng.IntN(4)),
			ExpiresAt: now.Add(time.Duration(rng.IntN(80)-40) * 24 * time.Hour),
		}
	}
	for round := range 50 {
		st, err := openStore("")
		if err != nil {
			t.Fatal(err)
		}
		if round%2 == 0 { // as loaded from a file: ids and keys may repeat
			for range 20 {
				st.data.Grants = append(st.data.Grants, newGrant())
			}
			st.index()
		}
		for step := range 60 {
			switch op := rng.IntN(4); {
			case op == 0 || op == 1:
				st.addGrant(newGrant())
			case op == 2 && len(st.data.Grants) > 0:
				st.removeGrant(st.data.Grants[rng.IntN(len(st.data.Grants))])
			default:
				st.prune(now)
			}
			for _, mode := range []string{GrantLocal, GrantInvite} {
				for c := range 3 {
					for a := range 4 {
						for d := range 4 {
							cfg, app, dev := fmt.Sprint("c", c), fmt.Sprint("a", a), fmt.Sprint("d", d)
							if got, want := st.grant(mode, cfg, app, dev), scan(st, mode, cfg, app, dev); got != want {
								t.Fatalf("round %d step %d: grant(%s %s %s %s) = %p, the scan finds %p", round, step, mode, cfg, app, dev, got, want)
							}
						}
					}
				}
			}
			for i := range 40 {
				id := fmt.Sprint("g", i)
				if got, want := st.grantByID(id), scanID(st, id); got != want {
					t.Fatalf("round %d step %d: grantByID(%s) = %p, the scan finds %p", round, step, id, got, want)
				}
			}
		}
	}
}
