// Package recording keeps session recordings: everything an app sends besides tool
// responses (logs, metrics, events, touches, network requests, visual trees, app state,
// its profile, live screen frames, crash reports), the host's tool traffic with the app
// (requests, responses, sizes, durations, denials, artifacts) and the session's state
// changes, so that they can be browsed, followed, exported and imported after the app
// has gone and the host has restarted.
package recording
