// Package hostrun starts a complete Ansight host in a few lines: the session server
// (package host), its control API in process (package host/control), and as asked the
// session recorder (package recording), the web player (package player), the control
// socket the CLI and scripts use (package hostapi) and a fleet membership (package fleet).
// It is what `ansight host run` and `ansight demo` run; a test harness or an agent runner
// embeds the same host with it:
//
//	h, err := hostrun.Start(ctx, hostrun.Options{
//		StateDir: dir,
//		Host:     host.Options{DiscoveryAddr: "127.0.0.1:0", ListenAddr: "127.0.0.1:0"},
//		Record:   true,
//		Control:  true, // <dir>/host.sock, for 'ansight --state-dir <dir> …'
//	})
//	if err != nil { … }
//	defer h.Close()
//	// h.Backend() is the hostapi.Backend for mcpbridge.New or player.New.
//
// The command line keeps only its flags and its output: everything a host is made of is
// here.
package hostrun
