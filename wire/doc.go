// Package wire holds the Ansight Remote Tool Protocol on the wire: the envelope, every
// request and response payload, the error codes and the [Error] type, the strict JSON
// codec that all protocol input goes through, the gzip-base64-json payload wrapper and the
// ASFT binary frame codec.
//
// The package has no goroutines and no I/O beyond byte slices; transports, the SDK and the
// host build on it.
//
// # Reading a message
//
//	env, err := wire.DecodeEnvelope(msg)          // strict, one pass; Payload aliases msg
//	var call wire.Call
//	body, err := wire.UnmarshalPayload(env.Payload, wire.DefaultMaxInflatedBytes, &call) // unwrap gzip, decode strictly
//
// [DecodePayload] unwraps a payload without decoding it (its JSON is checked strictly all
// the same); [Unmarshal] decodes JSON that is not a payload. [DecodeEnvelopeInto] reads a
// tool.call or tool.result payload in its common form in the envelope's pass, and leaves
// any other to the calls above. [UnmarshalCatalogPayload] reads a tool.catalog payload
// given the [CatalogMemo] of the one before, inflating and decoding only what differs.
//
// Every decoding failure is a [*DecodeError] carrying the JSON Pointer of the offending
// value; answer it with [CodeProtocolInvalidRequest] (or the payload-specific code).
//
// Strict means: names match case-sensitively; duplicate names are refused; in an object
// decoded into a Go struct, a name that differs from a field name only by case ("ToolId"
// for "toolId") is refused, and so are two names equal under Unicode case folding — Go's
// encoding/json v1 would match such a name to the field, so letting it through would let
// a peer smuggle a second value past any checker that decodes differently. Names of maps
// and free-form values (arguments, results) are data and may differ only by case (tool
// ids are case-sensitive). Nesting is limited to [MaxDepth], input to
// [DefaultMaxMessageBytes]. Unknown names are otherwise accepted: other SDKs add fields.
//
// # Writing a message
//
//	payload, err := wire.Marshal(&result)        // compact, map keys sorted
//	payload, err = wire.EncodePayload(payload)   // gzip-base64-json when ≥ 32 KiB and smaller
//	resp := wire.NewResponse(req, wire.TypeResult, payload, time.Now())
//	msg, err := wire.AppendEnvelope(buf[:0], resp)
//
// # Binary messages
//
// WebSocket binary messages are told apart by their first four bytes: [IsASFT] for file
// transfer frames ([ParseFrame], [AppendFrame]) and [IsASJP] for live screenshot frames
// ([ParseASJP]).
package wire
