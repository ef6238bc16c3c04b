// Package session holds the session layer's wire, shared by the host and the SDK's session
// client once a WebSocket session is up: the CONTROL_REQ / CONTROL_RESP envelope, its
// actions and their payloads (session.open, device.profile, app.state, session.properties,
// client.log, session.complete, crash.handoff, annotation.submit), the host's device
// profile reply with its JPEG capture policy, and the legacy CLIENT_DONE. Enrollment,
// invites and tokens, which come before a session, are package pairing's.
//
// Every parser here reads untrusted network input: sizes are capped before decoding (per
// action, see [MaxRequestBytes]), JSON goes through wire's strict decoder (duplicate names
// rejected, names case-sensitive), required keys must be present, and a value of the wrong
// JSON type is an error, never a panic. Marshalers write exactly the keys, in the order and
// with the explicit nulls, that the official .NET, Swift and Kotlin parsers require
// (docs/protocol/session.md).
//
// The package does no I/O and owns no goroutines.
package session
