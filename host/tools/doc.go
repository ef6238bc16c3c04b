// Package tools is the host's protocol client for one app connection: it sends tool.query,
// tool.call and tool.batch requests, correlates the responses, keeps the two-phase catalog
// cache, enforces the session grant (maxToolPolicy) before anything is sent, and receives
// ASFT artifacts into files.
//
// The client owns no goroutine. The host session owns the connection's reader goroutine and
// feeds every inbound message to [Client.HandleMessage]; requests are written through the
// connection by the goroutines that call [Client.Query], [Client.Catalog], [Client.Call] and
// [Client.Batch]. Artifact bytes are written to disk inside HandleMessage, so a slow disk
// slows the reader (back-pressure) instead of growing memory: memory stays flat in the
// artifact size.
//
// Failures come in three kinds, told apart with errors.As:
//   - *wire.Error: the app answered tool.error (or a tool.result with success:false);
//   - *RefusalError: this client refused to send the request (policy above the grant, tool
//     absent from the last catalog or not executable, arguments not matching the schema);
//     it wraps a *wire.Error, so wire.CodeOf works on it too;
//   - *TransportError: the exchange itself failed (session closed, timeout, cancellation,
//     a malformed response); it never carries a protocol error code, only, for a request
//     that hit its limit, the host's wire.CodeTimeout (a *TimeoutError inside).
//
// How long a request waits is derived from what it asks for (ui.wait's timeoutMilliseconds,
// a tool's hint:duration, the size of the files it announces), or set by the caller
// (WithTimeout); see deadline.go and docs/protocol/calls.md#how-long-the-host-waits.
//
// Lifecycle: requests wait until [Client.Open] (the host has acknowledged session.open);
// [Client.Close] fails every pending request at once and aborts every transfer, deleting
// partial files.
package tools
