package fleet

import (
	"context"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// discover asks every host at once for its presence and sessions, and waits until the
// hosts that the answers name as peers have all answered, or DiscoverWait has passed. No
// host at all is an empty fleet, known at once (the server says nobody listens).
func (c *Client) discover(ctx context.Context) error {
	subject := c.subj.discover()
	mx := c.mux.Load()
	reply, p, err := mx.open(subject)
	if err != nil {
		return err
	}
	defer mx.close(reply)
	if err := c.nc.PublishMsg(&nats.Msg{Subject: subject, Reply: reply}); err != nil {
		return apiError(wire.CodeDisconnected, "ask the fleet's hosts: %v", err)
	}
	wait := time.NewTimer(c.opts.DiscoverWait)
	defer wait.Stop()
	answered, named := map[string]bool{}, map[string]bool{}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wait.C:
			missing := []string{}
			for h := range named {
				if !answered[h] {
					missing = append(missing, h)
				}
			}
			c.log.Info("fleet: hosts named by their peers did not answer", "hosts", missing)
			return nil
		case <-p.notify:
		}
		msgs, err := p.take()
		if err != nil {
			return err
		}
		for _, m := range msgs {
			if noResponders(m) {
				return nil
			}
			var a hostSessions
			if m.Header.Get(kindHeader) != kindResult || wire.Unmarshal(m.Data, &a) != nil || a.Presence == nil {
				continue
			}
			pr := *a.Presence
			if ValidName(pr.Host) != nil || pr.Leaving {
				continue
			}
			c.dir.observe(pr)
			if !a.Partial {
				c.dir.store(pr.Host, a.Revision, a.Sessions)
			}
			answered[pr.Host] = true
			for _, peer := range pr.Peers {
				if ValidName(peer) == nil {
					named[peer] = true
				}
			}
		}
		done := len(answered) > 0
		for h := range named {
			done = done && answered[h]
		}
		if done {
			return nil
		}
	}
}

// otherHosts lists the fleet's hosts but the Home one.
func (c *Client) otherHosts() []string {
	var hosts []string
	for _, h := range c.dir.names() {
		if c.opts.Home == nil || h != c.opts.Home.Name {
			hosts = append(hosts, h)
		}
	}
	return hosts
}

// Sessions implements hostapi.Backend: the sessions of every live host, each with its
// host and its fleet-wide id (connected first, then by host and id). A host that fails to
// answer is left out (and logged); when every host fails, that is the error.
func (c *Client) Sessions(ctx context.Context) (*hostapi.Sessions, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	hosts := c.otherHosts()
	lists := make([][]hostapi.Session, len(hosts))
	errs := make([]error, len(hosts))
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Go(func() { lists[i], errs[i] = c.hostList(ctx, h) })
	}
	out := &hostapi.Sessions{Schema: hostapi.SchemaSessions, Sessions: []hostapi.Session{}}
	if home := c.opts.Home; home != nil {
		s, err := home.Backend.Sessions(ctx)
		if err != nil {
			wg.Wait()
			return nil, err
		}
		for _, v := range s.Sessions {
			v.Host = home.Name
			out.Sessions = append(out.Sessions, v)
		}
	}
	wg.Wait()
	var first error
	ok := c.opts.Home != nil || len(hosts) == 0
	for i, h := range hosts {
		if errs[i] != nil {
			c.log.Warn("fleet: a host did not list its sessions", "host", h, "err", errs[i])
			if first == nil {
				first = errs[i]
			}
			continue
		}
		ok = true
		for _, v := range lists[i] {
			v.ID, v.Host = QualifiedID(v.ID, h), h
			out.Sessions = append(out.Sessions, v)
		}
	}
	if !ok {
		return nil, first
	}
	sortSessions(out.Sessions)
	return out, nil
}

// hostList returns a host's sessions (its own ids): the cached list when the host
// announced no change since, else the host's answer to a conditional request.
func (c *Client) hostList(ctx context.Context, h string) ([]hostapi.Session, error) {
	list, rev, current := c.dir.cached(h)
	if current {
		return list, nil
	}
	var a hostSessions
	if err := c.roundTrip(ctx, h, c.subj.op(h, opSessions, ""), request{IfRevision: rev}, &a, nil); err != nil {
		return nil, err
	}
	if a.Unchanged {
		c.dir.store(h, a.Revision, list)
		return list, nil
	}
	if a.Sessions == nil {
		a.Sessions = []hostapi.Session{}
	}
	c.dir.store(h, a.Revision, a.Sessions)
	return a.Sessions, nil
}
