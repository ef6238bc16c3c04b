package host

import "time"

// ticketTable holds the unused WebSocket tokens' tickets: by token hash for redemption, in
// issue order for the budget, and by grant. Dropping the oldest ticket, of all or of a
// grant, and expiring tickets cost no scan of the table: with thousands of apps enrolling
// at once, a scan for each new token was a large part of the host's work. Tickets expire in
// issue order (every one lives Options.TokenTTL), so expired ones are at the front. Not safe
// for concurrent use: the server's lock guards it.
type ticketTable struct {
	byKey map[string]*ticket
	// order holds tickets in issue order; a ticket removed otherwise stays until it
	// reaches the front (order[head]).
	order   []*ticket
	head    int
	ofGrant map[string][]*ticket // each grant's tickets, oldest first
}

func newTicketTable() ticketTable {
	return ticketTable{byKey: make(map[string]*ticket), ofGrant: make(map[string][]*ticket)}
}

func (tt *ticketTable) len() int { return len(tt.byKey) }

// add stores t under key, after expiring what expired by now and dropping, when the grant
// already holds perGrant tickets, its oldest, else when the table holds max, the oldest
// of all: the newest enrollment always gets its token.
func (tt *ticketTable) add(key string, t *ticket, now time.Time, perGrant, max int) {
	for tt.head < len(tt.order) {
		front := tt.order[tt.head]
		if front.key != "" && !now.After(front.expires) {
			break
		}
		tt.remove(front)
		tt.pop()
	}
	switch {
	case len(tt.ofGrant[t.grantID]) >= perGrant:
		tt.remove(tt.ofGrant[t.grantID][0])
	case tt.len() >= max:
		for tt.order[tt.head].key == "" {
			tt.pop()
		}
		tt.remove(tt.order[tt.head])
	}
	t.key = key
	tt.byKey[key] = t
	tt.order = append(tt.order, t)
	tt.ofGrant[t.grantID] = append(tt.ofGrant[t.grantID], t)
}

// take removes and returns the ticket stored under key, nil when there is none.
func (tt *ticketTable) take(key string) *ticket {
	t := tt.byKey[key]
	if t != nil {
		tt.remove(t)
	}
	return t
}

// removeGrants removes every ticket of the grants named.
func (tt *ticketTable) removeGrants(grantIDs map[string]bool) {
	for id := range grantIDs {
		for len(tt.ofGrant[id]) > 0 {
			tt.remove(tt.ofGrant[id][0])
		}
	}
}

// remove takes t out of the lookups; its place in order goes when it reaches the front.
func (tt *ticketTable) remove(t *ticket) {
	if t.key == "" {
		return
	}
	delete(tt.byKey, t.key)
	t.key = ""
	list := tt.ofGrant[t.grantID]
	for i, x := range list {
		if x == t {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(tt.ofGrant, t.grantID)
	} else {
		tt.ofGrant[t.grantID] = list
	}
}

// pop drops the front of order, compacting it once half of it is dropped.
func (tt *ticketTable) pop() {
	tt.order[tt.head] = nil
	tt.head++
	if tt.head == len(tt.order) {
		tt.order, tt.head = tt.order[:0], 0
	} else if tt.head > 1024 && tt.head > len(tt.order)/2 {
		kept := copy(tt.order, tt.order[tt.head:])
		clear(tt.order[kept:])
		tt.order, tt.head = tt.order[:kept], 0
	}
}
