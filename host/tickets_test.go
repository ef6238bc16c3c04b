package host

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// refTickets is the ticket budget as a scan of every ticket: what ticketTable must match.
type refTickets struct {
	live map[string]*refTicket
	seq  int
}

type refTicket struct {
	grant   string
	expires time.Time
	seq     int
}

func (r *refTickets) add(key, grant string, expires, now time.Time, perGrant, max int) {
	var oldest, oldestOfGrant string
	ofGrant := 0
	for k, t := range r.live {
		if now.After(t.expires) {
			delete(r.live, k)
			continue
		}
		if oldest == "" || t.seq < r.live[oldest].seq {
			oldest = k
		}
		if t.grant == grant {
			ofGrant++
			if oldestOfGrant == "" || t.seq < r.live[oldestOfGrant].seq {
				oldestOfGrant = k
			}
		}
	}
	switch {
	case ofGrant >= perGrant:
		delete(r.live, oldestOfGrant)
	case len(r.live) >= max:
		delete(r.live, oldest)
	}
	r.live[key] = &refTicket{grant: grant, expires: expires, seq: r.seq}
	r.seq++
}

// TestTicketTable: random enrollments, redemptions, revocations and passing time leave
// the table with the same tokens as a scan of every ticket would.
func TestTicketTable(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	const ttl, perGrant, max = 10 * time.Second, 4, 12
	for round := range 30 {
		tt := newTicketTable()
		ref := &refTickets{live: map[string]*refTicket{}}
		now := time.Date(2026, 7, 30, 1, 0, 0, 0, time.UTC)
		var keys []string
		for step := range 400 {
			now = now.Add(time.Duration(rng.IntN(800)) * time.Millisecond)
			switch op := rng.IntN(10); {
			case op < 6:
				key, grant := fmt.Sprint("k", round, ".", step), fmt.Sprint("g", rng.IntN(6))
				tt.add(key, &ticket{grantID: grant, expires: now.Add(ttl)}, now, perGrant, max)
				ref.add(key, grant, now.Add(ttl), now, perGrant, max)
				keys = append(keys, key)
			case op < 9 && len(keys) > 0:
				key := keys[rng.IntN(len(keys))]
				got := tt.take(key)
				_, want := ref.live[key]
				delete(ref.live, key)
				if (got != nil) != want {
					t.Fatalf("round %d step %d: take(%s) = %v, the scan has it: %v", round, step, key, got, want)
				}
			default:
				revoked := map[string]bool{fmt.Sprint("g", rng.IntN(6)): true}
				tt.removeGrants(revoked)
				for k, rt := range ref.live {
					if revoked[rt.grant] {
						delete(ref.live, k)
					}
				}
			}
			// Expired tickets may stay in the table until an enrollment expires them; both
			// refuse them at redemption, so compare the unexpired ones.
			var got, want []string
			for k, x := range tt.byKey {
				if !now.After(x.expires) {
					got = append(got, k)
				}
			}
			for k, x := range ref.live {
				if !now.After(x.expires) {
					want = append(want, k)
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("round %d step %d: table holds %v, the scan %v", round, step, got, want)
			}
			n := 0
			for _, list := range tt.ofGrant {
				n += len(list)
			}
			if n != tt.len() {
				t.Fatalf("round %d step %d: %d tickets by grant, %d by key", round, step, n, tt.len())
			}
		}
	}
}
