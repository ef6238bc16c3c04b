// Package app is the SDK runtime an application embeds to publish tools over the Ansight
// Remote Tool Protocol.
//
// An [App] holds a registry of tools — raw tools ([App.Register], handlers that see the
// arguments as JSON) and typed tools ([Register], whose argument and result schemas are
// inferred from Go types) — and a guard ([catalog.Guard]) deciding which of them can be
// discovered and executed. [App.Serve] answers the host's tool.query, tool.call and
// tool.batch requests on a [transport.Conn]; [App.Handle] answers one request message
// directly (tests, bridges).
//
// Every call follows the processing order of the protocol: payload shape (including the
// after block) → lookup → guard → availability → arguments shape → argument schema →
// execution → result schema → evidence. Each step that refuses a call answers with its own
// error code; a panicking tool yields tool_execution_exception and the app keeps running.
//
// Binary artifacts (screenshots, files) travel as ASFT frames: a handler calls
// [Call.SendArtifact], puts the returned descriptor into its result, and the runtime streams
// the bytes only after the response announcing them has been written. Our host accepts a
// descriptor anywhere in a result; the official host only as the whole result of
// ui.get_screenshot, artifacts.request and files.begin_binary_download, which packages
// app/ui and app/files provide.
//
// The guard defaults to catalog.GuardReadWrite (read and write tools published and
// executable; critical tools need catalog.GuardFullAccess); App.SetGuard changes it at run
// time. Evidence (a call's after block) is captured with the tools ui.get_visual_tree and
// ui.get_screenshot, which package app/ui provides.
//
// Concurrency: requests are served concurrently (at most Options.MaxConcurrent at a time);
// tools registered as exclusive never run at the same time as each other. Registration and
// guard changes are safe at any time; the published catalog is rebuilt on the next query.
package app
