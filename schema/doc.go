// Package schema compiles and validates the JSON Schemas (2020-12) of tool definitions:
// the seam between the protocol and a standard validator, used by the SDK (arguments and
// results), the host (arguments before sending, bounds at intake), the MCP bridge and the
// player (docs/protocol/catalog.md#schemas).
//
// Schemas follow the protocol's closed-object default: an object schema without
// additionalProperties admits no additional properties. [Compile] restores the explicit
// keyword before compiling with a standard validator; [Published] writes the wire form
// with the restored default omitted again, [Standard] the form a standard validator reads.
// [Schema.Validate] reports [Violation] values with JSONPath-like paths and stable codes:
// common keywords validate straight off the JSON text without allocating, others through
// the general validator.
//
// A schema comes from an app, so its cost is bounded (docs/protocol/limits.md#catalog):
// [CheckBounds] refuses a document nested deeper than [MaxDepth], with more than
// [MaxValues] values, or larger than [MaxExpansion] with its references followed, and each
// validation by the general validator has a budget of steps proportional to the value
// ([CodeValidationBudget] beyond it). Numbers are compared as exact decimals, never
// rounded to float64.
//
// [Parse] gives the same parsed tree ([Document], [Node]) to tools that walk a schema
// themselves, with references resolved as the validator resolves them.
package schema
