package tools

import "context"

type originKey struct{}

// WithOrigin returns ctx carrying the origin of the requests made with it — who asked: "cli",
// "player", "mcp:<client name>", "flow", "internal" for the host's own (hostapi's Origin
// constants) — which the traffic events report (wire.TrafficEvent.Origin) and recordings
// keep.
func WithOrigin(ctx context.Context, origin string) context.Context {
	return context.WithValue(ctx, originKey{}, origin)
}

// OriginOf returns the origin ctx carries, "" when it carries none (a client that did not
// say who it is).
func OriginOf(ctx context.Context) string {
	if ctx == nil {
		return ""
	}
	o, _ := ctx.Value(originKey{}).(string)
	return o
}
