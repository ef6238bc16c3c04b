// Package fanout sends values to every subscriber without ever blocking the sender: a
// subscriber whose buffer is full misses the value. It carries the host's session events
// and a fleet's listing changes, whose subscribers re-read the state they describe.
package fanout
