// Package jsonscan reads JSON text in place, validating it as it goes, for the protocol's
// strict decoders. It is what sits under wire's envelope and payload checks and catalog's
// schema validator: every message a peer sends is read by it at least once, so it is a
// plain byte loop with no allocation for ordinary input.
//
// A Scanner accepts exactly RFC 8259 JSON: the grammar, valid UTF-8 (escaped surrogates
// must pair up), no control characters in strings, no duplicate member names within an
// object (compared after unescaping), no nesting deeper than the scanner's limit. It reads
// by recursive descent: callers walk the value with EnterObject/Member, EnterArray/Element
// and read leaves with String, Value (any whole value) or Peek; Value validates a whole
// subtree in one call. Every failure is an *Error with the byte offset and the JSON
// Pointer of the value where it was found.
//
// The accept/reject decisions match github.com/go-json-experiment/json/jsontext with its
// default (strict) options; a fuzz test holds the two against each other.
//
// [TopStrings] is the opposite, and the only lenient reader: it picks a few top-level
// strings out of a message the strict rules refuse, so that the app, the host and the
// session layer can still route it or answer it by id.
package jsonscan
