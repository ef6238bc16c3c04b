// Package faultconn injects faults into a transport.Conn, for tests of how the protocol's
// peers cope with an unreliable connection.
//
// [Wrap] returns a Conn that behaves like the wrapped one except where a [Plan] says
// otherwise. A plan is a list of [Rule]s; every message, in each direction, is checked
// against the rules in order, and the first rule that fires decides what happens to it:
// it may be dropped, delayed, truncated, duplicated, swapped with the next message, or the
// connection may die with it (the peer sees an abnormal close, as when a network fails in
// the middle of a message). Rules select messages by index, by predicate, or both, may fire
// a limited number of times, and may fire with a probability drawn from a generator seeded
// by the plan: the same plan over the same traffic injects the same faults, run after run.
//
// Outbound faults apply to messages this side writes, inbound faults to messages it reads.
// Wrapping one end of a [transport.Pipe] therefore covers both directions of a link.
//
// Writes go through the fault layer one at a time, in the order they arrive; a delayed
// write holds back the writes after it, as a slow link would.
package faultconn
