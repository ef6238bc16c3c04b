// Package host is the session server apps connect to: UDP enrollment (ENROLLMENT_CONNECT
// v2, local and invite modes), grants and the on-disk pairing store, authenticated
// WebSocket upgrades with single-use tokens, the control channel (CONTROL_REQ /
// CONTROL_RESP) and the registry of live sessions, each with its *tools.Client.
//
// # Differences from the reference host
//
//   - One WebSocket listener serves every session on path /ws; each accepted enrollment
//     mints a single-use token valid for two minutes. The reference leases a port per
//     session (56500–56599) and stops that listener after the first upgrade. One listener
//     exhausts no port range, and a slow client cannot block other sessions' handshakes.
//     Options.WebSocketPorts takes its port from a range (the CLI's --lan: the
//     reference's), so firewall rules written for the reference still apply.
//   - Loopback only unless Options.LAN is set; the LAN defaults listen dual-stack.
//   - Upgrades carrying an Origin header are refused (403, cross-site WebSocket hijacking);
//     on a loopback listener a Host that is not a loopback name or address is refused (403,
//     DNS rebinding), except an emulator's alias for the host (10.0.2.2, 10.0.3.2) from a
//     loopback peer. The token may come in the query or as "Authorization: Bearer".
//   - The keep-alive never drops a session the host is waiting on (see
//     transport.KeepAlive): SDKs that run tools inside their receive loop answer no ping
//     while a tool runs. The reference never drops a peer for a missing pong at all.
//   - An enrollment request whose only fault is a duplicate name or an over-long string is
//     answered with a refusal, where the reference (which takes the last duplicate and has
//     no length bound) answers or ignores it.
//   - Handshake time, header size, message size, tokens outstanding, concurrent sessions
//     and enrollment attempts per sender (address and port) are bounded.
//   - A reconnect resumes a session only if appId, processSessionId AND the grant match;
//     the reference keys on the first two only, which lets any other client take a session
//     over. The replaced connection is closed and its pending requests fail at once.
//   - Invites are stored as SHA-256 of their secret, like grants, so the code can be shown
//     only once, when it is issued.
//   - Every control request is answered, including ones whose payload is not an object.
//     Crash reports (crash.handoff) and annotated feedback (annotation.submit) are kept in
//     the session's directory (see Server.Crashes), as the reference keeps them in its
//     session store.
//   - The session id is assigned at upgrade time rather than at enrollment time.
//
// # Concurrency
//
// Per connection there is exactly one goroutine, the reader: it feeds tool responses and
// ASFT frames to the session's *tools.Client, answers control requests and drops the rest.
// UDP datagrams are read by one goroutine, which only rate-limits and queues them, and
// answered in order, in batches, by another (enrollment.go). Close stops everything and
// waits.
package host
