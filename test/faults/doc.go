// Package faults holds cross-package fault tests: connections that die in the middle of a
// call, a batch or an ASFT transfer, frames dropped, delayed, duplicated, reordered or
// truncated on the way, apps that reconnect and hosts that restart. The tests drive the
// production packages (host, host/tools, app, app/connect) over real loopback sockets;
// message-level faults are injected with transport/faultconn.
//
// After every fault a test checks the same four things: no caller is stuck (every pending
// request ends, with a transport error, within its deadline), no partial artifact is left
// in the artifact directory, no goroutine is leaked, and the session works again.
//
// The package has no code of its own; see the _test.go files.
package faults
