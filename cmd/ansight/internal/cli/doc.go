// Package cli is the `ansight` command tree: the resident host, session and tool commands,
// pairing, the demo, the MCP bridge, conformance and benchmarks. cmd/ansight only wires the
// process (signals, exit code) to [Main].
//
// Every command accepts --json and then writes one stable, versioned JSON object to stdout.
// Exit codes are part of the interface; see [ExitOK] and its siblings.
package cli
