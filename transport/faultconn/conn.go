package faultconn

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/ansight-go/ansight/transport"
)

// Conn is a transport.Conn with faults injected by a Plan. It keeps the wrapped Conn's
// concurrency contract and also implements transport.Aborter.
type Conn struct {
	inner transport.Conn
	rules []Rule

	closed    chan struct{} // closed when this end closes, aborts or is killed
	closeOnce sync.Once

	mu     sync.Mutex // guards the fields below
	fired  []int      // times each rule fired
	rng    [2]*rand.Rand
	events []Event
	killed error // set by a Kill action

	wmu    sync.Mutex // serializes writes; guards the fields below
	wIndex int
	wHeld  *Message

	// Read state: one reader at a time by contract.
	rIndex   int
	rHeld    *Message
	rPending []Message
}

// Wrap returns c with the faults of plan injected.
func Wrap(c transport.Conn, plan Plan) *Conn {
	return &Conn{
		inner:  c,
		rules:  append([]Rule(nil), plan.Rules...),
		fired:  make([]int, len(plan.Rules)),
		closed: make(chan struct{}),
		rng: [2]*rand.Rand{
			rand.New(rand.NewPCG(plan.Seed, uint64(Outbound))),
			rand.New(rand.NewPCG(plan.Seed, uint64(Inbound))),
		},
	}
}

// Events returns the faults injected so far, in order.
func (c *Conn) Events() []Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Event(nil), c.events...)
}

// decide runs the plan on m and returns the rule that fired (Pass if none).
func (c *Conn) decide(m Message) Rule {
	c.mu.Lock()
	defer c.mu.Unlock()
	rng := c.rng[0]
	if m.Direction == Inbound {
		rng = c.rng[1]
	}
	for i, r := range c.rules {
		dir := r.Direction
		if dir == 0 {
			dir = Both
		}
		if dir&m.Direction == 0 || (r.Times > 0 && c.fired[i] >= r.Times) {
			continue
		}
		if r.Match != nil && !r.Match(m) {
			continue
		}
		if r.Probability > 0 && r.Probability < 1 && rng.Float64() >= r.Probability {
			continue
		}
		c.fired[i]++
		c.events = append(c.events, Event{
			Direction: m.Direction, Index: m.Index, Type: m.Type, Size: len(m.Data), Rule: i, Action: r.Action,
		})
		return r
	}
	return Rule{Action: Pass}
}

// dead returns the error of a killed connection, or nil.
func (c *Conn) dead() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.killed
}

// kill drops the wrapped connection and makes this end report an abnormal closure.
func (c *Conn) kill(m Message) error {
	err := &transport.CloseError{
		Code:   transport.StatusAbnormalClosure,
		Reason: "faultconn: connection killed at " + m.Direction.String() + " message " + strconv.Itoa(m.Index),
	}
	c.mu.Lock()
	if c.killed == nil {
		c.killed = err
	}
	kept := c.killed
	c.mu.Unlock()
	c.markClosed()
	_ = transport.Abort(c.inner)
	return kept
}

func (c *Conn) markClosed() { c.closeOnce.Do(func() { close(c.closed) }) }

// sleep waits d, or less if ctx ends or this end closes.
func (c *Conn) sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.closed:
		if err := c.dead(); err != nil {
			return err
		}
		return transport.ErrClosed
	}
}

// Write applies the plan to an outbound message, then writes what remains of it.
func (c *Conn) Write(ctx context.Context, typ transport.MessageType, data []byte) error {
	if typ != transport.MessageText && typ != transport.MessageBinary {
		return c.inner.Write(ctx, typ, data) // the wrapped Conn reports the bad type
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.dead(); err != nil {
		return err
	}
	m := Message{Direction: Outbound, Index: c.wIndex, Type: typ, Data: data}
	c.wIndex++
	r := c.decide(m)
	var err error
	switch r.Action {
	case Drop:
	case Delay:
		if err = c.sleep(ctx, r.Delay); err == nil {
			err = c.inner.Write(ctx, typ, data)
		}
	case Truncate:
		err = c.inner.Write(ctx, typ, data[:keep(r, len(data))])
	case Duplicate:
		if err = c.inner.Write(ctx, typ, data); err == nil {
			err = c.inner.Write(ctx, typ, data)
		}
	case Reorder:
		if c.wHeld == nil {
			held := m
			held.Data = append([]byte(nil), data...) // the caller may reuse data
			c.wHeld = &held
			return nil
		}
		err = c.inner.Write(ctx, typ, data)
	case Kill:
		return c.kill(m)
	default:
		err = c.inner.Write(ctx, typ, data)
	}
	if err == nil && c.wHeld != nil {
		held := c.wHeld
		c.wHeld = nil
		err = c.inner.Write(ctx, held.Type, held.Data)
	}
	return err
}

// Read returns the next message left after the plan is applied to inbound messages.
func (c *Conn) Read(ctx context.Context) (transport.MessageType, []byte, error) {
	for {
		if len(c.rPending) > 0 {
			m := c.rPending[0]
			c.rPending = c.rPending[1:]
			return m.Type, m.Data, nil
		}
		if err := c.dead(); err != nil {
			return 0, nil, err
		}
		typ, data, err := c.inner.Read(ctx)
		if err != nil {
			if killed := c.dead(); killed != nil {
				return 0, nil, killed // a Kill on the write side ended the read
			}
			return 0, nil, err
		}
		m := Message{Direction: Inbound, Index: c.rIndex, Type: typ, Data: data}
		c.rIndex++
		r := c.decide(m)
		switch r.Action {
		case Drop:
			continue
		case Delay:
			if err := c.sleep(ctx, r.Delay); err != nil {
				return 0, nil, err
			}
		case Truncate:
			m.Data = m.Data[:keep(r, len(m.Data))]
		case Duplicate:
			dup := m
			dup.Data = append([]byte(nil), m.Data...) // each Read's slice belongs to its caller
			c.rPending = append(c.rPending, dup)
		case Reorder:
			if c.rHeld == nil {
				c.rHeld = &m
				continue
			}
		case Kill:
			return 0, nil, c.kill(m)
		}
		if c.rHeld != nil {
			c.rPending = append(c.rPending, *c.rHeld)
			c.rHeld = nil
		}
		return m.Type, m.Data, nil
	}
}

// Close closes the wrapped connection. A message held for reordering is lost.
func (c *Conn) Close(code transport.StatusCode, reason string) error {
	if c.dead() != nil {
		return transport.ErrClosed
	}
	c.markClosed()
	return c.inner.Close(code, reason)
}

// Abort drops the wrapped connection without a close handshake (see transport.Abort).
func (c *Conn) Abort() error {
	if c.dead() != nil {
		return transport.ErrClosed
	}
	c.markClosed()
	return transport.Abort(c.inner)
}

// keep is how many of n bytes a Truncate rule keeps.
func keep(r Rule, n int) int {
	if r.Keep <= 0 {
		return n / 2
	}
	return min(r.Keep, n)
}
