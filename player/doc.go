// Package player is the local web console of the host: a page served on loopback where a
// developer sees the connected apps and works with their tools without writing JSON by
// hand. It sits on the control API (hostapi.Backend) and adds what only a page needs:
// live updates as server-sent events (sessions, the tool traffic of each session, live
// screenshot frames), forms generated from tools' argumentsSchema ([FormOf]), validation
// with the app's own validator, and the artifacts the host saved. Its timeline replays a
// session's recording — live, disconnected or imported — through the control API's
// records: screen frames scrubbable in time above lanes of logs, network requests, tool
// calls (request and response bodies on a click) and touches. Its Files and Data pages work
// any app's files and databases through the official SDKs' standard tools alone (files.*,
// data.*), so they serve an official SDK's app as well as ours: browse, preview, download
// (files.begin_binary_download, else files.download_file's chunks), upload where the grant
// allows (files.push_file), tables and schemas, and a bounded, paged query.
//
// Security: the player drives apps, so it is reachable from this machine only (Listen
// refuses other addresses) and only with the per-run token printed by the host (a cookie,
// HttpOnly and SameSite=Strict, after the first visit). The Host header must be a loopback
// name (DNS rebinding), state-changing requests carry a CSRF token from the page, and a
// strict Content-Security-Policy allows this origin only: every asset is embedded.
package player
