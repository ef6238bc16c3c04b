// Package reliability measures how one host and many SDK sessions behave under sustained
// load, over real loopback sockets: UDP enrollment, the authenticated WebSocket, the control
// handshake and mixed tool traffic, all with the production packages (host, host/tools,
// app, app/connect).
//
// [RunLoad] starts a host and N apps, holds the N sessions while every session runs a mix
// of catalog queries, calls and batches for a fixed duration, and returns a [LoadReport]:
// requests completed, requests lost (ended with an error) or misrouted (answered with
// another request's or another session's data: every call carries a nonce that the app's
// tool echoes), call latency, CPU time, memory per idle session, and the goroutine count
// before, during and after (it must come back to its baseline once the sessions and then
// the host have closed). Latency and CPU per request come with their baseline from the same
// run: before the load, with every session connected, one worker sends the same mix on one
// session, one request at a time, for LoadOptions.Baseline (a second).
//
// The apps run in this process, or with LoadOptions.AppProcess in a child process of this
// executable (package childproc), so that each side has its own file descriptors — 10,000
// sessions need 10,000 on each side — heap and CPU time. In a child, the host's memory and
// CPU are this process's own. In this process, the heap delta per session counts host and
// app, and the host's share is attributed from an exact heap profile
// (runtime.MemProfileRate = 1 while the sessions connect): live bytes whose allocation stack
// runs through the host packages or the host's HTTP server are the host's.
//
// Budgets: every app is an installation of its own (its app id and device), so the
// per-installation bounds and the per-sender enrollment rate keep their defaults; the
// bounds on what all apps together hold (sessions, unused tokens, local grants) are raised
// for the run, see hostOptions.
//
// [RunEnrollFlood] sends N apps' ENROLLMENT_CONNECT at once, each from a socket of its own
// in a child process, while one more socket floods, to a host with default budgets, and
// returns a [FloodReport]: apps answered within the window, later or never, time to
// answer, what the host read, rate-limited and dropped, the kernel's drops on its socket,
// and the CPU time of both sides.
package reliability
