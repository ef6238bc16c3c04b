package mcpbridge

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/hostapi"
)

// Every call the bridge makes for a client is recorded with the client's origin,
// "mcp:<the name its MCP client gave at initialize>", so that 'ansight test record --origin
// mcp:claude-code' finds what an agent did.

type clientKey struct{}

// clientOrigin is receiving middleware that puts the requesting client's origin in ctx.
func clientOrigin(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		name := "unknown"
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
			if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil && p.ClientInfo.Name != "" {
				name = p.ClientInfo.Name
			}
		}
		origin := hostapi.OriginMCP + name
		if len(origin) > hostapi.MaxOriginLength || hostapi.CheckOrigin(origin) != nil {
			origin = hostapi.OriginMCP + "unknown"
		}
		return next(context.WithValue(ctx, clientKey{}, origin), method, req)
	}
}

// originBackend sends each call, batch and UI operation with the origin of the client it is made for.
type originBackend struct{ hostapi.Backend }

func originOf(ctx context.Context) string {
	o, _ := ctx.Value(clientKey{}).(string)
	if o == "" {
		return hostapi.OriginMCP + "unknown"
	}
	return o
}

func (b originBackend) Call(ctx context.Context, sessionID string, req hostapi.CallRequest, progress func(hostapi.Progress)) (*hostapi.Call, error) {
	req.Origin = originOf(ctx)
	return b.Backend.Call(ctx, sessionID, req, progress)
}

func (b originBackend) Batch(ctx context.Context, sessionID string, req hostapi.BatchRequest, progress func(hostapi.Progress)) (*hostapi.Batch, error) {
	req.Origin = originOf(ctx)
	return b.Backend.Batch(ctx, sessionID, req, progress)
}

func (b originBackend) UI(ctx context.Context, sessionID string, req hostapi.UIRequest) (*hostapi.UIOperation, error) {
	req.Origin = originOf(ctx)
	return b.Backend.UI(ctx, sessionID, req)
}
