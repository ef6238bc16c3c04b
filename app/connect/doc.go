// Package connect is the SDK's session client: it connects an [app.App] to an Ansight host
// and keeps it connected.
//
// [Run] is the whole job: it enrolls over UDP, opens the authenticated WebSocket, lets the
// app's runtime serve tool requests on it, performs the control handshake (session.open,
// device.profile, app.state) and, when the connection drops, reconnects with exponential
// backoff and jitter until its context ends, when it sends session.complete and closes
// cleanly. [Dial] makes one session and leaves its lifetime to the caller.
//
// A [Mode] value says how the host is found and what proves the app may connect; each
// carries only the fields that apply to it:
//
//   - [Local]: the host runs on this machine. The app sends its own random token to
//     127.0.0.1 on UDP ports 45123 then 46123; the host trusts it on first use.
//   - [Invite]: the user hands the app an invite ("ans2:" code or JSON) issued by the
//     host; its secret is presented on every connect, at the addresses the invite lists.
//   - [Direct]: a ws:// URL and token obtained elsewhere; no enrollment.
//
// For example:
//
//	err := connect.Run(ctx, a, connect.Local{}, connect.Options{AppID: "com.example.notes"})
//	err := connect.Run(ctx, a, connect.Invite{Code: code}, connect.Options{AppID: "com.example.notes"})
//
// The device id and local token are kept per app id in Options.StateDir (0700 directory,
// 0600 files), so that restarts present the same identity and the host finds the same grant.
// Every enrollment also carries the [ProcessSessionID], fixed for the life of the process: a
// host resumes the same session when the process reconnects.
//
// The wire is the one the official SDKs speak (docs/protocol/session.md), so an app built
// with this package connects to the official host as well as to ours.
// Tokens never appear in logs, errors or state reports.
package connect
