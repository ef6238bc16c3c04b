// Package outside checks ansight-go from outside its module, as app and tool authors use
// it: only public packages, its own go.mod, the repository through a replace directive.
//
// Its tests (run by .ci/run; `go test ./...` at the repository root does not enter this
// nested module):
//
//   - TestSDKAppsCompileNoTooling: the SDK-only apps under sdkapp/ (app and app/connect;
//     and the whole SDK) compile none of the tooling's dependencies (cobra, the MCP SDK,
//     x/image, the QR encoder, SQLite, NATS) nor the tooling's own packages, and their
//     module graph is reported: go.sum lines, graph edges, compiled packages;
//   - TestHostDrivesAppFromOutside: a host and an app built from public packages only,
//     connected over real sockets, the host calling the app's tool;
//   - TestToolingFromOutside: a complete host started with host/hostrun (recorder, web
//     player, control socket) serves, over the public host API (hostapi), an MCP server
//     (mcpbridge), which a real MCP client calls the app's tool through, its web player,
//     which lists the session and builds the tool's form, and its control socket;
//   - TestContractClientsLinkNoHost: mcpbridge, player and a program that imports hostapi
//     alone (hostapiclient/) link no host, recorder or SQLite package (go list -deps);
//   - TestDiagnosticsThroughMCPFromOutside: a Go service with app/diag registered, looked
//     inside through the MCP bridge by the official Go MCP SDK's client: runtime info, the
//     log tail, a heap profile received as a file, a CPU profile out of bounds refused.
package outside
