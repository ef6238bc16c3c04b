// Command demoapp runs the demo notes app (package examples/notes) with the SDK inside and connects
// it to an Ansight host, reconnecting until it is stopped (Ctrl-C).
//
//	go run ./examples/demoapp                          # local mode: a host on 127.0.0.1
//	go run ./examples/demoapp --discovery-port 47000   # a host on another discovery port
//	go run ./examples/demoapp --invite 'ans2:…'        # pair with an invite (phones, other machines)
//	go run ./examples/demoapp --url ws://127.0.0.1:8080/ws --token …   # a known endpoint
//	go run ./examples/demoapp --files-dir ~/demo-files                 # serve and receive files there
//
// The app itself (notes, simulated screen, files and artifacts) is package examples/notes;
// this command only parses flags and connects it with package app/connect, with the SDK's
// telemetry (package app/telemetry): its logs, its syncs' HTTP requests (to a sync server
// of its own on loopback), runtime metrics and its live screen are recorded by the host.
// Besides the notes and the UI tools, the app serves the files of one directory, root
// "demo" (files.list_directory, files.begin_binary_download, files.push_file; package
// app/files), and exports its notes as an artifact (artifacts.request). Without
// --files-dir the directory is a fresh temporary one, removed when the app stops.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/connect"
	"github.com/ansight-go/ansight/app/telemetry"
	"github.com/ansight-go/ansight/app/ui"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/examples/notes"
	"github.com/ansight-go/ansight/wire"
)

func main() {
	os.Exit(run())
}

func run() int {
	fs := flag.NewFlagSet("demoapp", flag.ContinueOnError)
	appID := fs.String("app-id", "com.ansight.demo.notes", "the app id presented to the host")
	host := fs.String("host", "", "host address to enroll with (default 127.0.0.1 in local mode, the invite's addresses with --invite)")
	port := fs.Int("discovery-port", 0, "the host's UDP discovery port (default 45123, then 46123)")
	invite := fs.String("invite", "", "pair with an ans2: invite code (or the invite's JSON)")
	url := fs.String("url", "", "connect directly to this ws:// or wss:// endpoint (needs --token)")
	token := fs.String("token", "", "the token for --url")
	stateDir := fs.String("state-dir", "", "where the app keeps its device id and local token (default: the user config dir)")
	maxPolicy := fs.String("max-policy", "critical", "the app's guard: the highest tool policy it publishes and runs (read, write or critical)")
	synthetic := fs.Int("synthetic-tools", 0, "also register this many synthetic tools (benchmarks)")
	scale := fs.Float64("scale", 1, "screenshot pixels per point (1 renders 390x844)")
	filesDir := fs.String("files-dir", "", "the directory the file tools serve and write, root \"demo\" (default: a temporary directory, removed at exit)")
	verbose := fs.Bool("v", false, "log connection events")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	usage := func(msg string) int {
		fmt.Fprintln(os.Stderr, "demoapp:", msg)
		return 2
	}
	if fs.NArg() > 0 {
		return usage("unexpected arguments: " + fmt.Sprint(fs.Args()))
	}
	policy, err := wire.ParsePolicy(*maxPolicy)
	if err != nil {
		return usage(err.Error())
	}

	var ports []int
	if *port != 0 {
		ports = []int{*port}
	}
	var mode connect.Mode
	switch {
	case *url != "" || *token != "":
		if *invite != "" || *host != "" || *port != 0 {
			return usage("--url/--token do not go with --invite, --host or --discovery-port")
		}
		mode = connect.Direct{URL: *url, Token: *token}
	case *invite != "":
		mode = connect.Invite{Code: *invite, HostAddress: *host, DiscoveryPorts: ports}
	default:
		mode = connect.Local{HostAddress: *host, DiscoveryPorts: ports}
	}
	model := notes.New(notes.Options{Scale: *scale, SyntheticTools: *synthetic})

	// Telemetry: the app's logs, its HTTP requests, runtime metrics and, when the host
	// asks, its screen go to the host, which records them (ansight session logs|network|
	// metrics, the player's live screen and timeline).
	tel := telemetry.New(telemetry.Options{Frames: ui.FrameSource(model.Screen())})
	var console slog.Handler = slog.DiscardHandler
	if *verbose {
		console = slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})
	}
	logger := slog.New(tel.Handler(console, nil))
	stopSync, err := model.ServeSync(tel.RoundTripper(nil)) // the notes' sync: HTTP to a loopback server
	if err != nil {
		fmt.Fprintln(os.Stderr, "demoapp:", err)
		return 1
	}
	defer stopSync()
	opts := connect.Options{AppID: *appID, AppName: "Ansight demo notes", StateDir: *stateDir, OnState: report,
		Logger: logger, Telemetry: tel}

	a := app.New(app.Options{Guard: catalog.Guard{DiscoveryEnabled: true, ExecutionEnabled: true, MaxPolicy: policy}, Logger: logger})
	if err := model.RegisterReporting(a, tel); err != nil {
		fmt.Fprintln(os.Stderr, "demoapp:", err)
		return 1
	}
	dir, cleanup, err := model.RegisterFiles(a, *filesDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "demoapp:", err)
		return 1
	}
	defer cleanup()
	closeDB, err := model.RegisterData(a, dir) // notes.db and settings.json in the same directory
	if err != nil {
		fmt.Fprintln(os.Stderr, "demoapp:", err)
		return 1
	}
	defer closeDB()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(os.Stderr, "demoapp: %s in %s mode, serving files in %s; Ctrl-C to stop\n", *appID, mode, dir)
	if err := connect.Run(ctx, a, mode, opts); err != nil {
		fmt.Fprintln(os.Stderr, "demoapp:", err)
		return 1
	}
	return 0 // stopped by a signal: the normal end
}

// report prints connection state changes.
func report(s connect.StateChange) {
	switch {
	case s.State == connect.StateConnected:
		fmt.Fprintf(os.Stderr, "demoapp: connected to %s\n", s.Endpoint)
	case s.State == connect.StateDisconnected && s.Err != nil:
		fmt.Fprintf(os.Stderr, "demoapp: disconnected: %v (retrying)\n", s.Err)
	}
}
