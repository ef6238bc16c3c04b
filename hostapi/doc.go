// Package hostapi is the resident host's local control API: the seam between the host
// process and the commands, the MCP bridge and the player that drive it.
//
// [Backend] is the API in Go. [Local] implements it in process over a *host.Server;
// [NewHandler] serves any Backend as HTTP+JSON (over a Unix domain socket that only the
// user can reach, see [Listen]); [Client] implements Backend over that socket. The HTTP
// API is documented in docs/control-api.md.
package hostapi
