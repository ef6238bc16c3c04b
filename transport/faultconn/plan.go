package faultconn

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/ansight-go/ansight/transport"
)

// Direction says which messages a rule applies to, seen from the wrapped end.
type Direction int

// Directions. The zero value of a Rule's Direction means Both.
const (
	Outbound Direction = 1 << iota // messages this end writes
	Inbound                        // messages this end reads
	Both     = Outbound | Inbound
)

// String returns "outbound", "inbound" or "both".
func (d Direction) String() string {
	switch d {
	case Outbound:
		return "outbound"
	case Inbound:
		return "inbound"
	case Both:
		return "both"
	}
	return fmt.Sprintf("Direction(%d)", int(d))
}

// Action is what a rule does to the message it fires on.
type Action int

// Actions.
const (
	// Pass lets the message through untouched; a Pass rule ahead of others exempts the
	// messages it matches.
	Pass Action = iota
	// Drop loses the message. An outbound Write still reports success.
	Drop
	// Delay holds the message for Rule.Delay before passing it on.
	Delay
	// Truncate cuts the message to Rule.Keep bytes (half its length when Keep is zero).
	Truncate
	// Duplicate delivers the message twice.
	Duplicate
	// Reorder holds the message back and delivers it right after the next one in the same
	// direction. A message still held when the connection ends is lost. Reorder on a message
	// while another is held acts as Pass.
	Reorder
	// Kill drops the connection without a close handshake, losing the message: the peer
	// sees StatusAbnormalClosure, and this end's calls fail with a *transport.CloseError
	// carrying the same code.
	Kill
)

// String returns the action's name in lower case.
func (a Action) String() string {
	switch a {
	case Pass:
		return "pass"
	case Drop:
		return "drop"
	case Delay:
		return "delay"
	case Truncate:
		return "truncate"
	case Duplicate:
		return "duplicate"
	case Reorder:
		return "reorder"
	case Kill:
		return "kill"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Message is what a rule's Match sees.
type Message struct {
	Direction Direction
	// Index is the message's position among the messages of its direction, from 0: writes
	// are counted as they enter Write, reads as they come from the wrapped Conn.
	Index int
	Type  transport.MessageType
	// Data is the message; Match must not keep or modify it.
	Data []byte
}

// Rule selects messages and says what to do with them.
type Rule struct {
	// Direction limits the rule to outbound or inbound messages; zero means Both.
	Direction Direction
	// Match selects the messages the rule applies to; nil selects every message.
	Match func(Message) bool
	// Probability is the chance that the rule fires on a selected message, drawn from the
	// plan's seeded generator. Zero (or anything not below 1) means always. A rule that
	// does not fire leaves the message to the next rules.
	Probability float64
	// Times is how many times the rule fires at most; zero means no limit.
	Times int
	// Action is what happens to the message.
	Action Action
	// Delay is how long a Delay action holds the message.
	Delay time.Duration
	// Keep is how many bytes a Truncate action keeps; zero means half the message.
	Keep int
}

// Plan is the programme of faults for one wrapped Conn.
type Plan struct {
	// Seed seeds the generator behind rule probabilities. Each direction draws from its own
	// stream, so the faults on writes do not depend on how reads interleave with them.
	Seed uint64
	// Rules are tried in order; the first one that fires decides.
	Rules []Rule
}

// Event records a rule firing.
type Event struct {
	Direction Direction
	Index     int
	Type      transport.MessageType
	Size      int // the message's length before the action
	Rule      int // index of the rule in Plan.Rules
	Action    Action
}

// At matches the messages with the given indexes.
func At(indexes ...int) func(Message) bool {
	idx := slices.Clone(indexes)
	return func(m Message) bool { return slices.Contains(idx, m.Index) }
}

// From matches every message from index on.
func From(index int) func(Message) bool {
	return func(m Message) bool { return m.Index >= index }
}

// OfType matches the messages of type t.
func OfType(t transport.MessageType) func(Message) bool {
	return func(m Message) bool { return m.Type == t }
}

// Contains matches the messages that contain sub, e.g. `"type":"tool.result"`.
func Contains(sub string) func(Message) bool {
	s := []byte(sub)
	return func(m Message) bool { return bytes.Contains(m.Data, s) }
}
