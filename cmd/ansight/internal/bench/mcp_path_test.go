package bench

import (
	"context"
	"os"
	"testing"
)

// BenchmarkMCPPath runs one of BenchmarkMCPCall's paths alone, ANSIGHT_MCP_PATH (bridge,
// socket, sdk, sdk-same, bridge-sdkio; skipped without it), for profiles of one path:
//
//	ANSIGHT_MCP_PATH=bridge go test -run '^$' -bench MCPPath -benchtime 20000x -cpuprofile bridge.cpu
//
// It times nothing worth comparing: BenchmarkMCPCall does, alternating.
func BenchmarkMCPPath(b *testing.B) {
	ctx := b.Context()
	p := benchMCP(b)
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
