package bench

import (
	"context"
	"os"
	"testing"

	"github.com/ansight-go/ansight/host/control"
)

// BenchmarkMCPPath runs one of BenchmarkMCPCall's paths alone, ANSIGHT_MCP_PATH (bridge,
// socket, sdk, sdk-same, bridge-sdkio; skipped without it), for profiles of one path:
//
//	ANSIGHT_MCP_PATH=bridge go test -run '^$' -bench MCPPath -benchtime 20000x -cpuprofile bridge.cpu
//
// It times nothing worth comparing: BenchmarkMCPCall does, alternating.
func BenchmarkMCPPath(b *testing.B) {
	ctx := b.Context()
	h, d := startDemo(b, b.TempDir(), "com.ansight.bench.mcp")
	defer d.close()
	dir, err := os.MkdirTemp("", "mcp-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	p, err := startMCP(ctx, control.New(h.srv, control.Options{}), dir, d.sessionID, DefaultTool)
	if err != nil {
		b.Fatal(err)
	}
	defer p.close()
	f := map[string]func(context.Context) error{"bridge": p.bridge, "socket": p.socket, "sdk": p.sdk, "sdk-same": p.sdkSame,
		"bridge-sdkio": p.bridgeSDKIO}[os.Getenv("ANSIGHT_MCP_PATH")]
	if f == nil {
		b.Skip("ANSIGHT_MCP_PATH unset")
	}
	b.ResetTimer()
	for range b.N {
		if err := f(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
