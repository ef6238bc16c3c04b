// Package control is the host's control API in process: [Backend] implements
// hostapi.Backend over a *host.Server and, when the host records, its
// *recording.Recorder. It is what `ansight host run` serves on its control socket
// (hostapi.NewHandler), what the player, the MCP bridge and a fleet membership drive in
// the same process, and what package host/hostrun assembles into a complete host.
//
// The API's types are hostapi's own; this package turns the host's and the recorder's
// values into them (convert.go), so that a client of the API links neither.
package control
