package mcpbridge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/hostapi"
)

// Every call the bridge makes for a client is recorded with the client's origin,
// "mcp:<the name its MCP client gave at initialize>#<8 hex digits of its MCP session>", so
// that 'ansight test record --origin mcp:claude-code' finds what every session of that
// client did, and ansight_record_flow what this one did: two agents of one client (two
// editor windows, each with its own 'ansight mcp') never get each other's calls.

type clientKey struct{}

// originTags holds the tag of each MCP session the bridge has seen, until it ends.
type originTags struct{ m sync.Map } // *mcp.ServerSession → string

// tag is ss's tag: random, made the first time ss asks.
func (o *originTags) tag(ss *mcp.ServerSession) string {
	if t, ok := o.m.Load(ss); ok {
		return t.(string)
	}
	var b [4]byte
	rand.Read(b[:])
	t, loaded := o.m.LoadOrStore(ss, hex.EncodeToString(b[:]))
	if !loaded {
		go func() { ss.Wait(); o.m.Delete(ss) }()
	}
	return t.(string)
}

// clientOrigin is receiving middleware that puts the requesting client's origin in ctx.
func (br *Bridge) clientOrigin(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		name, tag := "unknown", ""
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
			if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil && p.ClientInfo.Name != "" {
				name = p.ClientInfo.Name
			}
			tag = "#" + br.tags.tag(ss)
		}
		origin := hostapi.OriginMCP + name + tag
		if hostapi.CheckOrigin(origin) != nil || strings.Contains(name, "#") {
			origin = hostapi.OriginMCP + "unknown" + tag
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
