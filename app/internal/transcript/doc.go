// Package transcript runs conformance transcripts for the SDK's tests: txtar archives that
// hold a sequence of host→app messages and, after each, the app's answers rendered one per
// line. Package app replays them against its fixture app, package app/ui against the UI
// toolkit (with the official host's exact requests); both compare the rendered answers
// byte for byte and rewrite them with -update.
//
// The archive format is golang.org/x/tools/txtar's: a comment, then sections introduced by
// "-- name --" lines, where names may repeat. The rendering of an answer:
//
//	text <envelope json>                 a text message (one over 16000 bytes by its head,
//	                                     length and SHA-256)
//	text <envelope, data elided>         a gzip-base64-json payload, followed by
//	  payload <decoded json>             its decoded payload
//	binary ASFT <type> transfer=<id> seq=<n> offset=<n> len=<n> sha256=<…>
//
// The package is internal: it serves tests only.
package transcript
