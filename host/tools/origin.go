package tools

import "context"

// OriginInternal is the origin of the host's own requests: catalog polls, evidence.
const OriginInternal = "internal"

type originKey struct{}

// WithOrigin returns ctx carrying the origin of the requests made with it — who asked: "cli",
// "player", "mcp:<client name>", "flow" — which the traffic events report
// (wire.TrafficEvent.Origin) and recordings keep. An empty origin says a client did not
// name itself.
func WithOrigin(ctx context.Context, origin string) context.Context {
	return context.WithValue(ctx, originKey{}, origin)
}

// OriginOf returns the origin ctx carries, OriginInternal when it carries none: a request
// that did not come through the host API is the host's own.
func OriginOf(ctx context.Context) string {
	if ctx == nil {
		return OriginInternal
	}
	if o, ok := ctx.Value(originKey{}).(string); ok {
		return o
	}
	return OriginInternal
}
