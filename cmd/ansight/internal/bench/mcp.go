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
	count, n := mcpRoundsOf(r.opts)
	m, err := p.measure(ctx, count, n)
	if err != nil {
		return err
	}
	rs := m.rounds
	bridge, socket, sdk, same, sdkIO := median(rs.ops[0].cpu), median(rs.ops[1].cpu), median(rs.ops[2].cpu), median(rs.ops[3].cpu), median(rs.ops[4].cpu)
	own := median(m.own)
	r.report.add(Figure{Group: "mcp", Name: "CPU per ansight_call_app_tool", Unit: UnitCPUMicros,
		Value: bridge, Baseline: "the same call through hostapi.Client over the control socket", BaselineValue: socket,
		RatioRange: ratioRange(rs.ops[0].cpu, rs.ops[1].cpu),
		Note: fmt.Sprintf("%s with {}; an MCP client in memory, the bridge over the control socket; %d rounds of %d calls of each path in turn; the MCP SDK's floor (an in-memory tool that returns at once) %s; %s",
			r.opts.Tool, count, n, formatValue(sdk, UnitCPUMicros), rs.othersNote())})
	q1, q3 := quartiles(m.own)
	r.report.add(Figure{Group: "mcp", Name: "the bridge's own CPU per call", Unit: UnitCPUMicros,
		Value: own * bridge, Baseline: "CPU per ansight_call_app_tool", BaselineValue: bridge, Target: r.target(AtMost, 0.25),
		RatioRange: spread(m.own),
		Note: fmt.Sprintf("bridge − socket call − SDK floor as a share of the bridge, round by round: the median round's %.3f (quartiles %.3f–%.3f of %d rounds) of the median call's %s (socket %s, floor %s); the bridge served over its stdio transport (LineTransport)",
			own, q1, q3, count, formatValue(bridge, UnitCPUMicros), formatValue(socket, UnitCPUMicros), formatValue(sdk, UnitCPUMicros))})
	r.report.add(Figure{Group: "mcp", Name: "the bridge's own CPU per call over the SDK's stdio transport (before)", Unit: UnitCPUMicros,
		Value: median(m.ownSDKIO) * sdkIO, Baseline: "CPU per ansight_call_app_tool over it", BaselineValue: sdkIO,
		RatioRange: spread(m.ownSDKIO),
		Note: fmt.Sprintf("the same bridge served over mcp.IOTransport, which ansight mcp used before LineTransport, in the same rounds: %s a call; own share %.3f against %.3f over LineTransport",
			formatValue(sdkIO, UnitCPUMicros), median(m.ownSDKIO), own)})
	r.report.add(Figure{Group: "mcp", Name: "the bridge's own CPU per call beyond the SDK's handling of its bytes", Unit: UnitCPUMicros,
		Value: median(m.beyond) * bridge, Baseline: "CPU per ansight_call_app_tool", BaselineValue: bridge,
		RatioRange: spread(m.beyond),
		Note: fmt.Sprintf("bridge − socket call − the SDK's floor called with the bridge's arguments and answering its answer (%s), as a share of the bridge, round by round (median round); the SDK's own cost of those bytes is %s a call",
			formatValue(same, UnitCPUMicros), formatValue(same-sdk, UnitCPUMicros))})
	return nil
}

// mcpRoundsOf is how many rounds the MCP measurement makes and how many calls of each path
// a round has: three times a measurement's usual rounds, shorter. Its target is a
// difference of three figures (bridge − socket − floor), each as noisy as any, so a round
// reads 0.1–0.3 on a quiet machine where the median of 20 reads 0.20–0.25 (docs/performance.md,
// round 4, sixth pass): it needs many rounds more than long ones. --quick: 21 rounds of 200
// calls, about 10 s.
func mcpRoundsOf(o Options) (count, n int) {
	return 3 * o.Rounds, max(20, o.Calls/50)
}

// mcpMeasure is what the MCP measurement's rounds read: each path's series and, round by
// round, the bridge's own share (bridge − socket − sdk) / bridge, the share beyond the
// SDK's handling of the bridge's bytes ((bridge − socket − sdkSame) / bridge) and the own
// share of the bridge over the SDK's transport ((bridgeSDKIO − socket − sdk) /
// bridgeSDKIO).
type mcpMeasure struct {
	rounds                *rounds // ops: bridge, socket, sdk, sdkSame, bridgeSDKIO
	own, beyond, ownSDKIO []float64
}

// measure runs count rounds of n calls of each path in turn, after a round of warm-up:
// `ansight bench` and BenchmarkMCPCall both measure this way.
func (p *mcpPaths) measure(ctx context.Context, count, n int) (*mcpMeasure, error) {
	ops := []func(context.Context) error{p.bridge, p.socket, p.sdk, p.sdkSame, p.bridgeSDKIO}
	if _, err := alternateRounds(ctx, 1, 100, 1, ops...); err != nil { // warm up
		return nil, err
	}
	rs, err := alternateRounds(ctx, count, n, 1, ops...)
	if err != nil {
		return nil, err
	}
	m := &mcpMeasure{rounds: rs}
	b, s, f, same, io := rs.ops[0].cpu, rs.ops[1].cpu, rs.ops[2].cpu, rs.ops[3].cpu, rs.ops[4].cpu
	for i := range b {
		m.own = append(m.own, (b[i]-s[i]-f[i])/b[i])
		m.beyond = append(m.beyond, (b[i]-s[i]-same[i])/b[i])
		m.ownSDKIO = append(m.ownSDKIO, (io[i]-s[i]-f[i])/io[i])
	}
	return m, nil
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
