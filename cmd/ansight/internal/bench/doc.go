// Package bench measures the protocol end to end and puts every figure next to a baseline
// measured in the same run, on the same machine: the floor (floor.go: the exact bytes of a
// request and its answer, captured from the session, echoed over one coder/websocket
// connection at the same concurrency without allocating), a raw binary stream of the same
// bytes in the same chunks, or the protocol's own more expensive form (a full index for the
// unchanged answer, 32 single calls for a batch).
//
// RunLocal starts everything in this process over real loopback sockets — a host
// (host.Server: UDP enrollment, authenticated WebSocket) and demo apps (package
// examples/notes, connected with app/connect) — and calls through the host's protocol
// client (host/tools), so the figures are the protocol's cost and nothing else's.
// RunSession measures a session of a resident host through its control API instead (so its
// figures include the control API's HTTP hop, and targets do not apply); only the
// measurements whose tools the app offers run.
//
// Both return a Report: figures with their baseline, ratio, target and verdict, and the load
// other processes put on the machine meanwhile. Targets are ratios, never absolute times,
// so they hold on any machine; the call and catalog targets are on CPU time per operation
// (getrusage: both ends are in this process), which a busy machine distorts much less than
// wall-clock time. The harness itself asserts nothing about timing.
//
// Baselines alternate with the measurement they belong to, round by round, so that load
// from other processes falls on both alike; the median round is reported. The echo takes
// the protocol's roles: the measuring side accepts and requests as a host, the other dials
// and answers as an app.
package bench
