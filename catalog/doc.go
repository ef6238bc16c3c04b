// Package catalog holds an app's tool definitions and answers tool.query requests
// (docs/protocol/catalog.md; the guard is docs/protocol/authorization.md#guard).
//
// A [Definition] is what a tool developer registers: id, name, description, category,
// policy and the JSON Schemas (2020-12) of its arguments and result. [Definition.Check]
// validates it at registration time, its schemas included.
//
// A [Set] is an immutable snapshot of all registered definitions plus the app's [Guard].
// Everything that depends only on the snapshot is computed once, in [NewSet]: each tool's
// published definition and definitionRevision, the catalog revision, and the pre-encoded
// JSON fragments of every catalog entry, so that [Set.Answer] only filters and assembles
// bytes even at thousands of tools. Runtime availability is the only per-query input; the
// availability revision it implies is cached by the content of the unavailable set.
//
// Revisions are "sha256:" + hex of SHA-256 over the RFC 8785 (JCS) canonical JSON of the
// hashed object, so any language can reproduce them.
//
// Schemas are compiled and validated by package [github.com/ansight-go/ansight/schema]:
// a [Tool] of a Set holds its compiled argument and result schemas.
package catalog
