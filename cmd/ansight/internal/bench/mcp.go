package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/mcpbridge"
)

// mcpPaths are what the MCP measurement compares, round by round, for one small call:
//
//   - bridge: an MCP client calling ansight_call_app_tool on the bridge, the bridge
//     calling the host through its control socket, as `ansight mcp` does on the host's
//     machine: the bridge served by Bridge.Run over its stdio transport (LineTransport) on
//     one end of an in-memory pipe, the client the SDK's over the SDK's transport (as the
//     floor's) on the other — an agent's client over stdio minus the process boundary;
//   - socket: the same call through hostapi.Client over the control socket, what the bridge
//     itself must pay at least;
//   - sdk: the MCP Go SDK's own floor, a client calling an in-memory MCP tool that returns
//     at once, what any MCP server pays per call: client and server both over the SDK's
//     in-memory transport;
//   - sdkSame: the same floor called with the bridge's arguments and returning the bridge's
//     answer (captured from it), what the SDK pays for the bridge's bytes;
//   - bridgeSDKIO: the bridge again, served over the SDK's own stdio transport
//     (mcp.IOTransport) instead of LineTransport: what `ansight mcp` used before, the
//     baseline of the transport in the same rounds.
//
// The bridge's own share is what is left: bridge − socket − sdk, as a part of bridge (the
// issue's target); bridge − socket − sdkSame is what is left of it beyond the SDK's
// handling of the bridge's bytes.
type mcpPaths struct {
	bridge, socket, sdk, sdkSame, bridgeSDKIO func(context.Context) error
	close                                     func()
}

// startMCP serves b's API on a control socket in dir and connects an MCP client to a bridge
// over it, and another to the SDK's floor, for calls of tool on session sid.
func startMCP(ctx context.Context, b hostapi.Backend, dir, sid, tool string) (*mcpPaths, error) {
	sock := filepath.Join(dir, hostapi.SocketName)
	ln, err := hostapi.Listen(sock)
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: hostapi.NewHandler(b), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan struct{})
	go func() { defer close(served); _ = srv.Serve(ln) }()
	var closers []func()
	p := &mcpPaths{close: func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
		_ = srv.Close()
		<-served
		_ = os.Remove(sock)
	}}
	ok := false
	defer func() {
		if !ok {
			p.close()
		}
	}()
	client := hostapi.NewClient(sock)
	connect := func(server *mcp.Server) (*mcp.ClientSession, error) {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := server.Connect(ctx, st, nil)
		if err != nil {
			return nil, err
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "ansight-bench", Version: "1"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			ss.Close()
			return nil, err
		}
		closers = append(closers, func() { cs.Close(); ss.Wait() })
		return cs, nil
	}

	bridged, err := runBridge(ctx, mcpbridge.New(client, mcpbridge.Options{Name: "ansight-bench"}), false, &closers)
	if err != nil {
		return nil, fmt.Errorf("bench: mcp bridge: %w", err)
	}
	sdkIO, err := runBridge(ctx, mcpbridge.New(client, mcpbridge.Options{Name: "ansight-bench"}), true, &closers)
	if err != nil {
		return nil, fmt.Errorf("bench: mcp bridge: %w", err)
	}
	args := map[string]any{"sessionId": sid, "toolId": tool, "arguments": map[string]any{}}
	callOn := func(cs *mcp.ClientSession) func(context.Context) error {
		return func(ctx context.Context) error {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpbridge.ToolCallAppTool, Arguments: args})
			if err == nil && res.IsError {
				err = fmt.Errorf("bench: %s: %v", mcpbridge.ToolCallAppTool, res.Content)
			}
			return err
		}
	}
	p.bridge, p.bridgeSDKIO = callOn(bridged), callOn(sdkIO)
	req := hostapi.CallRequest{ToolID: tool, Arguments: jsontext.Value(`{}`)}
	p.socket = func(ctx context.Context) error {
		res, err := client.Call(ctx, sid, req, nil)
		if err == nil && !res.Success {
			err = errors.New("bench: the call through the control socket failed")
		}
		return err
	}

	answer, err := bridged.CallTool(ctx, &mcp.CallToolParams{Name: mcpbridge.ToolCallAppTool, Arguments: args})
	if err != nil {
		return nil, fmt.Errorf("bench: mcp bridge: %w", err)
	}
	answer.Meta = nil // the SDK adds its server's
	floor := mcp.NewServer(&mcp.Implementation{Name: "floor", Version: "1"}, nil)
	floor.AddTool(&mcp.Tool{Name: "noop", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "{}"}}}, nil
		})
	floor.AddTool(&mcp.Tool{Name: "same", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return answer, nil })
	direct, err := connect(floor)
	if err != nil {
		return nil, fmt.Errorf("bench: mcp floor: %w", err)
	}
	noop := &mcp.CallToolParams{Name: "noop", Arguments: map[string]any{}}
	p.sdk = func(ctx context.Context) error {
		_, err := direct.CallTool(ctx, noop)
		return err
	}
	same := &mcp.CallToolParams{Name: "same", Arguments: args}
	p.sdkSame = func(ctx context.Context) error {
		_, err := direct.CallTool(ctx, same)
		return err
	}
	ok = true
	return p, nil
}

// mcp measures CPU per ansight_call_app_tool beside the same call over the control socket
// and the MCP SDK's floor (see mcpPaths), in a local run: all of it — agent's client,
// bridge, control socket, host, app — is this process.
func (r *run) mcp(ctx context.Context, s session) error {
	if r.api == nil || r.viaControl {
		r.report.skip("mcp", "needs the host in this process; run without --session")
		return nil
	}
	dir, err := os.MkdirTemp(r.opts.Dir, "mcp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := startMCP(ctx, r.api, dir, r.apiSession, r.opts.Tool)
	if err != nil {
		return err
	}
	defer p.close()
	n := max(50, r.opts.Calls/20)
	ops := []func(context.Context) error{p.bridge, p.socket, p.sdk, p.sdkSame, p.bridgeSDKIO}
	if _, err := r.alternate(ctx, min(n, 100), 1, ops...); err != nil { // warm up
		return err
	}
	rs, err := r.alternate(ctx, n, 1, ops...)
	if err != nil {
		return err
	}
	bridge, socket, sdk, same := median(rs.ops[0].cpu), median(rs.ops[1].cpu), median(rs.ops[2].cpu), median(rs.ops[3].cpu)
	own := make([]float64, len(rs.ops[0].cpu))
	beyond := make([]float64, len(rs.ops[0].cpu))
	ownSDKIO := make([]float64, len(rs.ops[0].cpu))
	for i := range own {
		own[i] = rs.ops[0].cpu[i] - rs.ops[1].cpu[i] - rs.ops[2].cpu[i]
		beyond[i] = rs.ops[0].cpu[i] - rs.ops[1].cpu[i] - rs.ops[3].cpu[i]
		ownSDKIO[i] = rs.ops[4].cpu[i] - rs.ops[1].cpu[i] - rs.ops[2].cpu[i]
	}
	sdkIO := median(rs.ops[4].cpu)
	r.report.add(Figure{Group: "mcp", Name: "CPU per ansight_call_app_tool", Unit: UnitCPUMicros,
		Value: bridge, Baseline: "the same call through hostapi.Client over the control socket", BaselineValue: socket,
		RatioRange: ratioRange(rs.ops[0].cpu, rs.ops[1].cpu),
		Note: fmt.Sprintf("%s with {}; an MCP client in memory, the bridge over the control socket; %d of each a round; the MCP SDK's floor (an in-memory tool that returns at once) %s; %s",
			r.opts.Tool, n, formatValue(sdk, UnitCPUMicros), rs.othersNote())})
	r.report.add(Figure{Group: "mcp", Name: "the bridge's own CPU per call", Unit: UnitCPUMicros,
		Value: median(own), Baseline: "CPU per ansight_call_app_tool", BaselineValue: bridge, Target: r.target(AtMost, 0.25),
		Note: fmt.Sprintf("bridge − socket call − SDK floor, round by round (median round): %s − %s − %s; the bridge served over its stdio transport (LineTransport)",
			formatValue(bridge, UnitCPUMicros), formatValue(socket, UnitCPUMicros), formatValue(sdk, UnitCPUMicros))})
	r.report.add(Figure{Group: "mcp", Name: "the bridge's own CPU per call over the SDK's stdio transport (before)", Unit: UnitCPUMicros,
		Value: median(ownSDKIO), Baseline: "CPU per ansight_call_app_tool over it", BaselineValue: sdkIO,
		Note: fmt.Sprintf("the same bridge served over mcp.IOTransport, which ansight mcp used before LineTransport, in the same rounds: %s a call; own share %.3f against %.3f over LineTransport",
			formatValue(sdkIO, UnitCPUMicros), median(ownSDKIO)/sdkIO, median(own)/bridge)})
	r.report.add(Figure{Group: "mcp", Name: "the bridge's own CPU per call beyond the SDK's handling of its bytes", Unit: UnitCPUMicros,
		Value: median(beyond), Baseline: "CPU per ansight_call_app_tool", BaselineValue: bridge,
		Note: fmt.Sprintf("bridge − socket call − the SDK's floor called with the bridge's arguments and answering its answer (%s), round by round; the SDK's own cost of those bytes is %s a call",
			formatValue(same, UnitCPUMicros), formatValue(same-sdk, UnitCPUMicros))})
	return nil
}

// runBridge serves br as `ansight mcp` does on stdio — Bridge.Run over its LineTransport,
// or over the SDK's mcp.IOTransport with sdkIO — on one end of an in-memory pipe, and
// connects an MCP client (the SDK's, over the SDK's transport, as the floor's) to the other
// end.
func runBridge(ctx context.Context, br *mcpbridge.Bridge, sdkIO bool, closers *[]func()) (*mcp.ClientSession, error) {
	c1, c2 := net.Pipe()
	var t mcp.Transport = &mcpbridge.LineTransport{Reader: c2, Writer: c2}
	if sdkIO {
		t = &mcp.IOTransport{Reader: c2, Writer: c2}
	}
	ctx, cancel := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- br.Run(ctx, t) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "ansight-bench", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: c1, Writer: c1}, nil)
	if err != nil {
		cancel()
		c1.Close()
		<-ran
		return nil, err
	}
	*closers = append(*closers, func() { cs.Close(); cancel(); <-ran })
	return cs, nil
}
