package tools

import "sync/atomic"

// Use: whether, and how recently, the host's user has used a client to run tools. The
// host's session budget reads it (host/budget.go): when the table is full, the sessions the
// user is using are the last to make room, and one with a call running never does.
// Catalog queries do not count: the host fetches every session's index as it opens, so a
// query says nothing about the user.

// callOrder stamps each Call and Batch of every client in the process, so that the last
// uses of different clients compare: a larger stamp is a later call.
var callOrder atomic.Uint64

// startCall marks a Call or Batch as running on c and stamps c's last use; endCall ends
// it. Two atomic operations on the call path, no clock read.
func (c *Client) startCall() {
	c.calling.Add(1)
	c.lastCall.Store(callOrder.Add(1))
}

func (c *Client) endCall() { c.calling.Add(-1) }

// Calling reports whether a Call or Batch is running on c: sent or about to be, waiting
// for its answer, or receiving the transfers it announced.
func (c *Client) Calling() bool { return c.calling.Load() > 0 }

// LastCall is the stamp of the last Call or Batch started on c, 0 when none was. Stamps
// of all clients in the process compare: the larger was started later.
func (c *Client) LastCall() uint64 { return c.lastCall.Load() }
