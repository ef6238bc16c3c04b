// Package conformance checks that an app honours the Ansight Remote Tool Protocol
// (docs/protocol/README.md), whatever its SDK or language.
//
// Run drives one app through a Target — a raw channel of whole messages, so that the
// suite can send what a well-behaved host never would (malformed envelopes, duplicate
// keys, hostile payloads) and see every message the app writes back, byte for byte —
// and returns a Report: every check with pass, fail or skip, what was exchanged when a
// check failed, a summary line and a JSON form for CI.
//
// The suite adapts to the catalog the app publishes; it needs no particular tool.
// Checks that need a kind of tool the app does not have (an executable read tool, an
// unavailable tool, an evidence tool, an artifact tool, a large result) are skipped
// with the reason.
//
// # What the suite runs in the app
//
// The suite executes only read tools whose arguments are all optional, called with {}
// (Scenario.ReadCall overrides the choice). Calls meant to be refused before they run
// (wrong arguments, schema violations, out-of-bounds after blocks, unavailable tools)
// go to read tools, and to write tools only with Options.AllowWrite; critical tools are
// never called. A conformant app runs none of the refused calls, but an app that is
// broken might, hence the opt-in. The Scenario's calls (availability toggles, a large
// result, an artifact) are run as given: whoever writes them vouches for them.
//
// The tools.* checks look at the official SDKs' standard tools when the app offers them
// as read tools — files.* (descriptor, version token, content encodings, chunks that
// follow nextRequest to the end, checksums, a path out of every root refused), data.*
// (databases, schema, a query's rows and typed cells; two statements and a CREATE TEMP
// TABLE refused), prefs.* (keys, values with their types) and artifacts.* (the descriptor
// as the result object itself, the only place the official host registers a transfer).
// They only read: no file, row or preference of the app is changed.
//
// # Where the protocol leaves room
//
// Checks follow the protocol reference (docs/protocol), and accept the variants hosts
// must accept (docs/protocol/compatibility.md#tolerated-variants): replyTo and sessionId
// written as null, timestamps with "+00:00" or "Z" and any fraction, a missing message,
// executable:false inside runtime, revisions of any form (compared for equality only).
// The gzip bytes of a compressed payload are the writer's own; only the decoded JSON and
// the size rule are checked.
//
// # Targets
//
// NewConnTarget runs the suite over a transport.Conn whose other end is the app
// (transport.Pipe with app.Serve in tests, or a WebSocket). NewTapTarget runs it over a
// connection someone else reads: a host session whose reader feeds inbound messages to
// TapTarget.Feed.
package conformance
