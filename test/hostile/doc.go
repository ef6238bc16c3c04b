// Package hostile holds a cross-package suite of hostile input sent over real loopback
// sockets to the real SDK runtime (playing a malicious host: a WebSocket server the app
// connects to), to the real host (playing a malicious app: real UDP enrollment, real
// WebSocket upgrade) and to the MCP bridge's HTTP endpoint over a real host (playing a
// web page or a local process without the run's token). Every case is a named table entry; each checks that the message is
// answered with the clear error the spec names, or dropped where the spec says so, that the
// peer stays alive where the spec allows (a normal request succeeds afterwards), and that
// another session of the same peer keeps working.
//
// The package has no code of its own; see the _test.go files.
package hostile
