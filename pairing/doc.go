// Package pairing holds the wire of pairing, shared by the host and the SDK's session
// client: the UDP enrollment datagrams (ENROLLMENT_CONNECT / ENROLLMENT_RESULT, version 2),
// the enrollment invite (ansight.enrollment-invite.v2), its document and the compact "ans2:"
// code, and the token helpers (random base64url tokens, SHA-256 hashes, constant-time
// comparison). The control channel of a session once paired (CONTROL_REQ / CONTROL_RESP)
// is package wire/session's.
//
// Every parser here reads untrusted network input: sizes are capped before decoding, JSON
// goes through a strict decoder (duplicate names rejected, names case-sensitive), required
// keys must be present, and a value of the wrong JSON type is an error, never a panic.
// Marshalers write exactly the keys, in the order and with the explicit nulls, that the
// official .NET, Swift and Kotlin parsers require (docs/protocol/session.md).
//
// The package does no I/O and owns no goroutines.
package pairing
