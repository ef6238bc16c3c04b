// Package notes is the demo app of ansight-go: a small notes app whose screen is simulated
// in memory, so that every part of the protocol can be seen working on a machine without
// a phone.
//
// The app has three screens. The list screen shows a title bar with a "Sign in" (or
// "Sign out") button, a search field, the notes (filtered by the search), a "Dark mode"
// toggle, an "Add note" button, a "Sync" button that works once an account is signed in,
// and a status line. The editor screen has a Back button, a title field, a body field,
// Save and (for existing notes) Delete. The sign-in screen has a user name field, a
// password field — a secure entry (ui.Node.Secure): drawn as dots, never in a tree, boxed
// in streamed frames, its taps kept in the app — and a Sign in button.
//
// [Model] is the app's state. It implements [ui.Screen], so the standard UI tools see
// and drive exactly what [Model.Render] draws, and [Model.Register] adds those tools plus
// the app's own: notes.*, settings.set_dark_mode, account.sign_in/sign_out, sync.status
// and sync.push (unavailable until an account is signed in), app.get_state, app.reset,
// and tools for benchmarks (synthetic tools, a large result, a generated file).
// [Model.RegisterFiles] adds the file tools over a directory and the notes export;
// [Model.RegisterData] keeps the notes in a SQLite file there (notes.db) and adds the data
// tools over it, and the preference tools over its settings.json.
// [Model.ServeSync] makes sync real: it starts a small sync server on loopback and sends
// every sync (sync.push, the Sync button) to it as an HTTP request through the
// http.RoundTripper it is given — the telemetry package's, in the demo, so that the host
// records each sync as a network request.
//
// The package is public so that app authors can import and read it as an example of the
// SDK and of a [ui.Screen]; it also serves the CLI ("ansight demo", "ansight conform",
// "ansight bench"), the benchmarks and the tests, and some of its surface (synthetic tools,
// a large result) follows their needs. People run it as a program — "ansight demo" or
// examples/demoapp, a thin main over this package. The conformance suite's scenario for
// this app is in package notestest, so that the app itself links no test suite.
package notes
