// Package hostapi is the host's API for the tools that drive it: the seam between a host
// and the commands, the MCP bridge ([github.com/ansight-go/ansight/mcpbridge]) and the web
// player ([github.com/ansight-go/ansight/player]). It is public so that a program outside
// this module can build the same tooling over a host of its own: a test harness that hands
// an agent an in-process host, an editor plugin, a fleet of hosts.
//
// [Backend] is the API in Go: sessions, catalogs, calls and batches, recordings, invites
// and grants, session events. The package is the contract alone: its types are its own, so
// that a client of the API (the MCP bridge, the player, a program outside this module)
// links no host, recorder or database. Package host/control implements Backend in process
// over a *host.Server and its recorder, and package host/hostrun starts a complete host
// with it; [NewHandler] serves any Backend as HTTP+JSON (over a Unix domain socket that
// only the user can reach, see [Listen] and [DefaultStateDir]); [Client] implements
// Backend over that socket. Both read one route table, so the two ends cannot drift. The
// HTTP API is documented in docs/control-api.md.
//
// Failures of the host itself (no such session, session closed, timeout) are *APIError
// values; a tool's own failure is data, a [Call] or [Batch] with Success false and a
// [ToolError]. Both carry a wire.Code ([wire.CodeOf] reads it from any error), whose Kind
// says how to react.
package hostapi
