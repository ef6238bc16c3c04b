// Package reliability measures how one host and many SDK sessions behave under sustained
// load, over real loopback sockets: UDP enrollment, the authenticated WebSocket, the control
// handshake and mixed tool traffic, all with the production packages (host, host/tools,
// app, app/connect).
//
// [RunLoad] starts a host and N apps in this process, holds the N sessions while every
// session runs a mix of catalog queries, calls and batches for a fixed duration, and
// returns a [LoadReport]: requests completed, requests lost (ended with an error) or
// misrouted (answered with another request's or another session's data: every call
// carries a nonce that the app's tool echoes), host memory per idle session, and the
// goroutine count before, during and after (it must come back to its baseline once the
// sessions and then the host have closed).
//
// Memory: both ends of every session live in this process, so the plain heap delta per
// session counts host and app. The host's share is attributed from an exact heap profile
// (runtime.MemProfileRate = 1 while the sessions connect): live bytes whose allocation stack
// runs through the host packages or the host's HTTP server are the host's.
//
// Enrollment: every app enrolls from 127.0.0.1, and the host rate-limits enrollment per
// source address (10 datagrams, then one a second, by default). RunLoad raises the host's
// burst to cover every session, and its session and token caps likewise; see LoadOptions.
package reliability
