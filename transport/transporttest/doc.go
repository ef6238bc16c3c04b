// Package transporttest provides helpers for tests that need real transport connections:
// loopback WebSocket pairs and servers, an echo loop, MemNet (an in-memory network on which
// real WebSocket connections run inside a testing/synctest bubble, so that minutes of
// keep-alive and timeouts take no real time), and RunConnTests, the behaviour every
// transport.Conn must have (run it against any new implementation or wrapper).
//
// Everything here cleans up through t.Cleanup and leaves no goroutines behind, so it can be
// used in packages that check for leaks with goleak.
package transporttest
