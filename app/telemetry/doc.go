// Package telemetry sends what the official SDKs stream besides tool responses, so that a
// Go app's session is recorded by a host like any other app's:
//
//   - [Telemetry.Handler]: an slog.Handler that forwards log records as client.log
//     control requests, one line each in slog's text form ("time=… level=WARN msg=…"), and
//     keeps the last lines for [Telemetry.LogTail];
//   - [Telemetry.RoundTripper]: an http.RoundTripper that reports each request's metadata
//     as CLIENT_NETWORK_REQUEST (ansight.network-request.v1): method, URL, headers,
//     status, sizes and timing, never bodies, with credentials redacted before they leave
//     the process;
//   - runtime metric channels (Go heap, goroutines, GC pause) declared with
//     CLIENT_METRIC_CHANNELS and sampled as CLIENT_METRICS every Options.MetricsInterval;
//   - a live screen stream of ASJP frames rendered by Options.Frames, when the host's
//     answer to device.profile asks for app capture, at the interval and quality it says
//     (ui.FrameSource boxes the screen's secure nodes before a frame is encoded);
//   - [Telemetry.RecordTap], [Telemetry.RecordTapUp]: the taps ui.perform_action performs
//     (ui.Options.Taps), each as the visual tree it landed on (CLIENT_VISUAL_TREE, touch
//     down), its touch (CLIENT_TOUCH_INPUT) and the tree after it (touch up),
//     as the official SDKs report touches — but a tap on a secure node keeps its touch in
//     the app, so no recording holds the position of a tap on a password or PIN field.
//
// Nothing here blocks the app: logs and requests wait in bounded queues while no host is
// connected or the host is slow, and what does not fit is dropped and counted (Stats).
// Give the Telemetry to connect.Options.Telemetry; the session attaches it once its
// handshake is done and detaches it when the connection ends:
//
//	tel := telemetry.New(telemetry.Options{Frames: ui.FrameSource(screen)})
//	slog.SetDefault(slog.New(tel.Handler(slog.NewTextHandler(os.Stderr, nil), nil)))
//	http.DefaultTransport = tel.RoundTripper(http.DefaultTransport)
//	err := connect.Run(ctx, a, connect.Local{}, connect.Options{AppID: "com.example.notes", Telemetry: tel})
package telemetry
